package datatype

import (
	"encoding/binary"
	"fmt"
	"math"
)

// The disk encodings are sequences of uvarints and length-prefixed strings.

func appendUvarint(dst []byte, v uint64) []byte { return binary.AppendUvarint(dst, v) }

func appendVarint(dst []byte, v int64) []byte { return binary.AppendVarint(dst, v) }

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
	return r.advance(n, v)
}

// advance consumes the n bytes a varint decoder took for v, failing on a
// bad varint (n <= 0).
func (r *reader) advance(n int, v uint64) uint64 {
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

// bytes reads a length-prefixed string as a view into r's buffer, not a
// copy; its capacity ends with it, so an append to it cannot write over
// what follows.
func (r *reader) bytes() []byte {
	n := r.uvarint()
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.b)) {
		r.fail("string past the end")
		return nil
	}
	s := r.b[:n:n]
	r.b = r.b[n:]
	return s
}

func (r *reader) string() string { return string(r.bytes()) }

// varint reads what appendVarint wrote.
func (r *reader) varint() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b)
	return int64(r.advance(n, uint64(v)))
}

// done reports the first error, or one if bytes are left over.
func (r *reader) done() error {
	if r.err == nil && len(r.b) != 0 {
		r.fail("trailing bytes")
	}
	return r.err
}

// makeBytes returns a slice of length n whose capacity is at least c,
// rounded up to the allocation the runtime really makes (its size class),
// so that cap tells MemSize what the slice costs.
func makeBytes(n, c int) []byte {
	return append([]byte(nil), make([]byte, c)...)[:n]
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
