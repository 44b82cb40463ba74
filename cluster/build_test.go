package cluster

import (
	"strings"
	"testing"
)

func TestNewMergesSlotsAndReportsEtcdEpochs(t *testing.T) {
	m, err := New([]Node{
		{ID: "b", Host: "127.0.0.1", Port: 7002, Slots: []Range{{10, 19}, {0, 4}}},
		{ID: "a", Host: "127.0.0.1", Port: 7001, Slots: []Range{{5, 9}}},
		{ID: "c", Host: "127.0.0.1", Port: 7003},
	}, 2, 42)
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Nodes()[0].Slots; len(got) != 2 || got[0] != (Range{0, 4}) || got[1] != (Range{10, 19}) {
		t.Errorf("node b's slots = %v, want 0-4 and 10-19 in order", got)
	}
	if m.Self().ID != "c" || m.Self().SlotCount() != 0 || m.Serves(0) {
		t.Errorf("self = %+v, want c without slots", m.Self())
	}
	if n, ok := m.Owner(7); !ok || n.ID != "a" {
		t.Errorf("slot 7's owner = %v, %v; want a", n, ok)
	}
	if m.CurrentEpoch() != 42 || m.NodeEpoch(0) != 42 || m.Assigned() != 20 {
		t.Errorf("epochs %d/%d, assigned %d; want 42, 42 and 20", m.CurrentEpoch(), m.NodeEpoch(0), m.Assigned())
	}
}

func TestNewRejectsBadMaps(t *testing.T) {
	node := func(id string, port int, rs ...Range) Node {
		return Node{ID: id, Host: "127.0.0.1", Port: port, Slots: rs}
	}
	for _, tc := range []struct {
		name  string
		nodes []Node
		self  int
		epoch int64
		want  string
	}{
		{"overlap", []Node{node("a", 1, Range{0, 10}), node("b", 2, Range{10, 12})}, 0, 1, "slot 10 is also node 1's"},
		{"duplicate id", []Node{node("a", 1), node("a", 2)}, 0, 1, "also node 1's"},
		{"empty id", []Node{node("", 1)}, 0, 1, "is empty"},
		{"slot out of range", []Node{node("a", 1, Range{16380, 16384})}, 0, 1, "not a range"},
		{"no self", []Node{node("a", 1)}, 1, 1, "self node 1"},
		{"no epoch", []Node{node("a", 1)}, 0, 0, "epoch 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.nodes, tc.self, tc.epoch)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestStaticMapEpochsFollowPositions(t *testing.T) {
	m, err := Parse([]byte("nodes:\n  - addr: 127.0.0.1:1\n    slots: 0-10\n  - addr: 127.0.0.1:2\n"))
	if err != nil {
		t.Fatal(err)
	}
	if m.CurrentEpoch() != 2 || m.NodeEpoch(0) != 1 || m.NodeEpoch(1) != 2 {
		t.Errorf("epochs %d, %d, %d; want 2, 1, 2", m.CurrentEpoch(), m.NodeEpoch(0), m.NodeEpoch(1))
	}
}
