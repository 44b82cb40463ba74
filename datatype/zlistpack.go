package datatype

import (
	"encoding/binary"
	"math"
	"slices"
	"unsafe"
)

// zlistpack is a small sorted set in one buffer, like Redis's listpack:
// its entries in ascending (score, member) order, each the member's length
// as a uvarint, the member's bytes, and the score's IEEE bits as 8
// little-endian bytes. That is also the entries' disk encoding, so a
// listpack is written and read back as one copy. Every operation scans,
// which is what Redis does too: a listpack holds at most
// zset-max-listpack-entries (128 by default) members.
type zlistpack struct {
	buf []byte
	n   int
}

// View returns b as a string without copying, for lookups and comparisons
// that do not keep it (a ZSet's Score and Update do not keep the member
// they are given; Add does).
func View(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// entry decodes the entry at off and returns the offset of the next one.
// The member aliases the buffer.
func (lp *zlistpack) entry(off int) (member []byte, score float64, next int) {
	l, k := binary.Uvarint(lp.buf[off:])
	start := off + k
	end := start + int(l)
	return lp.buf[start:end], math.Float64frombits(binary.LittleEndian.Uint64(lp.buf[end:])), end + 8
}

// at returns the entry at off as a ZEntry of its own.
func (lp *zlistpack) at(off int) ZEntry {
	m, s, _ := lp.entry(off)
	return ZEntry{Member: string(m), Score: s}
}

// find returns the offset and score of member, off -1 when absent.
func (lp *zlistpack) find(member string) (off int, score float64) {
	for off := 0; off < len(lp.buf); {
		m, s, next := lp.entry(off)
		if View(m) == member {
			return off, s
		}
		off = next
	}
	return -1, 0
}

// offsetOf returns the offset of the entry of rank r (len(buf) for r = n).
func (lp *zlistpack) offsetOf(r int) int {
	off := 0
	for ; r > 0; r-- {
		_, _, off = lp.entry(off)
	}
	return off
}

// countWhile is ZSet.CountWhile for the listpack.
func (lp *zlistpack) countWhile(pred func(e ZEntry) bool) int {
	n := 0
	for off := 0; off < len(lp.buf); n++ {
		m, s, next := lp.entry(off)
		if !pred(ZEntry{Member: View(m), Score: s}) {
			break
		}
		off = next
	}
	return n
}

// zsetEntrySize is the encoded size of an entry for member: its length,
// its bytes and the score.
func zsetEntrySize(member string) int {
	return uvarintLen(len(member)) + len(member) + 8
}

// allocBytes returns an empty buffer of at least n bytes whose capacity
// is the whole allocation (the allocator's size class), so that MemSize,
// which counts capacity, counts what the heap really holds.
func allocBytes(n int) []byte { return slices.Grow([]byte(nil), n) }

// open makes room for size bytes at off, growing the buffer by an eighth
// beyond what it needs so that it stays tight.
func (lp *zlistpack) open(off, size int) {
	need := len(lp.buf) + size
	if need > cap(lp.buf) {
		lp.buf = append(allocBytes(need+need/8), lp.buf...)
	}
	lp.buf = lp.buf[:need]
	copy(lp.buf[off+size:], lp.buf[off:need-size])
}

// put writes an entry at off, which open made room for.
func (lp *zlistpack) put(off int, member string, score float64) {
	if score == 0 {
		score = 0 // Redis's listpack keeps -0 as the integer 0
	}
	b := binary.AppendUvarint(lp.buf[off:off], uint64(len(member)))
	b = append(b, member...)
	binary.LittleEndian.AppendUint64(b, math.Float64bits(score))
	lp.n++
}

// insert adds an entry known to be absent at its place.
func (lp *zlistpack) insert(member string, score float64) {
	off := 0
	for off < len(lp.buf) {
		m, s, next := lp.entry(off)
		e := ZEntry{Member: View(m), Score: s}
		if !e.less(score, member) {
			break
		}
		off = next
	}
	size := zsetEntrySize(member)
	lp.open(off, size)
	lp.put(off, member, score)
}

// appendEntry adds an entry known to sort after all others.
func (lp *zlistpack) appendEntry(member string, score float64) {
	off := len(lp.buf)
	lp.open(off, zsetEntrySize(member))
	lp.put(off, member, score)
}

// cut removes the bytes from off to end holding k entries, and gives the
// memory back when the buffer is mostly empty.
func (lp *zlistpack) cut(off, end, k int) {
	lp.buf = append(lp.buf[:off], lp.buf[end:]...)
	lp.n -= k
	if cap(lp.buf) > 256 && cap(lp.buf) > 2*len(lp.buf) {
		lp.buf = append(allocBytes(len(lp.buf)+len(lp.buf)/8), lp.buf...)
	}
}

// removeAt removes the entry at off.
func (lp *zlistpack) removeAt(off int) {
	_, _, next := lp.entry(off)
	lp.cut(off, next, 1)
}

// move gives the entry of member at off, whose score is old, the score,
// moving it to its new place.
func (lp *zlistpack) move(off int, member string, old, score float64) {
	if old != score {
		lp.removeAt(off)
		lp.insert(member, score)
	}
}

// removeRanks removes the entries of ranks lo to hi-1 (0 <= lo < hi <= n)
// and returns the bytes of their members.
func (lp *zlistpack) removeRanks(lo, hi int) int64 {
	off := lp.offsetOf(lo)
	end := off
	var data int64
	for r := lo; r < hi; r++ {
		var m []byte
		m, _, end = lp.entry(end)
		data += int64(len(m))
	}
	lp.cut(off, end, hi-lo)
	return data
}

// rangeFrom calls fn for the entries from rank from on (backwards when
// rev) until it returns false.
func (lp *zlistpack) rangeFrom(from int, rev bool, fn func(e ZEntry) bool) {
	if !rev {
		for off := lp.offsetOf(from); off < len(lp.buf); {
			e := lp.at(off)
			if !fn(e) {
				return
			}
			_, _, off = lp.entry(off)
		}
		return
	}
	offs := make([]int, 0, from+1)
	for off, r := 0, 0; r <= from; r++ {
		offs = append(offs, off)
		_, _, off = lp.entry(off)
	}
	for i := len(offs) - 1; i >= 0; i-- {
		if !fn(lp.at(offs[i])) {
			return
		}
	}
}
