package datatype

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strconv"
)

// StreamID is a stream entry's ID, <ms>-<seq>, ordered by ms then seq.
type StreamID struct{ Ms, Seq uint64 }

// MaxStreamID is the greatest ID ("+").
var MaxStreamID = StreamID{math.MaxUint64, math.MaxUint64}

// Compare orders two IDs: -1, 0 or 1.
func (a StreamID) Compare(b StreamID) int {
	switch {
	case a.Ms < b.Ms:
		return -1
	case a.Ms > b.Ms:
		return 1
	case a.Seq < b.Seq:
		return -1
	case a.Seq > b.Seq:
		return 1
	}
	return 0
}

// IsZero reports whether a is 0-0.
func (a StreamID) IsZero() bool { return a.Ms == 0 && a.Seq == 0 }

// String is the ID as Redis prints it.
func (a StreamID) String() string {
	var buf [41]byte
	return string(a.AppendText(buf[:0]))
}

// AppendText appends the ID as Redis prints it.
func (a StreamID) AppendText(b []byte) []byte {
	return strconv.AppendUint(append(strconv.AppendUint(b, a.Ms, 10), '-'), a.Seq, 10)
}

// Next returns the ID right after a; ok is false for the greatest ID
// (Redis's streamIncrID).
func (a StreamID) Next() (StreamID, bool) {
	switch {
	case a.Seq < math.MaxUint64:
		return StreamID{a.Ms, a.Seq + 1}, true
	case a.Ms < math.MaxUint64:
		return StreamID{a.Ms + 1, 0}, true
	}
	return a, false
}

// Prev returns the ID right before a; ok is false for 0-0
// (streamDecrID).
func (a StreamID) Prev() (StreamID, bool) {
	switch {
	case a.Seq > 0:
		return StreamID{a.Ms, a.Seq - 1}, true
	case a.Ms > 0:
		return StreamID{a.Ms - 1, math.MaxUint64}, true
	}
	return a, false
}

// StreamEntry is one entry: its ID and field, value pairs in the order
// XADD gave them.
type StreamEntry struct {
	ID     StreamID
	Fields []string
}

// PackFields copies an entry's fields and values into one allocation
// (XADD's arguments): the strings share one buffer.
func PackFields(args [][]byte) []string {
	n := 0
	for _, a := range args {
		n += len(a)
	}
	buf := make([]byte, 0, n)
	for _, a := range args {
		buf = append(buf, a...)
	}
	all := string(buf)
	fields := make([]string, len(args))
	off := 0
	for i, a := range args {
		fields[i] = all[off : off+len(a)]
		off += len(a)
	}
	return fields
}

// StreamLimits are stream-node-max-bytes and stream-node-max-entries,
// which decide where a stream starts a new node (0 = no limit).
type StreamLimits struct {
	MaxNodeBytes   int
	MaxNodeEntries int
}

// streamListpackMaxSize is Redis's STREAM_LISTPACK_MAX_SIZE (1 GiB).
const streamListpackMaxSize = 1 << 30

// Stream is Redis's stream type: entries in ID order split into nodes as
// Redis splits them, the stream's counters and its consumer groups.
type Stream struct {
	nodes  []*streamNode
	length int
	// LastID is the greatest ID ever added (or set by XSETID).
	LastID StreamID
	// MaxDeletedID is the greatest ID deleted by XDEL (or XSETID).
	MaxDeletedID StreamID
	// EntriesAdded counts every entry ever added (or set by XSETID).
	EntriesAdded int64
	groups       []*StreamGroup // by name
	// lpBytes is the size of the nodes' listpacks and indexes, for
	// MemSize.
	lpBytes int64
}

// NewStream returns an empty stream.
func NewStream() *Stream { return &Stream{} }

// Kind is KindStream.
func (s *Stream) Kind() Kind { return KindStream }

// Len is the number of entries. An empty stream is kept (Redis never
// deletes a stream for being empty): see Empty.
func (s *Stream) Len() int { return s.length }

// Encoding is "stream".
func (s *Stream) Encoding() string { return "stream" }

// Costs used by MemSize besides the nodes: the stream, a group, a
// pending entry and a consumer.
const (
	streamCost         = 96
	streamPendingCost  = 64
	streamConsumerCost = 80
	streamGroupCost    = 96
)

// MemSize is what the stream holds: its nodes' listpacks and its groups.
func (s *Stream) MemSize() int64 {
	// The open node's spare room (a quarter at most) aside.
	n := int64(streamCost) + s.lpBytes + int64(len(s.nodes))*nodeCost
	for _, g := range s.groups {
		n += streamGroupCost + int64(len(g.Name)) + int64(len(g.pel))*streamPendingCost
		for _, c := range g.consumers {
			n += streamConsumerCost + int64(len(c.Name)) + int64(len(c.pel))*16
		}
	}
	return n
}

// DistanceFromFirstEver is streamEstimateDistanceFromFirstEverEntry: the
// logical read counter of id, -1 when it cannot be known.
func (s *Stream) DistanceFromFirstEver(id StreamID) int64 {
	if s.EntriesAdded == 0 {
		return 0
	}
	if s.Len() == 0 && id.Compare(s.LastID) < 1 {
		return s.EntriesAdded
	}
	switch cmpLast := id.Compare(s.LastID); {
	case cmpLast == 0:
		return s.EntriesAdded
	case cmpLast > 0:
		return -1
	}
	first := s.FirstID()
	cmpFirst := id.Compare(first)
	if s.MaxDeletedID.IsZero() || s.MaxDeletedID.Compare(first) < 0 {
		switch {
		case cmpFirst < 0:
			return s.EntriesAdded - int64(s.Len())
		case cmpFirst == 0:
			return s.EntriesAdded - int64(s.Len()) + 1
		}
	}
	return -1
}

// Groups returns the consumer groups, by name; the slice is the
// stream's own.
func (s *Stream) Groups() []*StreamGroup { return s.groups }

func (s *Stream) groupIndex(name string) (int, bool) {
	return slices.BinarySearchFunc(s.groups, name, func(g *StreamGroup, name string) int { return cmpString(g.Name, name) })
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Group returns the group called name, nil when there is none.
func (s *Stream) Group(name string) *StreamGroup {
	if i, ok := s.groupIndex(name); ok {
		return s.groups[i]
	}
	return nil
}

// CreateGroup adds a group; it returns nil when one of that name exists.
func (s *Stream) CreateGroup(name string, last StreamID, entriesRead int64) *StreamGroup {
	i, ok := s.groupIndex(name)
	if ok {
		return nil
	}
	g := &StreamGroup{Name: name, LastID: last, EntriesRead: entriesRead, pending: map[StreamID]*PendingEntry{}}
	s.groups = slices.Insert(s.groups, i, g)
	return g
}

// DestroyGroup removes the group called name, reporting whether it
// existed.
func (s *Stream) DestroyGroup(name string) bool {
	i, ok := s.groupIndex(name)
	if ok {
		s.groups = slices.Delete(s.groups, i, i+1)
	}
	return ok
}

// PendingEntry is an entry of a group's PEL: delivered to Consumer and
// not acknowledged yet.
type PendingEntry struct {
	ID StreamID
	// DeliveryTime is when it was last delivered, in Unix milliseconds.
	DeliveryTime int64
	// DeliveryCount is how many times it was delivered.
	DeliveryCount int64
	Consumer      *StreamConsumer
}

// StreamConsumer is a consumer of a group.
type StreamConsumer struct {
	Name string
	// SeenTime is its last interaction, in Unix milliseconds.
	SeenTime int64
	pel      []StreamID // sorted
}

// Pending returns the IDs pending for the consumer, in order; the slice
// is the consumer's own.
func (c *StreamConsumer) Pending() []StreamID { return c.pel }

// StreamGroup is a consumer group.
type StreamGroup struct {
	Name string
	// LastID is the last ID delivered to the group.
	LastID StreamID
	// EntriesRead is the group's logical read counter, -1 when unknown.
	EntriesRead int64
	pel         []StreamID // sorted
	pending     map[StreamID]*PendingEntry
	consumers   []*StreamConsumer // by name
}

// PendingCount is the number of entries in the group's PEL.
func (g *StreamGroup) PendingCount() int { return len(g.pel) }

// PendingIDs returns the PEL's IDs in order; the slice is the group's.
func (g *StreamGroup) PendingIDs() []StreamID { return g.pel }

// PendingEntry returns the PEL's entry for id, nil when none.
func (g *StreamGroup) PendingEntry(id StreamID) *PendingEntry { return g.pending[id] }

// PendingFrom returns the index in PendingIDs of the first ID >= id.
func (g *StreamGroup) PendingFrom(id StreamID) int {
	i, _ := slices.BinarySearchFunc(g.pel, id, StreamID.Compare)
	return i
}

// Consumers returns the group's consumers by name; the slice is the
// group's.
func (g *StreamGroup) Consumers() []*StreamConsumer { return g.consumers }

func (g *StreamGroup) consumerIndex(name string) (int, bool) {
	return slices.BinarySearchFunc(g.consumers, name, func(c *StreamConsumer, name string) int { return cmpString(c.Name, name) })
}

// Consumer returns the consumer called name, nil when none.
func (g *StreamGroup) Consumer(name string) *StreamConsumer {
	if i, ok := g.consumerIndex(name); ok {
		return g.consumers[i]
	}
	return nil
}

// AddConsumer returns the consumer called name, creating it (seen at
// now) when missing; created says which.
func (g *StreamGroup) AddConsumer(name string, now int64) (c *StreamConsumer, created bool) {
	i, ok := g.consumerIndex(name)
	if ok {
		return g.consumers[i], false
	}
	c = &StreamConsumer{Name: name, SeenTime: now}
	g.consumers = slices.Insert(g.consumers, i, c)
	return c, true
}

// DeleteConsumer removes a consumer and its pending entries, returning
// how many it had pending (-1 when there was no such consumer).
func (g *StreamGroup) DeleteConsumer(name string) int {
	i, ok := g.consumerIndex(name)
	if !ok {
		return -1
	}
	c := g.consumers[i]
	n := len(c.pel)
	for _, id := range slices.Clone(c.pel) {
		g.Ack(id)
	}
	g.consumers = slices.Delete(g.consumers, i, i+1)
	return n
}

func insertID(ids []StreamID, id StreamID) []StreamID {
	i, found := slices.BinarySearchFunc(ids, id, StreamID.Compare)
	if found {
		return ids
	}
	return slices.Insert(ids, i, id)
}

func removeID(ids []StreamID, id StreamID) []StreamID {
	i, found := slices.BinarySearchFunc(ids, id, StreamID.Compare)
	if !found {
		return ids
	}
	return slices.Delete(ids, i, i+1)
}

// Deliver records that id was delivered to c at now with one delivery:
// a new PEL entry, or an existing one moved to c (Redis resets the
// count when XREADGROUP delivers an entry again after XGROUP SETID).
func (g *StreamGroup) Deliver(id StreamID, c *StreamConsumer, now int64) *PendingEntry {
	p := g.pending[id]
	if p == nil {
		p = &PendingEntry{ID: id, Consumer: c}
		g.pending[id] = p
		g.pel = insertID(g.pel, id)
		c.pel = insertID(c.pel, id)
	}
	g.Assign(p, c)
	p.DeliveryTime, p.DeliveryCount = now, 1
	return p
}

// Assign moves a pending entry to consumer c.
func (g *StreamGroup) Assign(p *PendingEntry, c *StreamConsumer) {
	if p.Consumer != c {
		p.Consumer.pel = removeID(p.Consumer.pel, p.ID)
		c.pel = insertID(c.pel, p.ID)
		p.Consumer = c
	}
}

// Ack removes id from the PEL, reporting whether it was pending.
func (g *StreamGroup) Ack(id StreamID) bool {
	p := g.pending[id]
	if p == nil {
		return false
	}
	delete(g.pending, id)
	g.pel = removeID(g.pel, id)
	p.Consumer.pel = removeID(p.Consumer.pel, id)
	return true
}

// streamFormatListpacks starts the stream encoding that holds each
// node's listpack: a uvarint 0 in two bytes (0x80 0x00), which the
// encoding before it, whose first uvarint AppendUvarint wrote in the
// fewest bytes, never starts with, then the version.
var streamFormatListpacks = []byte{0x80, 0x00, 1}

// AppendBinary encodes the stream: counters, nodes (master ID and
// listpack), then the groups with their consumers and PEL.
func (s *Stream) AppendBinary(dst []byte) []byte {
	dst = append(dst, streamFormatListpacks...)
	dst = appendID(dst, s.LastID)
	dst = appendID(dst, s.MaxDeletedID)
	dst = appendUvarint(dst, uint64(s.EntriesAdded))
	dst = appendUvarint(dst, uint64(len(s.nodes)))
	for _, n := range s.nodes {
		dst = appendID(dst, n.master)
		dst = appendUvarint(dst, uint64(len(n.lp)))
		dst = append(dst, n.lp...)
	}
	dst = appendUvarint(dst, uint64(len(s.groups)))
	for _, g := range s.groups {
		dst = appendString(dst, g.Name)
		dst = appendID(dst, g.LastID)
		dst = appendUvarint(dst, uint64(g.EntriesRead+1))
		dst = appendUvarint(dst, uint64(len(g.consumers)))
		for _, c := range g.consumers {
			dst = appendString(dst, c.Name)
			dst = appendUvarint(dst, uint64(c.SeenTime))
		}
		dst = appendUvarint(dst, uint64(len(g.pel)))
		for _, id := range g.pel {
			p := g.pending[id]
			ci, _ := g.consumerIndex(p.Consumer.Name)
			dst = appendID(dst, id)
			dst = appendUvarint(dst, uint64(p.DeliveryTime))
			dst = appendUvarint(dst, uint64(p.DeliveryCount))
			dst = appendUvarint(dst, uint64(ci))
		}
	}
	return dst
}

func appendID(dst []byte, id StreamID) []byte {
	return appendUvarint(appendUvarint(dst, id.Ms), id.Seq)
}

func (r *reader) id() StreamID { return StreamID{r.uvarint(), r.uvarint()} }

func decodeStream(b []byte) (Object, error) {
	listpacks := bytes.HasPrefix(b, streamFormatListpacks)
	if listpacks {
		b = b[len(streamFormatListpacks):]
	}
	r := &reader{b: b}
	s := &Stream{LastID: r.id(), MaxDeletedID: r.id(), EntriesAdded: int64(r.uvarint())}
	if listpacks {
		nodes := r.count(3)
		for i := 0; i < nodes && r.err == nil; i++ {
			master := r.id()
			if lp := r.bytes(); r.err == nil {
				if err := s.AppendNode(StreamNode{Master: master, Listpack: lp}); err != nil {
					return nil, err
				}
			}
		}
	} else {
		decodeEntryNodes(r, s)
	}
	ng := r.count(4)
	for i := 0; i < ng && r.err == nil; i++ {
		g := &StreamGroup{Name: r.string(), LastID: r.id(), EntriesRead: int64(r.uvarint()) - 1, pending: map[StreamID]*PendingEntry{}}
		if len(s.groups) > 0 && s.groups[len(s.groups)-1].Name >= g.Name {
			r.fail("stream groups out of order")
		}
		nc := r.count(2)
		for j := 0; j < nc && r.err == nil; j++ {
			c := &StreamConsumer{Name: r.string(), SeenTime: int64(r.uvarint())}
			if len(g.consumers) > 0 && g.consumers[len(g.consumers)-1].Name >= c.Name {
				r.fail("stream consumers out of order")
			}
			g.consumers = append(g.consumers, c)
		}
		np := r.count(5)
		for j := 0; j < np && r.err == nil; j++ {
			id := r.id()
			p := &PendingEntry{ID: id, DeliveryTime: int64(r.uvarint()), DeliveryCount: int64(r.uvarint())}
			ci := r.uvarint()
			if r.err != nil {
				break
			}
			if ci >= uint64(len(g.consumers)) || (len(g.pel) > 0 && g.pel[len(g.pel)-1].Compare(id) >= 0) {
				r.fail("bad pending entry")
				break
			}
			p.Consumer = g.consumers[ci]
			g.pending[id] = p
			g.pel = append(g.pel, id)
			p.Consumer.pel = append(p.Consumer.pel, id)
		}
		s.groups = append(s.groups, g)
	}
	if err := r.done(); err != nil {
		return nil, err
	}
	return s, nil
}

// decodeEntryNodes reads the nodes of the encoding before listpacks: per
// node its master ID, deleted count and size, master fields, then its
// live entries, which it packs into listpacks again (without the
// deleted entries, which that encoding did not keep).
func decodeEntryNodes(r *reader, s *Stream) {
	nodes := r.count(6)
	for i := 0; i < nodes && r.err == nil; i++ {
		master := r.id()
		r.uvarint() // the deleted entries
		r.uvarint() // the listpack's size
		nf := r.count(1)
		names := make([]string, 2*nf)
		for j := 0; j < nf && r.err == nil; j++ {
			names[2*j] = r.string()
		}
		ne := r.count(3)
		if ne == 0 || nf == 0 {
			r.fail("empty stream node")
		}
		var n *streamNode
		for j := 0; j < ne && r.err == nil; j++ {
			id := r.id()
			if (n != nil && id.Compare(n.last) <= 0) || (n == nil && len(s.nodes) > 0 && id.Compare(s.nodes[len(s.nodes)-1].last) <= 0) {
				r.fail("stream entries out of order")
			}
			nv := r.count(1)
			if nv%2 != 0 || nv == 0 {
				r.fail("odd stream entry")
			}
			fields := make([]string, 0, nv)
			for k := 0; k < nv && r.err == nil; k++ {
				fields = append(fields, r.string())
			}
			if r.err != nil {
				break
			}
			if n == nil {
				n = newNode(master, names)
				n.first = id
			}
			n.add(id, fields)
		}
		if n != nil && r.err == nil {
			n.clip()
			s.nodes = append(s.nodes, n)
			s.length += n.count
			s.lpBytes += n.size()
		}
	}
}

// Clone returns a deep copy.
func (s *Stream) Clone() Object {
	c := *s
	c.nodes = make([]*streamNode, len(s.nodes))
	for i, n := range s.nodes {
		nn := *n
		nn.lp = slices.Clone(n.lp)
		nn.offs = slices.Clone(n.offs)
		c.nodes[i] = &nn
	}
	c.groups = make([]*StreamGroup, len(s.groups))
	for i, g := range s.groups {
		ng := &StreamGroup{Name: g.Name, LastID: g.LastID, EntriesRead: g.EntriesRead,
			pel: slices.Clone(g.pel), pending: make(map[StreamID]*PendingEntry, len(g.pending))}
		byName := map[string]*StreamConsumer{}
		for _, con := range g.consumers {
			nc := &StreamConsumer{Name: con.Name, SeenTime: con.SeenTime, pel: slices.Clone(con.pel)}
			ng.consumers = append(ng.consumers, nc)
			byName[con.Name] = nc
		}
		for id, p := range g.pending {
			np := *p
			np.Consumer = byName[p.Consumer.Name]
			ng.pending[id] = &np
		}
		c.groups[i] = ng
	}
	return &c
}

// String describes the stream for debugging.
func (s *Stream) String() string {
	return fmt.Sprintf("stream(%d entries in %d nodes, last %v, %d groups)", s.length, len(s.nodes), s.LastID, len(s.groups))
}
