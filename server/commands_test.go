package server

import (
	"strings"
	"sync"
	"testing"
)

// TestCommandTablesShareNoState builds tables at once from the same specs,
// as two Servers in one process do, and checks that each owns its specs:
// before, NewCommandTable wrote each container's subcommand index into the
// package-level specs (a data race under -race) and every table handed out
// the same pointers.
func TestCommandTablesShareNoState(t *testing.T) {
	const n = 4
	tables := make([]*CommandTable, n)
	var wg sync.WaitGroup
	for i := range tables {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tables[i] = NewCommandTable(commandTable)
		}()
	}
	wg.Wait()
	for _, spec := range commandTable {
		if spec.subs != nil {
			t.Errorf("NewCommandTable wrote into the package-level spec of %q", spec.Name)
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

// TestTwoServersInOneProcess starts two Servers at once, one with renamed
// commands and a restricted user, and runs the same commands on both: each
// keeps its own names and ACLs, and COMMAND, CONFIG and ACL subcommands
// (which go through the tables' subcommand indexes) work on both.
func TestTwoServersInOneProcess(t *testing.T) {
	var wg sync.WaitGroup
	servers := make([]*adminServer, 2)
	opts := []Options{
		{RenameCommands: map[string]string{"config": "cfg_a", "flushall": ""}, Users: []string{"reader on nopass ~* +@read"}},
		{},
	}
	for i := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			servers[i] = startAdminServer(t, opts[i])
		}()
	}
	wg.Wait()
	a, b := servers[0].dial(t), servers[1].dial(t)
	checks := []struct {
		c    *adminConn
		args []string
		want string
	}{
		{a, []string{"CFG_A", "GET", "maxclients"}, "*2\r\n$10\r\nmaxclients\r\n"},
		{a, []string{"CONFIG", "GET", "maxclients"}, "-ERR unknown command 'CONFIG'"},
		{b, []string{"CONFIG", "GET", "maxclients"}, "*2\r\n$10\r\nmaxclients\r\n"},
		{b, []string{"CFG_A", "GET", "maxclients"}, "-ERR unknown command 'CFG_A'"},
		{a, []string{"FLUSHALL"}, "-ERR unknown command 'FLUSHALL'"},
		{b, []string{"FLUSHALL"}, "+OK\r\n"},
		{a, []string{"ACL", "DRYRUN", "reader", "GET", "k"}, "+OK\r\n"},
		{a, []string{"ACL", "DRYRUN", "reader", "SET", "k", "v"}, "$53\r\nThis user has no permissions to run the 'set' command\r\n"},
		{b, []string{"ACL", "DRYRUN", "reader", "GET", "k"}, "-ERR User 'reader' not found\r\n"},
		{a, []string{"COMMAND", "COUNT"}, ":"},
		{b, []string{"CLIENT", "ID"}, ":"},
	}
	for _, ch := range checks {
		if got := ch.c.do(ch.args...); !strings.HasPrefix(got, ch.want) {
			t.Errorf("%q = %q, want %q...", ch.args, got, ch.want)
		}
	}
}
