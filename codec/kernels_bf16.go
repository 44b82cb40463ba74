package codec

import (
	"encoding/binary"
	"math"
)

// Fused int8 kernels for bfloat16, the common case and the one with a
// throughput target: widening a bfloat16 is a shift, so quantizing straight
// from the raw row (and rounding straight into it when decoding) saves the
// float32 row's store and load. Each loop body handles four elements: an
// 8-byte window of the 16-bit data, taken as two 32-bit halves whose top and
// bottom 16 bits are one bfloat16 each, and four bytes of codes.

// b2f is the bfloat16 whose bits are the top half of b, as float32.
func b2f(b uint32) float32 { return math.Float32frombits(b) }

func quantInt8VecBF16(dst, src []byte, inv []float32) {
	n := len(inv)
	src, dst = src[:2*n], dst[:n]
	i := 0
	for ; i <= n-4; i += 4 {
		w, s, d := src[2*i:2*i+8:2*i+8], inv[i:i+4:i+4], dst[i:i+4:i+4]
		lo, hi := binary.LittleEndian.Uint32(w), binary.LittleEndian.Uint32(w[4:])
		d[0] = q8(b2f(lo<<16), s[0])
		d[1] = q8(b2f(lo&0xffff0000), s[1])
		d[2] = q8(b2f(hi<<16), s[2])
		d[3] = q8(b2f(hi&0xffff0000), s[3])
	}
	for ; i < n; i++ {
		dst[i] = q8(b2f(uint32(binary.LittleEndian.Uint16(src[2*i:]))<<16), inv[i])
	}
}

func quantInt8BF16(dst, src []byte, inv float32) {
	n := len(src) / 2
	src, dst = src[:2*n], dst[:n]
	i := 0
	for ; i <= n-4; i += 4 {
		w, d := src[2*i:2*i+8:2*i+8], dst[i:i+4:i+4]
		lo, hi := binary.LittleEndian.Uint32(w), binary.LittleEndian.Uint32(w[4:])
		d[0] = q8(b2f(lo<<16), inv)
		d[1] = q8(b2f(lo&0xffff0000), inv)
		d[2] = q8(b2f(hi<<16), inv)
		d[3] = q8(b2f(hi&0xffff0000), inv)
	}
	for ; i < n; i++ {
		dst[i] = q8(b2f(uint32(binary.LittleEndian.Uint16(src[2*i:]))<<16), inv)
	}
}

func dequantInt8VecBF16(dst, src []byte, scale []float32) {
	n := len(scale)
	src, dst = src[:n], dst[:2*n]
	i := 0
	for ; i <= n-4; i += 4 {
		c, s, d := src[i:i+4:i+4], scale[i:i+4:i+4], dst[2*i:2*i+8:2*i+8]
		lo := r16(float32(int8(c[0]))*s[0])>>16 | r16(float32(int8(c[1]))*s[1])&0xffff0000
		hi := r16(float32(int8(c[2]))*s[2])>>16 | r16(float32(int8(c[3]))*s[3])&0xffff0000
		binary.LittleEndian.PutUint32(d, lo)
		binary.LittleEndian.PutUint32(d[4:], hi)
	}
	for ; i < n; i++ {
		binary.LittleEndian.PutUint16(dst[2*i:], uint16(r16(float32(int8(src[i]))*scale[i])>>16))
	}
}

func dequantInt8BF16(dst, src []byte, scale float32) {
	n := len(dst) / 2
	src, dst = src[:n], dst[:2*n]
	i := 0
	for ; i <= n-4; i += 4 {
		c, d := src[i:i+4:i+4], dst[2*i:2*i+8:2*i+8]
		lo := r16(float32(int8(c[0]))*scale)>>16 | r16(float32(int8(c[1]))*scale)&0xffff0000
		hi := r16(float32(int8(c[2]))*scale)>>16 | r16(float32(int8(c[3]))*scale)&0xffff0000
		binary.LittleEndian.PutUint32(d, lo)
		binary.LittleEndian.PutUint32(d[4:], hi)
	}
	for ; i < n; i++ {
		binary.LittleEndian.PutUint16(dst[2*i:], uint16(r16(float32(int8(src[i]))*scale)>>16))
	}
}
