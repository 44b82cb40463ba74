package cluster

import (
	"regexp"
	"testing"
)

var hex40 = regexp.MustCompile(`^[0-9a-f]{40}$`)

// FuzzParseConfig feeds arbitrary bytes to Parse. It must never panic, and
// every map it accepts must be consistent: each served slot belongs to
// exactly one node whose ranges list it, node ids are 40 hex digits and
// unique, ranges are ascending and disjoint, and Format writes a file that
// parses back to the same map. Seeds (valid maps and near misses) are in
// testdata/fuzz/FuzzParseConfig.
func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(threeNodes))
	f.Add([]byte("nodes:\n  - addr: a:1\n    slots: [0-1, 5]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Parse(data)
		if err != nil {
			if m != nil {
				t.Fatal("Parse returned a map with an error")
			}
			return
		}
		if len(m.Nodes()) == 0 || len(m.Nodes()) > MaxNodes {
			t.Fatalf("%d nodes accepted", len(m.Nodes()))
		}
		ids := map[string]bool{}
		counted := 0
		for i := range m.Nodes() {
			n := &m.Nodes()[i]
			if !hex40.MatchString(n.ID) || ids[n.ID] {
				t.Fatalf("node %d id %q is malformed or repeated", i, n.ID)
			}
			ids[n.ID] = true
			if n.Port < 1 || n.Port > 65535 || n.Host == "" {
				t.Fatalf("node %d addr %q", i, n.Addr())
			}
			prev := -2
			for _, r := range n.Slots {
				if r.Start < 0 || r.End >= Slots || r.Start > r.End || r.Start <= prev+1 {
					t.Fatalf("node %d ranges %v are not ascending, disjoint and merged", i, n.Slots)
				}
				prev = r.End
				for s := r.Start; s <= r.End; s++ {
					if o, ok := m.Owner(s); !ok || o != n {
						t.Fatalf("slot %d is listed by node %d but owned by %v", s, i, o)
					}
				}
			}
			counted += n.SlotCount()
		}
		if counted != m.Assigned() {
			t.Fatalf("nodes list %d slots, Assigned says %d", counted, m.Assigned())
		}
		back, err := Parse(m.Format())
		if err != nil {
			t.Fatalf("Format output does not parse: %v\n%s", err, m.Format())
		}
		if !sameMap(m, back) {
			t.Fatalf("Format round trip changed the map:\n%s", m.Format())
		}
	})
}
