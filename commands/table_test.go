package commands

import (
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestCommandTablesShareNoState builds tables at once from the same specs,
// as two Servers in one process do, and checks that each owns its specs:
// before, NewTable wrote each container's subcommand index into the
// package-level specs (a data race under -race) and every table handed out
// the same pointers.
func TestCommandTablesShareNoState(t *testing.T) {
	const n = 4
	tables := make([]*Table, n)
	var wg sync.WaitGroup
	for i := range tables {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tables[i] = NewTable(Specs())
		}()
	}
	wg.Wait()
	for _, spec := range Specs() {
		if spec.subs != nil {
			t.Errorf("NewTable wrote into the package-level spec of %q", spec.Name)
		}
	}
	for i, a := range tables {
		for _, b := range tables[i+1:] {
			for _, spec := range a.All() {
				other := b.Lookup([]byte(spec.Name))
				if other == nil {
					t.Fatalf("%q is missing from a second table", spec.Name)
				}
				if other == spec {
					t.Fatalf("two tables share the spec of %q", spec.Name)
				}
				for _, sub := range spec.Subcommands {
					_, short, _ := strings.Cut(sub.Name, "|")
					if got := spec.Sub([]byte(short)); got != sub {
						t.Errorf("%s: Sub(%q) does not find the table's own subcommand", spec.Name, short)
					}
					if other.Sub([]byte(short)) == sub {
						t.Errorf("two tables share the subcommand %q", sub.Name)
					}
				}
			}
		}
	}
}

func TestKeyArgsFollowKeyPositions(t *testing.T) {
	tests := []struct {
		cmd  []string
		want []int
	}{
		{[]string{"get", "k"}, []int{1}},
		{[]string{"mset", "a", "1", "b", "2"}, []int{1, 3}},
		{[]string{"mget", "a", "b", "c"}, []int{1, 2, 3}},
		{[]string{"rename", "a", "b"}, []int{1, 2}},
		{[]string{"kvc.pin", "60", "a", "b"}, []int{2, 3}},
		{[]string{"kvc.probe", "a", "b"}, []int{1, 2}},
		{[]string{"kvc.probe", "LEASE", "500", "a", "b"}, []int{3, 4}},
		{[]string{"kvc.probe", "lease", "b"}, nil}, // KVC.PROBE answers a wrong-arity error
		{[]string{"keys", "*"}, nil},
		{[]string{"flushall"}, nil},
	}
	table := NewTable(Specs())
	for _, tt := range tests {
		args := make([][]byte, len(tt.cmd))
		for i, a := range tt.cmd {
			args[i] = []byte(a)
		}
		if got := table.Lookup(args[0]).Keys(args); !slices.Equal(got, tt.want) {
			t.Errorf("Keys(%q) = %v, want %v", tt.cmd, got, tt.want)
		}
	}
}
