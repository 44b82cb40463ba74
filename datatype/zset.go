package datatype

import (
	"encoding/binary"
	"math"
	"math/bits"
	"math/rand/v2"
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

// Memory of the skiplist form, as Go's heap holds it (checked against
// runtime.MemStats by TestZSetMemSizeMatchesTheHeap): a node (entry,
// backward pointer, height: 40 bytes) with its levels in the same
// allocation, 24 bytes per level (64 bytes, a size class, for the three
// nodes in four that have one level), and a map slot (string header and
// node pointer, 24 bytes, at Go's map load factor with its control bytes,
// 40).
const (
	zNodeSize     = 40
	zLevelSize    = 24
	zMapEntrySize = 40
	// zSkiplistSize is the skiplist's header node (every level) and the
	// map's header.
	zSkiplistSize = zNodeSize + zMaxLevel*zLevelSize + 48 + 48
	zMaxLevel     = 32
)

// ZSet is a sorted set value. A small one is a "listpack": its entries in
// one buffer sorted by (score, member) (zlistpack); past the limits it
// becomes a "skiplist" for good, as in Redis: a skiplist with spans (rank
// in O(log n)) plus a member-to-score map. Every operation that finds a
// position works by rank, so both forms answer the same questions.
type ZSet struct {
	// lp holds the members in order while listpack.
	lp zlistpack
	// list and nodes hold the skiplist form (nodes finds a member's node,
	// as Redis's dict points at its score); list is nil before.
	list  *zskiplist
	nodes map[string]*znode
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
		return objectOverhead + zSkiplistSize + z.data + n*(zNodeSize+zMapEntrySize) + int64(z.list.levels)*zLevelSize
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
		if x, ok := z.nodes[member]; ok {
			return x.Score, true
		}
		return 0, false
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
	} else if x, exists := z.nodes[member]; exists {
		z.Update(member, x.Score, score)
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
		z.list.updateScore(member, old, score)
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
		z.nodes[member] = z.list.insert(member, score)
		return
	}
	z.lp.insert(member, score)
}

// remove deletes an entry known to be present with that score.
func (z *ZSet) remove(member string, score float64) {
	if z.list != nil {
		z.list.delete(member, score)
		delete(z.nodes, member)
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
		return z.list.byRank(r + 1).ZEntry
	}
	return z.lp.at(z.lp.offsetOf(r))
}

// CountWhile returns how many leading entries (in ascending order)
// satisfy pred, which must hold for a prefix and fail for the rest (a
// range's lower or upper bound): O(log n) steps in a skiplist, one scan
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
		for n := z.list.byRank(from + 1); n != nil; {
			if !fn(n.ZEntry) {
				return
			}
			if rev {
				n = n.backward
			} else {
				n = n.lv(0).forward
			}
		}
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
	list := newSkiplist(uint64(z.lp.n) ^ 0x9e3779b97f4a7c15)
	nodes := make(map[string]*znode, z.lp.n)
	z.ForEach(func(e ZEntry) bool {
		nodes[e.Member] = list.insert(e.Member, e.Score)
		return true
	})
	z.list, z.nodes, z.lp = list, nodes, zlistpack{}
}

// Clone implements Object.
func (z *ZSet) Clone() Object {
	c := &ZSet{data: z.data}
	if z.list == nil {
		c.lp = zlistpack{buf: append(allocBytes(len(z.lp.buf)), z.lp.buf...), n: z.lp.n}
		return c
	}
	c.list = newSkiplist(uint64(z.list.length))
	c.nodes = make(map[string]*znode, z.list.length)
	z.ForEach(func(e ZEntry) bool {
		c.nodes[e.Member] = c.list.insert(e.Member, e.Score)
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

// zskiplist is Redis's skiplist (t_zset.c): nodes ordered by (score,
// member), each level's forward pointer carrying its span (the number of
// level-0 steps it skips), so ranks are found in O(log n).
type zskiplist struct {
	header *znode
	tail   *znode
	length int
	level  int
	// levels counts the level slots of all nodes, for MemSize.
	levels int
	rng    *rand.PCG
}

// znode is a node of the skiplist. Its levels live in the same
// allocation, just below it: level i is the zlevel that ends (i)*24 bytes
// before the node (znodeBlock), as Redis's zslCreateNode puts a node's
// levels right after it. A search step then reads one block of memory per
// node, not the node and then its levels, with no level slice to load
// first; and a node of one level (three in four) is 64 bytes, one cache
// line, where it was 80 and straddled two.
type znode struct {
	ZEntry
	backward *znode
	// height is the number of levels below the node.
	height int
}

// zlevel is one level of a node: the next node on that level, a copy of
// that node's score, and the span. With the score at hand a search passes
// over a node it does not step to without reading it: in a big set each
// node read is a cache miss, and about half of a search's comparisons are
// with nodes it does not step to.
type zlevel struct {
	forward *znode
	score   float64
	span    int
}

const zlevelSize = int(unsafe.Sizeof(zlevel{}))

// lv returns the node's level i, which must be below its height.
func (x *znode) lv(i int) *zlevel {
	return (*zlevel)(unsafe.Add(unsafe.Pointer(x), -(i+1)*zlevelSize))
}

// before reports whether the node lv leads to comes before (score,
// member).
func (lv *zlevel) before(score float64, member string) bool {
	return lv.forward != nil && (lv.score < score || (lv.score == score && lv.forward.Member < member))
}

// znodeBlock is the allocation of a node of len(A) levels: the levels,
// highest first, then the node, so that level i ends (i+1)*24 bytes
// before the node whatever its height. The garbage collector keeps the
// block alive through pointers to its node and scans its levels' forward
// pointers by the block's type.
type znodeBlock[A any] struct {
	levels A
	node   znode
}

func newBlockNode[A any]() *znode { return &new(znodeBlock[A]).node }

// newNodeOfHeight allocates a node of each height, 1 to zMaxLevel.
var newNodeOfHeight = [zMaxLevel + 1]func() *znode{
	nil,
	newBlockNode[[1]zlevel], newBlockNode[[2]zlevel], newBlockNode[[3]zlevel], newBlockNode[[4]zlevel],
	newBlockNode[[5]zlevel], newBlockNode[[6]zlevel], newBlockNode[[7]zlevel], newBlockNode[[8]zlevel],
	newBlockNode[[9]zlevel], newBlockNode[[10]zlevel], newBlockNode[[11]zlevel], newBlockNode[[12]zlevel],
	newBlockNode[[13]zlevel], newBlockNode[[14]zlevel], newBlockNode[[15]zlevel], newBlockNode[[16]zlevel],
	newBlockNode[[17]zlevel], newBlockNode[[18]zlevel], newBlockNode[[19]zlevel], newBlockNode[[20]zlevel],
	newBlockNode[[21]zlevel], newBlockNode[[22]zlevel], newBlockNode[[23]zlevel], newBlockNode[[24]zlevel],
	newBlockNode[[25]zlevel], newBlockNode[[26]zlevel], newBlockNode[[27]zlevel], newBlockNode[[28]zlevel],
	newBlockNode[[29]zlevel], newBlockNode[[30]zlevel], newBlockNode[[31]zlevel], newBlockNode[[32]zlevel],
}

// newZNode returns a node of lvl levels.
func newZNode(lvl int, member string, score float64) *znode {
	x := newNodeOfHeight[lvl]()
	x.ZEntry = ZEntry{Member: member, Score: score}
	x.height = lvl
	return x
}

func newSkiplist(seed uint64) *zskiplist {
	return &zskiplist{
		header: newZNode(zMaxLevel, "", 0),
		level:  1,
		rng:    rand.NewPCG(seed, 0x2545f4914f6cdd1d),
	}
}

// randomLevel gives level k with probability (1/4)^(k-1), like Redis's
// zslRandomLevel.
func (l *zskiplist) randomLevel() int {
	lvl := 1 + bits.TrailingZeros64(l.rng.Uint64()|1<<62)/2
	return min(lvl, zMaxLevel)
}

func (l *zskiplist) insert(member string, score float64) *znode {
	x := newZNode(l.randomLevel(), member, score)
	l.link(x)
	return x
}

// updateScore moves member from score old to score, reusing its node as
// Redis's zslUpdateScore does.
func (l *zskiplist) updateScore(member string, old, score float64) {
	x := l.unlink(member, old)
	if x == nil {
		return
	}
	x.Score = score
	l.link(x)
}

// link puts x, a node not in the list, in its place by (score, member).
func (l *zskiplist) link(x *znode) {
	var update [zMaxLevel]*znode
	var rank [zMaxLevel]int
	score, member := x.Score, x.Member
	p, r := l.header, 0
	for i := l.level - 1; i >= 0; i-- {
		for lv := p.lv(i); lv.before(score, member); lv = p.lv(i) {
			r += lv.span
			p = lv.forward
		}
		update[i], rank[i] = p, r
	}
	lvl := x.height
	if lvl > l.level {
		for i := l.level; i < lvl; i++ {
			rank[i] = 0
			update[i] = l.header
			update[i].lv(i).span = l.length
		}
		l.level = lvl
	}
	for i := 0; i < lvl; i++ {
		xl, ul := x.lv(i), update[i].lv(i)
		xl.forward = ul.forward
		xl.score = ul.score
		ul.forward = x
		ul.score = x.Score
		xl.span = ul.span - (rank[0] - rank[i])
		ul.span = rank[0] - rank[i] + 1
	}
	for i := lvl; i < l.level; i++ {
		update[i].lv(i).span++
	}
	x.backward = nil
	if update[0] != l.header {
		x.backward = update[0]
	}
	if next := x.lv(0).forward; next != nil {
		next.backward = x
	} else {
		l.tail = x
	}
	l.length++
	l.levels += lvl
}

func (l *zskiplist) delete(member string, score float64) { l.unlink(member, score) }

// unlink takes the node of (score, member) out of the list and returns
// it, nil when there is none.
func (l *zskiplist) unlink(member string, score float64) *znode {
	var update [zMaxLevel]*znode
	x := l.header
	for i := l.level - 1; i >= 0; i-- {
		for lv := x.lv(i); lv.before(score, member); lv = x.lv(i) {
			x = lv.forward
		}
		update[i] = x
	}
	x = x.lv(0).forward
	if x == nil || x.Score != score || x.Member != member {
		return nil
	}
	for i := 0; i < l.level; i++ {
		ul := update[i].lv(i)
		if ul.forward == x {
			xl := x.lv(i)
			ul.span += xl.span - 1
			ul.forward = xl.forward
			ul.score = xl.score
		} else {
			ul.span--
		}
	}
	if next := x.lv(0).forward; next != nil {
		next.backward = x.backward
	} else {
		l.tail = x.backward
	}
	for l.level > 1 && l.header.lv(l.level-1).forward == nil {
		l.level--
	}
	l.length--
	l.levels -= x.height
	return x
}

// byRank returns the node of 1-based rank r.
func (l *zskiplist) byRank(r int) *znode {
	traversed := 0
	x := l.header
	for i := l.level - 1; i >= 0; i-- {
		for lv := x.lv(i); lv.forward != nil && traversed+lv.span <= r; lv = x.lv(i) {
			traversed += lv.span
			x = lv.forward
		}
		if traversed == r {
			return x
		}
	}
	return nil
}

func (l *zskiplist) countWhile(pred func(e ZEntry) bool) int {
	traversed := 0
	x := l.header
	for i := l.level - 1; i >= 0; i-- {
		for lv := x.lv(i); lv.forward != nil && pred(lv.forward.ZEntry); lv = x.lv(i) {
			traversed += lv.span
			x = lv.forward
		}
	}
	return traversed
}
