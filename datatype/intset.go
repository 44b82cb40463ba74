package datatype

import (
	"encoding/binary"
	"fmt"
	"math"
)

// intset is Redis's intset: the members of a set of integers, ascending,
// in one byte slice of little-endian values all of the narrowest width
// that holds the widest member (2, 4 or 8 bytes). A set of 100 small
// integers takes 200 bytes instead of 800 as []int64; widening rewrites
// the slice once, and it never narrows (as in Redis).
type intset struct {
	data  []byte
	width int
}

// widthOf is the narrowest width that holds v.
func widthOf(v int64) int {
	switch {
	case v >= math.MinInt16 && v <= math.MaxInt16:
		return 2
	case v >= math.MinInt32 && v <= math.MaxInt32:
		return 4
	}
	return 8
}

func (is *intset) len() int {
	if is.width == 0 {
		return 0
	}
	return len(is.data) / is.width
}

func (is *intset) at(i int) int64 {
	switch p := is.data[i*is.width:]; is.width {
	case 2:
		return int64(int16(binary.LittleEndian.Uint16(p)))
	case 4:
		return int64(int32(binary.LittleEndian.Uint32(p)))
	default:
		return int64(binary.LittleEndian.Uint64(p))
	}
}

func (is *intset) put(i int, v int64) {
	switch p := is.data[i*is.width:]; is.width {
	case 2:
		binary.LittleEndian.PutUint16(p, uint16(v))
	case 4:
		binary.LittleEndian.PutUint32(p, uint32(v))
	default:
		binary.LittleEndian.PutUint64(p, uint64(v))
	}
}

// search returns v's index, or where it would go and false.
func (is *intset) search(v int64) (int, bool) {
	lo, hi := 0, is.len()
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		switch m := is.at(mid); {
		case m == v:
			return mid, true
		case m < v:
			lo = mid + 1
		default:
			hi = mid
		}
	}
	return lo, false
}

// resize sets the member count to n at width w, keeping the first keep
// members; the slice grows by an eighth beyond what it needs, so that
// inserting member by member copies little and wastes little.
func (is *intset) resize(n, w, keep int) {
	need := n * w
	if w == is.width && need <= cap(is.data) {
		is.data = is.data[:need]
		return
	}
	nd := makeBytes(need, need+need/8)
	old := *is
	is.data, is.width = nd, w
	if w == old.width {
		copy(nd, old.data[:keep*w])
		return
	}
	for i := range keep {
		is.put(i, old.at(i))
	}
}

// insert adds v and reports whether it was new.
func (is *intset) insert(v int64) bool {
	i, found := is.search(v)
	if found {
		return false
	}
	n := is.len()
	w := max(is.width, widthOf(v))
	is.resize(n+1, w, n)
	copy(is.data[(i+1)*w:], is.data[i*w:n*w])
	is.put(i, v)
	return true
}

// remove deletes v and reports whether it was there.
func (is *intset) remove(v int64) bool {
	i, found := is.search(v)
	if !found {
		return false
	}
	w := is.width
	copy(is.data[i*w:], is.data[(i+1)*w:])
	is.data = is.data[:len(is.data)-w]
	return true
}

// appendMax appends v, which must exceed every member (decoding).
func (is *intset) appendMax(v int64) {
	n := is.len()
	is.resize(n+1, max(is.width, widthOf(v)), n)
	is.put(n, v)
}

func (is *intset) memSize() int64 { return int64(cap(is.data)) }

func (is *intset) clone() intset {
	return intset{data: append([]byte(nil), is.data...), width: is.width}
}

// IntsetBlob is an intset in Redis's own layout, which DUMP and RDB files
// carry: the width and the member count as little-endian uint32s, then the
// members, little-endian at that width (this intset's own layout); nil
// for a hashtable.
func (s *Set) IntsetBlob() []byte {
	if s.table != nil {
		return nil
	}
	w := max(s.ints.width, 2)
	b := make([]byte, 8, 8+len(s.ints.data))
	binary.LittleEndian.PutUint32(b, uint32(w))
	binary.LittleEndian.PutUint32(b[4:], uint32(s.ints.len()))
	return append(b, s.ints.data...)
}

// SetFromIntsetBlob reads what IntsetBlob (or Redis) wrote: a width of 2,
// 4 or 8, a count that matches the length, members strictly ascending and
// at least one of them. Past lim it converts to a hashtable, as Redis's
// RDB loading does.
func SetFromIntsetBlob(blob []byte, lim SetLimits) (*Set, error) {
	if len(blob) < 8 {
		return nil, fmt.Errorf("%w: intset blob of %d bytes", ErrCorrupt, len(blob))
	}
	w := int(binary.LittleEndian.Uint32(blob))
	n := uint64(binary.LittleEndian.Uint32(blob[4:]))
	if w != 2 && w != 4 && w != 8 || n == 0 || n*uint64(w) != uint64(len(blob)-8) {
		return nil, fmt.Errorf("%w: intset header (width %d, %d members, %d bytes)", ErrCorrupt, w, n, len(blob))
	}
	s := &Set{ints: intset{data: makeBytes(len(blob)-8, len(blob)-8), width: w}}
	copy(s.ints.data, blob[8:])
	for i := 1; i < s.ints.len(); i++ {
		if s.ints.at(i-1) >= s.ints.at(i) {
			return nil, fmt.Errorf("%w: intset not ascending", ErrCorrupt)
		}
	}
	if s.ints.len() > lim.MaxIntsetEntries {
		s.convert()
	}
	return s, nil
}
