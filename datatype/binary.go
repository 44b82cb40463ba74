package datatype

import (
	"encoding/binary"
	"fmt"
	"math"
)

// The disk encodings are sequences of uvarints and length-prefixed strings.

func appendUvarint(dst []byte, v uint64) []byte { return binary.AppendUvarint(dst, v) }

func appendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// reader reads what appendUvarint and appendString wrote; the first failure
// sticks in err.
type reader struct {
	b   []byte
	err error
}

func (r *reader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s at %d bytes left", ErrCorrupt, what, len(r.b))
	}
}

func (r *reader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail("bad varint")
		return 0
	}
	r.b = r.b[n:]
	return v
}

// count reads an element count, refusing one that cannot fit in what is
// left (each element takes at least min bytes), so that a damaged count
// never allocates more than the record's size.
func (r *reader) count(min int) int {
	n := r.uvarint()
	if r.err == nil && n > uint64(len(r.b)/min) {
		r.fail("count larger than the data")
		return 0
	}
	return int(n)
}

func (r *reader) string() string { return string(r.bytes()) }

// done reports the first error, or one if bytes are left over.
func (r *reader) done() error {
	if r.err == nil && len(r.b) != 0 {
		r.fail("trailing bytes")
	}
	return r.err
}

// bytes reads a string without copying it.
func (r *reader) bytes() []byte {
	n := r.uvarint()
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.b)) {
		r.fail("string past the end")
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

// float64 reads 8 little-endian bytes of IEEE bits.
func (r *reader) float64() float64 {
	if r.err != nil {
		return 0
	}
	if len(r.b) < 8 {
		r.fail("float past the end")
		return 0
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(r.b))
	r.b = r.b[8:]
	return v
}
