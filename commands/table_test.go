package commands

import (
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
