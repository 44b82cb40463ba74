package datatype

import (
	"errors"
	"slices"
)

// StreamNode is one node of a stream as Redis's listpack holds it: the
// master ID (the node's key in Redis's radix tree), the master entry's
// fields, the live entries, and how many deleted entries the listpack
// still counts. It is how DUMP and RESTORE see a stream's nodes.
type StreamNode struct {
	Master  StreamID
	Fields  []string
	Deleted int
	Entries []StreamEntry
}

// ForEachNode calls fn on each node in ID order until fn returns false.
// The node's slices are the stream's own: fn must not change them.
func (s *Stream) ForEachNode(fn func(n StreamNode) bool) {
	for _, n := range s.nodes {
		if !fn(StreamNode{Master: n.master, Fields: n.fields, Deleted: n.deleted, Entries: n.entries}) {
			return
		}
	}
}

// Errors of AppendNode.
var (
	errEmptyNode    = errors.New("stream node without entries")
	errNodeOrder    = errors.New("stream entries out of order")
	errNodeMaster   = errors.New("stream entry before its node's master ID")
	errNodeOddField = errors.New("stream entry with an odd field count")
)

// AppendNode adds a node after the last one, as RESTORE loads a stream:
// n's entries must be in ID order, after every entry already there, and
// not before n.Master. bytes is the node's listpack size, which decides,
// with its entry and deleted counts, whether the next Append starts a
// new node. The stream keeps n's slices. LastID, MaxDeletedID and
// EntriesAdded are the caller's to set.
func (s *Stream) AppendNode(n StreamNode, bytes int) error {
	if len(n.Entries) == 0 {
		return errEmptyNode
	}
	if n.Entries[0].ID.Compare(n.Master) < 0 {
		return errNodeMaster
	}
	if last, ok := s.Last(); ok && last.ID.Compare(n.Entries[0].ID) >= 0 {
		return errNodeOrder
	}
	var cost int64
	for i, e := range n.Entries {
		if i > 0 && n.Entries[i-1].ID.Compare(e.ID) >= 0 {
			return errNodeOrder
		}
		if len(e.Fields)%2 != 0 || len(e.Fields) == 0 {
			return errNodeOddField
		}
		cost += entryCost(e.Fields)
	}
	s.nodes = append(s.nodes, &streamNode{master: n.Master, fields: slices.Clip(n.Fields),
		entries: slices.Clip(n.Entries), deleted: n.Deleted, bytes: bytes})
	s.length += len(n.Entries)
	s.entryBytes += cost
	return nil
}
