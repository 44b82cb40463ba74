package cluster

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const threeNodes = `
nodes:
  - addr: 127.0.0.1:7001
    slots: 0-5460
  - addr: 127.0.0.1:7002
    slots: 5461-10922
  - addr: 127.0.0.1:7003
    slots: 10923-16383
`

func mustParse(t *testing.T, text string) *Map {
	t.Helper()
	m, err := Parse([]byte(text))
	if err != nil {
		t.Fatalf("Parse: %v\n%s", err, text)
	}
	return m
}

func TestParseThreeNodes(t *testing.T) {
	m := mustParse(t, threeNodes)
	if got := len(m.Nodes()); got != 3 {
		t.Fatalf("%d nodes", got)
	}
	if m.Assigned() != Slots {
		t.Errorf("Assigned = %d", m.Assigned())
	}
	for slot, want := range map[int]int{0: 7001, 5460: 7001, 5461: 7002, 10922: 7002, 10923: 7003, 16383: 7003} {
		n, ok := m.Owner(slot)
		if !ok || n.Port != want {
			t.Errorf("Owner(%d) = %v, %v; want port %d", slot, n, ok, want)
		}
	}
	runs := m.Runs()
	want := []Range{{0, 5460}, {5461, 10922}, {10923, 16383}}
	for i, r := range runs {
		if r.Range != want[i] || r.Node != &m.Nodes()[i] {
			t.Errorf("run %d = %v on %s", i, r.Range, r.Node.Addr())
		}
	}
	if m.Self() != nil || m.Serves(0) {
		t.Error("a parsed map has a self node before Locate")
	}
}

func TestNodeIDsAreStableSHA1OfAddr(t *testing.T) {
	a, b := mustParse(t, threeNodes), mustParse(t, threeNodes)
	hex40 := regexp.MustCompile(`^[0-9a-f]{40}$`)
	seen := map[string]bool{}
	for i, n := range a.Nodes() {
		if !hex40.MatchString(n.ID) {
			t.Errorf("id %q is not 40 hex digits", n.ID)
		}
		if n.ID != b.Nodes()[i].ID {
			t.Errorf("node %d id differs between parses", i)
		}
		if seen[n.ID] {
			t.Errorf("duplicate id %s", n.ID)
		}
		seen[n.ID] = true
	}
	// printf 127.0.0.1:7001 | sha1sum
	if got := a.Nodes()[0].ID; got != "73e424d53fc3edc27f2c55eb2808f7bdd833f129" {
		t.Errorf("id of 127.0.0.1:7001 = %s, want its SHA-1", got)
	}
}

func TestParseSlotSyntax(t *testing.T) {
	m := mustParse(t, `
nodes:
  - addr: "[::1]:7001"
    slots: 0-99, 100 ,101-200,300
  - addr: LocalHost:7002
    slots: [201-299, 301]
  - addr: 10.0.0.3:7003
    slots: 16383
  - addr: 10.0.0.4:7004
`)
	nodes := m.Nodes()
	if got := nodes[0].Slots; !slices.Equal(got, []Range{{0, 200}, {300, 300}}) {
		t.Errorf("node 1 slots %v (want adjacent ranges merged)", got)
	}
	if nodes[0].Host != "::1" || nodes[0].Addr() != "[::1]:7001" {
		t.Errorf("IPv6 host %q addr %q", nodes[0].Host, nodes[0].Addr())
	}
	if nodes[1].Host != "localhost" || !slices.Equal(nodes[1].Slots, []Range{{201, 299}, {301, 301}}) {
		t.Errorf("node 2: %+v", nodes[1])
	}
	if !slices.Equal(nodes[2].Slots, []Range{{16383, 16383}}) {
		t.Errorf("node 3 slots %v", nodes[2].Slots)
	}
	if len(nodes[3].Slots) != 0 || nodes[3].SlotCount() != 0 {
		t.Errorf("node without slots: %v", nodes[3].Slots)
	}
	if m.Assigned() != 303 {
		t.Errorf("Assigned = %d, want 303 (uncovered slots are allowed)", m.Assigned())
	}
	if _, ok := m.Owner(302); ok {
		t.Error("slot 302 has an owner")
	}
}

func TestParseRejects(t *testing.T) {
	cases := []struct{ name, text, wantErr string }{
		{"empty", "", "empty file"},
		{"no nodes", "nodes: []", "no nodes"},
		{"unknown key", "nodes:\n  - addr: a:1\n    slot: 1\n", "field slot not found"},
		{"unknown top key", "node: []\n", "field node not found"},
		{"overlap between nodes", "nodes:\n  - addr: a:1\n    slots: 0-10\n  - addr: b:1\n    slots: 10-20\n", "slot 10 is already served by node 1 (a:1)"},
		{"overlap within a node", "nodes:\n  - addr: a:1\n    slots: 0-10,5\n", "slot 5 is listed twice"},
		{"slot too large", "nodes:\n  - addr: a:1\n    slots: 0-16384\n", "outside 0..16383"},
		{"negative", "nodes:\n  - addr: a:1\n    slots: -1\n", "not a slot number"},
		{"reversed", "nodes:\n  - addr: a:1\n    slots: 10-5\n", "ends before it starts"},
		{"empty element", "nodes:\n  - addr: a:1\n    slots: 1,,2\n", "not a slot number"},
		{"junk", "nodes:\n  - addr: a:1\n    slots: 1-2-3\n", "not a slot number"},
		{"float", "nodes:\n  - addr: a:1\n    slots: 1.5\n", "want slots like"},
		{"map", "nodes:\n  - addr: a:1\n    slots: {a: 1}\n", "want slots like"},
		{"no port", "nodes:\n  - addr: a\n", "want host:port"},
		{"port zero", "nodes:\n  - addr: a:0\n", "not in 1..65535"},
		{"port range", "nodes:\n  - addr: a:65536\n", "not in 1..65535"},
		{"bad host", "nodes:\n  - addr: \"a b:1\"\n", "neither an IP address nor a host name"},
		{"empty host", "nodes:\n  - addr: \":1\"\n", "want a host name or IP address"},
		{"duplicate addr", "nodes:\n  - addr: A:1\n  - addr: a:1\n", "is also node 1"},
		{"not yaml", "nodes: [", "parse YAML"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.text))
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Parse error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestFormatRoundTrips(t *testing.T) {
	m := mustParse(t, "nodes:\n  - addr: \"[::1]:1\"\n    slots: 0-5,9\n  - addr: host-b:2\n  - addr: 10.1.2.3:3\n    slots: 6-8,100-16383\n")
	back := mustParse(t, string(m.Format()))
	if !sameMap(m, back) {
		t.Fatalf("round trip changed the map:\n%s", m.Format())
	}
}

func sameMap(a, b *Map) bool {
	if len(a.nodes) != len(b.nodes) || a.owner != b.owner {
		return false
	}
	for i := range a.nodes {
		x, y := a.nodes[i], b.nodes[i]
		if x.ID != y.ID || x.Host != y.Host || x.Port != y.Port || !slices.Equal(x.Slots, y.Slots) {
			return false
		}
	}
	return true
}

func TestLocate(t *testing.T) {
	cases := []struct {
		name     string
		text     string
		bind     string
		port     int
		wantSelf int // -1: error
	}{
		{"exact", threeNodes, "127.0.0.1", 7002, 1},
		{"localhost bind", threeNodes, "localhost", 7003, 2},
		{"wildcard bind", threeNodes, "0.0.0.0", 7001, 0},
		{"ipv6 wildcard", threeNodes, "::", 7001, 0},
		{"loopback names", "nodes:\n  - addr: localhost:7001\n  - addr: localhost:7002\n", "127.0.0.1", 7002, 1},
		{"ipv6 loopback", "nodes:\n  - addr: \"[::1]:7001\"\n", "::1", 7001, 0},
		{"port not listed", threeNodes, "127.0.0.1", 7004, -1},
		{"other host", "nodes:\n  - addr: 10.9.9.9:7001\n", "127.0.0.1", 7001, -1},
		{"exact other host", "nodes:\n  - addr: 10.9.9.9:7001\n  - addr: 10.9.9.8:7001\n", "10.9.9.8", 7001, 1},
		{"ambiguous", "nodes:\n  - addr: localhost:7001\n  - addr: 127.0.0.1:7001\n", "127.0.0.1", 7001, -1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := mustParse(t, tc.text)
			err := m.Locate(tc.bind, tc.port)
			if tc.wantSelf < 0 {
				if err == nil {
					t.Fatalf("Locate found node %s, want an error", m.Self().Addr())
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if m.SelfIndex() != tc.wantSelf || m.Self() != &m.Nodes()[tc.wantSelf] {
				t.Fatalf("self = %d, want %d", m.SelfIndex(), tc.wantSelf)
			}
		})
	}
}

func TestServesFollowsSelf(t *testing.T) {
	m := mustParse(t, threeNodes)
	if err := m.Locate("127.0.0.1", 7002); err != nil {
		t.Fatal(err)
	}
	for slot, want := range map[int]bool{0: false, 5460: false, 5461: true, 10922: true, 10923: false, -1: false, Slots: false} {
		if got := m.Serves(slot); got != want {
			t.Errorf("Serves(%d) = %v", slot, got)
		}
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cluster.yaml")
	if err := os.WriteFile(path, []byte(threeNodes), 0o600); err != nil {
		t.Fatal(err)
	}
	m, err := Load(path, "127.0.0.1", 7003)
	if err != nil {
		t.Fatal(err)
	}
	if m.Self().Port != 7003 {
		t.Errorf("self %s", m.Self().Addr())
	}
	if _, err := Load(path, "127.0.0.1", 9999); err == nil || !strings.Contains(err.Error(), "is not one of its nodes") {
		t.Errorf("Load with an unlisted port: %v", err)
	}
	if _, err := Load(filepath.Join(dir, "missing.yaml"), "127.0.0.1", 7003); err == nil {
		t.Error("Load of a missing file succeeded")
	}
}
