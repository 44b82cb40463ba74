package server

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kvserver/kvserver/commands"
	"github.com/kvserver/kvserver/config"
	"github.com/kvserver/kvserver/engine"
)

// adminServer is a real Server with a real engine on a loopback listener,
// for the connection and server families' tests.
type adminServer struct {
	srv     *Server
	eng     *engine.Engine
	addr    string
	stopped chan struct{}
	err     error // what Serve returned, once stopped is closed
}

func startAdminServer(t testing.TB, opts Options) *adminServer {
	t.Helper()
	eng := engine.New(engine.Options{})
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	srv := New(eng, opts)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	as := &adminServer{srv: srv, eng: eng, addr: ln.Addr().String(), stopped: make(chan struct{})}
	go func() {
		as.err = srv.Serve(ctx, ln)
		close(as.stopped)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-as.stopped:
		case <-time.After(5 * time.Second):
			t.Error("Serve did not return after cancel")
		}
	})
	return as
}

// adminConn speaks raw RESP to an adminServer and returns raw replies.
type adminConn struct {
	t    testing.TB
	conn net.Conn
	rd   *bufio.Reader
}

func (as *adminServer) dial(t testing.TB) *adminConn {
	t.Helper()
	conn, err := net.Dial("tcp", as.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &adminConn{t: t, conn: conn, rd: bufio.NewReader(conn)}
}

// send writes one command without reading its reply.
func (ac *adminConn) send(args ...string) {
	ac.t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := io.WriteString(ac.conn, b.String()); err != nil {
		ac.t.Fatalf("send %q: %v", args, err)
	}
}

// do sends a command and returns its raw reply.
func (ac *adminConn) do(args ...string) string {
	ac.t.Helper()
	ac.send(args...)
	reply, err := ac.reply()
	if err != nil {
		ac.t.Fatalf("%q: reading reply: %v", args, err)
	}
	return reply
}

// reply reads one complete RESP2 or RESP3 reply, raw.
func (ac *adminConn) reply() (string, error) {
	ac.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := ac.rd.ReadString('\n')
	if err != nil {
		return line, err
	}
	out := line
	n, _ := strconv.Atoi(strings.TrimSuffix(line[1:], "\r\n"))
	switch line[0] {
	case '$', '=', '!':
		if n >= 0 {
			buf := make([]byte, n+2)
			if _, err := io.ReadFull(ac.rd, buf); err != nil {
				return out, err
			}
			out += string(buf)
		}
	case '*', '~', '>', '%', '|':
		if line[0] == '%' || line[0] == '|' {
			n *= 2
		}
		for range max(n, 0) {
			e, err := ac.reply()
			out += e
			if err != nil {
				return out, err
			}
		}
	}
	return out, nil
}

// closedByServer reports whether the server closed the connection: the
// next read sees EOF (or a reset) rather than a timeout.
func (ac *adminConn) closedByServer(wait time.Duration) bool {
	ac.conn.SetReadDeadline(time.Now().Add(wait))
	_, err := ac.rd.ReadByte()
	var ne net.Error
	return err != nil && !(errors.As(err, &ne) && ne.Timeout())
}

func bulk(s string) string { return "$" + strconv.Itoa(len(s)) + "\r\n" + s + "\r\n" }

// verbatimBody returns the text of a RESP2 bulk or RESP3 verbatim reply.
func verbatimBody(t *testing.T, reply string) string {
	t.Helper()
	_, body, ok := strings.Cut(reply, "\r\n")
	if !ok || (reply[0] != '$' && reply[0] != '=') {
		t.Fatalf("not a bulk or verbatim reply: %q", reply)
	}
	body = strings.TrimSuffix(body, "\r\n")
	if reply[0] == '=' {
		body = strings.TrimPrefix(body, "txt:")
	}
	return body
}

// infoFields parses INFO text into section titles and field values.
func infoFields(text string) (sections []string, fields map[string]string) {
	fields = make(map[string]string)
	for _, line := range strings.Split(text, "\r\n") {
		if title, ok := strings.CutPrefix(line, "# "); ok {
			sections = append(sections, title)
		} else if k, v, ok := strings.Cut(line, ":"); ok {
			fields[k] = v
		}
	}
	return sections, fields
}

func TestInfoPrintsRedisSectionsWithCRLF(t *testing.T) {
	as := startAdminServer(t, Options{Port: 6390, MaxClients: 77})
	c := as.dial(t)
	c.do("SET", "k", "v")
	c.do("SELECT", "3")
	c.do("SET", "a", "1")
	c.do("SET", "b", "1", "EX", "100")

	cases := []struct {
		name     string
		args     []string
		sections []string
	}{
		{"default", []string{"INFO"}, []string{"Server", "Clients", "Memory", "Persistence", "Stats", "Replication", "CPU", "Modules", "Errorstats", "Cluster", "Keyspace", "Kvserver", "Tiers", "Kvcache"}},
		{"all", []string{"INFO", "all"}, []string{"Server", "Clients", "Memory", "Persistence", "Stats", "Replication", "CPU", "Modules", "Commandstats", "Errorstats", "Latencystats", "Cluster", "Keyspace", "Kvserver", "Tiers", "Kvcache"}},
		{"one section, any case", []string{"INFO", "KeySpace"}, []string{"Keyspace"}},
		{"fixed order, no repeats", []string{"INFO", "replication", "server", "SERVER"}, []string{"Server", "Replication"}},
		{"unknown section", []string{"INFO", "nosuchsection"}, nil},
		{"not in default", []string{"INFO", "commandstats", "latencystats"}, []string{"Commandstats", "Latencystats"}},
		{"kvserver's own", []string{"INFO", "kvserver"}, []string{"Kvserver"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			text := verbatimBody(t, c.do(tc.args...))
			if text != "" && !strings.HasSuffix(text, "\r\n") {
				t.Errorf("INFO text does not end with CRLF: %q", text)
			}
			if strings.Contains(strings.ReplaceAll(text, "\r\n", ""), "\n") {
				t.Errorf("bare newline in INFO text")
			}
			got, _ := infoFields(text)
			if !slices.Equal(got, tc.sections) {
				t.Errorf("sections = %v, want %v", got, tc.sections)
			}
		})
	}

	_, f := infoFields(verbatimBody(t, c.do("INFO", "everything")))
	want := map[string]string{
		"redis_version":     commands.RedisCompatVersion,
		"redis_mode":        "standalone",
		"tcp_port":          "6390",
		"maxclients":        "77",
		"connected_clients": "1",
		"role":              "master",
		"connected_slaves":  "0",
		"cluster_enabled":   "0",
		"loading":           "0",
		"maxmemory_policy":  "allkeys-lru",
		"db0":               "keys=1,expires=0,avg_ttl=0",
		"db3":               "keys=2,expires=1,avg_ttl=0",
		"kvserver_version":  commands.Version,
		"process_id":        strconv.Itoa(os.Getpid()),
	}
	for k, v := range want {
		if f[k] != v {
			t.Errorf("%s = %q, want %q", k, f[k], v)
		}
	}
	for _, k := range []string{"used_memory", "used_memory_rss", "used_memory_peak", "maxmemory", "master_repl_offset", "total_commands_processed", "total_net_input_bytes", "uptime_in_seconds", "used_cpu_user", "rdb_last_save_time"} {
		if _, err := strconv.ParseFloat(f[k], 64); err != nil {
			t.Errorf("%s = %q, want a number", k, f[k])
		}
	}
	if used, _ := strconv.ParseInt(f["used_memory"], 10, 64); used != as.eng.Stats().UsedMemory || used == 0 {
		t.Errorf("used_memory = %d, want the engine's %d", used, as.eng.Stats().UsedMemory)
	}
	if _, ok := f["db1"]; ok {
		t.Error("INFO keyspace lists an empty database")
	}
	if len(f["master_replid"]) != 40 || len(f["run_id"]) != 40 {
		t.Errorf("master_replid %q, run_id %q: want 40 hex digits", f["master_replid"], f["run_id"])
	}

	c.do("HELLO", "3")
	if r := c.do("INFO", "cluster"); r != "=34\r\ntxt:# Cluster\r\ncluster_enabled:0\r\n\r\n" {
		t.Errorf("RESP3 INFO cluster = %q, want a verbatim string", r)
	}
	if r := c.do("INFO", "nosuchsection"); r != "=4\r\ntxt:\r\n" {
		t.Errorf("RESP3 INFO of an unknown section = %q", r)
	}
}

func TestInfoErrorstatsCountsErrorCodes(t *testing.T) {
	as := startAdminServer(t, Options{RequirePass: "pw", EnableDebugCommand: "local"})
	c := as.dial(t)
	c.do("GET", "k")               // NOAUTH
	c.do("AUTH", "default", "bad") // WRONGPASS
	c.do("AUTH", "pw")
	c.do("NOSUCHCOMMAND") // ERR
	c.do("GET")           // ERR (arity)
	c.do("CONFIG", "SET", "maxmemory", "x")
	c.do("DEBUG", "ERROR", "MYCODE something failed")

	_, f := infoFields(verbatimBody(t, c.do("INFO", "errorstats", "stats")))
	want := map[string]string{
		"errorstat_ERR":       "count=3",
		"errorstat_NOAUTH":    "count=1",
		"errorstat_WRONGPASS": "count=1",
		"errorstat_MYCODE":    "count=1",
		"total_error_replies": "6",
	}
	for k, v := range want {
		if f[k] != v {
			t.Errorf("%s = %q, want %q", k, f[k], v)
		}
	}
	text := verbatimBody(t, c.do("INFO", "errorstats"))
	if want := "# Errorstats\r\nerrorstat_ERR:count=3\r\nerrorstat_MYCODE:count=1\r\nerrorstat_NOAUTH:count=1\r\nerrorstat_WRONGPASS:count=1\r\n"; text != want {
		t.Errorf("errorstats are not sorted by code:\n%q\nwant\n%q", text, want)
	}

	if r := c.do("CONFIG", "RESETSTAT"); r != "+OK\r\n" {
		t.Fatalf("CONFIG RESETSTAT = %q", r)
	}
	_, f = infoFields(verbatimBody(t, c.do("INFO", "errorstats", "stats")))
	if _, ok := f["errorstat_ERR"]; ok || f["total_error_replies"] != "0" || f["total_commands_processed"] != "1" {
		t.Errorf("after RESETSTAT: errorstat_ERR %q, total_error_replies %q, total_commands_processed %q",
			f["errorstat_ERR"], f["total_error_replies"], f["total_commands_processed"])
	}
}

func TestConfigGetAndSetFollowRedis(t *testing.T) {
	dir := t.TempDir()
	as := startAdminServer(t, Options{Port: 7000, Bind: "127.0.0.1", Dir: dir, MaxClients: 100})
	c := as.dial(t)
	pairs := func(kv ...string) string {
		out := "*" + strconv.Itoa(len(kv)) + "\r\n"
		for _, s := range kv {
			out += bulk(s)
		}
		return out
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"CONFIG", "GET", "maxmemory"}, pairs("maxmemory", "0")},
		{[]string{"CONFIG", "GET", "MAXMEMORY"}, pairs("MAXMEMORY", "0")},
		{[]string{"CONFIG", "GET", "MAXMEMORY", "maxmemory"}, pairs("MAXMEMORY", "0")},
		{[]string{"CONFIG", "GET", "nosuch"}, "*0\r\n"},
		{[]string{"CONFIG", "GET", "MAX*"}, pairs("maxmemory", "0", "maxmemory-policy", "allkeys-lru", "maxmemory-samples", "5", "maxclients", "100", "max-lease-ms", "60000")},
		{[]string{"CONFIG", "GET", "port", "bind", "dir", "databases"}, pairs("port", "7000", "bind", "127.0.0.1", "dir", dir, "databases", "16")},
		{[]string{"CONFIG", "GET", "save", "appendonly", "timeout", "requirepass", "proto-max-bulk-len", "lazyfree-lazy-user-flush"},
			pairs("save", "", "appendonly", "no", "timeout", "0", "requirepass", "", "proto-max-bulk-len", "536870912", "lazyfree-lazy-user-flush", "no")},

		{[]string{"CONFIG", "SET", "foo", "1"}, "-ERR Unknown option or number of arguments for CONFIG SET - 'foo'\r\n"},
		{[]string{"CONFIG", "SET", "maxmemory", "1", "foo"}, "-ERR syntax error\r\n"},
		{[]string{"CONFIG", "SET", "maxmemory", "abc"}, "-ERR CONFIG SET failed (possibly related to argument 'maxmemory') - argument must be a memory value\r\n"},
		{[]string{"CONFIG", "SET", "maxmemory", "-1"}, "-ERR CONFIG SET failed (possibly related to argument 'maxmemory') - argument must be a memory value\r\n"},
		{[]string{"CONFIG", "SET", "maxmemory", "1.5gb"}, "-ERR CONFIG SET failed (possibly related to argument 'maxmemory') - argument must be a memory value\r\n"},
		{[]string{"CONFIG", "SET", "Databases", "3"}, "-ERR CONFIG SET failed (possibly related to argument 'Databases') - can't set immutable config\r\n"},
		{[]string{"CONFIG", "SET", "port", "1"}, "-ERR CONFIG SET failed (possibly related to argument 'port') - can't set immutable config\r\n"},
		{[]string{"CONFIG", "SET", "MAXCLIENTS", "x"}, "-ERR CONFIG SET failed (possibly related to argument 'maxclients') - argument couldn't be parsed into an integer\r\n"},
		{[]string{"CONFIG", "SET", "maxclients", "+5"}, "-ERR CONFIG SET failed (possibly related to argument 'maxclients') - argument couldn't be parsed into an integer\r\n"},
		{[]string{"CONFIG", "SET", "maxclients", "0"}, "-ERR CONFIG SET failed (possibly related to argument 'maxclients') - argument must be between 1 and 4294967295 inclusive\r\n"},
		{[]string{"CONFIG", "SET", "timeout", "-1"}, "-ERR CONFIG SET failed (possibly related to argument 'timeout') - argument must be between 0 and 2147483647 inclusive\r\n"},
		{[]string{"CONFIG", "SET", "proto-max-bulk-len", "10"}, "-ERR CONFIG SET failed (possibly related to argument 'proto-max-bulk-len') - argument must be between 1048576 and 9223372036854775807 inclusive\r\n"},
		{[]string{"CONFIG", "SET", "timeout", "x", "timeout", "5"}, "-ERR CONFIG SET failed (possibly related to argument 'timeout') - duplicate parameter\r\n"},
		{[]string{"CONFIG", "SET", "maxmemory-policy", "volatile-ttl"}, "-ERR CONFIG SET failed (possibly related to argument 'maxmemory-policy') - argument(s) must be one of the following: volatile-lru, volatile-lfu, allkeys-lru, allkeys-lfu, noeviction\r\n"},
		{[]string{"CONFIG", "SET", "appendonly", "yes"}, "-ERR CONFIG SET failed (possibly related to argument 'appendonly') - argument(s) must be one of the following: no\r\n"},
		// A failing value leaves the valid ones before it unapplied.
		{[]string{"CONFIG", "SET", "maxmemory", "5mb", "timeout", "x"}, "-ERR CONFIG SET failed (possibly related to argument 'timeout') - argument couldn't be parsed into an integer\r\n"},
		{[]string{"CONFIG", "GET", "maxmemory"}, pairs("maxmemory", "0")},

		{[]string{"CONFIG", "SET", "maxmemory", "10MB", "timeout", "30"}, "+OK\r\n"},
		{[]string{"CONFIG", "GET", "maxmemory", "timeout"}, pairs("maxmemory", "10485760", "timeout", "30")},
		{[]string{"CONFIG", "SET", "save", "", "appendonly", "NO", "maxmemory-policy", "ALLKEYS-LRU"}, "+OK\r\n"},
		{[]string{"CONFIG", "SET", "maxmemory", ""}, "+OK\r\n"},
		{[]string{"CONFIG", "SET", "timeout", "0"}, "+OK\r\n"},
		{[]string{"CONFIG", "REWRITE"}, "-ERR The server is running without a config file\r\n"},
		{[]string{"CONFIG", "FOO"}, "-ERR unknown subcommand 'FOO'. Try CONFIG HELP.\r\n"},
		{[]string{"CONFIG", "SET", "maxmemory"}, "-ERR wrong number of arguments for 'config|set' command\r\n"},
	}
	for _, tc := range cases {
		if got := c.do(tc.args...); got != tc.want {
			t.Errorf("%q:\n got %q\nwant %q", tc.args, got, tc.want)
		}
	}

	c.do("HELLO", "3")
	if got, want := c.do("CONFIG", "GET", "maxclients"), "%1\r\n$10\r\nmaxclients\r\n$3\r\n100\r\n"; got != want {
		t.Errorf("RESP3 CONFIG GET = %q, want the map %q", got, want)
	}
	help := c.do("CONFIG", "HELP")
	if !strings.HasPrefix(help, "*11\r\n+CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n+GET <pattern>\r\n") {
		t.Errorf("CONFIG HELP = %q", help)
	}
}

func TestConfigSetChangesTheRunningServer(t *testing.T) {
	as := startAdminServer(t, Options{MaxClients: 100})
	c := as.dial(t)

	t.Run("maxmemory reaches the engine", func(t *testing.T) {
		c.do("CONFIG", "SET", "maxmemory", "64mb")
		if got := as.eng.MaxMemory(); got != 64<<20 {
			t.Errorf("engine MaxMemory = %d, want %d", got, 64<<20)
		}
		_, f := infoFields(verbatimBody(t, c.do("INFO", "memory")))
		if f["maxmemory"] != "67108864" || f["maxmemory_human"] != "64.00M" {
			t.Errorf("INFO maxmemory %q (%q)", f["maxmemory"], f["maxmemory_human"])
		}
		c.do("CONFIG", "SET", "maxmemory", "0")
	})
	t.Run("proto-max-bulk-len bounds requests", func(t *testing.T) {
		c.do("CONFIG", "SET", "proto-max-bulk-len", "1mb")
		big := as.dial(t)
		// The header is enough: the length is refused before the body.
		io.WriteString(big.conn, "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1048577\r\n")
		if r, _ := big.reply(); !strings.HasPrefix(r, "-ERR Protocol error: invalid bulk length") {
			t.Errorf("bulk over proto-max-bulk-len: %q", r)
		}
		c.do("CONFIG", "SET", "proto-max-bulk-len", "512mb")
	})
	t.Run("maxclients refuses connections", func(t *testing.T) {
		c.do("CONFIG", "SET", "maxclients", "1")
		extra := as.dial(t)
		if r, _ := extra.reply(); r != "-ERR max number of clients reached\r\n" {
			t.Errorf("connection over maxclients got %q", r)
		}
		c.do("CONFIG", "SET", "maxclients", "100")
	})
	t.Run("requirepass applies to new connections", func(t *testing.T) {
		c.do("CONFIG", "SET", "requirepass", "s3cret")
		other := as.dial(t)
		if r := other.do("PING"); r != "-NOAUTH Authentication required.\r\n" {
			t.Errorf("PING without AUTH = %q", r)
		}
		if r := other.do("AUTH", "s3cret"); r != "+OK\r\n" {
			t.Errorf("AUTH = %q", r)
		}
		if r := c.do("PING"); r != "+PONG\r\n" {
			t.Errorf("a connection authenticated before the change: PING = %q", r)
		}
		c.do("CONFIG", "SET", "requirepass", "")
	})
	t.Run("timeout closes idle clients", func(t *testing.T) {
		idle := as.dial(t)
		idle.do("PING")
		c.do("CONFIG", "SET", "timeout", "1")
		idle.do("PING") // arms the deadline for the next read
		if !idle.closedByServer(3 * time.Second) {
			t.Error("idle client still connected after timeout")
		}
		// c has been idle as long, so the setting is undone from a new
		// connection.
		if r := as.dial(t).do("CONFIG", "SET", "timeout", "0"); r != "+OK\r\n" {
			t.Errorf("CONFIG SET timeout 0 = %q", r)
		}
	})
}

func TestConfigRewriteKeepsTheFileAndWritesSettings(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "kvserver.yaml")
	orig := "# my settings\nport: 7001\n\n# memory\nmaxmemory: 1gb   # comment dropped\nmetrics-port: 0\nlog-level: debug\nmaxmemory: 2gb\n"
	if err := os.WriteFile(path, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	as := startAdminServer(t, Options{Port: 7001, Bind: "127.0.0.1", Dir: dir, ConfigFile: path, MaxClients: 50})
	c := as.dial(t)
	for _, args := range [][]string{
		{"CONFIG", "SET", "maxmemory", "256mb", "requirepass", `pa"ss`},
		{"AUTH", `pa"ss`},
		{"CONFIG", "SET", "proto-max-bulk-len", "1048577"},
		{"CONFIG", "REWRITE"},
	} {
		if r := c.do(args...); r != "+OK\r\n" {
			t.Fatalf("%q = %q", args, r)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := "# my settings\nport: 7001\n\n# memory\nmaxmemory: 256mb\nmetrics-port: 0\nlog-level: debug\n" +
		"\n# Generated by CONFIG REWRITE\n" +
		"bind: 127.0.0.1\ndir: " + dir + "\n" + `requirepass: "pa\"ss"` + "\n" +
		"proto-max-bulk-len: 1048577\nmaxclients: 50\ndatabases: 16\n"
	if string(got) != want {
		t.Errorf("rewritten file:\n%s\nwant:\n%s", got, want)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("file mode after rewrite: %v, %v", fi.Mode(), err)
	}
	cfg, err := config.Load([]string{"--config", path}, nil)
	if err != nil {
		t.Fatalf("rewritten file does not load: %v", err)
	}
	if cfg.MaxMemory != 256<<20 || cfg.RequirePass != `pa"ss` || cfg.ProtoMaxBulkLen != 1048577 || cfg.LogLevel != "debug" {
		t.Errorf("loaded back: %+v", cfg)
	}

	t.Run("missing file is created", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "new.yaml")
		as := startAdminServer(t, Options{Port: 7002, Bind: "0.0.0.0", Dir: "/var/lib/kv data", ConfigFile: path})
		if r := as.dial(t).do("CONFIG", "REWRITE"); r != "+OK\r\n" {
			t.Fatalf("CONFIG REWRITE = %q", r)
		}
		cfg, err := config.Load([]string{"--config", path}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Port != 7002 || cfg.Bind != "0.0.0.0" || cfg.Dir != "/var/lib/kv data" || cfg.MaxClients != 10000 {
			t.Errorf("loaded back: %+v", cfg)
		}
	})
}

// Replies captured from redis-server 7.0.15.
const (
	redisInfoGet = "*1\r\n*10\r\n$3\r\nget\r\n:2\r\n*2\r\n+readonly\r\n+fast\r\n:1\r\n:1\r\n:1\r\n*3\r\n+@read\r\n+@string\r\n+@fast\r\n*0\r\n" +
		"*1\r\n*6\r\n$5\r\nflags\r\n*2\r\n+RO\r\n+access\r\n$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n*2\r\n$5\r\nindex\r\n:1\r\n" +
		"$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n*6\r\n$7\r\nlastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n*0\r\n"
	redisInfoGetRESP3 = "*1\r\n*10\r\n$3\r\nget\r\n:2\r\n~2\r\n+readonly\r\n+fast\r\n:1\r\n:1\r\n:1\r\n~3\r\n+@read\r\n+@string\r\n+@fast\r\n~0\r\n" +
		"~1\r\n%3\r\n$5\r\nflags\r\n~2\r\n+RO\r\n+access\r\n$12\r\nbegin_search\r\n%2\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n%1\r\n$5\r\nindex\r\n:1\r\n" +
		"$9\r\nfind_keys\r\n%2\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n%3\r\n$7\r\nlastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n~0\r\n"
	redisDocsGet = "*2\r\n$3\r\nget\r\n*10\r\n$7\r\nsummary\r\n$22\r\nGet the value of a key\r\n$5\r\nsince\r\n$5\r\n1.0.0\r\n$5\r\ngroup\r\n$6\r\nstring\r\n" +
		"$10\r\ncomplexity\r\n$4\r\nO(1)\r\n$9\r\narguments\r\n*1\r\n*6\r\n$4\r\nname\r\n$3\r\nkey\r\n$4\r\ntype\r\n$3\r\nkey\r\n$14\r\nkey_spec_index\r\n:0\r\n"
	redisInfoClientList = "*1\r\n*10\r\n$11\r\nclient|list\r\n:-2\r\n*4\r\n+admin\r\n+noscript\r\n+loading\r\n+stale\r\n:0\r\n:0\r\n:0\r\n" +
		"*4\r\n+@admin\r\n+@slow\r\n+@dangerous\r\n+@connection\r\n*1\r\n$23\r\nnondeterministic_output\r\n*0\r\n*0\r\n"
)

func TestCommandRepliesMatchRedis(t *testing.T) {
	as := startAdminServer(t, Options{})
	c := as.dial(t)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"COMMAND", "INFO", "get"}, redisInfoGet},
		{[]string{"COMMAND", "INFO", "GET"}, redisInfoGet},
		{[]string{"COMMAND", "INFO", "CLIENT|LIST"}, redisInfoClientList},
		{[]string{"COMMAND", "INFO", "nosuch", "get"}, "*2\r\n$-1\r\n" + strings.TrimPrefix(redisInfoGet, "*1\r\n")},
		{[]string{"COMMAND", "INFO", "get|x"}, "*1\r\n$-1\r\n"},
		{[]string{"COMMAND", "DOCS", "get"}, redisDocsGet},
		{[]string{"COMMAND", "DOCS", "nosuch"}, "*0\r\n"},
		{[]string{"COMMAND", "COUNT"}, ":" + strconv.Itoa(len(commands.Specs())) + "\r\n"},
		{[]string{"COMMAND", "GETKEYS", "mset", "a", "b", "c", "d"}, "*2\r\n$1\r\na\r\n$1\r\nc\r\n"},
		{[]string{"COMMAND", "GETKEYS", "mset", "a", "b", "c"}, "*2\r\n$1\r\na\r\n$1\r\nc\r\n"},
		{[]string{"COMMAND", "GETKEYS", "rename", "a", "b"}, "*2\r\n$1\r\na\r\n$1\r\nb\r\n"},
		{[]string{"COMMAND", "GETKEYS", "set", "k", "v", "EX", "10"}, "*1\r\n$1\r\nk\r\n"},
		{[]string{"COMMAND", "GETKEYS", "nosuch", "a"}, "-ERR Invalid command specified\r\n"},
		{[]string{"COMMAND", "GETKEYS", "client", "nosuch"}, "-ERR Invalid command specified\r\n"},
		{[]string{"COMMAND", "GETKEYS", "ping", "a", "b"}, "-ERR The command has no key arguments\r\n"},
		{[]string{"COMMAND", "GETKEYS", "get", "a", "b"}, "-ERR Invalid number of arguments specified for command\r\n"},
		{[]string{"COMMAND", "GETKEYS", "get"}, "-ERR wrong number of arguments for 'command|getkeys' command\r\n"},
		{[]string{"COMMAND", "LIST", "FILTERBY", "PATTERN", "CONFIG|*"}, "*5\r\n" + bulk("config|resetstat") + bulk("config|rewrite") + bulk("config|help") + bulk("config|get") + bulk("config|set")},
		{[]string{"COMMAND", "LIST", "FILTERBY", "MODULE", "x"}, "*0\r\n"},
		{[]string{"COMMAND", "LIST", "FILTERBY", "ACLCAT", "nosuch"}, "*0\r\n"},
		{[]string{"COMMAND", "LIST", "FILTERBY", "foo", "x"}, "-ERR syntax error\r\n"},
		{[]string{"COMMAND", "LIST", "FILTERBY"}, "-ERR syntax error\r\n"},
		{[]string{"COMMAND", "LIST", "foo"}, "-ERR syntax error\r\n"},
	}
	for _, tc := range cases {
		if got := c.do(tc.args...); got != tc.want {
			t.Errorf("%q:\n got %q\nwant %q", tc.args, got, tc.want)
		}
	}

	list := c.do("COMMAND", "LIST")
	for _, name := range []string{"get", "client", "client|setinfo", "command|getkeys"} {
		if !strings.Contains(list, bulk(name)) {
			t.Errorf("COMMAND LIST lacks %s", name)
		}
	}
	stringCmds := c.do("COMMAND", "LIST", "FILTERBY", "ACLCAT", "STRING")
	if !strings.Contains(stringCmds, bulk("get")) || strings.Contains(stringCmds, bulk("ping")) {
		t.Errorf("COMMAND LIST FILTERBY ACLCAT string = %q", stringCmds)
	}

	all := c.do("COMMAND")
	if !strings.HasPrefix(all, "*"+strconv.Itoa(len(commands.Specs()))+"\r\n") || !strings.Contains(all, strings.TrimPrefix(redisInfoGet, "*1\r\n")) {
		t.Errorf("COMMAND: %.200q", all)
	}
	if got := c.do("COMMAND", "INFO"); got != all {
		t.Error("COMMAND INFO without names differs from COMMAND")
	}
	// Our own subcommands are described too, and containers list ours.
	setinfo := c.do("COMMAND", "INFO", "client|setinfo")
	if !strings.Contains(setinfo, "+@connection\r\n") || !strings.HasPrefix(setinfo, "*1\r\n*10\r\n$14\r\nclient|setinfo\r\n:4\r\n") {
		t.Errorf("COMMAND INFO client|setinfo = %q", setinfo)
	}
	if docs := c.do("COMMAND", "DOCS", "client"); !strings.Contains(docs, bulk("client|maint_notifications")) {
		t.Errorf("COMMAND DOCS client lacks our subcommand: %.300q", docs)
	}

	c.do("HELLO", "3")
	if got := c.do("COMMAND", "INFO", "get"); got != redisInfoGetRESP3 {
		t.Errorf("RESP3 COMMAND INFO get:\n got %q\nwant %q", got, redisInfoGetRESP3)
	}
	if got := c.do("COMMAND", "INFO", "nosuch"); got != "*1\r\n_\r\n" {
		t.Errorf("RESP3 COMMAND INFO nosuch = %q", got)
	}
	if got := c.do("COMMAND", "DOCS", "get"); !strings.HasPrefix(got, "%1\r\n$3\r\nget\r\n%5\r\n$7\r\nsummary\r\n") {
		t.Errorf("RESP3 COMMAND DOCS get = %q", got)
	}
}

// TestCommandRepliesMatchLiveRedis compares COMMAND INFO and COMMAND DOCS
// byte for byte with a running redis-server 7.0 for every command and
// subcommand both have (containers excepted: their subcommand lists
// differ). It runs when KVSERVER_TEST_REDIS_ADDR names one.
func TestCommandRepliesMatchLiveRedis(t *testing.T) {
	addr := os.Getenv("KVSERVER_TEST_REDIS_ADDR")
	if addr == "" {
		t.Skip("set KVSERVER_TEST_REDIS_ADDR to a redis-server 7.0 address")
	}
	as := startAdminServer(t, Options{})
	redis := &adminServer{addr: addr}
	for _, proto := range []string{"2", "3"} {
		ours, theirs := as.dial(t), redis.dial(t)
		ours.do("HELLO", proto)
		theirs.do("HELLO", proto)
		var walk func(specs []*commands.Spec)
		walk = func(specs []*commands.Spec) {
			for _, spec := range specs {
				walk(spec.Subcommands)
				if len(spec.Subcommands) > 0 || !commands.RedisHas(spec.Name) {
					continue
				}
				for _, sub := range []string{"INFO", "DOCS"} {
					if got, want := ours.do("COMMAND", sub, spec.Name), theirs.do("COMMAND", sub, spec.Name); got != want {
						t.Errorf("RESP%s COMMAND %s %s:\n got %q\nwant %q", proto, sub, spec.Name, got, want)
					}
				}
			}
		}
		walk(commands.Specs())
	}
}

func TestTimeLastsaveSaveBgsave(t *testing.T) {
	as := startAdminServer(t, Options{})
	c := as.dial(t)
	reply := c.do("TIME")
	m := regexp.MustCompile(`^\*2\r\n\$\d+\r\n(\d+)\r\n\$\d+\r\n(\d+)\r\n$`).FindStringSubmatch(reply)
	if m == nil {
		t.Fatalf("TIME = %q", reply)
	}
	if secs, _ := strconv.ParseInt(m[1], 10, 64); secs < time.Now().Unix()-5 || secs > time.Now().Unix()+5 {
		t.Errorf("TIME seconds %d far from now", secs)
	}
	if usec, _ := strconv.Atoi(m[2]); usec >= 1e6 {
		t.Errorf("TIME microseconds %d", usec)
	}
	as.srv.stats.lastSave.Store(1000)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"LASTSAVE"}, ":1000\r\n"},
		{[]string{"SAVE"}, "+OK\r\n"},
		{[]string{"BGSAVE"}, "+Background saving started\r\n"},
		{[]string{"BGSAVE", "SCHEDULE"}, "+Background saving started\r\n"},
		{[]string{"BGSAVE", "foo"}, "-ERR syntax error\r\n"},
		{[]string{"BGSAVE", "schedule", "x"}, "-ERR syntax error\r\n"},
	}
	for _, tc := range cases {
		if got := c.do(tc.args...); got != tc.want {
			t.Errorf("%q = %q, want %q", tc.args, got, tc.want)
		}
	}
	if got := as.srv.stats.lastSave.Load(); got < time.Now().Unix()-5 {
		t.Errorf("SAVE did not update LASTSAVE: %d", got)
	}
}

func TestDebug(t *testing.T) {
	as := startAdminServer(t, Options{EnableDebugCommand: "local"})
	c := as.dial(t)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"DEBUG", "ERROR", "CODE some\r\nmessage"}, "-CODE some  message\r\n"},
		{[]string{"DEBUG", "LOG", "hello"}, "+OK\r\n"},
		{[]string{"DEBUG", "SLEEP", "0"}, "+OK\r\n"},
		{[]string{"DEBUG", "SLEEP", "x"}, "+OK\r\n"},
		{[]string{"DEBUG", "set-active-expire", "0"}, "+OK\r\n"},
		{[]string{"DEBUG", "RELOAD"}, "+OK\r\n"},
		{[]string{"DEBUG", "SLEEP"}, "-ERR unknown subcommand or wrong number of arguments for 'SLEEP'. Try DEBUG HELP.\r\n"},
		{[]string{"DEBUG", "nosuch"}, "-ERR unknown subcommand or wrong number of arguments for 'nosuch'. Try DEBUG HELP.\r\n"},
		{[]string{"DEBUG"}, "-ERR wrong number of arguments for 'debug' command\r\n"},
	}
	for _, tc := range cases {
		if got := c.do(tc.args...); got != tc.want {
			t.Errorf("%q = %q, want %q", tc.args, got, tc.want)
		}
	}
	if help := c.do("DEBUG", "HELP"); !strings.HasPrefix(help, "*") || !strings.Contains(help, "+SLEEP <seconds>\r\n") {
		t.Errorf("DEBUG HELP = %q", help)
	}

	t.Run("SLEEP blocks only the caller", func(t *testing.T) {
		sleeper, other := as.dial(t), as.dial(t)
		start := time.Now()
		sleeper.send("DEBUG", "SLEEP", "0.3")
		if r := other.do("PING"); r != "+PONG\r\n" || time.Since(start) > 200*time.Millisecond {
			t.Errorf("another client waited for DEBUG SLEEP: %q after %v", r, time.Since(start))
		}
		if r, _ := sleeper.reply(); r != "+OK\r\n" || time.Since(start) < 300*time.Millisecond {
			t.Errorf("DEBUG SLEEP 0.3 = %q after %v", r, time.Since(start))
		}
	})
}

func TestShutdown(t *testing.T) {
	as := startAdminServer(t, Options{})
	c, other := as.dial(t), as.dial(t)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"SHUTDOWN", "ABORT"}, "-ERR No shutdown in progress.\r\n"},
		{[]string{"SHUTDOWN", "foo"}, "-ERR syntax error\r\n"},
		{[]string{"SHUTDOWN", "NOSAVE", "SAVE"}, "-ERR syntax error\r\n"},
		{[]string{"SHUTDOWN", "NOW", "ABORT"}, "-ERR syntax error\r\n"},
	}
	for _, tc := range cases {
		if got := c.do(tc.args...); got != tc.want {
			t.Errorf("%q = %q, want %q", tc.args, got, tc.want)
		}
	}
	c.send("SHUTDOWN", "NOSAVE", "NOW")
	if !c.closedByServer(5 * time.Second) {
		t.Fatal("SHUTDOWN replied or left the connection open")
	}
	select {
	case <-as.stopped:
		if !errors.Is(as.err, ErrShutdown) {
			t.Errorf("Serve returned %v, want ErrShutdown", as.err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve still running after SHUTDOWN")
	}
	if !other.closedByServer(time.Second) {
		t.Error("other clients stay connected after SHUTDOWN")
	}
}
