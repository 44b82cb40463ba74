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
// load or store of 16-bit data, cut their slices to length before the loop
// and take 3-index sub-slices of constant size inside it (one bounds check
// per 4 elements, none per element, no pointer masking), and avoid
// branches that depend on the data. There is no per-element allocation and
// no per-element function call that is not inlined.

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
	full := len(row) / 8
	m, row = m[:(len(row)/2+3)/4], row[:len(row)&^1]
	for i := range m[:full] {
		m[i] = maxLanes(binary.LittleEndian.Uint64(row[8*i:8*i+8:8*i+8])&lanesAbs, m[i])
	}
	if full < len(m) {
		m[full] = maxLanes(load64(row[8*full:])&lanesAbs, m[full])
	}
}

// halfAbsMax is the largest magnitude in a run of 16-bit floats, as bits.
func halfAbsMax(row []byte) uint16 {
	var m uint64
	full := len(row) / 8
	for i := 0; i < full; i++ {
		m = maxLanes(binary.LittleEndian.Uint64(row[8*i:8*i+8:8*i+8])&lanesAbs, m)
	}
	m = maxLanes(load64(row[8*full:])&lanesAbs, m)
	m = maxLanes(m>>32, m&0xffffffff)
	return uint16(max(m>>16, m&0xffff))
}

// Widening. The encoder widens only data it has already found finite.

func widenBF16(dst []float32, src []byte) {
	n := len(dst)
	src = src[:2*n]
	i := 0
	for ; i <= n-4; i += 4 {
		w, d := src[2*i:2*i+8:2*i+8], dst[i:i+4:i+4]
		lo, hi := binary.LittleEndian.Uint32(w), binary.LittleEndian.Uint32(w[4:])
		d[0] = math.Float32frombits(lo << 16)
		d[1] = math.Float32frombits(lo & 0xffff0000)
		d[2] = math.Float32frombits(hi << 16)
		d[3] = math.Float32frombits(hi & 0xffff0000)
	}
	for ; i < n; i++ {
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
	n := len(dst)
	src = src[:2*n]
	i := 0
	for ; i <= n-4; i += 4 {
		v, d := binary.LittleEndian.Uint64(src[2*i:2*i+8:2*i+8]), dst[i:i+4:i+4]
		d[0] = fp16Finite(uint32(v))
		d[1] = fp16Finite(uint32(v >> 16))
		d[2] = fp16Finite(uint32(v >> 32))
		d[3] = fp16Finite(uint32(v >> 48))
	}
	for ; i < n; i++ {
		dst[i] = fp16Finite(uint32(binary.LittleEndian.Uint16(src[2*i:])))
	}
}

// Narrowing. Decoded values are products of a code and a finite,
// non-negative scale: finite or infinite, and NaN only where an fp8 code is
// NaN (the quiet NaN of the table, which rounds to a NaN). So bfloat16
// rounding can skip Float32ToBF16's NaN test.

// r16 rounds a float32 to bfloat16, nearest even, leaving it in the top
// half of the result (the low half is garbage): a pair of lanes packs as
// r16(a)>>16 | r16(b)&0xffff0000.
func r16(f float32) uint32 {
	b := math.Float32bits(f)
	return b + 0x7fff + (b>>16)&1
}

func narrowBF16(dst []byte, src []float32) {
	n := len(src)
	dst = dst[:2*n]
	i := 0
	for ; i <= n-4; i += 4 {
		s, d := src[i:i+4:i+4], dst[2*i:2*i+8:2*i+8]
		binary.LittleEndian.PutUint32(d, r16(s[0])>>16|r16(s[1])&0xffff0000)
		binary.LittleEndian.PutUint32(d[4:], r16(s[2])>>16|r16(s[3])&0xffff0000)
	}
	for ; i < n; i++ {
		binary.LittleEndian.PutUint16(dst[2*i:], uint16(r16(src[i])>>16))
	}
}

func narrowFP16(dst []byte, src []float32) {
	n := len(src)
	dst = dst[:2*n]
	i := 0
	for ; i <= n-4; i += 4 {
		s := src[i : i+4 : i+4]
		v := uint64(Float32ToFP16(s[0])) | uint64(Float32ToFP16(s[1]))<<16 |
			uint64(Float32ToFP16(s[2]))<<32 | uint64(Float32ToFP16(s[3]))<<48
		binary.LittleEndian.PutUint64(dst[2*i:2*i+8:2*i+8], v)
	}
	for ; i < n; i++ {
		binary.LittleEndian.PutUint16(dst[2*i:], Float32ToFP16(src[i]))
	}
}

// Quantizers. x*inv lies in [-qmax, qmax] up to one rounding of inv and one
// of the product (a relative 2^-23), so the rounded integer codes cannot
// leave the range and need no clamping; e4m3 saturates by itself.

// q8 quantizes x with inverse scale inv. The low byte of
// x*inv+roundMagic's bits is the rounded integer's low byte, two's
// complement included, so the byte needs no subtraction.
func q8(x, inv float32) byte { return byte(math.Float32bits(x*inv + roundMagic)) }

func quantInt8Vec(dst []byte, x, inv []float32) {
	n := len(x)
	inv, dst = inv[:n], dst[:n]
	for i, v := range x {
		dst[i] = q8(v, inv[i])
	}
}

func quantInt8(dst []byte, x []float32, inv float32) {
	dst = dst[:len(x)]
	for i, v := range x {
		dst[i] = q8(v, inv)
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
	n := len(q) / 2
	dst = dst[:(len(q)+1)/2]
	for i := range dst[:n] {
		p := q[2*i : 2*i+2 : 2*i+2]
		dst[i] = byte(p[0])&0x0f | byte(p[1])<<4
	}
	if len(q)%2 == 1 {
		dst[n] = byte(q[len(q)-1]) & 0x0f
	}
}

func unpackInt4(dst []int8, src []byte) {
	n := len(dst) / 2
	src = src[:(len(dst)+1)/2]
	for i, b := range src[:n] {
		p := dst[2*i : 2*i+2 : 2*i+2]
		p[0] = int8(b<<4) >> 4
		p[1] = int8(b) >> 4
	}
	if len(dst)%2 == 1 {
		dst[len(dst)-1] = int8(src[n]<<4) >> 4
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
	src, scale = src[:len(x)], scale[:len(x)]
	for i := range x {
		x[i] = float32(int8(src[i])) * scale[i]
	}
}

func dequantInt8(x []float32, src []byte, scale float32) {
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
