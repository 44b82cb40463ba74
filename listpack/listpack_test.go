package listpack

import (
	"strings"
	"testing"
)

// TestStringsRoundTrip encodes strings at every integer width's edges,
// non-canonical integers (kept as text) and strings of each length
// encoding, and decodes them back.
func TestStringsRoundTrip(t *testing.T) {
	elems := []string{"0", "127", "128", "-1", "-4096", "4095", "4096", "-32768", "32767", "32768",
		"-8388608", "8388607", "8388608", "-2147483648", "2147483647", "2147483648", "9223372036854775807",
		"-9223372036854775808", "007", "-0", "+1", "text", "", strings.Repeat("y", 70), strings.Repeat("z", 5000)}
	var raw [][]byte
	for _, e := range elems {
		raw = append(raw, []byte(e))
	}
	got, err := Parse(Build(raw))
	if err != nil || strings.Join(got, ",") != strings.Join(elems, ",") {
		t.Fatalf("round trip: %v %v", got, err)
	}
}

// TestIntegersAreEncodedAsRedisDoes pins lpAppendInteger's encodings by
// their sizes (back length included) and values.
func TestIntegersAreEncodedAsRedisDoes(t *testing.T) {
	for _, tc := range []struct {
		v    int64
		size int
	}{{0, 2}, {127, 2}, {128, 3}, {-1, 3}, {-4096, 3}, {4095, 3}, {4096, 4}, {-32768, 4}, {32768, 5},
		{8388607, 5}, {8388608, 6}, {-2147483648, 6}, {2147483648, 10}, {-9223372036854775808, 10}} {
		b := AppendInt(nil, tc.v)
		e, size, err := Next(b)
		if err != nil || len(b) != tc.size || size != tc.size || !e.IsInt || e.Int != tc.v || IntSize(tc.v) != tc.size {
			t.Errorf("%d: %x decodes to %+v (%d bytes, %v), want %d bytes", tc.v, b, e, size, err, tc.size)
		}
		if !e.Equal(e.String()) {
			t.Errorf("%d: not equal to its text", tc.v)
		}
	}
}

// TestDamageIsRefused: a wrong back length, a truncated element, a
// wrong header size or count, a missing terminator.
func TestDamageIsRefused(t *testing.T) {
	good := Build([][]byte{[]byte("abc"), []byte("12")})
	for name, damage := range map[string]func(b []byte) []byte{
		"back length": func(b []byte) []byte { b[HeaderSize+4] = 9; return b },
		"truncated":   func(b []byte) []byte { b = append(b[:HeaderSize+2], 0xFF); b[0] = byte(len(b)); return b },
		"size":        func(b []byte) []byte { b[0]++; return b },
		"count":       func(b []byte) []byte { b[4] = 3; return b },
		"terminator":  func(b []byte) []byte { b[len(b)-1] = 0; return b },
	} {
		if _, err := Parse(damage(append([]byte(nil), good...))); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
}

// TestNextTrustedAgreesWithNext decodes integers at each encoding's
// bounds and strings of each length class with both decoders.
func TestNextTrustedAgreesWithNext(t *testing.T) {
	var b []byte
	for _, v := range []int64{0, 1, 127, 128, -1, -4096, 4095, 4096, -4097, 1000, -1000, 32767, -32768, 32768, 8388607, -8388608, 1 << 31, -1 << 63, 1<<63 - 1} {
		b = AppendInt(b, v)
	}
	for _, n := range []int{0, 1, 63, 64, 4095, 4096} {
		b = AppendString(b, strings.Repeat("x", n))
	}
	for p := b; len(p) > 0; {
		want, wantSize, err := Next(p)
		if err != nil {
			t.Fatal(err)
		}
		got, size := NextTrusted(p)
		if size != wantSize || got.IsInt != want.IsInt || got.Int != want.Int || string(got.Str) != string(want.Str) {
			t.Fatalf("NextTrusted gave %+v (%d bytes), Next %+v (%d bytes)", got, size, want, wantSize)
		}
		p = p[size:]
	}
}
