package datatype

import "bytes"

// ListLimits is the setting that decides how many elements one chunk of a
// list holds (list-max-listpack-size): a positive value is a count, -1 to
// -5 a size of 4, 8, 16, 32 or 64 KiB (below -5 as -5; 0 as 1), as for
// Redis's quicklist nodes.
type ListLimits struct {
	MaxListpackSize int
}

// DefaultListLimits is Redis's default, list-max-listpack-size -2 (8 KiB
// chunks).
var DefaultListLimits = ListLimits{MaxListpackSize: -2}

// PlainElementSize is the length from which an element is kept in a chunk
// of its own whose buffer is never changed afterwards (Redis's plain
// quicklist node). Smaller elements share packed buffers that later
// commands change in place, so a reply must copy them before the engine
// lock is released; resp.Writer copies every bulk shorter than 16 KiB.
const PlainElementSize = 8 << 10

// sizeSafetyLimit bounds a packed chunk of a count-limited list, as
// Redis's SIZE_SAFETY_LIMIT does.
const sizeSafetyLimit = 8 << 10

// chunkOverhead is what a chunk costs beyond its buffers: the struct, its
// two slice headers and the pointer to it.
const chunkOverhead = 64

// bounds returns the byte and count bounds of a packed chunk.
func (lim ListLimits) bounds() (maxBytes, maxCount int) {
	switch f := lim.MaxListpackSize; {
	case f > 0:
		return sizeSafetyLimit, f
	case f == 0:
		return sizeSafetyLimit, 1
	default:
		return 4 << 10 << (min(-f, 5) - 1), 1 << 30
	}
}

// chunk is a run of consecutive elements packed into one buffer (a
// quicklist node): element i is buf[ends[i-1]:ends[i]] (from 0 for the
// first). A chunk holding one element of PlainElementSize or more is plain:
// its buffer is never written again.
type chunk struct {
	buf  []byte
	ends []uint32
}

func (c *chunk) n() int { return len(c.ends) }

func (c *chunk) start(i int) uint32 {
	if i == 0 {
		return 0
	}
	return c.ends[i-1]
}

func (c *chunk) at(i int) []byte { return c.buf[c.start(i):c.ends[i]:c.ends[i]] }

func (c *chunk) plain() bool { return len(c.ends) == 1 && len(c.buf) >= PlainElementSize }

func (c *chunk) size() int64 { return chunkOverhead + int64(cap(c.buf)) + 4*int64(cap(c.ends)) }

// insert puts v before element i (i == n appends).
func (c *chunk) insert(i int, v []byte) {
	at := c.start(i)
	c.buf = append(c.buf, v...)
	copy(c.buf[int(at)+len(v):], c.buf[at:len(c.buf)-len(v)])
	copy(c.buf[at:], v)
	c.ends = append(c.ends, 0)
	copy(c.ends[i+1:], c.ends[i:])
	for j := i + 1; j < len(c.ends); j++ {
		c.ends[j] += uint32(len(v))
	}
	c.ends[i] = at + uint32(len(v))
}

// remove deletes elements [i, j).
func (c *chunk) remove(i, j int) {
	from, to := c.start(i), c.start(j)
	gone := to - from
	c.buf = append(c.buf[:from], c.buf[to:]...)
	c.ends = append(c.ends[:i], c.ends[j:]...)
	for k := i; k < len(c.ends); k++ {
		c.ends[k] -= gone
	}
}

// List is a list value: a deque of chunks, so that pushes and pops at
// either end cost O(1) (at most one chunk's bytes moved) and an index is
// found by walking the chunks' counts, not the elements. OBJECT ENCODING
// is "quicklist", as for every list in Redis 7.0.
type List struct {
	// chunks[lo:] are the chunks in order; room before lo makes a push
	// of a new first chunk O(1) amortized.
	chunks []*chunk
	lo     int
	n      int
	// mem is the chunks' sizes (chunk.size), kept as they change.
	mem int64
}

// NewList returns an empty list.
func NewList() *List { return &List{} }

// Kind implements Object.
func (l *List) Kind() Kind { return KindList }

// Len is the number of elements.
func (l *List) Len() int { return l.n }

// MemSize implements Object.
func (l *List) MemSize() int64 { return objectOverhead + l.mem + 8*int64(cap(l.chunks)) }

// Encoding implements Object.
func (l *List) Encoding() string { return "quicklist" }

func (l *List) live() []*chunk { return l.chunks[l.lo:] }

// change runs fn, which changes chunk c, and accounts c's size again.
func (l *List) change(c *chunk, fn func()) {
	l.mem -= c.size()
	fn()
	l.mem += c.size()
}

// fits reports whether v may join packed chunk c.
func fits(c *chunk, v []byte, lim ListLimits) bool {
	if c.plain() || len(v) >= PlainElementSize {
		return false
	}
	maxBytes, maxCount := lim.bounds()
	return c.n() < maxCount && len(c.buf)+len(v) <= maxBytes
}

func newChunk(v []byte) *chunk {
	return &chunk{buf: append([]byte(nil), v...), ends: []uint32{uint32(len(v))}}
}

// insertChunk puts c at position i of the live chunks.
func (l *List) insertChunk(i int, c *chunk) {
	l.mem += c.size()
	if i == 0 && l.lo > 0 {
		l.lo--
		l.chunks[l.lo] = c
		return
	}
	if i == 0 {
		live := l.live()
		grown := make([]*chunk, len(live)/2+4, len(live)/2+4+len(live)+1)
		lo := len(grown) - 1
		grown = append(grown, live...)
		grown[lo] = c
		l.chunks, l.lo = grown, lo
		return
	}
	at := l.lo + i
	l.chunks = append(l.chunks, nil)
	copy(l.chunks[at+1:], l.chunks[at:])
	l.chunks[at] = c
}

// removeChunk drops live chunk i.
func (l *List) removeChunk(i int) {
	c := l.chunks[l.lo+i]
	l.mem -= c.size()
	if i == 0 {
		l.chunks[l.lo] = nil
		l.lo++
		if l.lo == len(l.chunks) {
			l.chunks, l.lo = l.chunks[:0], 0
		}
		return
	}
	at := l.lo + i
	copy(l.chunks[at:], l.chunks[at+1:])
	l.chunks[len(l.chunks)-1] = nil
	l.chunks = l.chunks[:len(l.chunks)-1]
}

// Push adds a copy of v at the head (front) or the tail.
func (l *List) Push(v []byte, front bool, lim ListLimits) {
	live := l.live()
	l.n++
	switch {
	case len(live) == 0:
		l.insertChunk(0, newChunk(v))
	case front && fits(live[0], v, lim):
		c := live[0]
		l.change(c, func() { c.insert(0, v) })
	case front:
		l.seal(live[0])
		l.insertChunk(0, newChunk(v))
	case fits(live[len(live)-1], v, lim):
		c := live[len(live)-1]
		l.change(c, func() { c.insert(c.n(), v) })
	default:
		l.seal(live[len(live)-1])
		l.insertChunk(len(live), newChunk(v))
	}
}

// seal gives back the room a full chunk's buffers grew beyond what they
// hold, once, when the list moves on to a new chunk: appends leave up to a
// quarter (a half for small chunks) unused.
func (l *List) seal(c *chunk) {
	if c.plain() || cap(c.buf)-len(c.buf) <= len(c.buf)/16 && cap(c.ends)-len(c.ends) <= len(c.ends)/16 {
		return
	}
	l.change(c, func() {
		c.buf = append(make([]byte, 0, len(c.buf)), c.buf...)
		c.ends = append(make([]uint32, 0, len(c.ends)), c.ends...)
	})
}

// Pop removes and returns the head (front) or tail element; nil when the
// list is empty. The returned slice is the caller's.
func (l *List) Pop(front bool) []byte {
	live := l.live()
	if len(live) == 0 {
		return nil
	}
	ci, ei := 0, 0
	if !front {
		ci = len(live) - 1
		ei = live[ci].n() - 1
	}
	c := live[ci]
	l.n--
	if c.n() == 1 {
		l.removeChunk(ci)
		return c.buf
	}
	v := append([]byte(nil), c.at(ei)...)
	l.change(c, func() { c.remove(ei, ei+1) })
	return v
}

// locate returns the live chunk holding element i (0 <= i < Len) and the
// element's index in it, walking from the nearer end.
func (l *List) locate(i int) (ci, ei int) {
	live := l.live()
	if i < l.n/2 {
		for ci = 0; i >= live[ci].n(); ci++ {
			i -= live[ci].n()
		}
		return ci, i
	}
	back := l.n - 1 - i
	for ci = len(live) - 1; back >= live[ci].n(); ci-- {
		back -= live[ci].n()
	}
	return ci, live[ci].n() - 1 - back
}

// Index returns element i (0 <= i < Len). The slice is valid until the
// list next changes.
func (l *List) Index(i int) []byte {
	ci, ei := l.locate(i)
	return l.live()[ci].at(ei)
}

// Set replaces element i (0 <= i < Len) with a copy of v.
func (l *List) Set(i int, v []byte, lim ListLimits) {
	l.RemoveAt(i)
	l.Insert(i, v, lim)
}

// Insert puts a copy of v before element i (0 <= i <= Len; Len appends).
func (l *List) Insert(i int, v []byte, lim ListLimits) {
	switch {
	case i == 0:
		l.Push(v, true, lim)
		return
	case i == l.n:
		l.Push(v, false, lim)
		return
	}
	// Put it at the end of the chunk holding element i-1 when there is
	// room, else at the front of element i's chunk, else split.
	pc, pe := l.locate(i - 1)
	live := l.live()
	if c := live[pc]; fits(c, v, lim) {
		l.n++
		l.change(c, func() { c.insert(pe+1, v) })
		return
	}
	ci, ei := l.locate(i)
	if c := live[ci]; fits(c, v, lim) {
		l.n++
		l.change(c, func() { c.insert(ei, v) })
		return
	}
	l.n++
	if ci != pc {
		l.insertChunk(ci, newChunk(v))
		return
	}
	// Split element i's chunk before ei, and put v between.
	c := live[ci]
	tail := &chunk{}
	for k := ei; k < c.n(); k++ {
		tail.insert(tail.n(), c.at(k))
	}
	l.change(c, func() { c.remove(ei, c.n()) })
	l.insertChunk(ci+1, tail)
	l.insertChunk(ci+1, newChunk(v))
}

// RemoveAt deletes element i (0 <= i < Len).
func (l *List) RemoveAt(i int) {
	ci, ei := l.locate(i)
	c := l.live()[ci]
	l.n--
	if c.n() == 1 {
		l.removeChunk(ci)
		return
	}
	l.change(c, func() { c.remove(ei, ei+1) })
}

// Trim keeps elements [start, stop] and drops the others (LTRIM, with the
// bounds already clamped by the caller: 0 <= start, stop < Len; start >
// stop empties the list).
func (l *List) Trim(start, stop int) {
	if start > stop {
		*l = List{}
		return
	}
	l.dropFront(start)
	l.dropBack(l.n - (stop - start + 1))
}

// dropFront removes the first k elements, whole chunks at a time where it
// can.
func (l *List) dropFront(k int) {
	for k > 0 {
		c := l.live()[0]
		if c.n() <= k {
			k -= c.n()
			l.n -= c.n()
			l.removeChunk(0)
			continue
		}
		l.n -= k
		l.change(c, func() { c.remove(0, k) })
		return
	}
}

// dropBack removes the last k elements.
func (l *List) dropBack(k int) {
	for k > 0 {
		live := l.live()
		ci := len(live) - 1
		c := live[ci]
		if c.n() <= k {
			k -= c.n()
			l.n -= c.n()
			l.removeChunk(ci)
			continue
		}
		l.n -= k
		l.change(c, func() { c.remove(c.n()-k, c.n()) })
		return
	}
}

// Range calls fn with elements from index from (0 <= from < Len) towards
// the tail, or towards the head when reverse, until fn returns false. fn
// must not change the list.
func (l *List) Range(from int, reverse bool, fn func(i int, v []byte) bool) {
	if from < 0 || from >= l.n {
		return
	}
	live := l.live()
	ci, ei := l.locate(from)
	i := from
	if reverse {
		for ; ci >= 0; ci-- {
			for ; ei >= 0; ei-- {
				if !fn(i, live[ci].at(ei)) {
					return
				}
				i--
			}
			if ci > 0 {
				ei = live[ci-1].n() - 1
			}
		}
		return
	}
	for ; ci < len(live); ci++ {
		for ; ei < live[ci].n(); ei++ {
			if !fn(i, live[ci].at(ei)) {
				return
			}
			i++
		}
		ei = 0
	}
}

// Remove deletes up to count elements equal to v, from the head when
// count > 0, from the tail when count < 0, all of them when count is 0
// (LREM), and returns how many went.
func (l *List) Remove(v []byte, count int) int {
	var hits []int
	limit := count
	if limit < 0 {
		limit = -limit
	}
	from, reverse := 0, count < 0
	if reverse {
		from = l.n - 1
	}
	l.Range(from, reverse, func(i int, e []byte) bool {
		if bytes.Equal(e, v) {
			hits = append(hits, i)
		}
		return limit == 0 || len(hits) < limit
	})
	// Delete from the highest index down so the others stay valid.
	if !reverse {
		for a, b := 0, len(hits)-1; a < b; a, b = a+1, b-1 {
			hits[a], hits[b] = hits[b], hits[a]
		}
	}
	for _, i := range hits {
		l.RemoveAt(i)
	}
	return len(hits)
}

// Clone implements Object.
func (l *List) Clone() Object {
	c := &List{n: l.n, chunks: make([]*chunk, 0, len(l.live()))}
	for _, ch := range l.live() {
		c.chunks = append(c.chunks, &chunk{
			buf:  append(make([]byte, 0, cap(ch.buf)), ch.buf...),
			ends: append(make([]uint32, 0, cap(ch.ends)), ch.ends...),
		})
	}
	for _, ch := range c.chunks {
		c.mem += ch.size()
	}
	return c
}

// List encoding: the element count, then the elements as strings, head
// first. Chunks are rebuilt with the default limits on load.

// AppendBinary implements Object.
func (l *List) AppendBinary(dst []byte) []byte {
	dst = appendUvarint(dst, uint64(l.n))
	l.Range(0, false, func(_ int, v []byte) bool {
		dst = appendUvarint(dst, uint64(len(v)))
		dst = append(dst, v...)
		return true
	})
	return dst
}

func decodeList(b []byte) (Object, error) {
	r := reader{b: b}
	n := r.count(1)
	l := NewList()
	for i := 0; i < n && r.err == nil; i++ {
		v := r.bytes()
		if r.err == nil {
			l.Push(v, false, DefaultListLimits)
		}
	}
	if err := r.done(); err != nil {
		return nil, err
	}
	if l.Len() == 0 {
		return nil, ErrCorrupt
	}
	return l, nil
}
