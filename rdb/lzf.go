package rdb

import "errors"

// LZF as Redis's lzf_c.c and lzf_d.c (liblzf 3.6 with HLOG 16 and
// VERY_FAST): the compressor is ported step for step, since DUMP's bytes
// depend on its exact choices.

const (
	lzfHashLog = 16
	lzfHSize   = 1 << lzfHashLog
	lzfMaxLit  = 1 << 5
	lzfMaxOff  = 1 << 13
	lzfMaxRef  = (1 << 8) + (1 << 3)
)

func lzfIdx(h uint32) uint32 { return ((h >> (3*8 - lzfHashLog)) - h*5) & (lzfHSize - 1) }

// lzfCompress compresses in into at most outLen bytes and returns them, or
// nil when the result would not fit (lzf_compress returning 0).
func lzfCompress(in []byte, outLen int) []byte {
	inLen := len(in)
	if inLen == 0 || outLen == 0 {
		return nil
	}
	// htab holds positions+1; 0 is an empty slot, which never matches (the
	// C table is uninitialised, and its checks reject what it holds).
	htab := make([]int32, lzfHSize)
	out := make([]byte, outLen)
	ip, op := 0, 0
	lit := 0
	op++ // start run
	first := func(p int) uint32 { return uint32(in[p])<<8 | uint32(in[p+1]) }
	next := func(v uint32, p int) uint32 { return v<<8 | uint32(in[p+2]) }
	// literal copies one byte, closing the run at its maximum length.
	literal := func() {
		lit++
		out[op] = in[ip]
		op++
		ip++
		if lit == lzfMaxLit {
			out[op-lit-1] = byte(lit - 1) // stop run
			lit = 0
			op++ // start run
		}
	}
	hval := first(ip)
	for ip < inLen-2 {
		hval = next(hval, ip)
		slot := lzfIdx(hval)
		ref := int(htab[slot]) - 1
		htab[slot] = int32(ip + 1)
		if ref > 0 && ref < ip && ip-ref-1 < lzfMaxOff &&
			in[ref] == in[ip] && in[ref+1] == in[ip+1] && in[ref+2] == in[ip+2] {
			off := ip - ref - 1
			length := 2
			maxlen := inLen - ip - length
			if maxlen > lzfMaxRef {
				maxlen = lzfMaxRef
			}
			out[op-lit-1] = byte(lit - 1) // stop run
			if lit == 0 {
				op-- // undo run if length is zero
			}
			if op+3+1 >= outLen {
				return nil
			}
			// As the C loop: 16 unchecked steps when maxlen > 16, then one
			// that stops at maxlen.
			mismatch := false
			if maxlen > 16 {
				for k := 0; k < 16 && !mismatch; k++ {
					length++
					mismatch = in[ref+length] != in[ip+length]
				}
			}
			for !mismatch {
				length++
				mismatch = length >= maxlen || in[ref+length] != in[ip+length]
			}
			length -= 2 // now octets - 1
			ip++
			if length < 7 {
				out[op] = byte(off>>8 + length<<5)
				op++
			} else {
				out[op] = byte(off>>8 + 7<<5)
				out[op+1] = byte(length - 7)
				op += 2
			}
			out[op] = byte(off)
			op++
			lit = 0
			op++ // start run
			ip += length + 1
			if ip >= inLen-2 {
				break
			}
			ip -= 2
			hval = first(ip)
			hval = next(hval, ip)
			htab[lzfIdx(hval)] = int32(ip + 1)
			ip++
			hval = next(hval, ip)
			htab[lzfIdx(hval)] = int32(ip + 1)
			ip++
			continue
		}
		if op >= outLen {
			return nil
		}
		literal()
	}
	if op+3 > outLen {
		return nil
	}
	for ip < inLen {
		literal()
	}
	out[op-lit-1] = byte(lit - 1) // end run
	if lit == 0 {
		op--
	}
	return out[:op]
}

var errLZF = errors.New("rdb: bad LZF data")

// lzfMaxExpansion is the most output LZF makes of one input byte: a long
// back reference, three bytes (control, extra length, offset), copies at
// most 7+255+2 = 264 bytes.
const lzfMaxExpansion = 264 / 3

// lzfDecompress expands in, which must give exactly n bytes.
func lzfDecompress(in []byte, n int) ([]byte, error) {
	// A payload of a few bytes may claim gigabytes: refuse a length that in
	// cannot expand to before allocating it.
	if n > len(in)*lzfMaxExpansion {
		return nil, errLZF
	}
	out := make([]byte, 0, n)
	for ip := 0; ip < len(in); {
		ctrl := int(in[ip])
		ip++
		if ctrl < 1<<5 { // literal run of ctrl+1 bytes
			ctrl++
			if ip+ctrl > len(in) || len(out)+ctrl > n {
				return nil, errLZF
			}
			out = append(out, in[ip:ip+ctrl]...)
			ip += ctrl
			continue
		}
		length := ctrl >> 5
		if length == 7 {
			if ip >= len(in) {
				return nil, errLZF
			}
			length += int(in[ip])
			ip++
		}
		if ip >= len(in) {
			return nil, errLZF
		}
		ref := len(out) - (ctrl&0x1f)<<8 - int(in[ip]) - 1
		ip++
		length += 2
		if ref < 0 || len(out)+length > n {
			return nil, errLZF
		}
		for i := 0; i < length; i++ { // may overlap: byte by byte
			out = append(out, out[ref+i])
		}
	}
	if len(out) != n {
		return nil, errLZF
	}
	return out, nil
}
