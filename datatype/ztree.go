package datatype

import "unsafe"

// ztree is the ordered index of a big sorted set: a B+tree of (score,
// member) entries whose inner nodes count the entries below each child,
// so that ranks are found in O(log n) as with Redis's skiplist spans.
//
// Redis keeps a big sorted set in a skiplist, where a search reads about
// a dozen nodes scattered through memory, each a cache miss once the set
// outgrows the CPU's caches. Here a search reads the root, one or two
// inner nodes and a leaf, each a few cache lines of sorted scores that a
// binary search looks at: ZADD of random members into a set of 100k
// spends about half as long waiting for memory. The entries of a leaf are
// kept in arrays (scores apart from members), so that comparing scores,
// the common case, never reads a member.
//
// The tree keeps no empty leaf except an empty root, merges a leaf that
// falls under a quarter full into a neighbour when both fit in one, and
// splits a full leaf in halves, or, when an entry is appended after the
// last one (a set loaded in order), leaves the full leaf as it is and
// starts a new one, so that a set built in order fills its leaves.
type ztree struct {
	// height is the number of inner levels: 0 when the root is a leaf.
	height int
	root   *zinner // when height > 0
	leaf   *zleaf  // the root when height == 0
	length int
	// leaves and inners count the nodes, for MemSize.
	leaves, inners int
}

const (
	// zLeafCap entries make a leaf of 888 bytes (Go's 896-byte size
	// class), zInnerCap children an inner node of 2024 (the 2048 class).
	zLeafCap  = 36
	zInnerCap = 42
	// zMaxDepth bounds the height. A level is added only when the root
	// splits, full, and a node splits only when full, so each level
	// multiplies the entries by about zInnerCap/2 at least: 16 levels
	// would take more entries than any memory holds.
	zMaxDepth = 16
)

// zleaf holds up to zLeafCap entries in order.
type zleaf struct {
	n          int
	prev, next *zleaf
	scores     [zLeafCap]float64
	members    [zLeafCap]string
}

// zinner is an inner node: its children (leaves when it is on the lowest
// inner level, inner nodes above), how many entries each holds, and each
// one's last entry, by which a search picks the child.
type zinner struct {
	n       int
	counts  [zInnerCap]int
	scores  [zInnerCap]float64
	members [zInnerCap]string
	inner   [zInnerCap]*zinner
	leaves  [zInnerCap]*zleaf
}

// Sizes of the nodes as Go's heap holds them (their size classes).
const (
	zLeafSize  = 896
	zInnerSize = 2048
)

var (
	_ [zLeafSize - unsafe.Sizeof(zleaf{})]byte
	_ [zInnerSize - unsafe.Sizeof(zinner{})]byte
)

func newZTree() *ztree {
	l := &zleaf{}
	return &ztree{leaf: l, leaves: 1}
}

// zbefore reports whether (s1, m1) orders before (s2, m2): by score, then
// by member bytes, as Redis orders a sorted set.
func zbefore(s1 float64, m1 string, s2 float64, m2 string) bool {
	return s1 < s2 || (s1 == s2 && m1 < m2)
}

// search returns the first position whose entry does not order before
// (score, member).
func (l *zleaf) search(score float64, member string) int {
	lo, hi := 0, l.n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if zbefore(l.scores[m], l.members[m], score, member) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// child returns the child whose entries (score, member) falls among: the
// first whose last entry does not order before it, or the last child.
func (x *zinner) child(score float64, member string) int {
	lo, hi := 0, x.n-1
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if zbefore(x.scores[m], x.members[m], score, member) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

func (l *zleaf) insertAt(i int, member string, score float64) {
	copy(l.scores[i+1:l.n+1], l.scores[i:l.n])
	copy(l.members[i+1:l.n+1], l.members[i:l.n])
	l.scores[i], l.members[i] = score, member
	l.n++
}

func (l *zleaf) removeAt(i int) {
	copy(l.scores[i:], l.scores[i+1:l.n])
	copy(l.members[i:], l.members[i+1:l.n])
	l.n--
	l.members[l.n] = "" // let go of the member
}

func (l *zleaf) last() (float64, string) { return l.scores[l.n-1], l.members[l.n-1] }

func (x *zinner) last() (float64, string) { return x.scores[x.n-1], x.members[x.n-1] }

// total is the number of entries under x.
func (x *zinner) total() int {
	t := 0
	for _, c := range x.counts[:x.n] {
		t += c
	}
	return t
}

// ztreePath is the way down to a leaf: the inner node and the child taken
// at each level.
type ztreePath struct {
	nodes [zMaxDepth]*zinner
	idx   [zMaxDepth]int
}

// descend walks to the leaf where (score, member) is or would go.
func (t *ztree) descend(score float64, member string, p *ztreePath) *zleaf {
	if t.height == 0 {
		return t.leaf
	}
	x := t.root
	for d := 0; ; d++ {
		i := x.child(score, member)
		p.nodes[d], p.idx[d] = x, i
		if d == t.height-1 {
			return x.leaves[i]
		}
		x = x.inner[i]
	}
}

// insert adds (member, score), which must be absent.
func (t *ztree) insert(member string, score float64) {
	var p ztreePath
	leaf := t.descend(score, member, &p)
	pos := leaf.search(score, member)
	t.length++
	var right *zleaf // a new leaf after leaf, when it split
	switch {
	case leaf.n < zLeafCap:
		leaf.insertAt(pos, member, score)
	case pos == leaf.n && leaf.next == nil:
		right = t.newLeafAfter(leaf)
		right.insertAt(0, member, score)
	default:
		right = t.newLeafAfter(leaf)
		half := zLeafCap / 2
		copy(right.scores[:], leaf.scores[half:])
		copy(right.members[:], leaf.members[half:])
		clear(leaf.members[half:])
		right.n, leaf.n = zLeafCap-half, half
		if pos <= half {
			leaf.insertAt(pos, member, score)
		} else {
			right.insertAt(pos-half, member, score)
		}
	}
	// Up the path: the child taken gained an entry; when it split, its
	// new right sibling goes in after it.
	var rightInner *zinner // a new inner node after the one below, when it split
	for d := t.height - 1; d >= 0; d-- {
		x, i := p.nodes[d], p.idx[d]
		var rcount int
		var rs float64
		var rm string
		split := false
		if d == t.height-1 {
			x.counts[i] = leaf.n
			x.scores[i], x.members[i] = leaf.last()
			if right != nil {
				split = true
				rcount = right.n
				rs, rm = right.last()
			}
		} else {
			c := x.inner[i]
			if rightInner != nil {
				x.counts[i] = c.total()
				split = true
				rcount = rightInner.total()
				rs, rm = rightInner.last()
			} else {
				x.counts[i]++
			}
			x.scores[i], x.members[i] = c.last()
		}
		below := rightInner
		rightInner = nil
		if !split {
			continue
		}
		rightInner = t.insertChild(x, i+1, rcount, rs, rm, right, below)
		right = nil
	}
	if right != nil || rightInner != nil {
		// The root split: a new root above it and its new sibling.
		old := t.root
		root := &zinner{n: 2}
		t.inners++
		if t.height == 0 {
			root.leaves[0], root.leaves[1] = t.leaf, right
			root.counts[0], root.counts[1] = t.leaf.n, right.n
			root.scores[0], root.members[0] = t.leaf.last()
			root.scores[1], root.members[1] = right.last()
			t.leaf = nil
		} else {
			root.inner[0], root.inner[1] = old, rightInner
			root.counts[0], root.counts[1] = old.total(), rightInner.total()
			root.scores[0], root.members[0] = old.last()
			root.scores[1], root.members[1] = rightInner.last()
		}
		t.root = root
		t.height++
	}
}

// insertChild puts a new child (leaf or in) at position i of x, with its
// count and last entry, splitting x when it is full: then it returns x's
// new right sibling, which x's parent must take in after x.
func (t *ztree) insertChild(x *zinner, i, count int, s float64, m string, leaf *zleaf, in *zinner) *zinner {
	if x.n < zInnerCap {
		x.insertChildAt(i, count, s, m, leaf, in)
		return nil
	}
	r := &zinner{}
	t.inners++
	if i == x.n && t.isRightmost(x) {
		// Appending in order: x stays full.
		r.insertChildAt(0, count, s, m, leaf, in)
		return r
	}
	half := zInnerCap / 2
	r.n = x.n - half
	copy(r.counts[:], x.counts[half:x.n])
	copy(r.scores[:], x.scores[half:x.n])
	copy(r.members[:], x.members[half:x.n])
	copy(r.inner[:], x.inner[half:x.n])
	copy(r.leaves[:], x.leaves[half:x.n])
	clear(x.members[half:x.n])
	clear(x.inner[half:x.n])
	clear(x.leaves[half:x.n])
	x.n = half
	if i <= half {
		x.insertChildAt(i, count, s, m, leaf, in)
	} else {
		r.insertChildAt(i-half, count, s, m, leaf, in)
	}
	return r
}

// isRightmost reports whether x is the last node of its level.
func (t *ztree) isRightmost(x *zinner) bool {
	y := t.root
	for y != x && y != nil {
		y = y.inner[y.n-1]
	}
	return y == x
}

func (x *zinner) insertChildAt(i, count int, s float64, m string, leaf *zleaf, in *zinner) {
	copy(x.counts[i+1:x.n+1], x.counts[i:x.n])
	copy(x.scores[i+1:x.n+1], x.scores[i:x.n])
	copy(x.members[i+1:x.n+1], x.members[i:x.n])
	copy(x.inner[i+1:x.n+1], x.inner[i:x.n])
	copy(x.leaves[i+1:x.n+1], x.leaves[i:x.n])
	x.counts[i], x.scores[i], x.members[i], x.inner[i], x.leaves[i] = count, s, m, in, leaf
	x.n++
}

func (x *zinner) removeChildAt(i int) {
	copy(x.counts[i:], x.counts[i+1:x.n])
	copy(x.scores[i:], x.scores[i+1:x.n])
	copy(x.members[i:], x.members[i+1:x.n])
	copy(x.inner[i:], x.inner[i+1:x.n])
	copy(x.leaves[i:], x.leaves[i+1:x.n])
	x.n--
	x.members[x.n], x.inner[x.n], x.leaves[x.n] = "", nil, nil
}

// newLeafAfter links a new empty leaf after l.
func (t *ztree) newLeafAfter(l *zleaf) *zleaf {
	r := &zleaf{prev: l, next: l.next}
	if l.next != nil {
		l.next.prev = r
	}
	l.next = r
	t.leaves++
	return r
}

// unlinkLeaf takes l out of the chain of leaves.
func (t *ztree) unlinkLeaf(l *zleaf) {
	if l.prev != nil {
		l.prev.next = l.next
	}
	if l.next != nil {
		l.next.prev = l.prev
	}
	l.prev, l.next = nil, nil
	t.leaves--
}

// delete removes (member, score) and reports whether it was there.
func (t *ztree) delete(member string, score float64) bool {
	var p ztreePath
	leaf := t.descend(score, member, &p)
	pos := leaf.search(score, member)
	if pos == leaf.n || leaf.scores[pos] != score || leaf.members[pos] != member {
		return false
	}
	t.deleteAt(&p, leaf, pos)
	return true
}

// deleteAt removes the entry at pos of leaf, which p leads to.
func (t *ztree) deleteAt(p *ztreePath, leaf *zleaf, pos int) {
	leaf.removeAt(pos)
	t.length--
	for d := t.height - 1; d >= 0; d-- {
		x, i := p.nodes[d], p.idx[d]
		x.counts[i]--
		if d == t.height-1 {
			t.fixLeafChild(x, i)
		} else {
			t.fixInnerChild(x, i)
		}
	}
	// A root of one child gives way to it.
	for t.height > 0 && t.root.n == 1 {
		old := t.root
		if t.height == 1 {
			t.leaf, t.root = old.leaves[0], nil
		} else {
			t.root = old.inner[0]
		}
		t.height--
		t.inners--
	}
	if t.height > 0 && t.root.n == 0 {
		// Cannot happen (a root keeps two children, each with entries,
		// until it gives way), but a tree without leaves must not be
		// searched: it holds nothing, so it becomes the empty tree.
		*t = *newZTree()
	}
}

// fixLeafChild brings x's record of its leaf i up to date after a removal
// from the leaf, and removes or merges the leaf when it ran low.
func (t *ztree) fixLeafChild(x *zinner, i int) {
	l := x.leaves[i]
	if l.n == 0 {
		if x.n > 1 || t.height > 1 {
			t.unlinkLeaf(l)
			x.removeChildAt(i)
		}
		return
	}
	x.scores[i], x.members[i] = l.last()
	if l.n >= zLeafCap/4 {
		return
	}
	// Merge with a neighbour under the same parent when both fit.
	a, b, ok := x.mergePartner(i, func(j int) int { return x.leaves[j].n })
	if !ok {
		return
	}
	la, lb := x.leaves[a], x.leaves[b]
	if la.n+lb.n > zLeafCap {
		return
	}
	copy(la.scores[la.n:], lb.scores[:lb.n])
	copy(la.members[la.n:], lb.members[:lb.n])
	la.n += lb.n
	t.unlinkLeaf(lb)
	x.counts[a] += x.counts[b]
	x.scores[a], x.members[a] = la.last()
	x.removeChildAt(b)
}

// mergePartner picks the neighbour child i of x may merge with, the
// smaller of the two it has, and returns both in order (a < b); ok is
// false when x has no other child. size is a child's number of entries or
// children.
func (x *zinner) mergePartner(i int, size func(j int) int) (a, b int, ok bool) {
	j := i + 1
	if j == x.n || (i > 0 && size(i-1) < size(j)) {
		j = i - 1
	}
	if j < 0 {
		return 0, 0, false
	}
	return min(i, j), max(i, j), true
}

// fixInnerChild is fixLeafChild for x's inner child i.
func (t *ztree) fixInnerChild(x *zinner, i int) {
	c := x.inner[i]
	if c.n == 0 {
		x.removeChildAt(i)
		t.inners--
		return
	}
	x.scores[i], x.members[i] = c.last()
	if c.n >= zInnerCap/4 {
		return
	}
	a, b, ok := x.mergePartner(i, func(j int) int { return x.inner[j].n })
	if !ok {
		return
	}
	ca, cb := x.inner[a], x.inner[b]
	if ca.n+cb.n > zInnerCap {
		return
	}
	copy(ca.counts[ca.n:], cb.counts[:cb.n])
	copy(ca.scores[ca.n:], cb.scores[:cb.n])
	copy(ca.members[ca.n:], cb.members[:cb.n])
	copy(ca.inner[ca.n:], cb.inner[:cb.n])
	copy(ca.leaves[ca.n:], cb.leaves[:cb.n])
	ca.n += cb.n
	t.inners--
	x.counts[a] += x.counts[b]
	x.scores[a], x.members[a] = ca.last()
	x.removeChildAt(b)
}

// updateScore moves member from score old to score and returns the set's
// own string of the member (member may be a view of a request); ok is
// false when member is not there with score old.
func (t *ztree) updateScore(member string, old, score float64) (owned string, ok bool) {
	// In place when the entry keeps its position within its leaf.
	var p ztreePath
	leaf := t.descend(old, member, &p)
	pos := leaf.search(old, member)
	if pos == leaf.n || leaf.scores[pos] != old || leaf.members[pos] != member {
		return "", false
	}
	owned = leaf.members[pos]
	if (pos > 0 && zbefore(leaf.scores[pos-1], leaf.members[pos-1], score, member)) || (pos == 0 && leaf.prev == nil) {
		if (pos+1 < leaf.n && zbefore(score, member, leaf.scores[pos+1], leaf.members[pos+1])) || (pos+1 == leaf.n && leaf.next == nil) {
			leaf.scores[pos] = score
			if pos+1 == leaf.n {
				for d := t.height - 1; d >= 0; d-- {
					x, i := p.nodes[d], p.idx[d]
					x.scores[i] = score
					if i != x.n-1 {
						break
					}
				}
			}
			return owned, true
		}
	}
	t.deleteAt(&p, leaf, pos)
	t.insert(owned, score)
	return owned, true
}

// at returns the leaf and position of the entry of 0-based rank r
// (0 <= r < length).
func (t *ztree) at(r int) (*zleaf, int) {
	if t.height == 0 {
		return t.leaf, r
	}
	x := t.root
	for d := 0; ; d++ {
		i := 0
		for i < x.n-1 && r >= x.counts[i] {
			r -= x.counts[i]
			i++
		}
		if d == t.height-1 {
			return x.leaves[i], r
		}
		x = x.inner[i]
	}
}

// countWhile returns how many leading entries satisfy pred, which holds
// for a prefix of the entries and fails for the rest.
func (t *ztree) countWhile(pred func(e ZEntry) bool) int {
	n := 0
	leaf := t.leaf
	if t.height > 0 {
		x := t.root
		for d := 0; ; d++ {
			// The children whose last entry satisfies pred are wholly
			// counted; the search goes on in the first that does not.
			lo, hi := 0, x.n-1
			for lo < hi {
				m := int(uint(lo+hi) >> 1)
				if pred(ZEntry{Member: x.members[m], Score: x.scores[m]}) {
					lo = m + 1
				} else {
					hi = m
				}
			}
			for _, c := range x.counts[:lo] {
				n += c
			}
			if d == t.height-1 {
				leaf = x.leaves[lo]
				break
			}
			x = x.inner[lo]
		}
	}
	lo, hi := 0, leaf.n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if pred(ZEntry{Member: leaf.members[m], Score: leaf.scores[m]}) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return n + lo
}

// walk calls fn for the entries from position i of leaf on, forward or
// backward (rev), until fn returns false or the entries end.
func (t *ztree) walk(leaf *zleaf, i int, rev bool, fn func(e ZEntry) bool) {
	for leaf != nil {
		if rev {
			for ; i >= 0; i-- {
				if !fn(ZEntry{Member: leaf.members[i], Score: leaf.scores[i]}) {
					return
				}
			}
			leaf = leaf.prev
			if leaf != nil {
				i = leaf.n - 1
			}
			continue
		}
		for ; i < leaf.n; i++ {
			if !fn(ZEntry{Member: leaf.members[i], Score: leaf.scores[i]}) {
				return
			}
		}
		leaf, i = leaf.next, 0
	}
}
