package server

import (
	"net"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kvserver/kvserver/resp"
)

// The connection family: PING, ECHO, QUIT, RESET, AUTH, HELLO and CLIENT.
// AUTH and HELLO AUTH log in as an ACL user (acl.go); "default", whose
// password is requirepass, is the user a connection starts as.

// redisCompatVersion is the Redis version kvserver reports (HELLO, INFO
// redis_version): the release whose commands and replies it follows,
// CLIENT SETINFO and CLIENT NO-TOUCH included.
const redisCompatVersion = "7.2.4"

const (
	errWrongPass = "WRONGPASS invalid username-password pair or user is disabled."
	errNoPassSet = "ERR AUTH <password> called without any password configured for the default user. " +
		"Are you sure your configuration is correct?"
	errHelloNoAuth = "NOAUTH HELLO must be called with the client already authenticated, otherwise the " +
		"HELLO AUTH <user> <pass> option can be used to authenticate the client and select " +
		"the RESP protocol version at the same time"
	errClientName = "ERR Client names cannot contain spaces, newlines or special characters."
)

func (s *Server) cmdPing(c *Client, args [][]byte) {
	switch len(args) {
	case 1:
		c.w.Simple("PONG")
	case 2:
		c.w.Bulk(args[1])
	default:
		c.w.Error("ERR wrong number of arguments for 'ping' command")
	}
}

func (s *Server) cmdEcho(c *Client, args [][]byte) { c.w.Bulk(args[1]) }

// cmdQuit answers +OK and closes the connection once the reply is written.
func (s *Server) cmdQuit(c *Client, args [][]byte) {
	c.w.OK()
	c.closeAfterReply = true
}

// cmdReset returns the connection to its state right after connecting,
// like Redis's clearClientConnectionState: database 0, RESP2, no name, the
// default user (not authenticated when it needs a password), no-evict and
// no-touch off. The library name and version stay: they still describe
// the client.
func (s *Server) cmdReset(c *Client, args [][]byte) {
	c.setDB(0)
	c.setProto(2)
	s.setDefaultAuth(c)
	c.noTouch.Store(false)
	c.mu.Lock()
	c.name = ""
	c.noEvict = false
	c.mu.Unlock()
	c.w.Simple("RESET")
}

func (s *Server) cmdAuth(c *Client, args [][]byte) {
	var user, pass []byte
	switch len(args) {
	case 2:
		if s.users.Default().NoPass() {
			c.w.Error(errNoPassSet)
			return
		}
		user, pass = []byte("default"), args[1]
	case 3:
		user, pass = args[1], args[2]
	default:
		c.w.Error(errSyntax)
		return
	}
	if !s.authenticate(c, user, pass) {
		c.w.Error(errWrongPass)
		return
	}
	c.w.OK()
}

// cmdHello implements HELLO [protover [AUTH user pass] [SETNAME name]] in
// Redis's order: version, options (the name is validated first), then
// authentication, then the switch of protocol, whose reply is already in
// the new protocol.
func (s *Server) cmdHello(c *Client, args [][]byte) {
	ver := int64(0)
	next := 1
	if len(args) >= 2 {
		var ok bool
		if ver, ok = parseInt64(args[1]); !ok {
			c.w.Error("ERR Protocol version is not an integer or out of range")
			return
		}
		if ver < 2 || ver > 3 {
			c.w.Error("NOPROTO unsupported protocol version")
			return
		}
		next = 2
	}
	var user, pass, name []byte
	setName := false
	for j := next; j < len(args); j++ {
		more := len(args) - 1 - j
		switch {
		case equalFold(args[j], "auth") && more >= 2:
			user, pass = args[j+1], args[j+2]
			j += 2
		case equalFold(args[j], "setname") && more >= 1:
			name, setName = args[j+1], true
			if !validClientAttr(name) {
				c.w.Error(errClientName)
				return
			}
			j++
		default:
			c.w.Error("ERR Syntax error in HELLO option '" + string(args[j]) + "'")
			return
		}
	}
	if user != nil && !s.authenticate(c, user, pass) {
		c.w.Error(errWrongPass)
		return
	}
	if s.authRequired(c) {
		c.w.Error(errHelloNoAuth)
		return
	}
	if setName {
		c.mu.Lock()
		c.name = string(name)
		c.mu.Unlock()
	}
	if ver != 0 {
		c.setProto(int(ver))
	}
	c.w.Map(7)
	c.w.BulkString("server")
	c.w.BulkString("redis")
	c.w.BulkString("version")
	c.w.BulkString(redisCompatVersion)
	c.w.BulkString("proto")
	c.w.Int(int64(c.proto.Load()))
	c.w.BulkString("id")
	c.w.Int(c.ID)
	c.w.BulkString("mode")
	c.w.BulkString(s.redisMode())
	c.w.BulkString("role")
	c.w.BulkString("master")
	c.w.BulkString("modules")
	c.w.Array(0)
}

// validClientAttr reports whether a client name or library attribute can
// appear in CLIENT LIST, whose fields are separated by spaces: printable
// ASCII without spaces. An empty value is valid (it clears the attribute).
func validClientAttr(v []byte) bool {
	for _, ch := range v {
		if ch < '!' || ch > '~' {
			return false
		}
	}
	return true
}

func (s *Server) cmdClientId(c *Client, args [][]byte) { c.w.Int(c.ID) }

func (s *Server) cmdClientGetname(c *Client, args [][]byte) {
	c.mu.Lock()
	name := c.name
	c.mu.Unlock()
	if name == "" {
		c.w.Null()
		return
	}
	c.w.BulkString(name)
}

func (s *Server) cmdClientSetname(c *Client, args [][]byte) {
	if !validClientAttr(args[2]) {
		c.w.Error(errClientName)
		return
	}
	c.mu.Lock()
	c.name = string(args[2])
	c.mu.Unlock()
	c.w.OK()
}

// cmdClientSetinfo implements CLIENT SETINFO LIB-NAME|LIB-VER value with
// Redis 7.2's errors.
func (s *Server) cmdClientSetinfo(c *Client, args [][]byte) {
	attr, val := args[2], args[3]
	isName := equalFold(attr, "lib-name")
	if !isName && !equalFold(attr, "lib-ver") {
		c.w.Error("ERR Unrecognized option '" + string(attr) + "'")
		return
	}
	if !validClientAttr(val) {
		c.w.Error("ERR " + string(attr) + " cannot contain spaces, newlines or special characters.")
		return
	}
	c.mu.Lock()
	if isName {
		c.libName = string(val)
	} else {
		c.libVer = string(val)
	}
	c.mu.Unlock()
	c.w.OK()
}

// parseOnOff parses the ON|OFF argument of NO-EVICT and NO-TOUCH.
func parseOnOff(arg []byte) (on, ok bool) {
	switch {
	case equalFold(arg, "on"):
		return true, true
	case equalFold(arg, "off"):
		return false, true
	}
	return false, false
}

// cmdClientNoEvict records the flag for CLIENT LIST; kvserver never evicts
// clients (there is no maxmemory-clients), so it changes nothing else.
func (s *Server) cmdClientNoEvict(c *Client, args [][]byte) {
	on, ok := parseOnOff(args[2])
	if !ok {
		c.w.Error(errSyntax)
		return
	}
	c.mu.Lock()
	c.noEvict = on
	c.mu.Unlock()
	c.w.OK()
}

// cmdClientNoTouch makes this client's reads leave the LRU order alone.
func (s *Server) cmdClientNoTouch(c *Client, args [][]byte) {
	on, ok := parseOnOff(args[2])
	if !ok {
		c.w.Error(errSyntax)
		return
	}
	c.noTouch.Store(on)
	c.w.OK()
}

// cmdClientMaintNotifications acknowledges redis-py 8's opt-in to
// maintenance push notifications: kvserver has no maintenance events, so
// whatever the client asks for, it will simply never receive one.
func (s *Server) cmdClientMaintNotifications(c *Client, args [][]byte) { c.w.OK() }

func (s *Server) cmdClientHelp(c *Client, args [][]byte) {
	writeHelp(c, "CLIENT",
		"GETNAME",
		"    Return the name of the current connection.",
		"ID",
		"    Return the ID of the current connection.",
		"INFO",
		"    Return information about the current client connection.",
		"KILL <ip:port>",
		"    Kill connection made from <ip:port>.",
		"KILL <option> <value> [<option> <value> [...]]",
		"    Kill connections. Options are:",
		"    * ADDR (<ip:port>|<unixsocket>:0)",
		"      Kill connections made from the specified address",
		"    * LADDR (<ip:port>|<unixsocket>:0)",
		"      Kill connections made to specified local address",
		"    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
		"      Kill connections by type.",
		"    * USER <username>",
		"      Kill connections authenticated by <username>.",
		"    * SKIPME (YES|NO)",
		"      Skip killing current connection (default: yes).",
		"    * ID <client-id>",
		"      Kill connections by client id.",
		"LIST [options ...]",
		"    Return information about client connections. Options:",
		"    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
		"      Return clients of specified type.",
		"    * ID <client-id> [<client-id> ...]",
		"      Return clients with the specified IDs.",
		"SETINFO <option> <value>",
		"    Set client meta attr. Options are:",
		"    * LIB-NAME: the client lib name.",
		"    * LIB-VER: the client lib version.",
		"SETNAME <name>",
		"    Assign the name <name> to the current connection.",
		"NO-EVICT (ON|OFF)",
		"    Protect current client connection from eviction.",
		"NO-TOUCH (ON|OFF)",
		"    Will not touch LRU/LFU stats when this mode is on.",
		"MAINT_NOTIFICATIONS <option> ...",
		"    Accepted for compatibility; kvserver sends no maintenance notifications.",
	)
}

// writeHelp writes a HELP reply like Redis's addReplyHelp: a title line,
// the lines given, and the HELP entry, as simple strings.
func writeHelp(c *Client, cmd string, lines ...string) {
	c.w.Array(len(lines) + 3)
	c.w.Simple(cmd + " <subcommand> [<arg> [value] [opt] ...]. Subcommands are:")
	for _, l := range lines {
		c.w.Simple(l)
	}
	c.w.Simple("HELP")
	c.w.Simple("    Prints this help.")
}

// clientType is what CLIENT LIST TYPE and CLIENT KILL TYPE filter on. All
// of kvserver's clients are normal clients: there are no replicas, no
// master link and no pub/sub.
type clientType int

const (
	clientNormal clientType = iota
	clientReplica
	clientMaster
	clientPubsub
)

// parseClientType is Redis's getClientTypeByName.
func parseClientType(b []byte) (clientType, bool) {
	switch {
	case equalFold(b, "normal"):
		return clientNormal, true
	case equalFold(b, "slave"), equalFold(b, "replica"):
		return clientReplica, true
	case equalFold(b, "pubsub"):
		return clientPubsub, true
	case equalFold(b, "master"):
		return clientMaster, true
	}
	return 0, false
}

// clientsByID returns the connected clients in connection order, like
// Redis's client list.
func (s *Server) clientsByID() []*Client {
	var list []*Client
	s.forEachClient(func(c *Client) { list = append(list, c) })
	slices.SortFunc(list, func(a, b *Client) int {
		switch {
		case a.ID < b.ID:
			return -1
		case a.ID > b.ID:
			return 1
		}
		return 0
	})
	return list
}

// cmdClientList implements CLIENT LIST [TYPE type] or CLIENT LIST ID id...
// (one filter at a time, as in Redis 7.0 to 7.2).
func (s *Server) cmdClientList(c *Client, args [][]byte) {
	var ids []int64
	typeFilter := clientNormal
	switch {
	case len(args) == 2:
	case len(args) == 4 && equalFold(args[2], "type"):
		t, ok := parseClientType(args[3])
		if !ok {
			c.w.Error("ERR Unknown client type '" + string(args[3]) + "'")
			return
		}
		typeFilter = t
	case len(args) > 3 && equalFold(args[2], "id"):
		for _, a := range args[3:] {
			id, ok := parseInt64(a)
			if !ok {
				c.w.Error("ERR Invalid client ID")
				return
			}
			ids = append(ids, id)
		}
	default:
		c.w.Error(errSyntax)
		return
	}
	var b strings.Builder
	now := time.Now()
	if ids != nil {
		// Like Redis, one line per ID asked for, in the order asked.
		for _, id := range ids {
			s.clientsMu.Lock()
			other := s.clients[id]
			s.clientsMu.Unlock()
			if other != nil {
				s.appendClientLine(&b, c, other, now)
				b.WriteByte('\n')
			}
		}
	} else if typeFilter == clientNormal {
		for _, other := range s.clientsByID() {
			s.appendClientLine(&b, c, other, now)
			b.WriteByte('\n')
		}
	}
	c.w.Verbatim(b.String())
}

func (s *Server) cmdClientInfo(c *Client, args [][]byte) {
	var b strings.Builder
	s.appendClientLine(&b, c, c, time.Now())
	b.WriteByte('\n')
	c.w.Verbatim(b.String())
}

// Buffer sizes reported for clients other than the caller, whose buffers
// belong to their own goroutines and cannot be read safely: what a
// connection starts with and returns to when idle.
const (
	idleQueryBuffer = resp.DefaultReadBuffer
	idleReplyBuffer = 16 * 1024
	// clientOverhead approximates the memory of a Client and its
	// goroutine beyond the two buffers (tot-mem).
	clientOverhead = 8 * 1024
)

// appendClientLine writes one CLIENT LIST line (without the newline) in
// Redis 7.2's format. self is the client running the command: only its own
// buffers are measured; the other clients' fields come from c.info, which
// is safe to read from any goroutine.
func (s *Server) appendClientLine(b *strings.Builder, self, c *Client, now time.Time) {
	ci := c.info(now)
	qbuf, qbufFree, argvMem := 0, idleQueryBuffer, 0
	rbs, rbp, obl, omem := idleReplyBuffer, 0, 0, 0
	if c == self {
		// The command being run still counts as received but unprocessed,
		// as in Redis, whose query buffer holds it until it returns.
		qbuf = encodedLen(self.cmd.Args) + self.r.QueryBufferUsed()
		qbufFree = max(self.r.QueryBufferSize()-qbuf, 0)
		for _, a := range self.cmd.Args {
			argvMem += len(a)
		}
		rbs = self.w.BufferCap()
		rbp = rbs
		obl = self.w.BufferLen()
		omem = self.w.QueuedBytes()
	}
	totMem := qbuf + qbufFree + argvMem + rbs + omem + clientOverhead
	flags := ""
	if ci.noEvict {
		flags += "e"
	}
	if ci.noTouch {
		flags += "T"
	}
	if flags == "" {
		flags = "N"
	}
	cmd := ci.lastCmd
	if cmd == "" {
		cmd = "NULL"
	}
	first := true
	field := func(k, v string) {
		if !first {
			b.WriteByte(' ')
		}
		first = false
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(v)
	}
	num := func(k string, n int64) { field(k, strconv.FormatInt(n, 10)) }
	num("id", ci.id)
	field("addr", ci.addr)
	field("laddr", ci.laddr)
	num("fd", int64(connFD(c.conn)))
	field("name", ci.name)
	num("age", ci.age)
	num("idle", ci.idle)
	field("flags", flags)
	num("db", int64(ci.db))
	num("sub", 0)
	num("psub", 0)
	num("ssub", 0)
	num("multi", -1)
	num("qbuf", int64(qbuf))
	num("qbuf-free", int64(qbufFree))
	num("argv-mem", int64(argvMem))
	num("multi-mem", 0)
	num("rbs", int64(rbs))
	num("rbp", int64(rbp))
	num("obl", int64(obl))
	num("oll", 0)
	num("omem", int64(omem))
	num("tot-mem", int64(totMem))
	field("events", "r")
	field("cmd", cmd)
	field("user", c.user.Load().Name())
	num("redir", -1)
	num("resp", int64(ci.proto))
	field("lib-name", ci.libName)
	field("lib-ver", ci.libVer)
}

// encodedLen is the size of args as a RESP multibulk request.
func encodedLen(args [][]byte) int {
	n := 1 + len(strconv.Itoa(len(args))) + 2
	for _, a := range args {
		n += 1 + len(strconv.Itoa(len(a))) + 2 + len(a) + 2
	}
	return n
}

// connFD returns the file descriptor of conn, or -1 when it has none or is
// closed. Control holds a reference on the descriptor, so this is safe
// while another goroutine reads from the connection.
func connFD(conn net.Conn) int {
	if tc, ok := conn.(interface{ NetConn() net.Conn }); ok {
		conn = tc.NetConn() // TLS: the descriptor of the TCP connection under it
	}
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return -1
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return -1
	}
	fd := -1
	if raw.Control(func(f uintptr) { fd = int(f) }) != nil {
		return -1
	}
	return fd
}

// killFilter is the parsed filter of CLIENT KILL.
type killFilter struct {
	id          int64
	addr, laddr []byte
	user        []byte
	hasType     bool
	typ         clientType
	skipMe      bool
}

func (f *killFilter) matches(self, c *Client) bool {
	if f.skipMe && c == self {
		return false
	}
	if f.id != 0 && c.ID != f.id {
		return false
	}
	if f.hasType && f.typ != clientNormal {
		return false
	}
	if f.addr != nil && c.conn.RemoteAddr().String() != string(f.addr) {
		return false
	}
	if f.laddr != nil && c.conn.LocalAddr().String() != string(f.laddr) {
		return false
	}
	if f.user != nil && c.user.Load().Name() != string(f.user) {
		return false
	}
	return true
}

// cmdClientKill implements CLIENT KILL ip:port (old form: +OK or an error)
// and CLIENT KILL <filter> <value> ... (new form: the number killed). The
// caller is killed only by the old form or with SKIPME no; its reply is
// still written before its connection closes.
func (s *Server) cmdClientKill(c *Client, args [][]byte) {
	f := killFilter{skipMe: true}
	oldForm := len(args) == 3
	if oldForm {
		f.addr = args[2]
		f.skipMe = false
	} else {
		for i := 2; i < len(args); i += 2 {
			if i+1 >= len(args) {
				c.w.Error(errSyntax)
				return
			}
			opt, val := args[i], args[i+1]
			switch {
			case equalFold(opt, "id"):
				id, ok := parseInt64(val)
				if !ok || id < 1 {
					c.w.Error("ERR client-id should be greater than 0")
					return
				}
				f.id = id
			case equalFold(opt, "type"):
				t, ok := parseClientType(val)
				if !ok {
					c.w.Error("ERR Unknown client type '" + string(val) + "'")
					return
				}
				f.hasType, f.typ = true, t
			case equalFold(opt, "addr"):
				f.addr = val
			case equalFold(opt, "laddr"):
				f.laddr = val
			case equalFold(opt, "user"):
				if s.users.Lookup(string(val)) == nil {
					c.w.Error("ERR No such user '" + string(val) + "'")
					return
				}
				f.user = val
			case equalFold(opt, "skipme"):
				switch {
				case equalFold(val, "yes"):
					f.skipMe = true
				case equalFold(val, "no"):
					f.skipMe = false
				default:
					c.w.Error(errSyntax)
					return
				}
			default:
				c.w.Error(errSyntax)
				return
			}
		}
	}
	killed := 0
	for _, other := range s.clientsByID() {
		if !f.matches(c, other) {
			continue
		}
		killed++
		if other == c {
			c.closeAfterReply = true
			continue
		}
		other.kill()
	}
	if !oldForm {
		c.w.Int(int64(killed))
		return
	}
	if killed == 0 {
		c.w.Error("ERR No such client")
		return
	}
	c.w.OK()
}
