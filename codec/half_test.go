package codec

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

func TestHalfToFloat32ExactValues(t *testing.T) {
	inf := float32(math.Inf(1))
	bf16 := []struct {
		h    uint16
		want float32
	}{
		{0x0000, 0}, {0x3f80, 1}, {0xc000, -2}, {0x3e80, 0.25}, {0x4049, 3.140625},
		{0x7f7f, 0x1.fep127},   // largest finite
		{0x0080, 0x1p-126},     // smallest normal
		{0x0001, 0x1p-133},     // smallest subnormal
		{0x807f, -0x1.fcp-127}, // largest negative subnormal
		{0x7f80, inf}, {0xff80, -inf},
	}
	for _, tc := range bf16 {
		if got := BF16ToFloat32(tc.h); got != tc.want {
			t.Errorf("BF16ToFloat32(%#04x) = %g, want %g", tc.h, got, tc.want)
		}
	}
	fp16 := []struct {
		h    uint16
		want float32
	}{
		{0x0000, 0}, {0x3c00, 1}, {0xc000, -2}, {0x3555, 0x1.554p-2}, {0x4248, 3.140625},
		{0x7bff, 65504},       // largest finite
		{0x0400, 0x1p-14},     // smallest normal
		{0x03ff, 0x1.ff8p-15}, // largest subnormal
		{0x0001, 0x1p-24},     // smallest subnormal
		{0x8001, -0x1p-24},
		{0x7c00, inf}, {0xfc00, -inf},
	}
	for _, tc := range fp16 {
		if got := FP16ToFloat32(tc.h); got != tc.want {
			t.Errorf("FP16ToFloat32(%#04x) = %g, want %g", tc.h, got, tc.want)
		}
	}
	if got := FP16ToFloat32(0x8000); got != 0 || !math.Signbit(float64(got)) {
		t.Errorf("FP16ToFloat32(0x8000) = %g, want -0", got)
	}
	for _, h := range []uint16{0x7c01, 0x7e00, 0xfe00, 0x7fff} {
		if !isNaN32(FP16ToFloat32(h)) {
			t.Errorf("FP16ToFloat32(%#04x) is not NaN", h)
		}
	}
	for _, h := range []uint16{0x7f81, 0x7fc0, 0xffc0} {
		if !isNaN32(BF16ToFloat32(h)) {
			t.Errorf("BF16ToFloat32(%#04x) is not NaN", h)
		}
	}
}

func TestFloat32ToHalfExactValues(t *testing.T) {
	inf := float32(math.Inf(1))
	tests := []struct {
		f          float32
		bf16, fp16 uint16
	}{
		{0, 0x0000, 0x0000},
		{1, 0x3f80, 0x3c00},
		{-2, 0xc000, 0xc000},
		{1 + 0x1p-8, 0x3f80, 0x3c04},           // bf16 tie, rounds to even (down)
		{1 + 3*0x1p-8, 0x3f82, 0x3c0c},         // bf16 tie, rounds to even (up)
		{1 + 0x1p-8 + 0x1p-20, 0x3f81, 0x3c04}, // just above the tie
		{1 + 0x1p-11, 0x3f80, 0x3c00},          // fp16 tie, down to even
		{1 + 3*0x1p-11, 0x3f80, 0x3c02},        // fp16 tie, up to even
		{65504, 0x4780, 0x7bff},
		{65519, 0x4780, 0x7bff}, // below the fp16 overflow threshold
		{65520, 0x4780, 0x7c00}, // exactly halfway to 2^16: ties to even = infinity
		{1e6, 0x4974, 0x7c00},
		{-1e6, 0xc974, 0xfc00},
		{0x1p-14, 0x3880, 0x0400},                // smallest normal half
		{0x1p-24, 0x3380, 0x0001},                // smallest subnormal half
		{0x1p-25, 0x3300, 0x0000},                // half of it: tie, rounds to even zero
		{0x1.8p-24, 0x33c0, 0x0002},              // 1.5 units: tie, rounds to even 2
		{0x1.0000p-25 + 0x1p-40, 0x3300, 0x0001}, // just above the smallest tie
		{0x1.ffcp-15, 0x3880, 0x0400},            // largest subnormal + half unit: rounds up to normal
		{0x1.fep127, 0x7f7f, 0x7c00},
		{0x1.ffp127, 0x7f80, 0x7c00}, // bf16 tie above max: ties to even = infinity
		{0x1.fefffep127, 0x7f7f, 0x7c00},
		{0x1p-133, 0x0001, 0x0000}, // smallest bf16 subnormal
		{0x1p-149, 0x0000, 0x0000}, // smallest float32: bf16 tie to even zero
		{inf, 0x7f80, 0x7c00},
		{-inf, 0xff80, 0xfc00},
	}
	for _, tc := range tests {
		if got := Float32ToBF16(tc.f); got != tc.bf16 {
			t.Errorf("Float32ToBF16(%g) = %#04x, want %#04x", tc.f, got, tc.bf16)
		}
		if got := Float32ToFP16(tc.f); got != tc.fp16 {
			t.Errorf("Float32ToFP16(%g) = %#04x, want %#04x", tc.f, got, tc.fp16)
		}
	}
	neg0 := float32(math.Copysign(0, -1))
	if Float32ToBF16(neg0) != 0x8000 || Float32ToFP16(neg0) != 0x8000 {
		t.Errorf("-0 does not keep its sign")
	}
	nan := float32(math.NaN())
	// A NaN whose payload is only in the low bits must not collapse to infinity.
	lowNaN := math.Float32frombits(0x7f800001)
	for _, f := range []float32{nan, -nan, lowNaN} {
		if !isNaN32(BF16ToFloat32(Float32ToBF16(f))) || !isNaN32(FP16ToFloat32(Float32ToFP16(f))) {
			t.Errorf("NaN %#08x does not stay NaN", math.Float32bits(f))
		}
	}
}

// Every 16-bit pattern survives widening and narrowing unchanged (NaNs stay NaN).
func TestHalfRoundTripIsExact(t *testing.T) {
	for i := 0; i < 1<<16; i++ {
		h := uint16(i)
		if f := BF16ToFloat32(h); isNaN32(f) {
			if !isNaN32(BF16ToFloat32(Float32ToBF16(f))) {
				t.Fatalf("bf16 NaN %#04x lost", h)
			}
		} else if g := Float32ToBF16(f); g != h {
			t.Fatalf("bf16 %#04x -> %g -> %#04x", h, f, g)
		}
		if f := FP16ToFloat32(h); isNaN32(f) {
			if g := Float32ToFP16(f); g|0x0200 != h|0x0200 { // quieted, payload kept
				t.Fatalf("fp16 NaN %#04x -> %#04x, payload not kept", h, g)
			}
		} else if g := Float32ToFP16(f); g != h {
			t.Fatalf("fp16 %#04x -> %g -> %#04x", h, f, g)
		}
	}
}

// refRound rounds f to the nearest of the finite values vals (sorted
// ascending, all non-negative, as float64 with their codes), ties to the even
// code, and to inf when f is at least max + half an ulp.
func refRound(f float64, vals []float64, codes []uint16, infCode uint16, overflow float64) uint16 {
	a := math.Abs(f)
	var sign uint16
	if math.Signbit(f) {
		sign = 0x8000
	}
	if a >= overflow {
		return sign | infCode
	}
	i := sort.SearchFloat64s(vals, a) // vals[i] >= a
	if i == len(vals) {
		return sign | codes[len(codes)-1]
	}
	if vals[i] == a || i == 0 {
		return sign | codes[i]
	}
	lo, hi := vals[i-1], vals[i]
	switch {
	case a-lo < hi-a:
		return sign | codes[i-1]
	case a-lo > hi-a:
		return sign | codes[i]
	case codes[i-1]&1 == 0:
		return sign | codes[i-1]
	default:
		return sign | codes[i]
	}
}

// Narrowing agrees with a brute-force nearest-even reference on random
// values, exact ties and their neighbours, in every binade of both formats.
func TestNarrowingMatchesReference(t *testing.T) {
	type format struct {
		name     string
		narrow   func(float32) uint16
		widen    func(uint16) float32
		maxCode  uint16
		overflow float64
	}
	formats := []format{
		{"bf16", Float32ToBF16, BF16ToFloat32, 0x7f7f, 0x1.ffp127},
		{"fp16", Float32ToFP16, FP16ToFloat32, 0x7bff, 65520},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, fm := range formats {
		var vals []float64
		var codes []uint16
		for c := uint16(0); c <= fm.maxCode; c++ {
			vals = append(vals, float64(fm.widen(c)))
			codes = append(codes, c)
		}
		check := func(f float32) {
			want := refRound(float64(f), vals, codes, fm.maxCode+1, fm.overflow)
			if got := fm.narrow(f); got != want {
				t.Fatalf("%s: narrow(%g = %#08x) = %#04x, want %#04x", fm.name, f, math.Float32bits(f), got, want)
			}
		}
		for c := 1; c <= int(fm.maxCode); c++ {
			mid := float32((vals[c-1] + vals[c]) / 2) // exact in float32 for both formats
			for _, f := range []float32{mid, math.Nextafter32(mid, 0), math.Nextafter32(mid, float32(math.Inf(1))), float32(vals[c])} {
				check(f)
				check(-f)
			}
		}
		for i := 0; i < 200000; i++ {
			check(math.Float32frombits(rng.Uint32()&^(0xff<<23) | uint32(rng.IntN(160)+1)<<23))
		}
	}
}

func TestE4M3(t *testing.T) {
	var table [256]float32
	e4m3Table(&table)
	want := map[byte]float32{0x00: 0, 0x01: 0x1p-9, 0x07: 7 * 0x1p-9, 0x08: 0x1p-6, 0x38: 1, 0x3c: 1.5, 0x7e: 448, 0xfe: -448, 0x80: 0, 0xb8: -1}
	for c, v := range want {
		if table[c] != v {
			t.Errorf("e4m3 %#02x = %g, want %g", c, table[c], v)
		}
	}
	if !isNaN32(table[0x7f]) || !isNaN32(table[0xff]) {
		t.Errorf("0x7f/0xff are not NaN")
	}
	// Every finite code encodes back to itself.
	for c := 0; c < 256; c++ {
		if c&0x7f == 0x7f {
			continue
		}
		if got := e4m3(table[c]); got != byte(c) {
			t.Errorf("e4m3(%g) = %#02x, want %#02x", table[c], got, c)
		}
	}
	// Against brute force on the positive codes: nearest, ties to even, saturating.
	var vals []float64
	var codes []uint16
	for c := 0; c <= 0x7e; c++ {
		vals = append(vals, float64(table[c]))
		codes = append(codes, uint16(c))
	}
	rng := rand.New(rand.NewPCG(3, 4))
	check := func(f float32) {
		want := refRound(float64(f), vals, codes, 0x7e, math.Inf(1))
		want = want&0x7f | (want>>8)&0x80
		if got := e4m3(f); got != byte(want) {
			t.Fatalf("e4m3(%g) = %#02x, want %#02x", f, got, want)
		}
	}
	for c := 1; c <= 0x7e; c++ {
		mid := float32((vals[c-1] + vals[c]) / 2)
		for _, f := range []float32{mid, math.Nextafter32(mid, 0), math.Nextafter32(mid, 1000)} {
			check(f)
			check(-f)
		}
	}
	for i := 0; i < 100000; i++ {
		check(float32((rng.Float64()*2 - 1) * 448 * math.Pow(2, -12*rng.Float64())))
	}
	if e4m3(464) != 0x7e || e4m3(1e9) != 0x7e || e4m3(-500) != 0xfe {
		t.Errorf("e4m3 does not saturate at 448")
	}
}

func TestInt4Packing(t *testing.T) {
	for n := 0; n < 9; n++ {
		q := make([]int8, n)
		for i := range q {
			q[i] = int8(i%15 - 7)
		}
		p := make([]byte, (n+1)/2)
		packInt4(p, q)
		got := make([]int8, n)
		unpackInt4(got, p)
		for i := range q {
			if got[i] != q[i] {
				t.Fatalf("n=%d: code %d = %d, want %d", n, i, got[i], q[i])
			}
		}
	}
}

func isNaN32(f float32) bool { return f != f }
