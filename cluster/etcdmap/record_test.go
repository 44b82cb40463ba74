package etcdmap

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/kvserver/kvserver/cluster"
)

// TestRecordRoundTrip: an assignment written as a record and read back
// gives the same owners, equal assignments give identical bytes (the
// reconciler compares bytes), and the cluster map locates this node.
func TestRecordRoundTrip(t *testing.T) {
	owner := Assign(nil, []string{"a", "b", "c"})
	addrs := map[string]string{"a": "127.0.0.1:7001", "b": "127.0.0.1:7002", "c": "127.0.0.1:7003"}
	r := buildRecord(owner, addrs, nil)
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := json.Marshal(buildRecord(slices.Clone(owner), addrs, nil))
	if string(data) != string(again) {
		t.Fatalf("equal assignments encode differently:\n%s\n%s", data, again)
	}
	back, err := decodeMap(data)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back.owners(), owner) {
		t.Fatal("owners changed across encoding")
	}
	m, err := back.clusterMap("b", "127.0.0.1:7002", 9)
	if err != nil {
		t.Fatal(err)
	}
	if m.Self().ID != "b" || m.Self().SlotCount() != cluster.Slots/3 || m.CurrentEpoch() != 9 {
		t.Fatalf("self %+v, epoch %d", m.Self(), m.CurrentEpoch())
	}
}

// TestClusterMapAddsANewNodeWithoutSlots: a node that has just joined is
// not in the record yet; its map shows it without slots, the others as
// recorded.
func TestClusterMapAddsANewNodeWithoutSlots(t *testing.T) {
	r := buildRecord(Assign(nil, []string{"a"}), map[string]string{"a": "127.0.0.1:7001"}, map[string]bool{"a": true})
	m, err := r.clusterMap("new", "127.0.0.1:7009", 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Nodes()) != 2 || m.Self().ID != "new" || m.Self().SlotCount() != 0 || m.Self().Port != 7009 {
		t.Fatalf("nodes %+v, self %+v", m.Nodes(), m.Self())
	}
	if !m.Nodes()[0].Failing || m.Self().Failing {
		t.Fatalf("a's failing mark was not carried over: %+v", m.Nodes())
	}
	if _, err := (mapRecord{Nodes: []nodeRecord{{ID: "x", Addr: "nohost"}}}).clusterMap("a", "127.0.0.1:1", 1); err == nil {
		t.Fatal("a record with a bad address was accepted")
	}
}
