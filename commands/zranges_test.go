package commands

import (
	"math"
	"testing"
)

// TestStrtodReadsWhatCReads pins strtod's prefix rules against what C's
// strtod (glibc) reads from each input.
func TestStrtodReadsWhatCReads(t *testing.T) {
	for _, c := range []struct {
		in     string
		f      float64
		n      int
		erange bool
	}{
		{"1.5", 1.5, 3, false},
		{"  -2e3x", -2000, 6, false},
		{"+.5", 0.5, 3, false},
		{"5.", 5, 2, false},
		{".", 0, 0, false},
		{"", 0, 0, false},
		{" ", 0, 0, false},
		{"1e", 1, 1, false},
		{"1e+", 1, 1, false},
		{"0x10", 16, 4, false},
		{"0x1p-2", 0.25, 6, false},
		{"0x", 0, 1, false},
		{"0xg", 0, 1, false},
		{"inf", math.Inf(1), 3, false},
		{"-Infinity", math.Inf(-1), 9, false},
		{"infin", math.Inf(1), 3, false},
		{"1e400", math.Inf(1), 5, true},
		{"1e-400", 0, 6, true},
		{"0e-400", 0, 6, false},
		{"1_000", 1, 1, false},
	} {
		f, n, erange := strtod([]byte(c.in))
		if f != c.f || n != c.n || erange != c.erange {
			t.Errorf("strtod(%q) = %v, %d, %v; want %v, %d, %v", c.in, f, n, erange, c.f, c.n, c.erange)
		}
	}
	if f, n, _ := strtod([]byte("nan(abc)x")); !math.IsNaN(f) || n != 8 {
		t.Errorf("strtod(nan(abc)x) = %v, %d", f, n)
	}
}

// TestParseScoreIsGetDoubleFromObject pins ZADD's score rules: the whole
// argument, no leading space, no overflow, no NaN.
func TestParseScoreIsGetDoubleFromObject(t *testing.T) {
	for in, ok := range map[string]bool{
		"1": true, "-1.5e3": true, "inf": true, "+inf": true, "-inf": true, "0x1A": true, "1e-320": true,
		"": false, " 1": false, "1 ": false, "nan": false, "1e400": false, "1e-400": false, "1_0": false, "abc": false,
	} {
		if _, got := parseScore([]byte(in)); got != ok {
			t.Errorf("parseScore(%q) ok = %v, want %v", in, got, ok)
		}
	}
}

// TestFormatScoreIsD2string pins ZSCAN's score text for both encodings.
func TestFormatScoreIsD2string(t *testing.T) {
	for _, c := range []struct {
		f        float64
		listpack bool
		want     string
	}{
		{1e17, true, "100000000000000000"},
		{1e17, false, "1e+17"},
		{5e18, true, "5e+18"},
		{1.5, true, "1.5"},
		{0.1, false, "0.10000000000000001"},
		{math.Inf(-1), true, "-inf"},
		{math.Copysign(0, -1), false, "-0"},
		{3, false, "3"},
	} {
		if got := formatScore(c.f, c.listpack); got != c.want {
			t.Errorf("formatScore(%v, %v) = %q, want %q", c.f, c.listpack, got, c.want)
		}
	}
}
