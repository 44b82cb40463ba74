package datatype

import (
	"bytes"
	"encoding/binary"
	"hash/maphash"
	"math/bits"
	"math/rand/v2"
)

// memberSeed seeds the member hash. It is chosen once per process, like
// Redis's siphash seed, and never changes afterwards: a set's buckets and
// so its SSCAN cursors stay valid while it is demoted and loaded again.
var memberSeed = maphash.MakeSeed()

// memberTable is the "hashtable" form of a set: a power-of-two number of
// buckets, each one byte slice of packed members (a uvarint length, then
// the bytes), like a tiny listpack per bucket. A member costs its bytes
// plus a byte or two of length and its share of a 24-byte slice header
// (about 4 members per bucket), with no allocation of its own: a Go
// map[string]struct{} would spend 16 bytes of string header, a separate
// allocation and the map's slot overhead on each.
//
// A member lives in the bucket its hash's low bits select, as in Redis's
// dict, so SSCAN's reverse-binary cursor (dictScan) returns every member
// present for the whole iteration even when the table grows or shrinks
// between calls.
type memberTable struct {
	buckets [][]byte
	n       int
	// bytes is the capacity of all buckets, kept up to date so that
	// MemSize is O(1).
	bytes int64
}

const (
	// tableMaxLoad is the mean bucket length above which the table
	// doubles; it halves when the mean drops below tableMinLoad.
	tableMaxLoad = 4
	tableMinLoad = 0.5
	// sliceHeaderSize is what each bucket's slice header takes.
	sliceHeaderSize = 24
)

func hashMember(m []byte) uint64 { return maphash.Bytes(memberSeed, m) }

// newMemberTable returns a table sized for about n members.
func newMemberTable(n int) *memberTable {
	t := &memberTable{}
	t.buckets = make([][]byte, bucketsFor(n))
	return t
}

// bucketsFor is the power of two that holds n members at most
// tableMaxLoad to a bucket.
func bucketsFor(n int) int {
	nb := 1
	for nb*tableMaxLoad < n {
		nb *= 2
	}
	return nb
}

func (t *memberTable) mask() uint64 { return uint64(len(t.buckets) - 1) }

// memSize is the memory of the buckets and their headers.
func (t *memberTable) memSize() int64 {
	return t.bytes + int64(len(t.buckets))*sliceHeaderSize
}

// memberAt returns the member packed at off in b and where the next starts.
func memberAt(b []byte, off int) (m []byte, next int) {
	if l := int(b[off]); l < 0x80 {
		// A member under 128 bytes, the common case: its length is one
		// byte, read without binary.Uvarint's loop.
		return b[off+1 : off+1+l], off + 1 + l
	}
	l, n := binary.Uvarint(b[off:])
	start := off + n
	end := start + int(l)
	return b[start:end], end
}

// find returns the bucket of m and m's offset in it, -1 when absent.
func (t *memberTable) find(m []byte) (bucket, off int) {
	bucket = int(hashMember(m) & t.mask())
	b := t.buckets[bucket]
	for off := 0; off < len(b); {
		e, next := memberAt(b, off)
		if bytes.Equal(e, m) {
			return bucket, off
		}
		off = next
	}
	return bucket, -1
}

func (t *memberTable) has(m []byte) bool {
	_, off := t.find(m)
	return off >= 0
}

// add inserts m and reports whether it was new.
func (t *memberTable) add(m []byte) bool {
	bucket, off := t.find(m)
	if off >= 0 {
		return false
	}
	t.put(bucket, m)
	t.n++
	if t.n > tableMaxLoad*len(t.buckets) {
		t.resize(len(t.buckets) * 2)
	}
	return true
}

// put appends m to bucket i, growing the bucket by a quarter beyond what
// it needs rather than doubling it: buckets are small, and copying them is
// cheaper than the memory doubling would leave unused.
func (t *memberTable) put(i int, m []byte) {
	b := t.buckets[i]
	need := uvarintLen(len(m)) + len(m)
	if cap(b)-len(b) < need {
		want := len(b) + need
		nb := makeBytes(len(b), want+want/4)
		copy(nb, b)
		t.bytes += int64(cap(nb) - cap(b))
		b = nb
	}
	b = binary.AppendUvarint(b, uint64(len(m)))
	t.buckets[i] = append(b, m...)
}

// remove deletes m and reports whether it was there.
func (t *memberTable) remove(m []byte) bool {
	bucket, off := t.find(m)
	if off < 0 {
		return false
	}
	b := t.buckets[bucket]
	_, next := memberAt(b, off)
	b = append(b[:off], b[next:]...)
	switch {
	case len(b) == 0:
		t.bytes -= int64(cap(b))
		b = nil
	case cap(b) > 64 && len(b) < cap(b)/2:
		nb := append([]byte(nil), b...)
		t.bytes += int64(cap(nb) - cap(b))
		b = nb
	}
	t.buckets[bucket] = b
	t.n--
	if len(t.buckets) > 1 && float64(t.n) < tableMinLoad*float64(len(t.buckets)) {
		t.resize(len(t.buckets) / 2)
	}
	return true
}

// resize rehashes every member into nb buckets, each allocated at its
// exact size.
func (t *memberTable) resize(nb int) {
	old := t.buckets
	mask := uint64(nb - 1)
	sizes := make([]int, nb)
	for _, b := range old {
		for off := 0; off < len(b); {
			e, next := memberAt(b, off)
			sizes[hashMember(e)&mask] += next - off
			off = next
		}
	}
	t.buckets = make([][]byte, nb)
	t.bytes = 0
	for i, size := range sizes {
		if size > 0 {
			t.buckets[i] = makeBytes(0, size)
			t.bytes += int64(cap(t.buckets[i]))
		}
	}
	for _, b := range old {
		for off := 0; off < len(b); {
			e, next := memberAt(b, off)
			i := hashMember(e) & mask
			t.buckets[i] = append(t.buckets[i], b[off:next]...)
			off = next
		}
	}
}

// each calls fn for every member until it returns false. The slice is the
// table's own: valid until the next change, never to be modified.
func (t *memberTable) each(fn func(m []byte) bool) bool {
	for _, b := range t.buckets {
		for off := 0; off < len(b); {
			e, next := memberAt(b, off)
			if !fn(e) {
				return false
			}
			off = next
		}
	}
	return true
}

// random returns a random member, picked like Redis's dictGetRandomKey:
// a random non-empty bucket, then a random member of it. The table must
// not be empty.
func (t *memberTable) random() []byte {
	var b []byte
	for len(b) == 0 {
		b = t.buckets[rand.IntN(len(t.buckets))]
	}
	n := 0
	for off := 0; off < len(b); n++ {
		_, off = memberAt(b, off)
	}
	k := rand.IntN(n)
	for off := 0; ; k-- {
		e, next := memberAt(b, off)
		if k == 0 {
			return e
		}
		off = next
	}
}

// scanBucket calls fn for the members of the bucket cursor selects and
// returns the next cursor, 0 when the iteration is complete: Redis's
// dictScan for one table, the cursor's bits incremented from the top.
func (t *memberTable) scanBucket(cursor uint64, fn func(m []byte)) uint64 {
	m0 := t.mask()
	b := t.buckets[cursor&m0]
	for off := 0; off < len(b); {
		e, next := memberAt(b, off)
		fn(e)
		off = next
	}
	cursor |= ^m0
	cursor = bits.Reverse64(cursor)
	cursor++
	return bits.Reverse64(cursor)
}

// clone returns a deep copy.
func (t *memberTable) clone() *memberTable {
	c := &memberTable{n: t.n, buckets: make([][]byte, len(t.buckets))}
	for i, b := range t.buckets {
		if len(b) > 0 {
			c.buckets[i] = append([]byte(nil), b...)
			c.bytes += int64(cap(c.buckets[i]))
		}
	}
	return c
}
