package datatype

import (
	"bytes"
	"hash/maphash"
	"math/bits"
	"math/rand/v2"
)

// hashTable is a hash's "hashtable" encoding, built to stay small and
// invisible to the garbage collector (no pointer per field):
//
//   - data holds every entry (field and value as appendEntry lays them
//     out) back to back. It only grows: a deleted entry, or a value
//     replaced by one of another length, leaves dead bytes, and data is
//     rewritten without them once they are half of it.
//   - slots is an open-addressing index with linear probing: 0 for an
//     empty slot, else the entry's offset in data plus one (the low 40
//     bits) and the top 24 bits of the field's hash (the high bits), which
//     rejects almost every other field without reading data. Its size is a
//     power of two, at most three quarters full; deletion shifts the
//     following entries back, so no tombstones.
//
// An entry costs its bytes, two length bytes and 8 to 21 bytes of index
// (at a load between 3/4 and 3/8), where Redis's dict spends a 24-byte
// dictEntry, a bucket pointer and two sds allocations.
//
// HSCAN's cursor walks the home slots (hash & mask) in Redis's reverse
// binary order, as dictScan walks buckets: with linear probing every entry
// lives in the run of occupied slots that starts at its home slot, so one
// cursor step visits exactly the entries of one home slot, and growing or
// shrinking the power-of-two index keeps Redis's guarantee that a field
// present for the whole scan is returned at least once.
type hashTable struct {
	slots []uint64
	data  []byte
	n     int
	// dead is the bytes of data no slot points to.
	dead int
}

// tableSeed seeds every table's field hash. It is chosen once per process
// (random, so that clients cannot choose colliding fields) and never
// changes, so that a hash demoted to disk and loaded back mid-scan lays its
// fields out in the same home slots, and an HSCAN cursor stays good across
// the round trip as across a resize.
var tableSeed = maphash.MakeSeed()

const (
	slotOffsetBits = 40
	slotOffsetMask = 1<<slotOffsetBits - 1
	minSlots       = 8
	// tableOverhead is the hashTable struct and its two slice headers'
	// allocations.
	tableOverhead = 96
	// minCompact is the dead bytes below which data is never rewritten.
	minCompact = 1024
)

func newHashTable(n int) *hashTable {
	return &hashTable{slots: make([]uint64, slotsFor(n))}
}

// slotsFor is the smallest index size that holds n entries at most three
// quarters full.
func slotsFor(n int) int {
	s := minSlots
	for s/4*3 < n {
		s *= 2
	}
	return s
}

func (t *hashTable) memSize() int64 {
	return tableOverhead + 8*int64(cap(t.slots)) + int64(cap(t.data))
}

func (t *hashTable) hash(field []byte) uint64 { return maphash.Bytes(tableSeed, field) }

// slotEntry returns the field and value of the entry in slot i.
func (t *hashTable) slotEntry(i int) (field, value []byte) {
	f, _, v, _ := entryAt(t.data, int(t.slots[i]&slotOffsetMask)-1)
	return f, v
}

// find returns the slot holding field (whose hash is h), or the empty slot
// where it would go.
func (t *hashTable) find(field []byte, h uint64) (i int, found bool) {
	mask := len(t.slots) - 1
	tag := h >> slotOffsetBits
	for i = int(h) & mask; ; i = (i + 1) & mask {
		s := t.slots[i]
		if s == 0 {
			return i, false
		}
		if s>>slotOffsetBits == tag {
			if f, _ := t.slotEntry(i); bytes.Equal(f, field) {
				return i, true
			}
		}
	}
}

func (t *hashTable) get(field []byte) ([]byte, bool) {
	i, found := t.find(field, t.hash(field))
	if !found {
		return nil, false
	}
	_, v := t.slotEntry(i)
	return v, true
}

// add appends an entry to data and returns its slot word.
func (t *hashTable) add(field, value []byte, h uint64) uint64 {
	off := len(t.data)
	t.data = growFor(t.data, entrySize(field, value))
	t.data = appendEntry(t.data, field, value)
	return uint64(off+1) | h>>slotOffsetBits<<slotOffsetBits
}

// set stores a field and reports whether it is new.
func (t *hashTable) set(field, value []byte) bool {
	h := t.hash(field)
	i, found := t.find(field, h)
	if found {
		at := int(t.slots[i]&slotOffsetMask) - 1
		_, _, v, next := entryAt(t.data, at)
		if len(v) == len(value) {
			copy(v, value)
			return false
		}
		t.dead += next - at
		t.slots[i] = t.add(field, value, h)
		t.compactIfWasteful()
		return false
	}
	if t.n+1 > len(t.slots)/4*3 {
		t.resize(len(t.slots) * 2)
		i, _ = t.find(field, h)
	}
	t.slots[i] = t.add(field, value, h)
	t.n++
	return true
}

// delete removes a field and reports whether it was there.
func (t *hashTable) delete(field []byte) bool {
	i, found := t.find(field, t.hash(field))
	if !found {
		return false
	}
	at := int(t.slots[i]&slotOffsetMask) - 1
	_, _, _, next := entryAt(t.data, at)
	t.dead += next - at
	t.n--
	t.removeSlot(i)
	switch {
	case t.n == 0:
		t.data, t.dead = t.data[:0], 0
	case len(t.slots) > minSlots && t.n < len(t.slots)/8:
		t.resize(slotsFor(2 * t.n))
	}
	t.compactIfWasteful()
	return true
}

// removeSlot empties slot i and shifts back the entries after it that
// may move (those whose home slot is not between the hole and them), so
// that every entry stays reachable from its home slot.
func (t *hashTable) removeSlot(i int) {
	mask := len(t.slots) - 1
	t.slots[i] = 0
	for j := (i + 1) & mask; t.slots[j] != 0; j = (j + 1) & mask {
		f, _ := t.slotEntry(j)
		home := int(t.hash(f)) & mask
		stays := (i < j && i < home && home <= j) || (i > j && (home > i || home <= j))
		if !stays {
			t.slots[i], t.slots[j] = t.slots[j], 0
			i = j
		}
	}
}

// resize rebuilds the index with size slots.
func (t *hashTable) resize(size int) {
	old := t.slots
	t.slots = make([]uint64, size)
	mask := size - 1
	for _, s := range old {
		if s == 0 {
			continue
		}
		f, _, _, _ := entryAt(t.data, int(s&slotOffsetMask)-1)
		i := int(t.hash(f)) & mask
		for t.slots[i] != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = s
	}
}

// compactIfWasteful rewrites data without its dead bytes once they are
// half of it. The slots stay where they are, so a scan in progress is not
// disturbed.
func (t *hashTable) compactIfWasteful() {
	if t.dead < minCompact || t.dead < len(t.data)/2 {
		return
	}
	live := len(t.data) - t.dead
	data := make([]byte, 0, live+live/8)
	for i, s := range t.slots {
		if s == 0 {
			continue
		}
		at := int(s&slotOffsetMask) - 1
		_, _, _, next := entryAt(t.data, at)
		t.slots[i] = uint64(len(data)+1) | s&^slotOffsetMask
		data = append(data, t.data[at:next]...)
	}
	t.data, t.dead = data, 0
}

// scan visits the entries whose home slot is cursor's and returns the next
// cursor: the masked bits incremented from the high end, as Redis's
// dictScan does, so that the cursors of a smaller or larger index visit
// supersets or subsets of the same home slots.
func (t *hashTable) scan(cursor uint64, fn func(field, value []byte)) uint64 {
	mask := uint64(len(t.slots) - 1)
	home := cursor & mask
	for i := home; t.slots[i] != 0; i = (i + 1) & mask {
		f, v := t.slotEntry(int(i))
		if t.hash(f)&mask == home {
			fn(f, v)
		}
	}
	cursor |= ^mask
	cursor = bits.Reverse64(cursor)
	cursor++
	return bits.Reverse64(cursor)
}

// rangeAll calls fn for every entry until it returns false, in slot
// order starting after the first empty slot (the index is at most three
// quarters full, so there is one). Starting there cuts no run of occupied
// slots in two, so inserting the entries in this order into an index of
// the same size puts each back in its slot: the hash's encoding, written in
// this order, decodes to the same layout and encodes to the same bytes.
// Starting at slot 0 would not: a run that wraps from the last slot to the
// first would be inserted tail first, and its entries would trade places
// on every round trip.
func (t *hashTable) rangeAll(fn func(field, value []byte) bool) {
	mask := len(t.slots) - 1
	gap := 0
	for gap < mask && t.slots[gap] != 0 {
		gap++
	}
	for k := 1; k <= len(t.slots); k++ {
		if i := (gap + k) & mask; t.slots[i] != 0 {
			if !fn(t.slotEntry(i)) {
				return
			}
		}
	}
}

// randomSlot returns a uniformly random occupied slot; the table must not
// be empty. At least one slot in eight is occupied (delete shrinks the
// index below that), so this takes a few tries.
func (t *hashTable) randomSlot() int {
	for {
		if i := rand.IntN(len(t.slots)); t.slots[i] != 0 {
			return i
		}
	}
}

// liveSlots lists the occupied slots.
func (t *hashTable) liveSlots() []int {
	out := make([]int, 0, t.n)
	for i, s := range t.slots {
		if s != 0 {
			out = append(out, i)
		}
	}
	return out
}

func (t *hashTable) clone() *hashTable {
	c := *t
	c.slots = append([]uint64(nil), t.slots...)
	c.data = append([]byte(nil), t.data...)
	return &c
}
