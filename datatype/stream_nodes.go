package datatype

import (
	"encoding/binary"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/kvserver/kvserver/listpack"
)

// A stream node is what Redis keeps under one key of its radix tree: a
// listpack, byte for byte Redis's, that starts with the master entry
// (the live and deleted counts, the fields of the node's first entry and
// a 0) and then holds each entry as its flags, its ID's deltas to the
// master ID, its fields and values (only the values when the fields are
// the master's: flag SAMEFIELDS) and its element count. XDEL and exact
// trimming flag entries deleted and leave them in place, as Redis does;
// a node goes when no live entry is left. Keeping Redis's bytes makes
// the memory of a stream Redis's, and DUMP's payload Redis's.

// Stream item flags (t_stream.c).
const (
	streamItemDeleted    = 1
	streamItemSameFields = 2
)

// streamNode is one listpack with what is looked up often: its live and
// deleted counts (also in the master entry), its live entries' first and
// last IDs, and where each entry starts, so that an ID is found by
// binary search (4 bytes an entry that Redis, which walks the listpack,
// does not spend).
type streamNode struct {
	master      StreamID
	lp          []byte
	offs        []uint32 // each entry's flags element, deleted ones included
	count       int
	deleted     int
	first, last StreamID
}

// size is the node's memory besides nodeCost.
func (n *streamNode) size() int64 { return int64(len(n.lp) + 4*len(n.offs)) }

// nodeCost is a node's memory besides its listpack: the struct and its
// pointer.
const nodeCost = 96

// elem decodes the element at off of a node's listpack, whose elements
// were checked when it was built or loaded.
func elem(lp []byte, off int) (listpack.Elem, int) {
	e, size := listpack.NextTrusted(lp[off : len(lp)-1])
	return e, off + size
}

// masterFields returns the offset of the master entry's first field and
// the field count.
func (n *streamNode) masterFields() (at, count int) {
	_, off := elem(n.lp, listpack.HeaderSize)
	_, off = elem(n.lp, off)
	nf, at := elem(n.lp, off)
	return at, int(nf.Int)
}

// entryRef is an entry's place in its node's listpack.
type entryRef struct {
	id    StreamID
	off   int // the flags element
	body  int // the element after the ID
	flags int64
	// fieldsAt and nf are the master entry's fields: where they start,
	// how many.
	fieldsAt, nf int
}

// live reports whether the entry was not deleted.
func (r entryRef) live() bool { return r.flags&streamItemDeleted == 0 }

// ref decodes the head of entry i: its flags and ID.
func (n *streamNode) ref(i, fieldsAt, nf int) entryRef {
	r := entryRef{off: int(n.offs[i]), fieldsAt: fieldsAt, nf: nf}
	flags, off := elem(n.lp, r.off)
	ms, off := elem(n.lp, off)
	seq, body := elem(n.lp, off)
	r.body = body
	r.flags = flags.Int
	r.id = StreamID{n.master.Ms + uint64(ms.Int), n.master.Seq + uint64(seq.Int)}
	return r
}

// scan calls fn on the entries from index i on, deleted ones included,
// in order, until fn returns false.
func (n *streamNode) scan(i int, fn func(r entryRef) bool) {
	fieldsAt, nf := n.masterFields()
	for ; i < len(n.offs); i++ {
		if !fn(n.ref(i, fieldsAt, nf)) {
			return
		}
	}
}

// search returns the index of the first entry, deleted or not, with an
// ID >= id (len(offs) when none). It decodes only the IDs it probes.
func (n *streamNode) search(id StreamID) int {
	lo, hi := 0, len(n.offs)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if n.idAt(mid).Compare(id) < 0 {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// idAt decodes entry i's ID: its flags element is one byte and its back
// length (checkNode and add make sure).
func (n *streamNode) idAt(i int) StreamID {
	off := int(n.offs[i]) + 2
	// The common deltas first, decoded here: a 7-bit sequence (most
	// often 0) after a 7- or 13-bit millisecond delta.
	var ms int64
	switch c := n.lp[off]; {
	case c < 0x80:
		ms, off = int64(c), off+2
	case c&0xE0 == 0xC0:
		ms, off = int64(uint64(c&0x1F)<<8|uint64(n.lp[off+1]))<<51>>51, off+3
	default:
		var e listpack.Elem
		e, off = elem(n.lp, off)
		ms = e.Int
	}
	seq := int64(n.lp[off])
	if seq >= 0x80 {
		e, _ := elem(n.lp, off)
		seq = e.Int
	}
	return StreamID{n.master.Ms + uint64(ms), n.master.Seq + uint64(seq)}
}

// StreamEntryView is an entry read in place, its fields and values
// aliasing the stream's listpack: nothing is copied or allocated. It is
// valid until the stream next changes, so a reader writes it out (the
// reply writer copies) before the engine lock is released; Entry copies
// it for longer.
type StreamEntryView struct {
	ID StreamID
	lp []byte
	// at is the first field (or value, with the master's fields) and
	// fieldsAt the master entry's first field, or -1 when the entry
	// has its own fields.
	at, fieldsAt int
	pairs        int
}

// view returns the view of the entry r refers to.
func (n *streamNode) view(r entryRef) StreamEntryView {
	v := StreamEntryView{ID: r.id, lp: n.lp, at: r.body, fieldsAt: r.fieldsAt, pairs: r.nf}
	if r.flags&streamItemSameFields == 0 {
		var e listpack.Elem
		e, v.at = elem(n.lp, r.body)
		v.pairs, v.fieldsAt = int(e.Int), -1
	}
	return v
}

// Len is the number of fields and values.
func (v StreamEntryView) Len() int { return 2 * v.pairs }

// Each calls fn on the fields and values in order: field, value, field,
// value. An element's string aliases the stream: fn copies what it
// keeps.
func (v StreamEntryView) Each(fn func(e listpack.Elem)) {
	off, fieldsAt := v.at, v.fieldsAt
	for range v.pairs {
		var f, val listpack.Elem
		if fieldsAt >= 0 {
			f, fieldsAt = elem(v.lp, fieldsAt)
		} else {
			f, off = elem(v.lp, off)
		}
		val, off = elem(v.lp, off)
		fn(f)
		fn(val)
	}
}

// Entry copies the entry out of the stream, its strings in one
// allocation.
func (v StreamEntryView) Entry() StreamEntry {
	size := 0
	v.Each(func(e listpack.Elem) { size += e.TextLen() })
	var sb strings.Builder
	sb.Grow(size)
	var endStack [16]int
	ends := endStack[:0]
	var num [20]byte
	v.Each(func(e listpack.Elem) {
		if e.IsInt {
			sb.Write(strconv.AppendInt(num[:0], e.Int, 10))
		} else {
			sb.Write(e.Str)
		}
		ends = append(ends, sb.Len())
	})
	all := sb.String()
	fields := make([]string, len(ends))
	start := 0
	for i, end := range ends {
		fields[i] = all[start:end]
		start = end
	}
	return StreamEntry{ID: v.ID, Fields: fields}
}

// newNode starts a node for an entry of fields with ID master.
func newNode(master StreamID, fields []string) *streamNode {
	size := listpack.HeaderSize + 16
	for i := 0; i < len(fields); i += 2 {
		size += len(fields[i]) + 2
	}
	lp := listpack.Start(make([]byte, 0, 2*size))
	lp = listpack.AppendInt(lp, 0) // the live count, set as the entry is added
	lp = listpack.AppendInt(lp, 0)
	lp = listpack.AppendInt(lp, int64(len(fields)/2))
	for i := 0; i < len(fields); i += 2 {
		lp = listpack.AppendString(lp, fields[i])
	}
	lp = listpack.AppendInt(lp, 0)
	return &streamNode{master: master, lp: listpack.Finish(lp, 4+len(fields)/2), first: master}
}

// add appends an entry as streamAppendItem does: with flag SAMEFIELDS
// and only its values when its fields are the master entry's.
func (n *streamNode) add(id StreamID, fields []string) {
	fieldsAt, nf := n.masterFields()
	pairs := len(fields) / 2
	same := pairs == nf
	for i, off := 0, fieldsAt; same && i < pairs; i++ {
		var e listpack.Elem
		e, off = elem(n.lp, off)
		same = e.Equal(fields[2*i])
	}
	need := 40
	for _, f := range fields {
		need += len(f) + 10
	}
	lp := n.lp[:len(n.lp)-1]
	if cap(lp)-len(lp) < need {
		// Grow by a quarter, not double: the last node of every stream
		// is open, and its spare room is memory Redis does not use.
		grown := make([]byte, len(lp), len(lp)+max(need, len(lp)/4))
		copy(grown, lp)
		lp = grown
	}
	elems := 0
	ints := func(vs ...int64) {
		for _, v := range vs {
			lp = listpack.AppendInt(lp, v)
		}
		elems += len(vs)
	}
	msDelta, seqDelta := int64(id.Ms-n.master.Ms), int64(id.Seq-n.master.Seq)
	n.offs = append(n.offs, uint32(len(lp)))
	if same {
		ints(streamItemSameFields, msDelta, seqDelta)
		for i := 1; i < len(fields); i += 2 {
			lp = listpack.AppendString(lp, fields[i])
		}
		elems += pairs
		ints(int64(pairs + 3))
	} else {
		ints(0, msDelta, seqDelta, int64(pairs))
		for _, f := range fields {
			lp = listpack.AppendString(lp, f)
		}
		elems += len(fields)
		ints(int64(2*pairs + 4))
	}
	n.lp = finishGrown(lp, elems)
	n.last = id
	n.setCounts(n.count+1, n.deleted)
}

// finishGrown closes a listpack grown by elems elements.
func finishGrown(lp []byte, elems int) []byte {
	count := int(binary.LittleEndian.Uint16(lp[4:]))
	lp = append(lp, 0xFF)
	binary.LittleEndian.PutUint32(lp, uint32(len(lp)))
	if count != 65535 {
		listpack.SetCount(lp, count+elems)
	}
	return lp
}

// setCounts rewrites the master entry's live and deleted counts (in
// place unless their encodings change size).
func (n *streamNode) setCounts(count, deleted int) {
	n.count, n.deleted = count, deleted
	_, off := elem(n.lp, listpack.HeaderSize)
	_, end := elem(n.lp, off)
	var buf [32]byte
	enc := listpack.AppendInt(listpack.AppendInt(buf[:0], int64(count)), int64(deleted))
	if len(enc) == end-listpack.HeaderSize {
		copy(n.lp[listpack.HeaderSize:], enc)
		return
	}
	shift := len(enc) - (end - listpack.HeaderSize)
	lp := make([]byte, 0, len(n.lp)+shift)
	lp = append(append(append(lp, n.lp[:listpack.HeaderSize]...), enc...), n.lp[end:]...)
	binary.LittleEndian.PutUint32(lp, uint32(len(lp)))
	n.lp = lp
	for i := range n.offs {
		n.offs[i] = uint32(int(n.offs[i]) + shift)
	}
}

// clip gives back a node's spare room once no entry will be added.
func (n *streamNode) clip() {
	if cap(n.lp) > len(n.lp) {
		n.lp = slices.Clone(n.lp)
	}
	n.offs = slices.Clip(slices.Clone(n.offs))
}

// markDeleted flags live entries deleted, counts them and finds the
// node's first and last live entries again; it reports whether the node
// has live entries left.
func (n *streamNode) markDeleted(refs ...entryRef) bool {
	for _, r := range refs {
		n.lp[r.off] = byte(r.flags | streamItemDeleted) // a 7-bit integer: one byte
	}
	n.setCounts(n.count-len(refs), n.deleted+len(refs)) // may move the entries: last
	if n.count == 0 {
		return false
	}
	n.bounds()
	return true
}

// bounds sets first and last from the live entries.
func (n *streamNode) bounds() {
	fieldsAt, nf := n.masterFields()
	for i := range n.offs {
		if r := n.ref(i, fieldsAt, nf); r.live() {
			n.first = r.id
			break
		}
	}
	for i := len(n.offs) - 1; i >= 0; i-- {
		if r := n.ref(i, fieldsAt, nf); r.live() {
			n.last = r.id
			break
		}
	}
}

// FirstID is the first entry's ID, 0-0 when the stream is empty.
func (s *Stream) FirstID() StreamID {
	if s.length == 0 {
		return StreamID{}
	}
	return s.nodes[0].first
}

// First and Last return the first and last entries; ok is false when
// the stream is empty.
func (s *Stream) First() (e StreamEntry, ok bool) {
	v, ok := s.FirstView()
	if !ok {
		return e, false
	}
	return v.Entry(), true
}

// Last returns the last entry.
func (s *Stream) Last() (e StreamEntry, ok bool) {
	v, ok := s.LastView()
	if !ok {
		return e, false
	}
	return v.Entry(), true
}

// FirstView and LastView are First and Last read in place.
func (s *Stream) FirstView() (StreamEntryView, bool) {
	if s.length == 0 {
		return StreamEntryView{}, false
	}
	return s.View(s.nodes[0].first)
}

// LastView is Last read in place.
func (s *Stream) LastView() (StreamEntryView, bool) {
	if s.length == 0 {
		return StreamEntryView{}, false
	}
	return s.View(s.nodes[len(s.nodes)-1].last)
}

// LastEntryID is the last entry's ID; ok is false when the stream is
// empty.
func (s *Stream) LastEntryID() (id StreamID, ok bool) {
	if s.length == 0 {
		return id, false
	}
	return s.nodes[len(s.nodes)-1].last, true
}

// Nodes is the number of nodes (XINFO's radix-tree-keys).
func (s *Stream) Nodes() int { return len(s.nodes) }

// Append adds an entry with an ID greater than LastID (the caller
// checks), starting a new node where streamAppendItem does: when the
// last one's listpack and the entry's strings reach
// stream-node-max-bytes, or its entries, deleted ones included, reach
// stream-node-max-entries.
func (s *Stream) Append(id StreamID, fields []string, lim StreamLimits) {
	var n *streamNode
	if len(s.nodes) > 0 {
		n = s.nodes[len(s.nodes)-1]
		maxBytes := lim.MaxNodeBytes
		if maxBytes == 0 || maxBytes > streamListpackMaxSize {
			maxBytes = streamListpackMaxSize
		}
		total := 0
		for _, f := range fields {
			total += len(f)
		}
		if len(n.lp)+total >= maxBytes ||
			(lim.MaxNodeEntries > 0 && n.count+n.deleted >= lim.MaxNodeEntries) {
			n.clip()
			n = nil
		}
	}
	if n == nil {
		n = newNode(id, fields)
		s.nodes = append(s.nodes, n)
		s.lpBytes += n.size()
	}
	before := n.size()
	n.add(id, fields)
	s.lpBytes += n.size() - before
	s.length++
	s.LastID = id
	s.EntriesAdded++
}

// locate returns the node and the index in it of the first live entry
// with an ID >= id (ni == len(nodes) when none), and that entry.
func (s *Stream) locate(id StreamID) (ni, i int, r entryRef) {
	ni, _ = slices.BinarySearchFunc(s.nodes, id, func(n *streamNode, id StreamID) int {
		return n.last.Compare(id)
	})
	if ni == len(s.nodes) {
		return ni, 0, r
	}
	n := s.nodes[ni] // its last entry is live and >= id
	fieldsAt, nf := n.masterFields()
	for i = n.search(id); ; i++ {
		if r = n.ref(i, fieldsAt, nf); r.live() {
			return ni, i, r
		}
	}
}

// Get returns the entry with ID id.
func (s *Stream) Get(id StreamID) (StreamEntry, bool) {
	v, ok := s.View(id)
	if !ok {
		return StreamEntry{}, false
	}
	return v.Entry(), true
}

// View is Get read in place.
func (s *Stream) View(id StreamID) (StreamEntryView, bool) {
	ni, _, r := s.locate(id)
	if ni < len(s.nodes) && r.id == id {
		return s.nodes[ni].view(r), true
	}
	return StreamEntryView{}, false
}

// Range calls fn on the entries with start <= ID <= end, in ascending
// order, or descending when rev, until fn returns false.
func (s *Stream) Range(start, end StreamID, rev bool, fn func(e StreamEntry) bool) {
	s.RangeView(start, end, rev, func(v StreamEntryView) bool { return fn(v.Entry()) })
}

// RangeView is Range read in place: each node's master entry is decoded
// once, and nothing is copied or allocated.
func (s *Stream) RangeView(start, end StreamID, rev bool, fn func(v StreamEntryView) bool) {
	if start.Compare(end) > 0 {
		return
	}
	if !rev {
		ni, i, _ := s.locate(start)
		for ; ni < len(s.nodes); ni, i = ni+1, 0 {
			n := s.nodes[ni]
			fieldsAt, nf := n.masterFields()
			for ; i < len(n.offs); i++ {
				r := n.ref(i, fieldsAt, nf)
				switch {
				case !r.live():
				case r.id.Compare(end) > 0:
					return
				case !fn(n.view(r)):
					return
				}
			}
		}
		return
	}
	// From the last entry <= end: the one before the first > end.
	after, _ := end.Next()
	ni, i, _ := s.locate(after)
	if end == MaxStreamID {
		ni = len(s.nodes)
	}
	for {
		if ni == len(s.nodes) || i == 0 {
			if ni == 0 {
				return
			}
			ni--
			i = len(s.nodes[ni].offs)
		}
		n := s.nodes[ni]
		fieldsAt, nf := n.masterFields()
		for i--; i >= 0; i-- {
			r := n.ref(i, fieldsAt, nf)
			if !r.live() {
				continue
			}
			if r.id.Compare(start) < 0 || !fn(n.view(r)) {
				return
			}
		}
		i = 0
	}
}

// Delete flags the entry with ID id deleted, reporting whether there
// was one; a node left with no live entries goes, as in Redis.
func (s *Stream) Delete(id StreamID) bool {
	ni, _, r := s.locate(id)
	if ni == len(s.nodes) || r.id != id {
		return false
	}
	n := s.nodes[ni]
	before := n.size()
	if n.markDeleted(r) {
		s.lpBytes += n.size() - before
	} else {
		s.lpBytes -= before
		s.nodes = slices.Delete(s.nodes, ni, ni+1)
	}
	s.length--
	return true
}

// Trim removes entries from the head as Redis's streamTrim does: down to
// maxLen entries (maxLen >= 0), or else those with IDs below minID. When
// approx, only whole nodes go. limit > 0 caps the entries removed (whole
// nodes only). It returns how many entries went.
func (s *Stream) Trim(maxLen int64, minID StreamID, approx bool, limit int64) int64 {
	var deleted int64
	for len(s.nodes) > 0 {
		if maxLen >= 0 && int64(s.length) <= maxLen {
			break
		}
		n := s.nodes[0]
		entries := int64(n.count)
		if limit > 0 && deleted+entries > limit {
			break
		}
		var remove bool
		if maxLen >= 0 {
			remove = int64(s.length)-entries >= maxLen
		} else {
			remove = n.last.Compare(minID) < 0
		}
		if remove {
			s.lpBytes -= n.size()
			s.nodes = s.nodes[1:]
			s.length -= int(entries)
			deleted += entries
			continue
		}
		if approx {
			break
		}
		var cut []entryRef
		n.scan(0, func(r entryRef) bool {
			if !r.live() {
				return true
			}
			if maxLen >= 0 {
				if int64(s.length-len(cut)) <= maxLen {
					return false
				}
			} else if r.id.Compare(minID) >= 0 {
				return false
			}
			cut = append(cut, r)
			return true
		})
		before := n.size()
		n.markDeleted(cut...) // the node keeps a live entry: it was not removed whole
		s.lpBytes += n.size() - before
		s.length -= len(cut)
		deleted += int64(len(cut))
		break
	}
	if len(s.nodes) == 0 {
		s.nodes = nil
	}
	return deleted
}

// StreamNode is one node as DUMP and RESTORE see it: its master ID (its
// key in Redis's radix tree) and its listpack, Redis's bytes.
type StreamNode struct {
	Master   StreamID
	Listpack []byte
}

// ForEachNode calls fn on each node in ID order until fn returns false.
// The listpack is the stream's own: fn must not change or keep it.
func (s *Stream) ForEachNode(fn func(n StreamNode) bool) {
	for _, n := range s.nodes {
		if !fn(StreamNode{Master: n.master, Listpack: n.lp}) {
			return
		}
	}
}

// Errors of AppendNode, all ErrCorrupt.
var (
	errNodeListpack = errors.Join(ErrCorrupt, errors.New("bad stream listpack"))
	errNodeOrder    = errors.Join(ErrCorrupt, errors.New("stream entries out of order"))
)

// AppendNode adds a copy of a node after the last one, as RESTORE loads a
// stream, checking its listpack as Redis's deep sanitization does
// (streamValidateListpackIntegrity), that the master entry counts its
// live and deleted entries, and that the live entries follow every entry
// already there. A node with no live entry is left out. LastID,
// MaxDeletedID and EntriesAdded are the caller's to set.
func (s *Stream) AppendNode(n StreamNode) error {
	node, err := checkNode(n.Master, n.Listpack)
	if err != nil || node.count == 0 {
		return err
	}
	if len(s.nodes) > 0 && s.nodes[len(s.nodes)-1].last.Compare(node.first) >= 0 {
		return errNodeOrder
	}
	node.lp = slices.Clone(n.Listpack)
	node.offs = slices.Clip(node.offs)
	s.nodes = append(s.nodes, node)
	s.lpBytes += node.size()
	s.length += node.count
	return nil
}

// checkNode checks a node's listpack and returns the node (with lp not
// set), its counts and bounds found.
func checkNode(master StreamID, lp []byte) (*streamNode, error) {
	p, err := listpack.Check(lp)
	if err != nil {
		return nil, errors.Join(errNodeListpack, err)
	}
	if err := listpack.Range(lp, func(listpack.Elem) bool { return true }); err != nil {
		return nil, errors.Join(errNodeListpack, err)
	}
	bad := false
	next := func() listpack.Elem {
		if bad || len(p) == 0 {
			bad = true
			return listpack.Elem{}
		}
		e, size, _ := listpack.Next(p) // checked by Range
		p = p[size:]
		return e
	}
	nextInt := func() int64 {
		e := next()
		bad = bad || !e.IsInt
		return e.Int
	}
	// flags must be a one-byte integer, which markDeleted rewrites in
	// place (lpAppendInteger writes 0 to 3 so).
	flagsAt := func() int64 {
		if len(p) < 2 || p[0] > 3 || p[1] != 1 {
			bad = true
			return 0
		}
		return nextInt()
	}
	n := &streamNode{master: master}
	count, deleted, nf := nextInt(), nextInt(), nextInt()
	if bad || count < 0 || deleted < 0 || nf <= 0 || nf > int64(len(p)) {
		return nil, errNodeListpack
	}
	for range nf {
		next()
	}
	if nextInt() != 0 || bad {
		return nil, errNodeListpack
	}
	var live, dead int64
	for total := count + deleted; total > 0 && !bad; total-- {
		n.offs = append(n.offs, uint32(len(lp)-1-len(p)))
		flags, ms, seq := flagsAt(), nextInt(), nextInt()
		fields, extra, width := nf, int64(3), int64(1)
		if flags&streamItemSameFields == 0 {
			fields = nextInt()
			extra += fields + 1
			width = 2
		}
		if bad || fields <= 0 || fields > int64(len(p))/width {
			return nil, errNodeListpack
		}
		for range fields * width {
			next()
		}
		if nextInt() != fields+extra {
			return nil, errNodeListpack
		}
		if flags&streamItemDeleted != 0 {
			dead++
			continue
		}
		id := StreamID{master.Ms + uint64(ms), master.Seq + uint64(seq)}
		if live > 0 && n.last.Compare(id) >= 0 {
			return nil, errNodeOrder
		}
		if live == 0 {
			n.first = id
		}
		n.last = id
		live++
	}
	if bad || len(p) != 0 || live != count || dead != deleted {
		return nil, errNodeListpack
	}
	n.count, n.deleted = int(count), int(deleted)
	return n, nil
}
