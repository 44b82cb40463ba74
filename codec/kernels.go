package codec

import (
	"encoding/binary"
	"math"
)

// Row kernels. A row is the D elements of one token of one K or V tensor.
// Encoding widens a row of 16-bit floats into a float32 scratch row, then
// quantizes it with either one inverse scale per element (keys: a scale per
// channel) or one per group of elements (values). Decoding is the mirror
// image. Only widening and narrowing know the dtype.
//
// The loops are written for the compiler: they take 4 elements per 8-byte
// load or store of 16-bit data, walk their slices by re-slicing behind a
// length test (which removes the bounds checks from the loop body), and
// avoid branches that depend on the data. There is no per-element
// allocation and no per-element function call that is not inlined.

// roundMagic is 1.5*2^23: adding it to a float32 |y| < 2^22 leaves
// round-to-nearest-even(y) in the low mantissa bits.
const (
	roundMagic     = 0x1.8p23
	roundMagicBits = 0x4b400000
)

// toInt rounds y to the nearest integer, ties to even, for |y| < 2^22.
func toInt(y float32) int32 {
	return int32(math.Float32bits(y+roundMagic)) - roundMagicBits
}

// Absolute maxima on raw 16-bit data. For sign-magnitude floats the order of
// the magnitude bits is the order of the magnitudes, so no conversion is
// needed, and infinities and NaN compare above every finite value. Four
// 15-bit magnitudes are handled at once in the lanes of a uint64.

const (
	lanesAbs = 0x7fff7fff7fff7fff
	lanesTop = 0x8000800080008000
)

// maxLanes is the lane-wise maximum of a and b, whose 16-bit lanes are all
// below 0x8000: setting each lane's top bit before subtracting keeps borrows
// inside the lane and leaves that bit set exactly where a >= b.
func maxLanes(a, b uint64) uint64 {
	ge := ((a | lanesTop) - b) & lanesTop
	return b ^ (a^b)&((ge>>15)*0xffff)
}

// load64 reads up to 8 bytes little-endian, zero-filling what is missing.
func load64(b []byte) uint64 {
	if len(b) >= 8 {
		return binary.LittleEndian.Uint64(b)
	}
	var v uint64
	for i := len(b) - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}

// halfAbsMaxLanes folds the magnitudes of a row of 16-bit floats into m,
// element i in lane i%4 of m[i/4]; len(m) must be (len(row)/2+3)/4.
func halfAbsMaxLanes(m []uint64, row []byte) {
	for i := range m {
		if len(row) < 8 {
			m[i] = maxLanes(load64(row)&lanesAbs, m[i])
			return
		}
		m[i] = maxLanes(binary.LittleEndian.Uint64(row)&lanesAbs, m[i])
		row = row[8:]
	}
}

// halfAbsMax is the largest magnitude in a run of 16-bit floats, as bits.
func halfAbsMax(row []byte) uint16 {
	var m uint64
	for len(row) >= 8 {
		m = maxLanes(binary.LittleEndian.Uint64(row)&lanesAbs, m)
		row = row[8:]
	}
	m = maxLanes(load64(row)&lanesAbs, m)
	m = maxLanes(m>>32, m&0xffffffff)
	return uint16(max(m>>16, m&0xffff))
}

// Widening. The encoder widens only data it has already found finite.

func widenBF16(dst []float32, src []byte) {
	for len(dst) >= 4 && len(src) >= 8 {
		v := binary.LittleEndian.Uint64(src)
		dst[0] = math.Float32frombits(uint32(v) << 16)
		dst[1] = math.Float32frombits(uint32(v>>16) << 16)
		dst[2] = math.Float32frombits(uint32(v>>32) << 16)
		dst[3] = math.Float32frombits(uint32(v>>48) << 16)
		dst, src = dst[4:], src[8:]
	}
	for i := range dst {
		dst[i] = BF16ToFloat32(binary.LittleEndian.Uint16(src[2*i:]))
	}
}

// fp16Finite widens a finite half without branches: the magnitude bits
// shifted into a float32 are the value times 2^-112 (a float32 subnormal for
// half subnormals), and the multiplication restores it exactly.
func fp16Finite(h uint32) float32 {
	return math.Float32frombits((h&0x8000)<<16|(h&0x7fff)<<13) * 0x1p112
}

func widenFP16(dst []float32, src []byte) {
	for len(dst) >= 4 && len(src) >= 8 {
		v := binary.LittleEndian.Uint64(src)
		dst[0] = fp16Finite(uint32(v))
		dst[1] = fp16Finite(uint32(v >> 16))
		dst[2] = fp16Finite(uint32(v >> 32))
		dst[3] = fp16Finite(uint32(v >> 48))
		dst, src = dst[4:], src[8:]
	}
	for i := range dst {
		dst[i] = fp16Finite(uint32(binary.LittleEndian.Uint16(src[2*i:])))
	}
}

// Narrowing. Decoded values are products of a code and a finite,
// non-negative scale: finite or infinite, and NaN only where an fp8 code is
// NaN (the quiet NaN of the table, which rounds to a NaN). So bfloat16
// rounding can skip Float32ToBF16's NaN test.

func bf16Round(f float32) uint64 {
	b := math.Float32bits(f)
	return uint64((b + 0x7fff + (b>>16)&1) >> 16)
}

func narrowBF16(dst []byte, src []float32) {
	for len(src) >= 4 && len(dst) >= 8 {
		v := bf16Round(src[0]) | bf16Round(src[1])<<16 | bf16Round(src[2])<<32 | bf16Round(src[3])<<48
		binary.LittleEndian.PutUint64(dst, v)
		src, dst = src[4:], dst[8:]
	}
	for i, f := range src {
		binary.LittleEndian.PutUint16(dst[2*i:], uint16(bf16Round(f)))
	}
}

func narrowFP16(dst []byte, src []float32) {
	for len(src) >= 4 && len(dst) >= 8 {
		v := uint64(Float32ToFP16(src[0])) | uint64(Float32ToFP16(src[1]))<<16 |
			uint64(Float32ToFP16(src[2]))<<32 | uint64(Float32ToFP16(src[3]))<<48
		binary.LittleEndian.PutUint64(dst, v)
		src, dst = src[4:], dst[8:]
	}
	for i, f := range src {
		binary.LittleEndian.PutUint16(dst[2*i:], Float32ToFP16(f))
	}
}

// Quantizers. x*inv lies in [-qmax, qmax] up to one rounding of inv and one
// of the product (a relative 2^-23), so the rounded integer codes cannot
// leave the range and need no clamping; e4m3 saturates by itself.

func quantInt8Vec(dst []byte, x, inv []float32) {
	for len(x) >= 4 && len(inv) >= 4 && len(dst) >= 4 {
		dst[0] = byte(toInt(x[0] * inv[0]))
		dst[1] = byte(toInt(x[1] * inv[1]))
		dst[2] = byte(toInt(x[2] * inv[2]))
		dst[3] = byte(toInt(x[3] * inv[3]))
		x, inv, dst = x[4:], inv[4:], dst[4:]
	}
	inv, dst = inv[:len(x)], dst[:len(x)]
	for i, v := range x {
		dst[i] = byte(toInt(v * inv[i]))
	}
}

func quantInt8(dst []byte, x []float32, inv float32) {
	for len(x) >= 4 && len(dst) >= 4 {
		dst[0] = byte(toInt(x[0] * inv))
		dst[1] = byte(toInt(x[1] * inv))
		dst[2] = byte(toInt(x[2] * inv))
		dst[3] = byte(toInt(x[3] * inv))
		x, dst = x[4:], dst[4:]
	}
	dst = dst[:len(x)]
	for i, v := range x {
		dst[i] = byte(toInt(v * inv))
	}
}

// Int4 codes go through an int8 row so that packing two per byte does not
// care where the channel groups end.

func quantInt4Vec(dst []int8, x, inv []float32) {
	inv, dst = inv[:len(x)], dst[:len(x)]
	for i, v := range x {
		dst[i] = int8(toInt(v * inv[i]))
	}
}

func quantInt4(dst []int8, x []float32, inv float32) {
	dst = dst[:len(x)]
	for i, v := range x {
		dst[i] = int8(toInt(v * inv))
	}
}

// packInt4 stores codes two per byte, even index in the low nibble; an odd
// count leaves the last high nibble zero.
func packInt4(dst []byte, q []int8) {
	for len(q) >= 2 && len(dst) >= 1 {
		dst[0] = byte(q[0])&0x0f | byte(q[1])<<4
		q, dst = q[2:], dst[1:]
	}
	if len(q) == 1 {
		dst[0] = byte(q[0]) & 0x0f
	}
}

func unpackInt4(dst []int8, src []byte) {
	for len(dst) >= 2 && len(src) >= 1 {
		b := src[0]
		dst[0] = int8(b<<4) >> 4
		dst[1] = int8(b) >> 4
		dst, src = dst[2:], src[1:]
	}
	if len(dst) == 1 {
		dst[0] = int8(src[0]<<4) >> 4
	}
}

// e4m3 rounds y (already scaled into the fp8 range) to float8_e4m3fn,
// nearest even, saturating at +-448 (the format has no infinity).
func e4m3(y float32) byte {
	b := math.Float32bits(y)
	sign := byte(b>>24) & 0x80
	a := b & 0x7fffffff
	if a >= 0x3c800000 { // |y| >= 2^-6: normal
		a += 0x7ffff + (a>>20)&1
		c := min((a>>20)-(127-7)<<3, 0x7e)
		return sign | byte(c)
	}
	// Subnormal: multiples of 2^-9. 2^14 has a float32 ulp of 2^-9, so the
	// addition rounds |y| to that grid, nearest even; 8 units is 2^-6, which
	// is also the right code for the smallest normal.
	return sign | byte(math.Float32bits(math.Float32frombits(a)+0x1p14)-0x46800000)
}

// e4m3Table maps every float8_e4m3fn code to its value (0x7f and 0xff are NaN).
func e4m3Table(t *[256]float32) {
	for c := 0; c < 128; c++ {
		e, m := c>>3, float64(c&7)
		var v float64
		if e == 0 {
			v = m * 0x1p-9
		} else {
			v = (1 + m/8) * math.Ldexp(1, e-7)
		}
		t[c], t[c+128] = float32(v), float32(-v)
	}
	t[0x7f], t[0xff] = float32(math.NaN()), float32(math.NaN())
}

func quantFP8Vec(dst []byte, x, inv []float32) {
	inv, dst = inv[:len(x)], dst[:len(x)]
	for i, v := range x {
		dst[i] = e4m3(v * inv[i])
	}
}

func quantFP8(dst []byte, x []float32, inv float32) {
	dst = dst[:len(x)]
	for i, v := range x {
		dst[i] = e4m3(v * inv)
	}
}

// Dequantizers.

func dequantInt8Vec(x []float32, src []byte, scale []float32) {
	for len(x) >= 4 && len(src) >= 4 && len(scale) >= 4 {
		x[0] = float32(int8(src[0])) * scale[0]
		x[1] = float32(int8(src[1])) * scale[1]
		x[2] = float32(int8(src[2])) * scale[2]
		x[3] = float32(int8(src[3])) * scale[3]
		x, src, scale = x[4:], src[4:], scale[4:]
	}
	src, scale = src[:len(x)], scale[:len(x)]
	for i := range x {
		x[i] = float32(int8(src[i])) * scale[i]
	}
}

func dequantInt8(x []float32, src []byte, scale float32) {
	for len(x) >= 4 && len(src) >= 4 {
		x[0] = float32(int8(src[0])) * scale
		x[1] = float32(int8(src[1])) * scale
		x[2] = float32(int8(src[2])) * scale
		x[3] = float32(int8(src[3])) * scale
		x, src = x[4:], src[4:]
	}
	src = src[:len(x)]
	for i := range x {
		x[i] = float32(int8(src[i])) * scale
	}
}

func dequantCodesVec(x []float32, q []int8, scale []float32) {
	q, scale = q[:len(x)], scale[:len(x)]
	for i := range x {
		x[i] = float32(q[i]) * scale[i]
	}
}

func dequantCodes(x []float32, q []int8, scale float32) {
	q = q[:len(x)]
	for i := range x {
		x[i] = float32(q[i]) * scale
	}
}

func dequantFP8Vec(x []float32, src []byte, scale []float32, t *[256]float32) {
	src, scale = src[:len(x)], scale[:len(x)]
	for i := range x {
		x[i] = t[src[i]] * scale[i]
	}
}

func dequantFP8(x []float32, src []byte, scale float32, t *[256]float32) {
	src = src[:len(x)]
	for i := range x {
		x[i] = t[src[i]] * scale
	}
}
