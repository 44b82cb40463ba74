package server

import (
	"github.com/kvserver/kvserver/commands"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// helloReply is HELLO's map for a client id in a protocol version.
func helloReply(id int64, proto int) string {
	header := "*14\r\n"
	if proto == 3 {
		header = "%7\r\n"
	}
	return header + bulk("server") + bulk("redis") + bulk("version") + bulk(commands.RedisCompatVersion) +
		bulk("proto") + ":" + strconv.Itoa(proto) + "\r\n" + bulk("id") + ":" + strconv.FormatInt(id, 10) + "\r\n" +
		bulk("mode") + bulk("standalone") + bulk("role") + bulk("master") + bulk("modules") + "*0\r\n"
}

// clientID asks the server for the connection's id.
func (ac *adminConn) clientID() int64 {
	ac.t.Helper()
	r := ac.do("CLIENT", "ID")
	id, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimPrefix(r, ":"), "\r\n"), 10, 64)
	if err != nil {
		ac.t.Fatalf("CLIENT ID = %q", r)
	}
	return id
}

func TestConnectionCommandsWithoutPassword(t *testing.T) {
	as := startAdminServer(t, Options{})
	c := as.dial(t)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"PING"}, "+PONG\r\n"},
		{[]string{"PING", "hello"}, "$5\r\nhello\r\n"},
		{[]string{"PING", "a", "b"}, "-ERR wrong number of arguments for 'ping' command\r\n"},
		{[]string{"ECHO", "x y"}, "$3\r\nx y\r\n"},
		{[]string{"ECHO"}, "-ERR wrong number of arguments for 'echo' command\r\n"},
		{[]string{"AUTH", "x"}, "-ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?\r\n"},
		{[]string{"AUTH", "default", "anything"}, "+OK\r\n"},
		{[]string{"AUTH", "alice", "anything"}, "-WRONGPASS invalid username-password pair or user is disabled.\r\n"},
		{[]string{"AUTH", "a", "b", "c"}, "-ERR syntax error\r\n"},
		{[]string{"HELLO", "4"}, "-NOPROTO unsupported protocol version\r\n"},
		{[]string{"HELLO", "1"}, "-NOPROTO unsupported protocol version\r\n"},
		{[]string{"HELLO", "x"}, "-ERR Protocol version is not an integer or out of range\r\n"},
		{[]string{"HELLO", "3", "foo"}, "-ERR Syntax error in HELLO option 'foo'\r\n"},
		{[]string{"HELLO", "3", "AUTH", "default"}, "-ERR Syntax error in HELLO option 'AUTH'\r\n"},
		{[]string{"HELLO", "2", "SETNAME"}, "-ERR Syntax error in HELLO option 'SETNAME'\r\n"},
		{[]string{"HELLO", "3", "SETNAME", "a b"}, "-ERR Client names cannot contain spaces, newlines or special characters.\r\n"},
		{[]string{"HELLO", "3", "AUTH", "bob", "x"}, "-WRONGPASS invalid username-password pair or user is disabled.\r\n"},
	}
	for _, tc := range cases {
		if got := c.do(tc.args...); got != tc.want {
			t.Errorf("%q:\n got %q\nwant %q", tc.args, got, tc.want)
		}
	}
	c.send("QUIT")
	if r, _ := c.reply(); r != "+OK\r\n" {
		t.Errorf("QUIT = %q", r)
	}
	if !c.closedByServer(2 * time.Second) {
		t.Error("connection still open after QUIT")
	}
}

func TestHelloSwitchesProtocolAndSetsName(t *testing.T) {
	as := startAdminServer(t, Options{})
	c := as.dial(t)
	id := c.clientID()
	if got := c.do("HELLO"); got != helloReply(id, 2) {
		t.Errorf("HELLO = %q", got)
	}
	if got := c.do("HELLO", "3", "SETNAME", "worker-1"); got != helloReply(id, 3) {
		t.Errorf("HELLO 3 = %q, want %q", got, helloReply(id, 3))
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"CLIENT", "GETNAME"}, "$8\r\nworker-1\r\n"},
		{[]string{"GET", "missing"}, "_\r\n"},
		{[]string{"CLIENT", "SETNAME", ""}, "+OK\r\n"},
		{[]string{"CLIENT", "GETNAME"}, "_\r\n"},
	}
	for _, tc := range cases {
		if got := c.do(tc.args...); got != tc.want {
			t.Errorf("%q = %q, want %q", tc.args, got, tc.want)
		}
	}
	if got := c.do("HELLO", "2"); got != helloReply(id, 2) {
		t.Errorf("HELLO 2 = %q", got)
	}
	if got := c.do("GET", "missing"); got != "$-1\r\n" {
		t.Errorf("GET after HELLO 2 = %q", got)
	}
}

func TestAuthAndHelloWithPassword(t *testing.T) {
	as := startAdminServer(t, Options{RequirePass: "s3cret"})
	c := as.dial(t)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"GET", "k"}, "-NOAUTH Authentication required.\r\n"},
		{[]string{"HELLO", "3"}, "-NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time\r\n"},
		{[]string{"AUTH", "wrong"}, "-WRONGPASS invalid username-password pair or user is disabled.\r\n"},
		{[]string{"AUTH", "default", "wrong"}, "-WRONGPASS invalid username-password pair or user is disabled.\r\n"},
		{[]string{"AUTH", "admin", "s3cret"}, "-WRONGPASS invalid username-password pair or user is disabled.\r\n"},
		{[]string{"HELLO", "3", "AUTH", "default", "wrong"}, "-WRONGPASS invalid username-password pair or user is disabled.\r\n"},
		{[]string{"GET", "k"}, "-NOAUTH Authentication required.\r\n"},
		{[]string{"AUTH", "s3cret"}, "+OK\r\n"},
		{[]string{"GET", "k"}, "$-1\r\n"},
		{[]string{"AUTH", "default", "s3cret"}, "+OK\r\n"},
	}
	for _, tc := range cases {
		if got := c.do(tc.args...); got != tc.want {
			t.Errorf("%q:\n got %q\nwant %q", tc.args, got, tc.want)
		}
	}

	d := as.dial(t)
	got := d.do("HELLO", "3", "AUTH", "default", "s3cret", "SETNAME", "n")
	if id := d.clientID(); got != helloReply(id, 3) {
		t.Errorf("HELLO 3 AUTH = %q", got)
	}
	if got := d.do("GET", "k"); got != "_\r\n" {
		t.Errorf("GET after HELLO AUTH = %q", got)
	}
	if got := d.do("RESET"); got != "+RESET\r\n" {
		t.Errorf("RESET = %q", got)
	}
	if got := d.do("GET", "k"); got != "-NOAUTH Authentication required.\r\n" {
		t.Errorf("GET after RESET = %q, want NOAUTH", got)
	}
}

func TestResetRestoresConnectionDefaults(t *testing.T) {
	as := startAdminServer(t, Options{})
	c := as.dial(t)
	for _, args := range [][]string{
		{"SELECT", "5"},
		{"CLIENT", "SETNAME", "before"},
		{"CLIENT", "SETINFO", "LIB-NAME", "redis-py"},
		{"CLIENT", "NO-EVICT", "on"},
		{"CLIENT", "NO-TOUCH", "on"},
	} {
		if r := c.do(args...); r != "+OK\r\n" {
			t.Fatalf("%q = %q", args, r)
		}
	}
	c.do("HELLO", "3")
	info := verbatimBody(t, c.do("CLIENT", "INFO"))
	for _, f := range []string{" db=5 ", " name=before ", " flags=eT ", " resp=3 ", " lib-name=redis-py "} {
		if !strings.Contains(info, f) {
			t.Errorf("before RESET, CLIENT INFO lacks %q: %s", f, info)
		}
	}
	if got := c.do("RESET"); got != "+RESET\r\n" {
		t.Fatalf("RESET = %q", got)
	}
	info = verbatimBody(t, c.do("CLIENT", "INFO"))
	for _, f := range []string{" db=0 ", " name= ", " flags=N ", " resp=2 ", " lib-name=redis-py "} {
		if !strings.Contains(info, f) {
			t.Errorf("after RESET, CLIENT INFO lacks %q: %s", f, info)
		}
	}
	if got := c.do("CLIENT", "GETNAME"); got != "$-1\r\n" {
		t.Errorf("CLIENT GETNAME after RESET = %q", got)
	}
}

func TestClientAttributes(t *testing.T) {
	as := startAdminServer(t, Options{})
	c := as.dial(t)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"CLIENT", "SETNAME", "a b"}, "-ERR Client names cannot contain spaces, newlines or special characters.\r\n"},
		{[]string{"CLIENT", "SETNAME", "a\nb"}, "-ERR Client names cannot contain spaces, newlines or special characters.\r\n"},
		{[]string{"CLIENT", "SETNAME"}, "-ERR wrong number of arguments for 'client|setname' command\r\n"},
		{[]string{"CLIENT", "GETNAME", "x"}, "-ERR wrong number of arguments for 'client|getname' command\r\n"},
		{[]string{"CLIENT", "SETINFO", "lib-name", "redis-py(x)"}, "+OK\r\n"},
		{[]string{"CLIENT", "SETINFO", "LIB-VER", "8.0.1"}, "+OK\r\n"},
		{[]string{"CLIENT", "SETINFO", "lib-name", "a b"}, "-ERR lib-name cannot contain spaces, newlines or special characters.\r\n"},
		{[]string{"CLIENT", "SETINFO", "LIB-VER", "1\r\n"}, "-ERR LIB-VER cannot contain spaces, newlines or special characters.\r\n"},
		{[]string{"CLIENT", "SETINFO", "foo", "x"}, "-ERR Unrecognized option 'foo'\r\n"},
		{[]string{"CLIENT", "SETINFO", "lib-name"}, "-ERR wrong number of arguments for 'client|setinfo' command\r\n"},
		{[]string{"CLIENT", "NO-EVICT", "maybe"}, "-ERR syntax error\r\n"},
		{[]string{"CLIENT", "NO-TOUCH", "maybe"}, "-ERR syntax error\r\n"},
		{[]string{"CLIENT", "NO-TOUCH", "ON"}, "+OK\r\n"},
		{[]string{"CLIENT", "MAINT_NOTIFICATIONS", "on", "moving-endpoint-type", "internal-ip"}, "+OK\r\n"},
		{[]string{"CLIENT", "MAINT_NOTIFICATIONS", "off"}, "+OK\r\n"},
		{[]string{"CLIENT", "NOSUCH"}, "-ERR unknown subcommand 'NOSUCH'. Try CLIENT HELP.\r\n"},
	}
	for _, tc := range cases {
		if got := c.do(tc.args...); got != tc.want {
			t.Errorf("%q:\n got %q\nwant %q", tc.args, got, tc.want)
		}
	}
	info := verbatimBody(t, c.do("CLIENT", "INFO"))
	if !strings.HasSuffix(info, " lib-name=redis-py(x) lib-ver=8.0.1\n") || !strings.Contains(info, " flags=T ") {
		t.Errorf("CLIENT INFO = %q", info)
	}
	help := c.do("CLIENT", "HELP")
	if !strings.HasPrefix(help, "*") || !strings.Contains(help, "+CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n") ||
		!strings.HasSuffix(help, "+HELP\r\n+    Prints this help.\r\n") {
		t.Errorf("CLIENT HELP = %q", help)
	}
}

// clientLine is Redis 7.2's CLIENT LIST line.
var clientLine = regexp.MustCompile(`^id=(\d+) addr=127\.0\.0\.1:\d+ laddr=127\.0\.0\.1:\d+ fd=\d+ name=(\S*) age=\d+ idle=\d+ ` +
	`flags=[NeT]+ db=\d+ sub=0 psub=0 ssub=0 multi=-1 qbuf=\d+ qbuf-free=\d+ argv-mem=\d+ multi-mem=0 rbs=\d+ rbp=\d+ ` +
	`obl=\d+ oll=0 omem=\d+ tot-mem=\d+ events=r cmd=(\S+) user=default redir=-1 resp=[23] lib-name=\S* lib-ver=\S*$`)

func TestClientListAndInfo(t *testing.T) {
	as := startAdminServer(t, Options{})
	c, other := as.dial(t), as.dial(t)
	other.do("CLIENT", "SETNAME", "other")
	myID, otherID := c.clientID(), other.clientID()

	text := verbatimBody(t, c.do("CLIENT", "LIST"))
	if !strings.HasSuffix(text, "\n") {
		t.Fatalf("CLIENT LIST does not end with a newline: %q", text)
	}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("CLIENT LIST has %d lines, want 2: %q", len(lines), text)
	}
	var ids []string
	for _, l := range lines {
		m := clientLine.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("line not in Redis 7.2's format: %q", l)
		}
		ids = append(ids, m[1])
	}
	if ids[0] != strconv.FormatInt(myID, 10) || ids[1] != strconv.FormatInt(otherID, 10) {
		t.Errorf("CLIENT LIST ids %v, want %d then %d", ids, myID, otherID)
	}
	if m := clientLine.FindStringSubmatch(lines[0]); m[3] != "client|list" {
		t.Errorf("own cmd = %q", m[3])
	}
	if m := clientLine.FindStringSubmatch(lines[1]); m[2] != "other" || m[3] != "client|id" {
		t.Errorf("other client: name %q cmd %q", m[2], m[3])
	}
	if !strings.Contains(lines[0], " qbuf=26 qbuf-free=") || !strings.Contains(lines[0], " argv-mem=10 ") {
		t.Errorf("own buffers not measured like Redis: %q", lines[0])
	}

	cases := []struct {
		args []string
		want string // a regexp of the body
	}{
		{[]string{"CLIENT", "LIST", "TYPE", "normal"}, `^(id=\d+ [^\n]*\n){2}$`},
		{[]string{"CLIENT", "LIST", "TYPE", "PUBSUB"}, `^$`},
		{[]string{"CLIENT", "LIST", "TYPE", "replica"}, `^$`},
		{[]string{"CLIENT", "LIST", "ID", strconv.FormatInt(otherID, 10), "999"}, `^id=` + strconv.FormatInt(otherID, 10) + ` [^\n]*name=other [^\n]*\n$`},
		{[]string{"CLIENT", "LIST", "ID", "0", "-5"}, `^$`},
	}
	for _, tc := range cases {
		body := verbatimBody(t, c.do(tc.args...))
		if !regexp.MustCompile(tc.want).MatchString(body) {
			t.Errorf("%q = %q", tc.args, body)
		}
	}
	errCases := []struct {
		args []string
		want string
	}{
		{[]string{"CLIENT", "LIST", "TYPE", "foo"}, "-ERR Unknown client type 'foo'\r\n"},
		{[]string{"CLIENT", "LIST", "ID", "x"}, "-ERR Invalid client ID\r\n"},
		{[]string{"CLIENT", "LIST", "ID"}, "-ERR syntax error\r\n"},
		{[]string{"CLIENT", "LIST", "TYPE"}, "-ERR syntax error\r\n"},
		{[]string{"CLIENT", "LIST", "TYPE", "normal", "ID", "5"}, "-ERR syntax error\r\n"},
		{[]string{"CLIENT", "LIST", "foo"}, "-ERR syntax error\r\n"},
	}
	for _, tc := range errCases {
		if got := c.do(tc.args...); got != tc.want {
			t.Errorf("%q = %q, want %q", tc.args, got, tc.want)
		}
	}

	c.do("HELLO", "3")
	r := c.do("CLIENT", "INFO")
	if !strings.HasPrefix(r, "=") || !strings.Contains(r, "\r\ntxt:id="+strconv.FormatInt(myID, 10)+" ") {
		t.Errorf("RESP3 CLIENT INFO = %q, want a verbatim string", r)
	}
	if !clientLine.MatchString(strings.TrimSuffix(verbatimBody(t, r), "\n")) {
		t.Errorf("CLIENT INFO line not in Redis 7.2's format: %q", r)
	}
}

func TestClientKill(t *testing.T) {
	as := startAdminServer(t, Options{})
	c := as.dial(t)
	addrOf := func(ac *adminConn) string { return ac.conn.LocalAddr().String() }

	cases := []struct {
		args []string
		want string
	}{
		{[]string{"CLIENT", "KILL", "1.2.3.4:5"}, "-ERR No such client\r\n"},
		{[]string{"CLIENT", "KILL", "ID", "999"}, ":0\r\n"},
		{[]string{"CLIENT", "KILL", "ID", "x"}, "-ERR client-id should be greater than 0\r\n"},
		{[]string{"CLIENT", "KILL", "ID", "0"}, "-ERR client-id should be greater than 0\r\n"},
		{[]string{"CLIENT", "KILL", "foo", "bar"}, "-ERR syntax error\r\n"},
		{[]string{"CLIENT", "KILL", "ADDR", "1.1.1.1:1", "SKIPME", "maybe"}, "-ERR syntax error\r\n"},
		{[]string{"CLIENT", "KILL", "ID", "5", "SKIPME"}, "-ERR syntax error\r\n"},
		{[]string{"CLIENT", "KILL", "USER", "nobody"}, "-ERR No such user 'nobody'\r\n"},
		{[]string{"CLIENT", "KILL", "TYPE", "foo"}, "-ERR Unknown client type 'foo'\r\n"},
		{[]string{"CLIENT", "KILL", "TYPE", "master"}, ":0\r\n"},
		{[]string{"CLIENT", "KILL", "USER", "default"}, ":0\r\n"}, // SKIPME yes by default
		{[]string{"CLIENT", "KILL", "LADDR", "1.1.1.1:1"}, ":0\r\n"},
		{[]string{"CLIENT", "KILL", "id"}, "-ERR No such client\r\n"},
	}
	for _, tc := range cases {
		if got := c.do(tc.args...); got != tc.want {
			t.Errorf("%q = %q, want %q", tc.args, got, tc.want)
		}
	}

	t.Run("old form by address", func(t *testing.T) {
		victim := as.dial(t)
		victim.do("PING")
		if r := c.do("CLIENT", "KILL", addrOf(victim)); r != "+OK\r\n" {
			t.Fatalf("CLIENT KILL addr = %q", r)
		}
		if !victim.closedByServer(2 * time.Second) {
			t.Error("killed client still connected")
		}
	})
	t.Run("filters combine", func(t *testing.T) {
		victim, bystander := as.dial(t), as.dial(t)
		id := victim.clientID()
		bystander.do("PING")
		if r := c.do("CLIENT", "KILL", "ID", strconv.FormatInt(id, 10), "ADDR", addrOf(victim), "USER", "default"); r != ":1\r\n" {
			t.Fatalf("CLIENT KILL ID .. ADDR .. = %q", r)
		}
		if !victim.closedByServer(2 * time.Second) {
			t.Error("killed client still connected")
		}
		if r := bystander.do("PING"); r != "+PONG\r\n" {
			t.Errorf("bystander: %q", r)
		}
		if r := c.do("CLIENT", "KILL", "ID", strconv.FormatInt(id, 10), "ADDR", addrOf(bystander)); r != ":0\r\n" {
			t.Errorf("non-matching filters killed: %q", r)
		}
	})
	t.Run("the caller with SKIPME no gets its reply first", func(t *testing.T) {
		self := as.dial(t)
		if r := self.do("CLIENT", "KILL", "ID", strconv.FormatInt(self.clientID(), 10), "SKIPME", "no"); r != ":1\r\n" {
			t.Fatalf("self kill = %q", r)
		}
		if !self.closedByServer(2 * time.Second) {
			t.Error("self-killed client still connected")
		}
	})
	t.Run("USER default kills everyone else", func(t *testing.T) {
		a, b := as.dial(t), as.dial(t)
		a.do("PING")
		b.do("PING")
		r := c.do("CLIENT", "KILL", "USER", "default")
		if n, _ := strconv.Atoi(strings.Trim(r, ":\r\n")); n < 2 {
			t.Errorf("CLIENT KILL USER default = %q, want at least 2", r)
		}
		if !a.closedByServer(2*time.Second) || !b.closedByServer(2*time.Second) {
			t.Error("clients survived CLIENT KILL USER default")
		}
		if r := c.do("PING"); r != "+PONG\r\n" {
			t.Errorf("caller after killing the others: %q", r)
		}
	})
}
