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
// kvserver's stream nodes are Redis's listpacks (see datatype's
// StreamNode), so a payload is byte for byte redis-server's, deleted
// entries included.

// appendRawID appends a stream ID as Redis's radix tree keys hold it.
func appendRawID(b []byte, id datatype.StreamID) []byte {
	return binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(b, id.Ms), id.Seq)
}

// dumpStream writes RDB_TYPE_STREAM_LISTPACKS_2.
func dumpStream(b []byte, s *datatype.Stream) []byte {
	b = append(b, typeStreamListpacks2)
	b = appendLen(b, uint64(s.Nodes()))
	var key [16]byte
	s.ForEachNode(func(n datatype.StreamNode) bool {
		b = appendString(b, appendRawID(key[:0], n.Master))
		b = appendString(b, n.Listpack)
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

// restoreStream reads RDB_TYPE_STREAM_LISTPACKS (Redis 5 and 6, without
// the first and deleted IDs, the entries added and the groups' read
// counters) and RDB_TYPE_STREAM_LISTPACKS_2. It refuses what Redis
// refuses, what its deep sanitization refuses, and what kvserver cannot
// hold: entries out of order or after the last ID, a length that is not
// the entries', PEL entries without a consumer. A node whose entries are
// all deleted is dropped.
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
		if err := s.AppendNode(datatype.StreamNode{Master: master, Listpack: lp}); err != nil {
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
