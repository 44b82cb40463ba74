package tests

import (
	"strings"
	"testing"
)

// TestClientListCmdMatchesRedis: CLIENT LIST's cmd= is the command the
// client sent last as Redis's lookup found it, set before any check: NULL
// after an unknown command or subcommand, the command after an arity
// error, and a queued command inside MULTI.
func TestClientListCmdMatchesRedis(t *testing.T) {
	t.Parallel()
	steps := []struct {
		what string
		cmd  []string
	}{
		{"unknown", []string{"NOSUCH", "x"}},
		{"arity", []string{"GET"}},
		{"unknown subcommand", []string{"CONFIG", "NOSUCH"}},
		{"container arity", []string{"CONFIG"}},
		{"multi", []string{"MULTI"}},
		{"queued", []string{"SET", "k", "v"}},
		{"queued arity error", []string{"SET", "k"}},
		{"discard", []string{"DISCARD"}},
		{"subcommand", []string{"OBJECT", "ENCODING", "k"}},
	}
	results := map[string][]string{}
	for name, s := range map[string]*server{"redis": startRedis(t), "kvserver": startKVServer(t)} {
		watched, watcher := dialRaw(t, s.Addr), dialRaw(t, s.Addr)
		expectReply(t, watched, "+OK\r\n", "CLIENT", "SETNAME", "watched")
		for _, st := range steps {
			if _, err := watched.Call(st.cmd...); err != nil {
				t.Fatal(err)
			}
			raw, err := watcher.Call("CLIENT", "LIST")
			if err != nil {
				t.Fatal(err)
			}
			var cmd string
			for _, line := range strings.Split(string(raw), "\n") {
				if !strings.Contains(line, " name=watched ") {
					continue
				}
				for _, f := range strings.Fields(line) {
					if strings.HasPrefix(f, "cmd=") {
						cmd = f
					}
				}
			}
			results[name] = append(results[name], st.what+": "+cmd)
		}
	}
	for i := range steps {
		if got, want := results["kvserver"][i], results["redis"][i]; got != want {
			t.Errorf("kvserver %q, redis-server %q", got, want)
		}
	}
}
