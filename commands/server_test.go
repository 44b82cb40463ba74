package commands

import "testing"

func TestParseFloatPrefixIsStrtod(t *testing.T) {
	cases := []struct {
		in   string
		want float64
	}{
		{"1.5", 1.5}, {"  2", 2}, {"-1", -1}, {"1e-1", 0.1}, {".5s", 0.5}, {"3abc", 3},
		{"x", 0}, {"", 0}, {"0x10", 16}, {"+7.", 7}, {"1e", 1},
	}
	for _, tc := range cases {
		if got := parseFloatPrefix([]byte(tc.in)); got != tc.want {
			t.Errorf("parseFloatPrefix(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}
