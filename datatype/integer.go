package datatype

import "bytes"

// ParseInt64 parses a decimal integer exactly like Redis's string2ll: no
// spaces, no '+', no leading zeros, no "-0", at most 20 characters. It is
// also the test of whether a set member can live in an intset.
func ParseInt64(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) >= 21 {
		return 0, false
	}
	if len(b) == 1 && b[0] == '0' {
		return 0, true
	}
	p, neg := bytes.CutPrefix(b, []byte{'-'})
	if len(p) == 0 || p[0] < '1' || p[0] > '9' {
		return 0, false
	}
	var v uint64
	for _, c := range p {
		if c < '0' || c > '9' {
			return 0, false
		}
		if v > (1<<64-1)/10 {
			return 0, false
		}
		v *= 10
		d := uint64(c - '0')
		if v > 1<<64-1-d {
			return 0, false
		}
		v += d
	}
	if neg {
		if v > 1<<63 {
			return 0, false
		}
		return -int64(v), true
	}
	if v > 1<<63-1 {
		return 0, false
	}
	return int64(v), true
}
