package tests

// Hostile requests that must neither stall the server nor other clients:
// pathological glob patterns, requests that leave stray bytes buffered,
// and DEBUG, which Redis 7 refuses unless enable-debug-command allows it.

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"
)

// TestKeysWithPathologicalPatternsAnswerAtOnce runs KEYS and SCAN MATCH
// with CVE-2022-36021's patterns over a 40-byte key while a second client
// keeps reading: both must answer within seconds. Before, a backtracking
// matcher ran for hours holding the engine, and every command needing it
// stalled.
func TestKeysWithPathologicalPatternsAnswerAtOnce(t *testing.T) {
	t.Parallel()
	for _, s := range []*server{startKVServer(t), startRedis(t)} {
		t.Run(s.Name, func(t *testing.T) {
			long := strings.Repeat("a", 40)
			c := dialRaw(t, s.Addr)
			expectReply(t, c, "+OK\r\n", "MSET", long, "1", "other", "2")
			noMatch := strings.Repeat("a*", 20) + "b"
			match := strings.Repeat("a*", 20) + "a"
			steps := []struct {
				args []string
				want string
			}{
				{[]string{"KEYS", noMatch}, "*0\r\n"},
				{[]string{"KEYS", strings.Repeat("*a", 30) + "b"}, "*0\r\n"},
				{[]string{"SCAN", "0", "MATCH", noMatch, "COUNT", "100"}, "*2\r\n$1\r\n0\r\n*0\r\n"},
				{[]string{"KEYS", match}, "*1\r\n" + bulk(long)},
			}
			for _, st := range steps {
				done := make(chan struct{})
				go func() {
					defer close(done)
					// The other client is served meanwhile.
					o := dialRaw(t, s.Addr)
					o.Timeout = 5 * time.Second
					for range 3 {
						if raw, err := o.Call("PING"); err != nil || string(raw) != "+PONG\r\n" {
							t.Errorf("PING during %.20q...: %q, %v", st.args, raw, err)
							return
						}
						if raw, err := o.Call("GET", "other"); err != nil || string(raw) != bulk("2") {
							t.Errorf("GET during %.20q...: %q, %v", st.args, raw, err)
							return
						}
					}
				}()
				c.Timeout = 10 * time.Second
				start := time.Now()
				raw, err := c.Call(st.args...)
				took := time.Since(start)
				<-done
				if err != nil || string(raw) != st.want {
					t.Fatalf("%.30q... = %q, %v after %v; want %q", st.args, raw, err, took, st.want)
				}
			}
		})
	}
}

// TestRepliesDoNotWaitForTheClientsNextBytes sends requests that leave
// bytes buffered which are not a whole command: a reply held back until
// the client sends more never comes, as the client waits for it. The
// bytes are Redis 7.0's, which skips the two bytes after a bulk unread
// (so *1 $4 PINGXX is PING, and the CRLF left is an empty inline line).
func TestRepliesDoNotWaitForTheClientsNextBytes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		steps []wireStep
	}{
		{"bulk with two stray bytes before its CRLF", []wireStep{{"*1\r\n$4\r\nPINGXX\r\n", []string{"+PONG\r\n"}}}},
		{"reply then an empty line", []wireStep{{"PING\r\n\r\n", []string{"+PONG\r\n"}}}},
		{"reply then half an inline command", []wireStep{
			{"PING\r\nPI", []string{"+PONG\r\n"}},
			{"NG\r\n", []string{"+PONG\r\n"}},
		}},
		{"reply then half a multibulk", []wireStep{
			{"*1\r\n$4\r\nPING\r\n*2\r\n$4\r\nECHO\r\n", []string{"+PONG\r\n"}},
			{"$2\r\nhi\r\n", []string{bulk("hi")}},
		}},
		{"two replies then a count line", []wireStep{{"PING\r\nECHO x\r\n*3\r\n", []string{"+PONG\r\n", bulk("x")}}}},
	}
	for _, s := range []*server{startKVServer(t), startRedis(t)} {
		for _, tc := range cases {
			t.Run(s.Name+"/"+tc.name, func(t *testing.T) {
				c := dialRaw(t, s.Addr)
				c.Timeout = 3 * time.Second
				for i, st := range tc.steps {
					c.Send([]byte(st.send))
					for _, want := range st.wants {
						raw, err := c.ReadReply()
						if err != nil || string(raw) != want {
							t.Fatalf("step %d: after %q got %q, %v; want %q at once", i, st.send, raw, err, want)
						}
					}
				}
			})
		}
	}
}

// TestModuleLoadFollowsEnableModuleCommand checks Redis 7's
// enable-module-command: MODULE LOAD, LOADEX and UNLOAD are refused by
// default (MODULE LIST is not), the setting is fixed at start, and where it
// allows them they answer as Redis does for a module it cannot load or
// does not have.
func TestModuleLoadFollowsEnableModuleCommand(t *testing.T) {
	t.Parallel()
	const refused = "-ERR MODULE command not allowed. If the enable-module-command option is set to \"local\", " +
		"you can run it from a local connection, otherwise you need to set this option in the configuration file, " +
		"and then restart the server.\r\n"
	c := dialRaw(t, startOwnedServer(t, harnessStops).Addr)
	checkReply(t, c, refused, "MODULE", "LOAD", "/nonexistent/module.so")
	checkReply(t, c, refused, "MODULE", "UNLOAD", "x")
	checkReply(t, c, "*0\r\n", "MODULE", "LIST")
	checkReply(t, c, "-ERR CONFIG SET failed (possibly related to argument 'enable-module-command') - can't set immutable config\r\n",
		"CONFIG", "SET", "enable-module-command", "yes")
	for _, mode := range []string{"yes", "local"} {
		c := dialRaw(t, startOwnedServer(t, harnessStops, "--enable-module-command", mode).Addr)
		checkReply(t, c, "-ERR Error loading the extension. Please check the server logs.\r\n", "MODULE", "LOAD", "/nonexistent/module.so")
		checkReply(t, c, "-ERR Error loading the extension. Please check the server logs.\r\n", "MODULE", "LOADEX", "/nonexistent/module.so", "ARGS", "a")
		checkReply(t, c, "-ERR Error unloading module: no such module with that name\r\n", "MODULE", "UNLOAD", "x")
		checkReply(t, c, "*2\r\n"+bulk("enable-module-command")+bulk(mode), "CONFIG", "GET", "enable-module-command")
	}
}

// TestDebugIsRefusedByDefault checks Redis 7's enable-debug-command: DEBUG
// is refused by default with Redis's exact error (after the arity check,
// before authentication), the setting is fixed at start, and yes or local
// allow it.
func TestDebugIsRefusedByDefault(t *testing.T) {
	t.Parallel()
	const refused = "-ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", " +
		"you can run it from a local connection, otherwise you need to set this option in the configuration file, " +
		"and then restart the server.\r\n"
	def := startOwnedServer(t, harnessStops)
	c := dialRaw(t, def.Addr)
	for _, st := range []struct {
		args []string
		want string
	}{
		{[]string{"DEBUG", "SLEEP", "0"}, refused},
		{[]string{"debug", "log", "x"}, refused},
		{[]string{"DEBUG"}, "-ERR wrong number of arguments for 'debug' command\r\n"},
		{[]string{"CONFIG", "GET", "enable-debug-command"}, "*2\r\n" + bulk("enable-debug-command") + bulk("no")},
		{[]string{"CONFIG", "SET", "enable-debug-command", "yes"},
			"-ERR CONFIG SET failed (possibly related to argument 'enable-debug-command') - can't set immutable config\r\n"},
	} {
		checkReply(t, c, st.want, st.args...)
	}
	withPass := startOwnedServer(t, harnessStops, "--requirepass", "pw")
	checkReply(t, dialRaw(t, withPass.Addr), refused, "DEBUG", "SLEEP", "0")
	for _, mode := range []string{"yes", "local"} {
		s := startOwnedServer(t, harnessStops, "--enable-debug-command", mode)
		c := dialRaw(t, s.Addr)
		checkReply(t, c, "+OK\r\n", "DEBUG", "SLEEP", "0")
		checkReply(t, c, "*2\r\n"+bulk("enable-debug-command")+bulk(mode), "CONFIG", "GET", "enable-debug-command")
	}
	if diffAgainstRedis() {
		return
	}
	name, mkCmd, _ := kvCommand(t, []string{"--enable-debug-command", "sometimes"})
	out, err := mkCmd(freePort(t)).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "enable-debug-command") {
		t.Errorf("%s --enable-debug-command sometimes: %v, output %s; want a refusal naming the setting", name, err, fmt.Sprintf("%.300s", out))
	}
}

// TestConnectionsThatCloseAtOnceLeaveTheServerServing opens connections
// that close (or reset) right after connecting, some after a partial
// command, the way health checks and port scanners do, and checks that
// the server still answers: a connection that failed on its very first
// read was ended twice, and the second end panicked the server.
func TestConnectionsThatCloseAtOnceLeaveTheServerServing(t *testing.T) {
	t.Parallel()
	s := startKVServer(t)
	for i := range 300 {
		conn, err := net.Dial("tcp", s.Addr)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		switch i % 3 {
		case 1:
			conn.Write([]byte("*2\r\n$3\r\nGET"))
		case 2:
			// A reset instead of a FIN.
			conn.(*net.TCPConn).SetLinger(0)
		}
		conn.Close()
	}
	c := dialRaw(t, s.Addr)
	checkReply(t, c, "+PONG\r\n", "PING")
}
