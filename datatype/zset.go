package datatype

import (
	"encoding/binary"
	"math"
	"strconv"
	"unsafe"
)

// ZSetLimits are the settings that decide when a small sorted set stops
// being a listpack (zset-max-listpack-entries, zset-max-listpack-value).
type ZSetLimits struct {
	MaxListpackEntries int
	MaxListpackValue   int
}

// Fits reports whether a set of n members, the longest maxLen bytes, may
// be a listpack (Redis's zsetConvertToListpackIfNeeded).
func (l ZSetLimits) Fits(n, maxLen int) bool {
	return n <= l.MaxListpackEntries && maxLen <= l.MaxListpackValue
}

// ZEntry is one member of a sorted set with its score.
type ZEntry struct {
	Member string
	Score  float64
}

// less orders entries as Redis does: by score, then by member bytes.
func (e *ZEntry) less(score float64, member string) bool {
	return e.Score < score || (e.Score == score && e.Member < member)
}

// Memory of the big form, as Go's heap holds it (checked against
// runtime.MemStats by TestZSetMemSizeMatchesTheHeap): the tree's nodes
// (zLeafSize, zInnerSize) and a map slot per member (string header and
// score, 24 bytes, at Go's map load factor with its control bytes, 40).
const (
	zMapEntrySize = 40
	// zTreeSize is the tree's header and the map's header.
	zTreeSize = int64(unsafe.Sizeof(ztree{})) + 48
)

// ZSet is a sorted set value. A small one is a "listpack": its entries in
// one buffer sorted by (score, member) (zlistpack); past the limits it
// becomes big for good, as in Redis, where OBJECT ENCODING calls it
// "skiplist": an order-statistic B+tree (ztree, rank in O(log n), where
// Redis has a skiplist with spans) plus a member-to-score map. Every
// operation that finds a position works by rank, so both forms answer the
// same questions.
type ZSet struct {
	// lp holds the members in order while listpack.
	lp zlistpack
	// list and scores hold the big form (scores finds a member's score,
	// as Redis's dict does); list is nil before.
	list   *ztree
	scores map[string]float64
	// data is the bytes of all members.
	data int64
}

// ListpackScore is a score as a listpack holds it: Redis 7.0's d2string,
// an integer up to 2^62 without a fraction (-0 as 0), inf and -inf, or
// %.17g. ZSCAN prints a listpack's scores so, and DUMP writes them so.
func ListpackScore(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case f >= -math.MaxInt64/2 && f <= math.MaxInt64/2 && f == math.Trunc(f):
		return strconv.FormatInt(int64(f), 10)
	}
	return strconv.FormatFloat(f, 'g', 17, 64)
}

// NewZSet returns an empty listpack sorted set.
func NewZSet() *ZSet { return &ZSet{} }

// NewZSetFor returns an empty sorted set in the form Redis's
// zsetTypeCreate picks for about n members of at most maxLen bytes.
func NewZSetFor(n, maxLen int, lim ZSetLimits) *ZSet {
	z := &ZSet{}
	if !lim.Fits(n, maxLen) {
		z.toSkiplist()
	}
	return z
}

// Kind implements Object.
func (z *ZSet) Kind() Kind { return KindZSet }

// Len is the number of members.
func (z *ZSet) Len() int {
	if z.list != nil {
		return z.list.length
	}
	return z.lp.n
}

// MemSize implements Object.
func (z *ZSet) MemSize() int64 {
	if z.list != nil {
		n := int64(z.list.length)
		return objectOverhead + zTreeSize + z.data + n*zMapEntrySize + int64(z.list.leaves)*zLeafSize + int64(z.list.inners)*zInnerSize
	}
	return objectOverhead + int64(cap(z.lp.buf))
}

// Encoding implements Object: "listpack" or "skiplist".
func (z *ZSet) Encoding() string {
	if z.list != nil {
		return "skiplist"
	}
	return "listpack"
}

// IsListpack reports whether the set is in its small form.
func (z *ZSet) IsListpack() bool { return z.list == nil }

// Score returns a member's score.
func (z *ZSet) Score(member string) (float64, bool) {
	if z.list != nil {
		s, ok := z.scores[member]
		return s, ok
	}
	off, s := z.lp.find(member)
	return s, off >= 0
}

// Set gives member the score, adding it if new (the report), and moves
// the set to its big form when lim says so, as Redis's zsetAdd does.
func (z *ZSet) Set(member string, score float64, lim ZSetLimits) bool {
	if z.list == nil {
		if off, old := z.lp.find(member); off >= 0 {
			z.lp.move(off, member, old, score)
			return false
		}
	} else if old, exists := z.scores[member]; exists {
		z.Update(member, old, score)
		return false
	}
	z.Add(member, score, lim)
	return true
}

// Add inserts member, which must be absent (Score said so), with the
// score, and moves the set to its big form when lim says so. ZADD looks
// the member up once and then calls Add or Update, where Set would look it
// up again.
func (z *ZSet) Add(member string, score float64, lim ZSetLimits) {
	if z.list == nil && (z.lp.n+1 > lim.MaxListpackEntries || len(member) > lim.MaxListpackValue) {
		z.toSkiplist()
	}
	z.insert(member, score)
	z.data += int64(len(member))
}

// Update moves member, present with the score old (Score said so), to
// score.
func (z *ZSet) Update(member string, old, score float64) {
	if old == score {
		return
	}
	if z.list != nil {
		// The map's key stays the set's own string: assigning under a
		// view would make the view the key.
		if owned, ok := z.list.updateScore(member, old, score); ok {
			z.scores[owned] = score
		}
		return
	}
	if off, _ := z.lp.find(member); off >= 0 {
		z.lp.move(off, member, old, score)
	}
}

// Delete removes member and reports whether it was there.
func (z *ZSet) Delete(member string) bool {
	s, ok := z.Score(member)
	if ok {
		z.remove(member, s)
		z.data -= int64(len(member))
	}
	return ok
}

// insert adds an entry known to be absent.
func (z *ZSet) insert(member string, score float64) {
	if z.list != nil {
		z.list.insert(member, score)
		z.scores[member] = score
		return
	}
	z.lp.insert(member, score)
}

// remove deletes an entry known to be present with that score.
func (z *ZSet) remove(member string, score float64) {
	if z.list != nil {
		z.list.delete(member, score)
		delete(z.scores, member)
		return
	}
	if off, _ := z.lp.find(member); off >= 0 {
		z.lp.removeAt(off)
	}
}

// Rank returns member's 0-based rank in ascending order.
func (z *ZSet) Rank(member string) (int, bool) {
	s, ok := z.Score(member)
	if !ok {
		return 0, false
	}
	return z.CountWhile(func(e ZEntry) bool { return e.less(s, member) }), true
}

// At returns the entry of rank r (0 <= r < Len) in ascending order.
func (z *ZSet) At(r int) ZEntry {
	if z.list != nil {
		l, i := z.list.at(r)
		return ZEntry{Member: l.members[i], Score: l.scores[i]}
	}
	return z.lp.at(z.lp.offsetOf(r))
}

// CountWhile returns how many leading entries (in ascending order)
// satisfy pred, which must hold for a prefix and fail for the rest (a
// range's lower or upper bound): O(log n) steps in the tree, one scan
// of a listpack.
func (z *ZSet) CountWhile(pred func(e ZEntry) bool) int {
	if z.list != nil {
		return z.list.countWhile(pred)
	}
	return z.lp.countWhile(pred)
}

// Range calls fn for the entries of ranks from, from+1, ... (ascending),
// or from, from-1, ... when rev, until fn returns false or the set ends.
func (z *ZSet) Range(from int, rev bool, fn func(e ZEntry) bool) {
	if from < 0 || from >= z.Len() {
		return
	}
	if z.list != nil {
		l, i := z.list.at(from)
		z.list.walk(l, i, rev, fn)
		return
	}
	z.lp.rangeFrom(from, rev, fn)
}

// DeleteRanks removes the entries of ranks lo to hi-1 and returns how many
// it removed.
func (z *ZSet) DeleteRanks(lo, hi int) int {
	lo, hi = max(lo, 0), min(hi, z.Len())
	if lo >= hi {
		return 0
	}
	if z.list == nil {
		z.data -= z.lp.removeRanks(lo, hi)
		return hi - lo
	}
	victims := make([]ZEntry, 0, hi-lo)
	z.Range(lo, false, func(e ZEntry) bool {
		victims = append(victims, e)
		return len(victims) < hi-lo
	})
	for _, e := range victims {
		z.remove(e.Member, e.Score)
		z.data -= int64(len(e.Member))
	}
	return len(victims)
}

// ForEach calls fn for every entry in ascending order until it returns
// false.
func (z *ZSet) ForEach(fn func(e ZEntry) bool) { z.Range(0, false, fn) }

func (z *ZSet) toSkiplist() {
	list := newZTree()
	scores := make(map[string]float64, z.lp.n)
	z.ForEach(func(e ZEntry) bool {
		list.insert(e.Member, e.Score)
		scores[e.Member] = e.Score
		return true
	})
	z.list, z.scores, z.lp = list, scores, zlistpack{}
}

// Clone implements Object.
func (z *ZSet) Clone() Object {
	c := &ZSet{data: z.data}
	if z.list == nil {
		c.lp = zlistpack{buf: append(allocBytes(len(z.lp.buf)), z.lp.buf...), n: z.lp.n}
		return c
	}
	c.list = newZTree()
	c.scores = make(map[string]float64, z.list.length)
	z.ForEach(func(e ZEntry) bool {
		c.list.insert(e.Member, e.Score)
		c.scores[e.Member] = e.Score
		return true
	})
	return c
}

// ZSet encoding: a uvarint 0 (listpack) or 1 (skiplist), the member
// count, then each member string and its score as 8 little-endian bytes
// of its IEEE bits, in ascending order.

// AppendBinary implements Object.
func (z *ZSet) AppendBinary(dst []byte) []byte {
	enc := uint64(0)
	if z.list != nil {
		enc = 1
	}
	dst = appendUvarint(dst, enc)
	dst = appendUvarint(dst, uint64(z.Len()))
	if z.list == nil {
		return append(dst, z.lp.buf...) // the same layout
	}
	z.ForEach(func(e ZEntry) bool {
		dst = appendString(dst, e.Member)
		dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(e.Score))
		return true
	})
	return dst
}

func decodeZSet(b []byte) (Object, error) {
	r := reader{b: b}
	enc := r.uvarint()
	n := r.count(9)
	z := &ZSet{}
	switch {
	case r.err != nil:
	case enc == 0:
		z.lp.buf = allocBytes(len(r.b))
	case enc == 1:
		z.toSkiplist()
	default:
		r.fail("unknown zset encoding")
	}
	seen := make(map[string]struct{}, n)
	var last ZEntry
	for i := 0; i < n && r.err == nil; i++ {
		m := r.string()
		s := r.float64()
		if r.err != nil {
			break
		}
		if math.IsNaN(s) {
			r.fail("NaN score")
			break
		}
		if _, dup := seen[m]; dup {
			r.fail("member twice")
			break
		}
		seen[m] = struct{}{}
		if i > 0 && !last.less(s, m) {
			r.fail("members out of order")
			break
		}
		last = ZEntry{Member: m, Score: s}
		if z.list != nil {
			z.insert(m, s)
		} else {
			z.lp.appendEntry(m, s)
		}
		z.data += int64(len(m))
	}
	if err := r.done(); err != nil {
		return nil, err
	}
	return z, nil
}
