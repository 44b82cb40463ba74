package cluster

import (
	"fmt"
	"slices"
)

// New builds a map from nodes whose IDs and addresses the caller chose
// (package cluster/etcdmap's nodes keep a random id across restarts), with
// self the index of this server's node in nodes and epoch the map's config
// epoch (above 0). Each node's Slots may come in any order; they must not
// overlap. The map copies nodes and stores each node's slots ascending and
// merged.
func New(nodes []Node, self int, epoch int64) (*Map, error) {
	if len(nodes) > MaxNodes {
		return nil, fmt.Errorf("%d nodes: at most %d are supported", len(nodes), MaxNodes)
	}
	if self < 0 || self >= len(nodes) {
		return nil, fmt.Errorf("self node %d is not one of the %d nodes", self, len(nodes))
	}
	if epoch < 1 {
		return nil, fmt.Errorf("epoch %d: want 1 or more", epoch)
	}
	m := &Map{nodes: slices.Clone(nodes), self: self, epoch: epoch}
	for i := range m.owner {
		m.owner[i] = -1
	}
	ids := make(map[string]int, len(nodes))
	for i := range m.nodes {
		n := &m.nodes[i]
		if prev, dup := ids[n.ID]; dup || n.ID == "" {
			return nil, fmt.Errorf("node %d (%s): id %q is empty or also node %d's", i+1, n.Addr(), n.ID, prev+1)
		}
		ids[n.ID] = i
		for _, r := range n.Slots {
			if r.Start < 0 || r.End >= Slots || r.End < r.Start {
				return nil, fmt.Errorf("node %d (%s): slots %s are not a range in 0..%d", i+1, n.Addr(), r, Slots-1)
			}
			for s := r.Start; s <= r.End; s++ {
				if o := m.owner[s]; o >= 0 {
					return nil, fmt.Errorf("node %d (%s): slot %d is also node %d's", i+1, n.Addr(), s, o+1)
				}
				m.owner[s] = int16(i)
			}
		}
		n.Slots = nil
	}
	for _, run := range m.Runs() {
		run.Node.Slots = append(run.Node.Slots, run.Range)
	}
	return m, nil
}

// ParseAddr splits host:port as a file's addr is read: an IP literal (in
// canonical form) or a host name (lower-cased), and a port in 1..65535.
func ParseAddr(addr string) (host string, port int, err error) {
	host, port, err = parseAddr(addr)
	if err != nil {
		return "", 0, fmt.Errorf("addr %q: %w", addr, err)
	}
	return host, port, nil
}

// CurrentEpoch is CLUSTER INFO's cluster_current_epoch: the revision of a
// map from etcd, the number of nodes for a file.
func (m *Map) CurrentEpoch() int64 {
	if m.epoch > 0 {
		return m.epoch
	}
	return int64(len(m.nodes))
}

// NodeEpoch is the config epoch of the node at index i (CLUSTER NODES):
// the map's epoch for a map from etcd, the node's position from 1 for a
// file, so that every node reports the same epochs.
func (m *Map) NodeEpoch(i int) int64 {
	if m.epoch > 0 {
		return m.epoch
	}
	return int64(i + 1)
}
