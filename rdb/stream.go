package rdb

import (
	"encoding/binary"
	"errors"
	"math"

	"github.com/kvserver/kvserver/datatype"
)

// Streams (t_stream.c) are RDB_TYPE_STREAM_LISTPACKS_2 in Redis 7.0: the
// nodes of the radix tree, each its master ID (16 bytes, big endian) and
// its listpack, then the length, the last, first and greatest deleted
// IDs and the entries added, then the consumer groups, each with its
// last delivered ID, its read counter, its PEL (raw IDs with delivery
// times and counts) and its consumers (name, seen time, their PEL's IDs).
//
// A node's listpack starts with the master entry: the live count, the
// deleted count, the master fields and a 0. Each entry follows as its
// flags, its ID's deltas to the master ID, its field count and fields
// unless they are the master's (flag SAMEFIELDS), its values, and its
// element count. kvserver keeps no deleted entries, so a node it dumps
// holds live entries only (with a deleted count of 0, which keeps the
// payload valid under sanitize-dump-payload): byte for byte Redis's
// listpack until the node had an entry deleted.

// Stream item flags (t_stream.c).
const (
	streamItemDeleted    = 1
	streamItemSameFields = 2
)

// streamIDBytes is a stream ID as Redis's radix tree keys hold it.
func appendRawID(b []byte, id datatype.StreamID) []byte {
	return binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(b, id.Ms), id.Seq)
}

// dumpStream writes RDB_TYPE_STREAM_LISTPACKS_2.
func dumpStream(b []byte, s *datatype.Stream) []byte {
	b = append(b, typeStreamListpacks2)
	b = appendLen(b, uint64(s.Nodes()))
	var key [16]byte
	var lp []byte
	s.ForEachNode(func(n datatype.StreamNode) bool {
		b = appendString(b, appendRawID(key[:0], n.Master))
		lp = streamListpack(lp[:0], n)
		b = appendString(b, lp)
		return true
	})
	first := s.FirstID()
	for _, v := range []uint64{uint64(s.Len()), s.LastID.Ms, s.LastID.Seq, first.Ms, first.Seq,
		s.MaxDeletedID.Ms, s.MaxDeletedID.Seq, uint64(s.EntriesAdded)} {
		b = appendLen(b, v)
	}
	b = appendLen(b, uint64(len(s.Groups())))
	for _, g := range s.Groups() {
		b = appendString(b, []byte(g.Name))
		b = appendLen(b, g.LastID.Ms)
		b = appendLen(b, g.LastID.Seq)
		b = appendLen(b, uint64(g.EntriesRead)) // -1 (unknown) as Redis writes it: 2^64-1
		b = appendLen(b, uint64(g.PendingCount()))
		for _, id := range g.PendingIDs() {
			p := g.PendingEntry(id)
			b = appendRawID(b, id)
			b = binary.LittleEndian.AppendUint64(b, uint64(p.DeliveryTime))
			b = appendLen(b, uint64(p.DeliveryCount))
		}
		b = appendLen(b, uint64(len(g.Consumers())))
		for _, c := range g.Consumers() {
			b = appendString(b, []byte(c.Name))
			b = binary.LittleEndian.AppendUint64(b, uint64(c.SeenTime))
			b = appendLen(b, uint64(len(c.Pending())))
			for _, id := range c.Pending() {
				b = appendRawID(b, id)
			}
		}
	}
	return b
}

// streamListpack encodes a node's live entries as streamAppendItem
// appends them, into lp.
func streamListpack(lp []byte, n datatype.StreamNode) []byte {
	lp = append(lp, make([]byte, lpHeaderSize)...)
	count := 0
	ints := func(vs ...int64) {
		for _, v := range vs {
			lp = appendListpackIntEntry(lp, v)
		}
		count += len(vs)
	}
	strs := func(ss []string, step int) {
		for i := 0; i < len(ss); i += step {
			lp = appendListpackEntry(lp, ss[i])
			count++
		}
	}
	ints(int64(len(n.Entries)), 0, int64(len(n.Fields)))
	strs(n.Fields, 1)
	ints(0)
	for _, e := range n.Entries {
		pairs := len(e.Fields) / 2
		same := pairs == len(n.Fields)
		for i := 0; same && i < pairs; i++ {
			same = e.Fields[2*i] == n.Fields[i]
		}
		msDelta, seqDelta := int64(e.ID.Ms-n.Master.Ms), int64(e.ID.Seq-n.Master.Seq)
		if same {
			ints(streamItemSameFields, msDelta, seqDelta)
			strs(e.Fields[1:], 2)
			ints(int64(pairs + 3))
			continue
		}
		ints(0, msDelta, seqDelta, int64(pairs))
		strs(e.Fields, 1)
		ints(int64(2*pairs + 4))
	}
	return finishListpack(lp, count)
}

// restoreStream reads RDB_TYPE_STREAM_LISTPACKS (Redis 5 and 6, without
// the first and deleted IDs, the entries added and the groups' read
// counters) and RDB_TYPE_STREAM_LISTPACKS_2. It refuses what Redis
// refuses and what kvserver cannot hold: entries out of order or after
// the last ID, a length that is not the entries', PEL entries without a
// consumer. A node whose entries are all deleted is dropped.
func (r *reader) restoreStream(typ byte) (Value, error) {
	s := datatype.NewStream()
	nodes := r.count(2)
	for i := 0; i < nodes && r.err == nil; i++ {
		key := r.string()
		lp := r.string()
		if r.err != nil {
			break
		}
		if len(key) != 16 {
			return Value{}, errors.New("stream node key is not an ID")
		}
		master := datatype.StreamID{Ms: binary.BigEndian.Uint64(key), Seq: binary.BigEndian.Uint64(key[8:])}
		n, err := parseStreamListpack(lp, master)
		if err != nil {
			return Value{}, err
		}
		if len(n.Entries) == 0 {
			continue
		}
		if err := s.AppendNode(n, len(lp)); err != nil {
			return Value{}, err
		}
	}
	length, _ := r.length()
	s.LastID = r.rawLenID()
	s.EntriesAdded = int64(length)
	if typ == typeStreamListpacks2 {
		r.rawLenID() // the first ID: kvserver has it from the entries
		s.MaxDeletedID = r.rawLenID()
		added, _ := r.length()
		s.EntriesAdded = int64(added)
	}
	if r.err != nil {
		return Value{}, r.err
	}
	if length != uint64(s.Len()) {
		return Value{}, errors.New("stream length is not its entries'")
	}
	if last, ok := s.Last(); ok && last.ID.Compare(s.LastID) > 0 {
		return Value{}, errors.New("stream entry after the last ID")
	}
	groups := r.count(3)
	for i := 0; i < groups && r.err == nil; i++ {
		if err := r.restoreGroup(s, typ); err != nil {
			return Value{}, err
		}
	}
	return Value{Object: s}, r.err
}

// rawLenID reads an ID as two RDB lengths.
func (r *reader) rawLenID() datatype.StreamID {
	ms, _ := r.length()
	seq, _ := r.length()
	return datatype.StreamID{Ms: ms, Seq: seq}
}

// rawID reads an ID as 16 bytes, big endian.
func (r *reader) rawID() datatype.StreamID {
	b := r.take(16)
	if b == nil {
		return datatype.StreamID{}
	}
	return datatype.StreamID{Ms: binary.BigEndian.Uint64(b), Seq: binary.BigEndian.Uint64(b[8:])}
}

// millis is rdbLoadMillisecondTime: 8 bytes, little endian.
func (r *reader) millis() int64 {
	b := r.take(8)
	if b == nil {
		return 0
	}
	return int64(binary.LittleEndian.Uint64(b))
}

// restoreGroup reads one consumer group into s.
func (r *reader) restoreGroup(s *datatype.Stream, typ byte) error {
	name := r.string()
	last := r.rawLenID()
	entriesRead := s.DistanceFromFirstEver(last) // what Redis estimates for RDB_TYPE_STREAM_LISTPACKS
	if typ == typeStreamListpacks2 {
		v, _ := r.length()
		entriesRead = int64(v)
	}
	if r.err != nil {
		return r.err
	}
	g := s.CreateGroup(string(name), last, entriesRead)
	if g == nil {
		return errors.New("duplicate consumer group")
	}
	type nack struct {
		time, count int64
		owned       bool
	}
	pel := map[datatype.StreamID]*nack{}
	n := r.count(17)
	for i := 0; i < n && r.err == nil; i++ {
		id := r.rawID()
		t := r.millis()
		count, _ := r.length()
		if pel[id] != nil {
			return errors.New("duplicate PEL entry")
		}
		pel[id] = &nack{time: t, count: int64(count & math.MaxInt64)}
	}
	consumers := r.count(10)
	for i := 0; i < consumers && r.err == nil; i++ {
		cname := r.string()
		seen := r.millis()
		if r.err != nil {
			return r.err
		}
		c, created := g.AddConsumer(string(cname), seen)
		if !created {
			return errors.New("duplicate consumer")
		}
		owned := r.count(16)
		for j := 0; j < owned && r.err == nil; j++ {
			id := r.rawID()
			p := pel[id]
			switch {
			case r.err != nil:
			case p == nil:
				return errors.New("consumer PEL entry not in the group's PEL")
			case p.owned:
				return errors.New("PEL entry of two consumers")
			default:
				p.owned = true
				e := g.Deliver(id, c, p.time)
				e.DeliveryCount = p.count
			}
		}
	}
	if r.err == nil && g.PendingCount() != len(pel) {
		return errors.New("PEL entry without a consumer")
	}
	return r.err
}

// parseStreamListpack decodes a node's listpack: its master entry and
// its live entries, checking what streamValidateListpackIntegrity checks
// in its deep mode.
func parseStreamListpack(lp []byte, master datatype.StreamID) (datatype.StreamNode, error) {
	n := datatype.StreamNode{Master: master}
	var elems []lpElem
	if err := rangeListpack(lp, func(e lpElem) bool {
		elems = append(elems, e)
		return true
	}); err != nil {
		return n, err
	}
	bad := errors.New("bad stream listpack")
	pos := 0
	next := func() (lpElem, bool) {
		if pos == len(elems) {
			return lpElem{}, false
		}
		pos++
		return elems[pos-1], true
	}
	nextInt := func() (int64, bool) {
		e, ok := next()
		return e.v, ok && e.isInt
	}
	live, ok1 := nextInt()
	deleted, ok2 := nextInt()
	nf, ok3 := nextInt()
	if !ok1 || !ok2 || !ok3 || live < 0 || deleted < 0 || nf <= 0 || nf > int64(len(elems)) {
		return n, bad
	}
	for i := int64(0); i < nf; i++ {
		e, _ := next()
		n.Fields = append(n.Fields, e.String())
	}
	if zero, ok := nextInt(); !ok || zero != 0 {
		return n, bad
	}
	var fieldBuf [][]byte
	for total := live + deleted; total > 0; total-- {
		flags, ok1 := nextInt()
		ms, ok2 := nextInt()
		seq, ok3 := nextInt()
		if !ok1 || !ok2 || !ok3 {
			return n, bad
		}
		// The values alone after the master's fields, else field,
		// value pairs after their count.
		same := flags&streamItemSameFields != 0
		fields, extra, width := nf, int64(3), int64(1)
		if !same {
			var ok bool
			fields, ok = nextInt()
			if !ok || fields <= 0 {
				return n, bad
			}
			extra += fields + 1
			width = 2
		}
		if fields > int64(len(elems)-pos)/width {
			return n, bad
		}
		items := elems[pos : pos+int(fields*width)]
		pos += int(fields * width)
		if c, ok := nextInt(); !ok || c != fields+extra {
			return n, bad
		}
		if flags&streamItemDeleted != 0 {
			n.Deleted++
			continue
		}
		fieldBuf = fieldBuf[:0]
		for i, it := range items {
			if same {
				fieldBuf = append(fieldBuf, []byte(n.Fields[i]))
			}
			fieldBuf = append(fieldBuf, []byte(it.String()))
		}
		id := datatype.StreamID{Ms: master.Ms + uint64(ms), Seq: master.Seq + uint64(seq)}
		n.Entries = append(n.Entries, datatype.StreamEntry{ID: id, Fields: datatype.PackFields(fieldBuf)})
	}
	if pos != len(elems) || int64(len(n.Entries)) != live || int64(n.Deleted) != deleted {
		return n, bad
	}
	return n, nil
}
