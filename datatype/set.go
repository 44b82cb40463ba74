package datatype

import (
	"math/rand/v2"
	"strconv"
)

// SetLimits is the setting that decides when a set of integers stops
// being an intset (set-max-intset-entries).
type SetLimits struct {
	MaxIntsetEntries int
}

// Set is a set value. While every member is an integer in Redis's
// canonical form (string2ll) and there are at most set-max-intset-entries
// of them it is an "intset" (sorted integers of one width), which SMEMBERS, SSCAN and
// the set operations return in ascending order as Redis does. Otherwise it
// is a "hashtable" (memberTable), for good: Redis never converts back,
// except that SPOP may build a new set (NewSetFor).
type Set struct {
	// ints holds the members while the set is an intset.
	ints intset
	// table holds them once it is a hashtable; nil before.
	table *memberTable
}

// NewSet returns an empty intset.
func NewSet() *Set { return &Set{} }

// NewSetFor returns the empty set Redis's setTypeCreate makes for a first
// member: an intset if it is an integer, a hashtable otherwise.
func NewSetFor(first []byte) *Set {
	if _, ok := ParseInt64(first); ok {
		return &Set{}
	}
	return &Set{table: newMemberTable(1)}
}

// Kind implements Object.
func (s *Set) Kind() Kind { return KindSet }

// Len is the number of members.
func (s *Set) Len() int {
	if s.table != nil {
		return s.table.n
	}
	return s.ints.len()
}

// MemSize implements Object.
func (s *Set) MemSize() int64 {
	if s.table != nil {
		return objectOverhead + s.table.memSize()
	}
	return objectOverhead + s.ints.memSize()
}

// Encoding implements Object: "intset" or "hashtable".
func (s *Set) Encoding() string {
	if s.table != nil {
		return "hashtable"
	}
	return "intset"
}

// IsIntset reports whether the set is an intset (sorted integers).
func (s *Set) IsIntset() bool { return s.table == nil }

// Has reports whether m is a member.
func (s *Set) Has(m []byte) bool {
	if s.table != nil {
		return s.table.has(m)
	}
	v, ok := ParseInt64(m)
	if !ok {
		return false
	}
	_, found := s.ints.search(v)
	return found
}

// Add inserts m and reports whether it is new. lim decides when an intset
// becomes a hashtable: on a member that is not an integer, or when it
// grows past lim.MaxIntsetEntries (Redis's setTypeAdd).
func (s *Set) Add(m []byte, lim SetLimits) bool {
	if s.table == nil {
		if v, ok := ParseInt64(m); ok {
			if !s.ints.insert(v) {
				return false
			}
			if s.ints.len() > lim.MaxIntsetEntries {
				s.convert()
			}
			return true
		}
		s.convert()
	}
	return s.table.add(m)
}

// Remove deletes m and reports whether it was a member.
func (s *Set) Remove(m []byte) bool {
	if s.table != nil {
		return s.table.remove(m)
	}
	v, ok := ParseInt64(m)
	return ok && s.ints.remove(v)
}

// convert turns an intset into a hashtable.
func (s *Set) convert() {
	t := newMemberTable(s.ints.len() + 1)
	var buf [20]byte
	for i := range s.ints.len() {
		t.add(strconv.AppendInt(buf[:0], s.ints.at(i), 10))
	}
	s.ints, s.table = intset{}, t
}

// Range calls fn for every member until it returns false: in ascending
// order for an intset, in bucket order for a hashtable. m is valid only
// during the call and must not be modified; the set must not change
// while Range runs.
func (s *Set) Range(fn func(m []byte) bool) {
	if s.table != nil {
		s.table.each(fn)
		return
	}
	var buf [20]byte
	for i := range s.ints.len() {
		if !fn(strconv.AppendInt(buf[:0], s.ints.at(i), 10)) {
			return
		}
	}
}

// AppendRandom appends a random member to dst; the set must not be
// empty.
func (s *Set) AppendRandom(dst []byte) []byte {
	if s.table != nil {
		return append(dst, s.table.random()...)
	}
	return strconv.AppendInt(dst, s.ints.at(rand.IntN(s.ints.len())), 10)
}

// Scan is SSCAN's iteration: it calls fn for the members of at least
// count buckets' worth (or of the whole set for an intset, which answers
// in one call) and returns the next cursor, 0 at the end. As Redis's
// scanGenericCommand, it visits at most 10*count buckets per call.
func (s *Set) Scan(cursor uint64, count int, fn func(m []byte)) uint64 {
	if s.table == nil {
		s.Range(func(m []byte) bool { fn(m); return true })
		return 0
	}
	if s.table.n == 0 {
		return 0
	}
	got := 0
	counted := func(m []byte) { got++; fn(m) }
	for budget := count * 10; ; budget-- {
		cursor = s.table.scanBucket(cursor, counted)
		if cursor == 0 || budget <= 0 || got >= count {
			return cursor
		}
	}
}

// Clone implements Object.
func (s *Set) Clone() Object {
	if s.table != nil {
		return &Set{table: s.table.clone()}
	}
	return &Set{ints: s.ints.clone()}
}

// Set encoding: a uvarint 0 (intset: the count, then each member as a
// zigzag varint delta from the previous, so the ascending order is part of
// the format) or 1 (hashtable: the count, then each member as a string).

// AppendBinary implements Object.
func (s *Set) AppendBinary(dst []byte) []byte {
	if s.table == nil {
		dst = appendUvarint(dst, 0)
		dst = appendUvarint(dst, uint64(s.ints.len()))
		prev := int64(0)
		for i := range s.ints.len() {
			v := s.ints.at(i)
			dst = appendVarint(dst, v-prev)
			prev = v
		}
		return dst
	}
	dst = appendUvarint(dst, 1)
	dst = appendUvarint(dst, uint64(s.table.n))
	s.table.each(func(m []byte) bool {
		dst = appendUvarint(dst, uint64(len(m)))
		dst = append(dst, m...)
		return true
	})
	return dst
}

func decodeSet(b []byte) (Object, error) {
	r := reader{b: b}
	enc := r.uvarint()
	n := r.count(1)
	s := &Set{}
	switch {
	case r.err != nil:
	case enc == 0:
		prev := int64(0)
		for i := 0; i < n && r.err == nil; i++ {
			d := r.varint()
			v := prev + d
			// Members ascend strictly; a delta that wraps around is damage.
			if i > 0 && (d <= 0 || v <= prev) {
				r.fail("intset not ascending")
			}
			s.ints.appendMax(v)
			prev = v
		}
	case enc == 1:
		s.table = newMemberTable(n)
		for i := 0; i < n && r.err == nil; i++ {
			m := r.bytes()
			if r.err == nil && !s.table.add(m) {
				r.fail("duplicate member")
			}
		}
	default:
		r.fail("unknown set encoding")
	}
	if err := r.done(); err != nil {
		return nil, err
	}
	return s, nil
}
