package datatype

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
)

// HashLimits are the settings that decide when a small hash stops being a
// listpack (hash-max-listpack-entries, hash-max-listpack-value).
type HashLimits struct {
	MaxListpackEntries int
	MaxListpackValue   int
}

// Memory estimates: a string header, what a Go map spends per entry beyond
// its key and value headers, and a value's fixed part (its struct, the
// engine's pointer to it).
const (
	stringHeaderSize = 16
	mapEntryOverhead = 48
	objectOverhead   = 64
)

// Hash is a hash value, in one of Redis's two encodings:
//
//   - "listpack" while small: every field and value back to back in one
//     byte buffer (a uvarint length before each), in insertion order, which
//     HGETALL, HKEYS and HSCAN return as Redis does. A field costs its bytes
//     plus two length bytes, against 32 bytes of string headers plus two
//     allocations for a []string of pairs; lookups walk the buffer, as
//     Redis's listpack does, which is fast for the 128 entries of the
//     default hash-max-listpack-entries.
//   - "hashtable" past the limits, for good, as in Redis: a hashTable
//     (hashtable.go), entries in one buffer and an open-addressing index.
//
// Measured (TestHashMemSizeMatchesTheHeap; fields "field:N", values
// "value:K:N", about 20 bytes of data per field), in bytes per field:
//
//	                        data  this Hash  []string pairs / map  redis-server 7.0
//	1000 keys x 100 fields    20         23                    79                27
//	1 key x 100000 fields     24         49                    85                75
//
// (Go heap growth for this Hash and the []string/map form it replaced;
// INFO used_memory growth for redis-server.)
//
// The byte slices Get, Range, Scan and the random pickers return are views
// into the hash: valid until it next changes, never to be modified. A
// caller that keeps one past the change (a reply that references large
// values instead of copying them) must copy it first.
type Hash struct {
	// lp holds the entries while listpack.
	lp []byte
	// n is the number of fields while listpack.
	n int
	// table holds the fields once the hash is a hashtable; nil before.
	table *hashTable
}

// NewHash returns an empty listpack hash.
func NewHash() *Hash { return &Hash{} }

// Kind implements Object.
func (h *Hash) Kind() Kind { return KindHash }

// Len is the number of fields.
func (h *Hash) Len() int {
	if h.table != nil {
		return h.table.n
	}
	return h.n
}

// MemSize implements Object: the buffers' capacities, so it is O(1) and
// counts what the allocator holds.
func (h *Hash) MemSize() int64 {
	if h.table != nil {
		return objectOverhead + h.table.memSize()
	}
	return objectOverhead + int64(cap(h.lp))
}

// Encoding implements Object: "listpack" or "hashtable".
func (h *Hash) Encoding() string {
	if h.table != nil {
		return "hashtable"
	}
	return "listpack"
}

// IsListpack reports whether the hash keeps its insertion order.
func (h *Hash) IsListpack() bool { return h.table == nil }

// appendEntry appends a field and value as the listpack (and the disk
// encoding) lays them out.
func appendEntry(dst, field, value []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(field)))
	dst = append(dst, field...)
	dst = binary.AppendUvarint(dst, uint64(len(value)))
	return append(dst, value...)
}

// entryAt decodes the well-formed entry at off: its field, the offset of
// its value's length, its value and the offset past it. The slices' capacity
// ends with them, so an append by a caller never writes into b.
func entryAt(b []byte, off int) (field []byte, valueAt int, value []byte, next int) {
	n, k := binary.Uvarint(b[off:])
	off += k
	field = b[off : off+int(n) : off+int(n)]
	valueAt = off + int(n)
	n, k = binary.Uvarint(b[valueAt:])
	start := valueAt + k
	next = start + int(n)
	return field, valueAt, b[start:next:next], next
}

// entrySize is the bytes appendEntry takes for a field and value.
func entrySize(field, value []byte) int {
	return uvarintLen(len(field)) + len(field) + uvarintLen(len(value)) + len(value)
}

func uvarintLen(n int) int {
	k := 1
	for n >= 0x80 {
		n >>= 7
		k++
	}
	return k
}

// lpFind returns the offset of field's entry in the listpack, its value's
// length offset, its value and the offset past the entry; at is -1 when
// absent.
func (h *Hash) lpFind(field []byte) (at, valueAt int, value []byte, next int) {
	for off := 0; off < len(h.lp); {
		f, va, v, nx := entryAt(h.lp, off)
		if bytes.Equal(f, field) {
			return off, va, v, nx
		}
		off = nx
	}
	return -1, 0, nil, 0
}

// Get returns a field's value.
func (h *Hash) Get(field []byte) ([]byte, bool) {
	if h.table != nil {
		return h.table.get(field)
	}
	at, _, v, _ := h.lpFind(field)
	return v, at >= 0
}

// Fit converts a listpack to a hashtable when one of the strings about to
// be stored is longer than lim allows, as Redis's hashTypeTryConversion
// does before HSET and HSETNX store anything.
func (h *Hash) Fit(lim HashLimits, strs ...[]byte) {
	if h.table != nil {
		return
	}
	for _, s := range strs {
		if len(s) > lim.MaxListpackValue {
			h.convert()
			return
		}
	}
}

// Set stores a field and reports whether it is new. lim decides whether
// the hash must become a hashtable (Redis's hashTypeSet: a field or value
// too long, or one field too many).
func (h *Hash) Set(field, value []byte, lim HashLimits) bool {
	h.Fit(lim, field, value)
	if h.table != nil {
		return h.table.set(field, value)
	}
	at, va, _, next := h.lpFind(field)
	if at >= 0 {
		h.lp = spliceValue(h.lp, va, next, value)
		return false
	}
	h.lp = growFor(h.lp, entrySize(field, value))
	h.lp = appendEntry(h.lp, field, value)
	h.n++
	if h.n > lim.MaxListpackEntries {
		h.convert()
	}
	return true
}

// spliceValue replaces the value whose length starts at valueAt (and ends
// at next) with value, in place: the tail moves by the difference.
func spliceValue(b []byte, valueAt, next int, value []byte) []byte {
	var hdr [binary.MaxVarintLen64]byte
	h := binary.PutUvarint(hdr[:], uint64(len(value)))
	size := h + len(value)
	delta := size - (next - valueAt)
	end := len(b)
	if delta > 0 {
		b = growFor(b, delta)[:end+delta]
	}
	copy(b[valueAt+size:], b[next:end])
	copy(b[valueAt:], hdr[:h])
	copy(b[valueAt+h:], value)
	return b[:end+delta]
}

// growFor makes room for n more bytes, growing by a quarter rather than
// append's doubling: a listpack is small and there are many of them, so
// spare capacity would be a large part of their memory.
func growFor(b []byte, n int) []byte {
	if len(b)+n <= cap(b) {
		return b
	}
	c := max(len(b)+n, cap(b)+cap(b)/4+16)
	nb := make([]byte, len(b), c)
	copy(nb, b)
	return nb
}

// Delete removes a field and reports whether it was there.
func (h *Hash) Delete(field []byte) bool {
	if h.table != nil {
		return h.table.delete(field)
	}
	at, _, _, next := h.lpFind(field)
	if at < 0 {
		return false
	}
	h.lp = append(h.lp[:at], h.lp[next:]...)
	h.n--
	if cap(h.lp) > 2*len(h.lp)+64 {
		h.lp = append(make([]byte, 0, len(h.lp)), h.lp...)
	}
	return true
}

// Range calls fn for every field until it returns false: in insertion
// order for a listpack, in the table's order for a hashtable.
func (h *Hash) Range(fn func(field, value []byte) bool) {
	if h.table != nil {
		h.table.rangeAll(fn)
		return
	}
	for off := 0; off < len(h.lp); {
		f, _, v, next := entryAt(h.lp, off)
		if !fn(f, v) {
			return
		}
		off = next
	}
}

// Scan visits the fields from cursor on, about count of them, and returns
// the cursor to continue from (0: done), like Redis's HSCAN: a listpack is
// visited whole in one call whatever the cursor; a hashtable guarantees
// that a field present for the whole scan is visited at least once (see
// hashTable.scan).
func (h *Hash) Scan(cursor uint64, count int, fn func(field, value []byte)) uint64 {
	if h.table == nil {
		h.Range(func(f, v []byte) bool {
			fn(f, v)
			return true
		})
		return 0
	}
	visited := 0
	maxSteps := count * 10
	for {
		cursor = h.table.scan(cursor, func(f, v []byte) {
			visited++
			fn(f, v)
		})
		maxSteps--
		if cursor == 0 || maxSteps <= 0 || visited >= count {
			return cursor
		}
	}
}

// Random picks count fields at random and calls fn for each, like Redis's
// HRANDFIELD: with distinct, count different fields (count must be below
// Len: all of them is Range's job); without, each pick is independent and
// uniform, so fields may repeat. fn returning false stops the picking.
func (h *Hash) Random(count int, distinct bool, fn func(field, value []byte) bool) {
	if h.Len() == 0 || count <= 0 {
		return
	}
	// pos lists the entries' positions (listpack offsets or table slots)
	// when a pick needs them; a table picks slots directly.
	var pos []int
	if h.table == nil {
		pos = make([]int, 0, h.n)
		for off := 0; off < len(h.lp); {
			pos = append(pos, off)
			_, _, _, off = entryAt(h.lp, off)
		}
	}
	at := func(p int) ([]byte, []byte) {
		if h.table != nil {
			return h.table.slotEntry(p)
		}
		f, _, v, _ := entryAt(h.lp, p)
		return f, v
	}
	pick := func() int {
		if h.table != nil {
			return h.table.randomSlot()
		}
		return pos[rand.IntN(len(pos))]
	}
	if !distinct {
		for range count {
			if !fn(at(pick())) {
				return
			}
		}
		return
	}
	if count*3 > h.Len() {
		// Many of the fields: shuffle them all and take the first count.
		if pos == nil {
			pos = h.table.liveSlots()
		}
		for i := 0; i < count; i++ {
			j := i + rand.IntN(len(pos)-i)
			pos[i], pos[j] = pos[j], pos[i]
			if !fn(at(pos[i])) {
				return
			}
		}
		return
	}
	seen := make(map[int]struct{}, count)
	for len(seen) < count {
		p := pick()
		if _, dup := seen[p]; dup {
			continue
		}
		seen[p] = struct{}{}
		if !fn(at(p)) {
			return
		}
	}
}

func (h *Hash) convert() {
	t := newHashTable(h.n)
	for off := 0; off < len(h.lp); {
		f, _, v, next := entryAt(h.lp, off)
		t.set(f, v)
		off = next
	}
	h.table, h.lp, h.n = t, nil, 0
}

// Clone implements Object.
func (h *Hash) Clone() Object {
	if h.table != nil {
		return &Hash{table: h.table.clone()}
	}
	return &Hash{lp: append([]byte(nil), h.lp...), n: h.n}
}

// Hash encoding: a uvarint 0 (listpack) or 1 (hashtable), the field count,
// then each field and value as a length-prefixed string, which is the
// listpack's own layout: a listpack is written and read as one copy. A
// hashtable's fields come in hashTable.rangeAll's order, which decoding
// into a table of the same size reproduces slot for slot, so the encoding
// of a decoded hash is a fixed point of decode and encode.

// AppendBinary implements Object.
func (h *Hash) AppendBinary(dst []byte) []byte {
	if h.table == nil {
		dst = appendUvarint(dst, 0)
		dst = appendUvarint(dst, uint64(h.n))
		return append(dst, h.lp...)
	}
	dst = appendUvarint(dst, 1)
	dst = appendUvarint(dst, uint64(h.table.n))
	h.table.rangeAll(func(f, v []byte) bool {
		dst = appendEntry(dst, f, v)
		return true
	})
	return dst
}

func decodeHash(b []byte) (Object, error) {
	r := reader{b: b}
	enc := r.uvarint()
	n := r.count(2)
	if r.err == nil && enc > 1 {
		r.fail("unknown hash encoding")
	}
	body := r.b
	var t *hashTable
	var seen map[string]struct{}
	if r.err == nil {
		if enc == 1 {
			t = newHashTable(n)
		} else {
			seen = make(map[string]struct{}, n)
		}
	}
	// A damaged record must not become a hash with a field twice, which
	// no Hash writes and which would answer HLEN and HKEYS inconsistently.
	for i := 0; i < n && r.err == nil; i++ {
		f, v := r.bytes(), r.bytes()
		switch {
		case r.err != nil:
		case t != nil:
			if !t.set(f, v) {
				r.fail("duplicate field")
			}
		default:
			if _, dup := seen[string(f)]; dup {
				r.fail("duplicate field")
			}
			seen[string(f)] = struct{}{}
		}
	}
	if err := r.done(); err != nil {
		return nil, err
	}
	if t != nil {
		return &Hash{table: t}, nil
	}
	return &Hash{lp: append(make([]byte, 0, len(body)), body...), n: n}, nil
}
