package etcdmap

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/kvserver/kvserver/cluster"
)

// member is the value of a node's member key.
type member struct {
	// Addr is host:port, where clients reach the node.
	Addr string `json:"addr"`
	// Leaving marks a node that is shutting down: its slots move at once.
	Leaving bool `json:"leaving,omitempty"`
}

// mapRecord is the value of the map key.
type mapRecord struct {
	Nodes []nodeRecord `json:"nodes"`
}

// nodeRecord is one node of a mapRecord: its inclusive slot ranges,
// ascending.
type nodeRecord struct {
	ID    string   `json:"id"`
	Addr  string   `json:"addr"`
	Slots [][2]int `json:"slots"`
	// Failing marks a member whose lease expired and whose slots wait
	// out the grace (CLUSTER NODES shows it fail?).
	Failing bool `json:"failing,omitempty"`
}

// decodeMap reads a map key's value.
func decodeMap(data []byte) (mapRecord, error) {
	var r mapRecord
	if err := json.Unmarshal(data, &r); err != nil {
		return mapRecord{}, fmt.Errorf("decode slot map: %w", err)
	}
	return r, nil
}

// owners returns the id of each slot's node ("" for none).
func (r mapRecord) owners() []string {
	out := make([]string, cluster.Slots)
	for _, n := range r.Nodes {
		for _, rg := range n.Slots {
			for s := max(rg[0], 0); s <= rg[1] && s < cluster.Slots; s++ {
				out[s] = n.ID
			}
		}
	}
	return out
}

// addrs returns each node's address by id.
func (r mapRecord) addrs() map[string]string {
	out := make(map[string]string, len(r.Nodes))
	for _, n := range r.Nodes {
		out[n.ID] = n.Addr
	}
	return out
}

// buildRecord is the map record of an assignment: every node in addrs,
// sorted by id, with its runs of slots in owner, marked failing when in
// failing. Equal inputs give equal records, so that comparing encodings
// tells whether anything changed.
func buildRecord(owner []string, addrs map[string]string, failing map[string]bool) mapRecord {
	ids := make([]string, 0, len(addrs))
	for id := range addrs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	index := make(map[string]int, len(ids))
	r := mapRecord{Nodes: make([]nodeRecord, len(ids))}
	for i, id := range ids {
		index[id] = i
		r.Nodes[i] = nodeRecord{ID: id, Addr: addrs[id], Slots: [][2]int{}, Failing: failing[id]}
	}
	for s := 0; s < len(owner); {
		e := s
		for e+1 < len(owner) && owner[e+1] == owner[s] {
			e++
		}
		if i, ok := index[owner[s]]; ok {
			r.Nodes[i].Slots = append(r.Nodes[i].Slots, [2]int{s, e})
		}
		s = e + 1
	}
	return r
}

// clusterMap turns a record into the map a server routes by, with this
// node (selfID at selfAddr) located in it; a node that the record does
// not list yet (it just joined) is added without slots.
func (r mapRecord) clusterMap(selfID, selfAddr string, epoch int64) (*cluster.Map, error) {
	nodes := make([]cluster.Node, 0, len(r.Nodes)+1)
	self := -1
	for _, n := range r.Nodes {
		host, port, err := cluster.ParseAddr(n.Addr)
		if err != nil {
			return nil, fmt.Errorf("node %s: %w", n.ID, err)
		}
		cn := cluster.Node{ID: n.ID, Host: host, Port: port, Failing: n.Failing && n.ID != selfID}
		for _, rg := range n.Slots {
			cn.Slots = append(cn.Slots, cluster.Range{Start: rg[0], End: rg[1]})
		}
		if n.ID == selfID {
			self = len(nodes)
		}
		nodes = append(nodes, cn)
	}
	if self < 0 {
		host, port, err := cluster.ParseAddr(selfAddr)
		if err != nil {
			return nil, fmt.Errorf("this node: %w", err)
		}
		self = len(nodes)
		nodes = append(nodes, cluster.Node{ID: selfID, Host: host, Port: port})
	}
	return cluster.New(nodes, self, max(epoch, 1))
}
