package hll

import (
	"encoding/binary"
	"errors"
	"iter"
	"math"
)

// The layout, as hyperloglog.c defines it.
const (
	// P is the number of hash bits that pick a register; Q the bits left
	// to count the run of zeroes in.
	P = 14
	Q = 64 - P
	// Registers is the number of registers, 16384.
	Registers = 1 << P
	pMask     = Registers - 1
	// Bits is the width of a dense register; RegisterMax its largest value.
	Bits        = 6
	RegisterMax = 1<<Bits - 1
	// HeaderSize is the size of the header: magic, encoding, three unused
	// bytes and the cached cardinality.
	HeaderSize = 16
	// DenseSize is the exact size of a dense value.
	DenseSize = HeaderSize + (Registers*Bits+7)/8
)

// Encoding is the header's encoding byte.
type Encoding byte

// The encodings a stored value may have.
const (
	Dense  Encoding = 0
	Sparse Encoding = 1
)

// Sparse opcodes (HLL_SPARSE_*).
const (
	sparseXZeroBit     = 0x40 // 01xxxxxx yyyyyyyy
	sparseValBit       = 0x80 // 1vvvvvxx
	sparseValMaxValue  = 32
	sparseValMaxLen    = 4
	sparseZeroMaxLen   = 64
	sparseXZeroMaxLen  = 16384
	alphaInf           = 0.721347520444481703680 // 0.5/ln(2)
	murmurSeed         = 0xadc83b19
	encodingByte       = 4
	cardinalityOffset  = 8
	staleCardinalityAt = 15
)

// ErrInvalid is returned for a value whose registers cannot be decoded
// (Redis's "INVALIDOBJ Corrupted HLL object detected").
var ErrInvalid = errors.New("hll: corrupted HLL object")

// at returns v[i], or 0 past its end: Redis reads one byte past a value's
// length, where an sds string keeps its terminating zero.
func at(v []byte, i int) byte {
	if i < len(v) {
		return v[i]
	}
	return 0
}

func isZero(b byte) bool  { return b&0xc0 == 0 }
func isXZero(b byte) bool { return b&0xc0 == sparseXZeroBit }
func isVal(b byte) bool   { return b&sparseValBit != 0 }
func zeroLen(b byte) int  { return int(b&0x3f) + 1 }
func xzeroLen(b0, b1 byte) int {
	return (int(b0&0x3f)<<8 | int(b1)) + 1
}
func valValue(b byte) int { return int(b>>2&0x1f) + 1 }
func valLen(b byte) int   { return int(b&0x3) + 1 }
func valOp(val, n int) byte {
	return byte((val-1)<<2|(n-1)) | sparseValBit
}
func zeroOp(n int) byte { return byte(n - 1) }
func xzeroOp(n int) (byte, byte) {
	l := n - 1
	return byte(l>>8) | sparseXZeroBit, byte(l & 0xff)
}

// run is one sparse opcode: n registers holding val (0 for ZERO and
// XZERO); kind is 'z' (ZERO), 'Z' (XZERO) or 'v' (VAL), as PFDEBUG DECODE
// prints them.
type run struct {
	kind   byte
	n, val int
}

// runs yields the sparse opcodes of v, header excluded, in order.
func runs(v []byte) iter.Seq[run] {
	return func(yield func(run) bool) {
		for p := HeaderSize; p < len(v); {
			var r run
			switch b := v[p]; {
			case isZero(b):
				r = run{'z', zeroLen(b), 0}
				p++
			case isXZero(b):
				r = run{'Z', xzeroLen(b, at(v, p+1)), 0}
				p += 2
			default:
				r = run{'v', valLen(b), valValue(b)}
				p++
			}
			if !yield(r) {
				return
			}
		}
	}
}

// Valid reports whether v passes Redis's isHLLObjectOrReply: at least a
// header, the HYLL magic, a known encoding and, when dense, exactly
// DenseSize bytes. The sparse registers are checked only as they are read.
func Valid(v []byte) bool {
	if len(v) < HeaderSize || string(v[:4]) != "HYLL" {
		return false
	}
	switch Encoding(v[encodingByte]) {
	case Dense:
		return len(v) == DenseSize
	case Sparse:
		return true
	}
	return false
}

// EncodingOf is v's encoding byte; v must be Valid.
func EncodingOf(v []byte) Encoding { return Encoding(v[encodingByte]) }

// New returns an empty value: sparse, registers all zero (XZERO:16384),
// cached cardinality 0 (createHLLObject).
func New() []byte {
	n := (Registers + sparseXZeroMaxLen - 1) / sparseXZeroMaxLen
	v := make([]byte, HeaderSize, HeaderSize+2*n)
	copy(v, "HYLL")
	v[encodingByte] = byte(Sparse)
	for left := Registers; left > 0; {
		x := min(left, sparseXZeroMaxLen)
		b0, b1 := xzeroOp(x)
		v = append(v, b0, b1)
		left -= x
	}
	return v
}

// CachedCardinality returns the cached cardinality of v and whether it is
// current (the top bit clear).
func CachedCardinality(v []byte) (uint64, bool) {
	return binary.LittleEndian.Uint64(v[cardinalityOffset:]), v[staleCardinalityAt]&0x80 == 0
}

// SetCachedCardinality stores card as v's cached cardinality.
func SetCachedCardinality(v []byte, card uint64) {
	binary.LittleEndian.PutUint64(v[cardinalityOffset:], card)
}

// InvalidateCache marks v's cached cardinality stale (HLL_INVALIDATE_CACHE).
func InvalidateCache(v []byte) { v[staleCardinalityAt] |= 0x80 }

// MurmurHash64A is MurmurHash2, 64-bit version, reading the key as little
// endian on every machine, as Redis does.
func MurmurHash64A(key []byte, seed uint64) uint64 {
	const m = 0xc6a4a7935bd1e995
	const r = 47
	h := seed ^ uint64(len(key))*m
	for len(key) >= 8 {
		k := binary.LittleEndian.Uint64(key)
		k *= m
		k ^= k >> r
		k *= m
		h ^= k
		h *= m
		key = key[8:]
	}
	if n := len(key); n > 0 {
		for i := n - 1; i >= 0; i-- {
			h ^= uint64(key[i]) << (8 * i)
		}
		h *= m
	}
	h ^= h >> r
	h *= m
	h ^= h >> r
	return h
}

// PatLen hashes ele and returns the register it addresses and the length
// of the 000..1 pattern in the rest of the hash, 1 to Q+1 (hllPatLen).
func PatLen(ele []byte) (index int, count int) {
	hash := MurmurHash64A(ele, murmurSeed)
	index = int(hash & pMask)
	hash >>= P
	hash |= 1 << Q // the loop ends with count <= Q+1
	count = 1
	for bit := uint64(1); hash&bit == 0; bit <<= 1 {
		count++
	}
	return index, count
}

// denseGet returns register i of the dense registers regs.
func denseGet(regs []byte, i int) int {
	b := i * Bits / 8
	fb := uint(i * Bits & 7)
	b0, b1 := uint(regs[b]), uint(at(regs, b+1))
	return int((b0>>fb | b1<<(8-fb)) & RegisterMax)
}

// denseSetRegister sets register i of regs to val (HLL_DENSE_SET_REGISTER).
func denseSetRegister(regs []byte, i, val int) {
	b := i * Bits / 8
	fb := uint(i * Bits & 7)
	v := uint(val)
	regs[b] &^= byte(RegisterMax << fb)
	regs[b] |= byte(v << fb)
	if b+1 < len(regs) {
		regs[b+1] &^= byte(RegisterMax >> (8 - fb))
		regs[b+1] |= byte(v >> (8 - fb))
	}
}

// denseSet raises register index to count if it is lower, reporting
// whether it changed (hllDenseSet).
func denseSet(regs []byte, index, count int) bool {
	if count > denseGet(regs, index) {
		denseSetRegister(regs, index, count)
		return true
	}
	return false
}

// Histogram counts registers by value: Histogram[v] registers hold v.
type Histogram [64]int

// denseHisto adds the dense registers to h (hllDenseRegHisto).
func denseHisto(regs []byte, h *Histogram) {
	for i := range Registers {
		h[denseGet(regs, i)]++
	}
}

// sparseHisto adds the registers of the sparse value v to h, reporting
// false when its opcodes do not cover exactly Registers registers
// (hllSparseRegHisto).
func sparseHisto(v []byte, h *Histogram) bool {
	idx := 0
	for r := range runs(v) {
		idx += r.n
		h[r.val] += r.n
	}
	return idx == Registers
}

// sigma is Ertl's sigma function ("New cardinality estimation algorithms
// for HyperLogLog sketches", arXiv:1702.01284).
func sigma(x float64) float64 {
	if x == 1 {
		return math.Inf(1)
	}
	y := 1.0
	z := x
	for {
		x *= x
		zPrime := z
		z += float64(x * y) // no fused multiply-add: Redis rounds twice
		y += y
		if zPrime == z {
			return z
		}
	}
}

// tau is Ertl's tau function.
func tau(x float64) float64 {
	if x == 0 || x == 1 {
		return 0
	}
	y := 1.0
	z := 1 - x
	for {
		x = math.Sqrt(x)
		zPrime := z
		y *= 0.5
		z -= float64(math.Pow(1-x, 2) * y)
		if zPrime == z {
			return z / 3
		}
	}
}

// Estimate is the cardinality the register histogram h gives (the
// estimator of hllCount).
func (h *Histogram) Estimate() uint64 {
	const m = float64(Registers)
	z := float64(m * tau((m-float64(h[Q+1]))/m))
	for j := Q; j >= 1; j-- {
		z += float64(h[j])
		z *= 0.5
	}
	z += float64(m * sigma(float64(h[0])/m))
	return uint64(math.Round(float64(float64(alphaInf*m)*m) / z))
}

// Count computes the cardinality of the valid value v, ignoring its cache
// (hllCount). It fails with ErrInvalid when sparse opcodes do not cover
// exactly the registers.
func Count(v []byte) (uint64, error) {
	var h Histogram
	if EncodingOf(v) == Dense {
		denseHisto(v[HeaderSize:], &h)
	} else if !sparseHisto(v, &h) {
		return 0, ErrInvalid
	}
	return h.Estimate(), nil
}

// Add adds ele to the valid value v, which the caller owns; it returns the
// value to keep and whether a register changed (hllAdd). v may become
// dense when sparse would exceed sparseMax bytes.
func Add(v, ele []byte, sparseMax int64) ([]byte, bool, error) {
	index, count := PatLen(ele)
	if EncodingOf(v) == Dense {
		return v, denseSet(v[HeaderSize:], index, count), nil
	}
	return sparseSet(v, index, count, sparseMax)
}

// ToDense returns the dense form of the valid value v: v itself when it is
// dense, else a new value with v's header (cached cardinality included)
// and its registers (hllSparseToDense).
func ToDense(v []byte) ([]byte, error) {
	if EncodingOf(v) == Dense {
		return v, nil
	}
	dense := make([]byte, DenseSize)
	copy(dense, v[:HeaderSize])
	dense[encodingByte] = byte(Dense)
	// Merging into empty registers decodes them, with Merge's checks.
	raw := make([]byte, Registers)
	if err := Merge(raw, v); err != nil {
		return nil, err
	}
	regs := dense[HeaderSize:]
	for i, r := range raw {
		if r != 0 {
			denseSetRegister(regs, i, int(r))
		}
	}
	return dense, nil
}

// sparseSet raises register index of the sparse value v to count if it is
// lower (hllSparseSet): it splits the opcode covering the register, merges
// equal neighbouring VAL opcodes, and turns v dense when count does not
// fit a VAL opcode or v would grow past sparseMax bytes. It reports
// whether the register changed, or ErrInvalid for opcodes that do not
// cover the register.
func sparseSet(v []byte, index, count int, sparseMax int64) ([]byte, bool, error) {
	if count > sparseValMaxValue {
		return promote(v, index, count)
	}
	// Step 1: find the opcode that covers the register.
	end := len(v)
	p, first, span, prev := HeaderSize, 0, 0, -1
	for p < end {
		oplen := 1
		switch b := v[p]; {
		case isZero(b):
			span = zeroLen(b)
		case isVal(b):
			span = valLen(b)
		default:
			span = xzeroLen(b, at(v, p+1))
			oplen = 2
		}
		if index <= first+span-1 {
			break
		}
		prev = p
		p += oplen
		first += span
	}
	if span == 0 || p >= end {
		return v, false, ErrInvalid
	}
	op := v[p]
	oldlen := 1
	var runlen int
	switch {
	case isZero(op):
		runlen = zeroLen(op)
	case isXZero(op):
		runlen = xzeroLen(op, at(v, p+1))
		oldlen = 2
	default:
		runlen = valLen(op)
	}

	switch {
	case isVal(op) && valValue(op) >= count:
		// Case A: the register already holds as much.
		return v, false, nil
	case (isVal(op) || isZero(op)) && runlen == 1:
		// Cases B and C: the opcode covers only this register.
		v[p] = valOp(count, 1)
	default:
		// Case D: split the opcode into up to three (XZERO-VAL-XZERO at
		// worst, five bytes).
		var seq [5]byte
		n := 0
		last := first + span - 1
		zeros := func(l int) {
			if l > sparseZeroMaxLen {
				seq[n], seq[n+1] = xzeroOp(l)
				n += 2
			} else {
				seq[n] = zeroOp(l)
				n++
			}
		}
		if isVal(op) {
			cur := valValue(op)
			if index != first {
				seq[n] = valOp(cur, index-first)
				n++
			}
			seq[n] = valOp(count, 1)
			n++
			if index != last {
				seq[n] = valOp(cur, last-index)
				n++
			}
		} else {
			if index != first {
				zeros(index - first)
			}
			seq[n] = valOp(count, 1)
			n++
			if index != last {
				zeros(last - index)
			}
		}
		// Step 3: put the new sequence in place of the opcode.
		delta := n - oldlen
		if delta > 0 && int64(len(v)+delta) > sparseMax {
			return promote(v, index, count)
		}
		next := min(p+oldlen, end)
		out := make([]byte, 0, len(v)+delta+3)
		out = append(out, v[:p]...)
		out = append(out, seq[:n]...)
		out = append(out, v[next:]...)
		// An XZERO cut off at the end of v counted a byte v lacks, as in
		// Redis, which keeps len(v)+delta bytes.
		v = out[:len(v)+delta]
		end = len(v)
	}

	// Step 4: merge adjacent VAL opcodes of equal value, scanning up to five
	// opcodes from the one before the change.
	if prev >= 0 {
		p = prev
	} else {
		p = HeaderSize
	}
	for scan := 5; p < end && scan > 0; scan-- {
		b := v[p]
		if isXZero(b) {
			p += 2
			continue
		}
		if isZero(b) {
			p++
			continue
		}
		if p+1 < end && isVal(v[p+1]) {
			v1, v2 := valValue(b), valValue(v[p+1])
			if l := valLen(b) + valLen(v[p+1]); v1 == v2 && l <= sparseValMaxLen {
				v[p+1] = valOp(v1, l)
				v = append(v[:p], v[p+1:]...)
				end--
				continue // try the merged opcode with the next one
			}
		}
		p++
	}
	InvalidateCache(v)
	return v, true, nil
}

// promote turns the sparse v dense and sets the register there.
func promote(v []byte, index, count int) ([]byte, bool, error) {
	dense, err := ToDense(v)
	if err != nil {
		return v, false, err
	}
	denseSet(dense[HeaderSize:], index, count)
	return dense, true, nil
}

// Merge raises each of the Registers bytes of into to the register of the
// valid value v where that is higher (hllMerge). It fails with ErrInvalid
// for sparse opcodes that do not cover exactly the registers; into may then
// have been changed.
func Merge(into []byte, v []byte) error {
	if EncodingOf(v) == Dense {
		regs := v[HeaderSize:]
		for i := range Registers {
			into[i] = max(into[i], byte(denseGet(regs, i)))
		}
		return nil
	}
	i := 0
	for r := range runs(v) {
		// A run past the last register makes the value invalid: the
		// check Redis 7.0.15 as Debian ships it has (CVE-2025-32023).
		if i+r.n > Registers {
			return ErrInvalid
		}
		if r.val == 0 {
			i += r.n
			continue
		}
		for range r.n {
			into[i] = max(into[i], byte(r.val))
			i++
		}
	}
	if i != Registers {
		return ErrInvalid
	}
	return nil
}

// RawEstimate is the cardinality of Registers one-byte registers, the
// union PFCOUNT computes over several keys.
func RawEstimate(regs []byte) uint64 {
	var h Histogram
	for _, r := range regs[:Registers] {
		h[r]++
	}
	return h.Estimate()
}

// Set raises register index of the valid value v to count where it is
// lower, as PFMERGE writes its result; it returns the value to keep.
func Set(v []byte, index, count int, sparseMax int64) []byte {
	if EncodingOf(v) == Dense {
		denseSet(v[HeaderSize:], index, count)
		return v
	}
	nv, _, err := sparseSet(v, index, count, sparseMax)
	if err != nil {
		return v // Redis ignores the failure here too
	}
	return nv
}

// DenseRegisters returns the registers of the valid dense value v.
func DenseRegisters(v []byte) []int {
	regs := make([]int, Registers)
	for i := range regs {
		regs[i] = denseGet(v[HeaderSize:], i)
	}
	return regs
}
