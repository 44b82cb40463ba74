package server

import (
	"strings"
	"sync"
	"testing"
)

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
