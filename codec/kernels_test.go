package codec

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// The row loops agree with the scalar conversions for every length
// (covering the 4-element bodies and the tails).
func TestRowKernelsMatchScalar(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for n := 0; n <= 13; n++ {
		raw := make([]byte, 2*n)
		for i := 0; i < n; i++ {
			binary.LittleEndian.PutUint16(raw[2*i:], uint16(rng.Uint32())&0x7bff|uint16(rng.IntN(2))<<15) // finite in both formats
		}
		got := make([]float32, n)
		widenBF16(got, raw)
		for i := range got {
			if want := BF16ToFloat32(binary.LittleEndian.Uint16(raw[2*i:])); got[i] != want {
				t.Fatalf("widenBF16 n=%d [%d] = %g, want %g", n, i, got[i], want)
			}
		}
		widenFP16(got, raw)
		for i := range got {
			if want := FP16ToFloat32(binary.LittleEndian.Uint16(raw[2*i:])); got[i] != want {
				t.Fatalf("widenFP16 n=%d [%d] = %g, want %g", n, i, got[i], want)
			}
		}
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(rng.NormFloat64() * math.Pow(2, float64(rng.IntN(40)-20)))
		}
		out := make([]byte, 2*n)
		narrowBF16(out, x)
		for i, f := range x {
			if g, w := binary.LittleEndian.Uint16(out[2*i:]), Float32ToBF16(f); g != w {
				t.Fatalf("narrowBF16 n=%d [%d] = %#04x, want %#04x", n, i, g, w)
			}
		}
		narrowFP16(out, x)
		for i, f := range x {
			if g, w := binary.LittleEndian.Uint16(out[2*i:]), Float32ToFP16(f); g != w {
				t.Fatalf("narrowFP16 n=%d [%d] = %#04x, want %#04x", n, i, g, w)
			}
		}
	}
}

// Every finite half widens exactly in the branch-free encoder path.
func TestWidenFP16AllFinite(t *testing.T) {
	raw := make([]byte, 2)
	got := make([]float32, 1)
	for h := 0; h < 1<<16; h++ {
		if h&0x7c00 == 0x7c00 {
			continue
		}
		binary.LittleEndian.PutUint16(raw, uint16(h))
		widenFP16(got, raw)
		if want := FP16ToFloat32(uint16(h)); math.Float32bits(got[0]) != math.Float32bits(want) {
			t.Fatalf("widenFP16(%#04x) = %g, want %g", h, got[0], want)
		}
	}
}

// The fused bfloat16 int8 loops produce the same bytes as widening to
// float32 and running the generic loops.
func TestFusedBF16Int8MatchesGeneric(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for n := 1; n <= 13; n++ {
		raw := make([]byte, 2*n)
		inv := make([]float32, n)
		scale := make([]float32, n)
		for i := 0; i < n; i++ {
			binary.LittleEndian.PutUint16(raw[2*i:], Float32ToBF16(float32(rng.NormFloat64())))
			inv[i] = float32(127 / 4 * rng.Float64())
			scale[i] = float32(rng.Float64() / 30)
		}
		x := make([]float32, n)
		widenBF16(x, raw)

		want, got := make([]byte, n), make([]byte, n)
		quantInt8Vec(want, x, inv)
		quantInt8VecBF16(got, raw, inv)
		if !bytes.Equal(got, want) {
			t.Fatalf("n=%d: quantInt8VecBF16 %v, generic %v", n, got, want)
		}
		quantInt8(want, x, inv[0])
		quantInt8BF16(got, raw, inv[0])
		if !bytes.Equal(got, want) {
			t.Fatalf("n=%d: quantInt8BF16 %v, generic %v", n, got, want)
		}

		codes := got
		y := make([]float32, n)
		wantRaw, gotRaw := make([]byte, 2*n), make([]byte, 2*n)
		dequantInt8Vec(y, codes, scale)
		narrowBF16(wantRaw, y)
		dequantInt8VecBF16(gotRaw, codes, scale)
		if !bytes.Equal(gotRaw, wantRaw) {
			t.Fatalf("n=%d: dequantInt8VecBF16 differs from generic", n)
		}
		dequantInt8(y, codes, scale[0])
		narrowBF16(wantRaw, y)
		dequantInt8BF16(gotRaw, codes, scale[0])
		if !bytes.Equal(gotRaw, wantRaw) {
			t.Fatalf("n=%d: dequantInt8BF16 differs from generic", n)
		}
	}
}

func TestQ8RoundsToNearestEven(t *testing.T) {
	for _, tc := range []struct {
		x    float32
		want int8
	}{{0, 0}, {0.5, 0}, {1.5, 2}, {2.5, 2}, {-0.5, 0}, {-1.5, -2}, {-2.5, -2}, {126.6, 127}, {-127, -127}, {127.00002, 127}, {-3.49, -3}} {
		if got := int8(q8(tc.x, 1)); got != tc.want {
			t.Errorf("q8(%g) = %d, want %d", tc.x, got, tc.want)
		}
		if got := toInt(tc.x); got != int32(tc.want) {
			t.Errorf("toInt(%g) = %d, want %d", tc.x, got, tc.want)
		}
	}
}

func TestAbsMax(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for n := 0; n <= 13; n++ {
		row := make([]byte, 2*n)
		var want uint16
		for i := 0; i < n; i++ {
			h := uint16(rng.Uint32())
			binary.LittleEndian.PutUint16(row[2*i:], h)
			want = max(want, h&0x7fff)
		}
		if got := halfAbsMax(row); got != want {
			t.Fatalf("n=%d: halfAbsMax = %#04x, want %#04x", n, got, want)
		}
		lanes := make([]uint64, (n+3)/4)
		halfAbsMaxLanes(lanes, row)
		halfAbsMaxLanes(lanes, row) // idempotent
		for i := 0; i < n; i++ {
			if got, w := uint16(lanes[i/4]>>(16*(i%4))), binary.LittleEndian.Uint16(row[2*i:])&0x7fff; got != w {
				t.Fatalf("n=%d lane %d = %#04x, want %#04x", n, i, got, w)
			}
		}
	}
}
