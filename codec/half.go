package codec

import "math"

// Scalar conversions between the 16-bit float formats and float32. The row
// loops in kernels.go inline these; they are exported through the tests only.

// BF16ToFloat32 widens a bfloat16 (given as its bits) to float32; exact.
func BF16ToFloat32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// Float32ToBF16 rounds f to the nearest bfloat16, ties to even. Overflow
// gives infinity, NaN stays NaN (quiet, sign kept), subnormals round like
// any other value since bfloat16 shares float32's exponent.
func Float32ToBF16(f float32) uint16 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 { // NaN: keep it NaN even if the payload sits in the low bits
		return uint16(b>>16) | 0x0040
	}
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}

// FP16ToFloat32 widens an IEEE half (given as its bits) to float32; exact,
// subnormals, infinities and NaN payloads included.
func FP16ToFloat32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	a := uint32(h & 0x7fff)
	switch {
	case a >= 0x7c00: // inf or NaN
		return math.Float32frombits(sign | 0x7f800000 | (a&0x3ff)<<13)
	case a >= 0x0400: // normal: rebias the exponent by 127-15
		return math.Float32frombits(sign | (a<<13 + (127-15)<<23))
	default: // zero or subnormal: a * 2^-24, exact in float32
		return math.Float32frombits(sign | math.Float32bits(float32(a)*0x1p-24))
	}
}

// Float32ToFP16 rounds f to the nearest IEEE half, ties to even: values
// beyond the half range become infinity, small ones become subnormals or
// zero, NaN stays NaN (quiet, sign kept).
func Float32ToFP16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	a := b & 0x7fffffff
	switch {
	case a > 0x7f800000: // NaN
		return sign | 0x7e00 | uint16(a>>13)&0x3ff
	case a >= 0x477ff000: // >= 65520, halfway to the next binade: rounds to inf
		return sign | 0x7c00
	case a >= 0x38800000: // >= 2^-14: normal half
		a += 0x0fff + (a>>13)&1 // round the 13 dropped bits to nearest even
		return sign | uint16((a-(127-15)<<23)>>13)
	default: // subnormal half or zero: adding 0.5 aligns 2^-24 with float32's last bit
		// 0.5 + |f| puts |f|/2^-24 in the low mantissa bits of a float32 whose
		// exponent is that of 0.5; the addition itself rounds to nearest even.
		return sign | uint16(math.Float32bits(math.Float32frombits(a)+0.5)-0x3f000000)
	}
}
