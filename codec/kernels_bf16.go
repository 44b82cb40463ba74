package codec

import (
	"encoding/binary"
	"math"
)

// Fused int8 kernels for bfloat16, the common case and the one with a
// throughput target: widening a bfloat16 is a shift, so quantizing straight
// from the raw row (and rounding straight into it when decoding) saves the
// float32 row's store and load. Each loop body handles four elements with
// one 8-byte load or store of the 16-bit data and one 4-byte store or load
// of the codes.

// i8 quantizes one bfloat16 (in the low 16 bits of h) with inverse scale inv.
func i8(h uint64, inv float32) uint32 {
	return uint32(toInt(math.Float32frombits(uint32(h)<<16)*inv)) & 0xff
}

func quantInt8VecBF16(dst, src []byte, inv []float32) {
	n := len(inv)
	src, dst = src[:2*n], dst[:n]
	i := 0
	for ; i+4 <= n; i += 4 {
		v := binary.LittleEndian.Uint64(src[2*i:])
		s := inv[i : i+4 : i+4]
		q := i8(v, s[0]) | i8(v>>16, s[1])<<8 | i8(v>>32, s[2])<<16 | i8(v>>48, s[3])<<24
		binary.LittleEndian.PutUint32(dst[i:], q)
	}
	for ; i < n; i++ {
		dst[i] = byte(i8(uint64(binary.LittleEndian.Uint16(src[2*i:])), inv[i]))
	}
}

func quantInt8BF16(dst, src []byte, inv float32) {
	n := len(src) / 2
	dst = dst[:n]
	i := 0
	for ; i+4 <= n; i += 4 {
		v := binary.LittleEndian.Uint64(src[2*i:])
		q := i8(v, inv) | i8(v>>16, inv)<<8 | i8(v>>32, inv)<<16 | i8(v>>48, inv)<<24
		binary.LittleEndian.PutUint32(dst[i:], q)
	}
	for ; i < n; i++ {
		dst[i] = byte(i8(uint64(binary.LittleEndian.Uint16(src[2*i:])), inv))
	}
}

// bf16Of dequantizes the int8 code in the low byte of c with scale s and
// rounds it to bfloat16 (see bf16Round).
func bf16Of(c uint32, s float32) uint64 { return bf16Round(float32(int8(c)) * s) }

func dequantInt8VecBF16(dst, src []byte, scale []float32) {
	n := len(scale)
	src, dst = src[:n], dst[:2*n]
	i := 0
	for ; i+4 <= n; i += 4 {
		c := binary.LittleEndian.Uint32(src[i:])
		s := scale[i : i+4 : i+4]
		v := bf16Of(c, s[0]) | bf16Of(c>>8, s[1])<<16 | bf16Of(c>>16, s[2])<<32 | bf16Of(c>>24, s[3])<<48
		binary.LittleEndian.PutUint64(dst[2*i:], v)
	}
	for ; i < n; i++ {
		binary.LittleEndian.PutUint16(dst[2*i:], uint16(bf16Of(uint32(src[i]), scale[i])))
	}
}

func dequantInt8BF16(dst, src []byte, scale float32) {
	n := len(dst) / 2
	src = src[:n]
	i := 0
	for ; i+4 <= n; i += 4 {
		c := binary.LittleEndian.Uint32(src[i:])
		v := bf16Of(c, scale) | bf16Of(c>>8, scale)<<16 | bf16Of(c>>16, scale)<<32 | bf16Of(c>>24, scale)<<48
		binary.LittleEndian.PutUint64(dst[2*i:], v)
	}
	for ; i < n; i++ {
		binary.LittleEndian.PutUint16(dst[2*i:], uint16(bf16Of(uint32(src[i]), scale)))
	}
}
