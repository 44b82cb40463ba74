package commands

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/kvserver/kvserver/tracking"
)

// The connection family: PING, ECHO, QUIT, RESET, AUTH, HELLO and CLIENT
// (Redis's networking.c client commands). AUTH and HELLO AUTH log in as an
// ACL user (acl.go); "default", whose password is requirepass, is the user
// a connection starts as.

// connectionCommands are the connection family's rows.
var connectionCommands = []*Spec{
	{Name: "ping", Arity: -1, Flags: FlagFast, ACL: "@fast @connection", Handler: cmdPing},
	{Name: "echo", Arity: 2, Flags: FlagLoading | FlagStale | FlagFast, ACL: "@fast @connection", Handler: cmdEcho},
	{Name: "quit", Arity: -1, Flags: FlagNoscript | FlagLoading | FlagStale | FlagFast | FlagNoAuth | FlagAllowBusy, ACL: "@fast @connection", Handler: cmdQuit},
	{Name: "reset", Arity: 1, Flags: FlagNoscript | FlagLoading | FlagStale | FlagFast | FlagNoAuth | FlagAllowBusy, ACL: "@fast @connection", Handler: cmdReset},
	{Name: "auth", Arity: -2, Flags: FlagNoscript | FlagLoading | FlagStale | FlagFast | FlagNoAuth | FlagAllowBusy, ACL: "@fast @connection", Handler: cmdAuth},
	{Name: "hello", Arity: -1, Flags: FlagNoscript | FlagLoading | FlagStale | FlagFast | FlagNoAuth | FlagAllowBusy, ACL: "@fast @connection", Handler: cmdHello},
	{Name: "client", Arity: -2, Flags: 0, ACL: "@slow", Subcommands: []*Spec{
		{Name: "client|getname", Arity: 2, Flags: FlagNoscript | FlagLoading | FlagStale, ACL: "@slow @connection", Handler: cmdClientGetname},
		{Name: "client|help", Arity: 2, Flags: FlagLoading | FlagStale, ACL: "@slow @connection", Handler: cmdClientHelp},
		{Name: "client|info", Arity: 2, Flags: FlagNoscript | FlagLoading | FlagStale, ACL: "@slow @connection", Handler: cmdClientInfo},
		{Name: "client|no-evict", Arity: 3, Flags: FlagAdmin | FlagNoscript | FlagLoading | FlagStale, ACL: "@admin @slow @dangerous @connection", Handler: cmdClientNoEvict},
		{Name: "client|list", Arity: -2, Flags: FlagAdmin | FlagNoscript | FlagLoading | FlagStale, ACL: "@admin @slow @dangerous @connection", Handler: cmdClientList},
		{Name: "client|kill", Arity: -3, Flags: FlagAdmin | FlagNoscript | FlagLoading | FlagStale, ACL: "@admin @slow @dangerous @connection", Handler: cmdClientKill},
		{Name: "client|id", Arity: 2, Flags: FlagNoscript | FlagLoading | FlagStale, ACL: "@slow @connection", Handler: cmdClientId},
		{Name: "client|setinfo", Arity: 4, Flags: FlagNoscript | FlagLoading | FlagStale, ACL: "@slow @connection", Handler: cmdClientSetinfo},
		{Name: "client|no-touch", Arity: 3, Flags: FlagNoscript | FlagLoading | FlagStale, ACL: "@slow @connection", Handler: cmdClientNoTouch},
		{Name: "client|maint_notifications", Arity: -3, Flags: FlagNoscript | FlagLoading | FlagStale, ACL: "@slow @connection", Handler: cmdClientMaintNotifications},
		{Name: "client|setname", Arity: 3, Flags: FlagNoscript | FlagLoading | FlagStale, ACL: "@slow @connection", Handler: cmdClientSetname},
		{Name: "client|reply", Arity: 3, Flags: FlagNoscript | FlagLoading | FlagStale, ACL: "@slow @connection", Handler: cmdClientReply},
		{Name: "client|pause", Arity: -3, Flags: FlagAdmin | FlagNoscript | FlagLoading | FlagStale, ACL: "@admin @slow @dangerous @connection", Handler: cmdClientPause},
		{Name: "client|unpause", Arity: 2, Flags: FlagAdmin | FlagNoscript | FlagLoading | FlagStale, ACL: "@admin @slow @dangerous @connection", Handler: cmdClientUnpause},
		{Name: "client|tracking", Arity: -3, Flags: FlagNoscript | FlagLoading | FlagStale, ACL: "@slow @connection", Handler: cmdClientTracking},
		{Name: "client|caching", Arity: 3, Flags: FlagNoscript | FlagLoading | FlagStale, ACL: "@slow @connection", Handler: cmdClientCaching},
		{Name: "client|trackinginfo", Arity: 2, Flags: FlagNoscript | FlagLoading | FlagStale, ACL: "@slow @connection", Handler: cmdClientTrackinginfo},
		{Name: "client|getredir", Arity: 2, Flags: FlagNoscript | FlagLoading | FlagStale, ACL: "@slow @connection", Handler: cmdClientGetredir},
		{Name: "client|unblock", Arity: -3, Flags: FlagAdmin | FlagNoscript | FlagLoading | FlagStale, ACL: "@admin @slow @dangerous @connection", Handler: cmdClientUnblock},
	}},
}

// RedisCompatVersion is the Redis version kvserver reports (HELLO, INFO
// redis_version): the release whose commands and replies it follows, the
// one the command docs were generated from and the differential suite
// compares with. kvserver also accepts a few later commands (CLIENT
// SETINFO and NO-TOUCH from 7.2) that clients send at connect.
const RedisCompatVersion = redisDocsVersion

// Clients is the server's registry of connections, as the CLIENT
// subcommands and HELLO see it.
type Clients interface {
	// List returns a snapshot of every connected client, in connection
	// (ID) order.
	List() []ClientInfo
	// Get returns a snapshot of the client with the given ID, if it is
	// connected.
	Get(id int64) (ClientInfo, bool)
	// Self returns a snapshot of the connection running the command,
	// its buffers measured.
	Self() ClientInfo
	// Kill closes the connection with the given ID from another
	// goroutine; the caller's own connection is closed with
	// Session.CloseAfterReply instead.
	Kill(id int64)
	// Mode is the server's mode as HELLO reports it ("standalone" or
	// "cluster").
	Mode() string
	// Unblock ends the wait of the blocked client id for reason
	// (UnblockedTimeout or UnblockedError), reporting whether it was
	// blocked in a wait CLIENT UNBLOCK may end.
	Unblock(id int64, reason Unblocked) bool
	// Blocked is the number of blocked clients, and of those whose wait
	// has a timeout (INFO blocked_clients, clients_in_timeout_table).
	Blocked() (blocked, withTimeout int)
	// Pause holds the clients' commands until until (CLIENT PAUSE):
	// all of them, or with all false those that may write. A pause in
	// force is extended to the later end and the stricter mode.
	Pause(until time.Time, all bool)
	// Unpause lifts the pause.
	Unpause()
}

// Unblocked says why a blocked command stopped waiting.
type Unblocked int

// Why a wait ends.
const (
	// UnblockedTimeout: its timeout passed, or CLIENT UNBLOCK id TIMEOUT.
	UnblockedTimeout Unblocked = iota
	// UnblockedError: CLIENT UNBLOCK id ERROR; the command answers
	// errUnblocked.
	UnblockedError
	// UnblockedReady: what the command waited for happened.
	UnblockedReady
	// UnblockedClosed: the connection closed or the server is stopping.
	UnblockedClosed
)

// Blocker blocks the connection running a command, Redis's blockClient:
// the client is registered as blocked while it waits (CLIENT LIST flag b,
// INFO blocked_clients) and CLIENT UNBLOCK can end the wait. WAIT uses it;
// the blocking list, sorted set and stream commands are to use it too.
type Blocker interface {
	// Block waits until timeout passes (never when 0), ready is closed
	// (nil: never), CLIENT UNBLOCK ends the wait, or the connection
	// closes, and says which. It must not be called inside EXEC. Dispatch
	// runs a handler that touches data under Server.exclusive's read
	// lock: the first blocking command of that kind (BLPOP) must have the
	// wait release it, or a waiting EXEC holds every client up.
	Block(timeout time.Duration, ready <-chan struct{}) Unblocked
}

// errUnblocked is the reply of a command CLIENT UNBLOCK ERROR ended.
const errUnblocked = "UNBLOCKED client unblocked via CLIENT UNBLOCK"

// ReplyMode is a CLIENT REPLY setting, with Redis's rules: OFF drops every
// reply until ON; SKIP drops the reply of the next command (and does
// nothing while OFF).
type ReplyMode int

// The reply settings.
const (
	// ReplyOn: CLIENT REPLY ON, clearing OFF and a SKIP in effect.
	ReplyOn ReplyMode = iota
	// ReplyOff: CLIENT REPLY OFF.
	ReplyOff
	// ReplySkip: CLIENT REPLY SKIP.
	ReplySkip
	// ReplyReset: RESET, which clears OFF and a SKIP not yet in effect.
	ReplyReset
)

// ClientInfo is a snapshot of one connection for CLIENT LIST, CLIENT INFO
// and CLIENT KILL. Only the caller's own buffers can be measured: for the
// other clients the buffer fields hold what an idle connection has.
type ClientInfo struct {
	ID               int64
	Addr, LAddr      string
	FD               int
	Name             string
	Age, Idle        int64
	DB               int
	LastCmd          string
	LibName, LibVer  string
	Proto            int
	NoEvict, NoTouch bool
	// Blocked: the client waits in a blocking command or CLIENT PAUSE.
	Blocked           bool
	User              string
	Qbuf, QbufFree    int
	ArgvMem           int
	Rbs, Rbp          int
	Obl, Omem, TotMem int
	// InMulti: the client is in MULTI, with Multi commands queued whose
	// arguments take MultiMem bytes.
	InMulti         bool
	Multi, MultiMem int
	// Sub, PSub and SSub count the client's channel, pattern and shard
	// channel subscriptions; with any, it is a pubsub client (flag P).
	Sub, PSub, SSub int
	// Tracking is CLIENT TRACKING's state (flags t, R, B; redir).
	Tracking tracking.Info
	// Monitor: the connection runs MONITOR (flag O).
	Monitor bool
}

// pubsubClient reports whether ci has subscriptions (Redis's
// CLIENT_PUBSUB).
func (ci *ClientInfo) pubsubClient() bool { return ci.Sub+ci.PSub+ci.SSub > 0 }

// clientType is Redis's getClientType: kvserver has no replicas or
// master link, so a client is a pubsub client or a normal one.
func (ci *ClientInfo) clientType() clientType {
	if ci.pubsubClient() {
		return clientPubsub
	}
	return clientNormal
}

const (
	errWrongPass = "WRONGPASS invalid username-password pair or user is disabled."
	errNoPassSet = "ERR AUTH <password> called without any password configured for the default user. " +
		"Are you sure your configuration is correct?"
	errHelloNoAuth = "NOAUTH HELLO must be called with the client already authenticated, otherwise the " +
		"HELLO AUTH <user> <pass> option can be used to authenticate the client and select " +
		"the RESP protocol version at the same time"
	errClientName = "ERR Client names cannot contain spaces, newlines or special characters."
)

func cmdPing(x *Ctx) {
	if len(x.Args) <= 2 && x.Session.Proto() == 2 && x.PubSub.Subscribed() {
		// Redis's pingCommand in RESP2 subscribed mode: a message-like
		// array, so that a subscriber's reader can parse it.
		x.W.Array(2)
		x.W.BulkString("pong")
		if len(x.Args) == 1 {
			x.W.BulkString("")
		} else {
			x.W.Bulk(x.Args[1])
		}
		return
	}
	switch len(x.Args) {
	case 1:
		x.W.Simple("PONG")
	case 2:
		x.W.Bulk(x.Args[1])
	default:
		x.W.Error("ERR wrong number of arguments for 'ping' command")
	}
}

func cmdEcho(x *Ctx) { x.W.Bulk(x.Args[1]) }

// cmdQuit answers +OK and closes the connection once the reply is written.
func cmdQuit(x *Ctx) {
	x.W.OK()
	x.Session.CloseAfterReply()
}

// cmdReset returns the connection to its state right after connecting,
// like Redis's clearClientConnectionState: database 0, RESP2, no name, the
// default user (not authenticated when it needs a password), no-evict and
// no-touch off, replies on, no transaction and no watched key. The library name and
// version stay: they still describe the client.
func cmdReset(x *Ctx) {
	x.Transaction.Discard()
	x.PubSub.DropSubscriptions()
	x.Tracking.TrackingOff()
	x.Monitor.StopMonitor()
	x.Session.SetDB(0)
	x.Session.SetProto(2)
	x.Session.ResetUser()
	x.Session.SetNoTouch(false)
	x.Session.SetName("")
	x.Session.SetNoEvict(false)
	x.Session.SetReply(ReplyReset)
	x.W.Simple("RESET")
}

func cmdAuth(x *Ctx) {
	args := x.Args
	var user, pass []byte
	switch len(args) {
	case 2:
		if x.Users.DefaultNoPass() {
			x.W.Error(errNoPassSet)
			return
		}
		user, pass = []byte("default"), args[1]
	case 3:
		user, pass = args[1], args[2]
	default:
		x.W.Error(errSyntax)
		return
	}
	if !x.Session.Authenticate(user, pass) {
		x.W.Error(errWrongPass)
		return
	}
	x.W.OK()
}

// cmdHello implements HELLO [protover [AUTH user pass] [SETNAME name]] in
// Redis's order: version, options (the name is validated first), then
// authentication, then the switch of protocol, whose reply is already in
// the new protocol.
func cmdHello(x *Ctx) {
	args := x.Args
	ver := int64(0)
	next := 1
	if len(args) >= 2 {
		var ok bool
		if ver, ok = ParseInt64(args[1]); !ok {
			x.W.Error("ERR Protocol version is not an integer or out of range")
			return
		}
		if ver < 2 || ver > 3 {
			x.W.Error("NOPROTO unsupported protocol version")
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
				x.W.Error(errClientName)
				return
			}
			j++
		default:
			x.W.Error("ERR Syntax error in HELLO option '" + string(args[j]) + "'")
			return
		}
	}
	if user != nil && !x.Session.Authenticate(user, pass) {
		x.W.Error(errWrongPass)
		return
	}
	if x.Session.AuthRequired() {
		x.W.Error(errHelloNoAuth)
		return
	}
	if setName {
		x.Session.SetName(string(name))
	}
	if ver != 0 {
		x.Session.SetProto(int(ver))
	}
	x.W.Map(7)
	x.W.BulkString("server")
	x.W.BulkString("redis")
	x.W.BulkString("version")
	x.W.BulkString(RedisCompatVersion)
	x.W.BulkString("proto")
	x.W.Int(int64(x.Session.Proto()))
	x.W.BulkString("id")
	x.W.Int(x.Session.ID())
	x.W.BulkString("mode")
	x.W.BulkString(x.Clients.Mode())
	x.W.BulkString("role")
	x.W.BulkString("master")
	x.W.BulkString("modules")
	x.W.Array(0)
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

func cmdClientId(x *Ctx) { x.W.Int(x.Session.ID()) }

func cmdClientGetname(x *Ctx) {
	name := x.Session.Name()
	if name == "" {
		x.W.Null()
		return
	}
	x.W.BulkString(name)
}

func cmdClientSetname(x *Ctx) {
	if !validClientAttr(x.Args[2]) {
		x.W.Error(errClientName)
		return
	}
	x.Session.SetName(string(x.Args[2]))
	x.W.OK()
}

// cmdClientSetinfo implements CLIENT SETINFO LIB-NAME|LIB-VER value with
// Redis 7.2's errors.
func cmdClientSetinfo(x *Ctx) {
	attr, val := x.Args[2], x.Args[3]
	isName := equalFold(attr, "lib-name")
	if !isName && !equalFold(attr, "lib-ver") {
		x.W.Error("ERR Unrecognized option '" + string(attr) + "'")
		return
	}
	if !validClientAttr(val) {
		x.W.Error("ERR " + string(attr) + " cannot contain spaces, newlines or special characters.")
		return
	}
	if isName {
		x.Session.SetLibName(string(val))
	} else {
		x.Session.SetLibVer(string(val))
	}
	x.W.OK()
}

// setOnOff parses the ON|OFF argument of NO-EVICT and NO-TOUCH and, when
// it is one of them, passes it to set.
func setOnOff(x *Ctx, set func(on bool)) {
	switch {
	case equalFold(x.Args[2], "on"):
		set(true)
	case equalFold(x.Args[2], "off"):
		set(false)
	default:
		x.W.Error(errSyntax)
		return
	}
	x.W.OK()
}

// cmdClientNoEvict records the flag for CLIENT LIST; kvserver never evicts
// clients (there is no maxmemory-clients), so it changes nothing else.
func cmdClientNoEvict(x *Ctx) { setOnOff(x, x.Session.SetNoEvict) }

// cmdClientNoTouch makes this client's reads leave the LRU order alone.
func cmdClientNoTouch(x *Ctx) { setOnOff(x, x.Session.SetNoTouch) }

// cmdClientMaintNotifications acknowledges redis-py 8's opt-in to
// maintenance push notifications: kvserver has no maintenance events, so
// whatever the client asks for, it will simply never receive one.
func cmdClientMaintNotifications(x *Ctx) { x.W.OK() }

func cmdClientHelp(x *Ctx) {
	writeHelp(x, "CLIENT",
		"CACHING (YES|NO)",
		"    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
		"GETREDIR",
		"    Return the client ID we are redirecting to when tracking is enabled.",
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
		"UNPAUSE",
		"    Stop the current client pause, resuming traffic.",
		"PAUSE <timeout> [WRITE|ALL]",
		"    Suspend all, or just write, clients for <timeout> milliseconds.",
		"REPLY (ON|OFF|SKIP)",
		"    Control the replies sent to the current connection.",
		"SETINFO <option> <value>",
		"    Set client meta attr. Options are:",
		"    * LIB-NAME: the client lib name.",
		"    * LIB-VER: the client lib version.",
		"SETNAME <name>",
		"    Assign the name <name> to the current connection.",
		"UNBLOCK <clientid> [TIMEOUT|ERROR]",
		"    Unblock the specified blocked client.",
		"TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
		"         [OPTIN] [OPTOUT] [NOLOOP]",
		"    Control server assisted client side caching.",
		"TRACKINGINFO",
		"    Report tracking status for the current connection.",
		"NO-EVICT (ON|OFF)",
		"    Protect current client connection from eviction.",
		"NO-TOUCH (ON|OFF)",
		"    Will not touch LRU/LFU stats when this mode is on.",
		"MAINT_NOTIFICATIONS <option> ...",
		"    Accepted for compatibility; kvserver sends no maintenance notifications.",
	)
}

// clientType is what CLIENT LIST TYPE and CLIENT KILL TYPE filter on.
// kvserver's clients are normal or pubsub clients: there are no replicas
// and no master link.
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

// cmdClientList implements CLIENT LIST [TYPE type] or CLIENT LIST ID id...
// (one filter at a time, as in Redis 7.0 to 7.2).
func cmdClientList(x *Ctx) {
	args := x.Args
	var ids []int64
	typeFilter, filtered := clientNormal, false
	switch {
	case len(args) == 2:
	case len(args) == 4 && equalFold(args[2], "type"):
		t, ok := parseClientType(args[3])
		if !ok {
			x.W.Error("ERR Unknown client type '" + string(args[3]) + "'")
			return
		}
		typeFilter, filtered = t, true
	case len(args) > 3 && equalFold(args[2], "id"):
		for _, a := range args[3:] {
			id, ok := ParseInt64(a)
			if !ok {
				x.W.Error("ERR Invalid client ID")
				return
			}
			ids = append(ids, id)
		}
	default:
		x.W.Error(errSyntax)
		return
	}
	var b strings.Builder
	if ids != nil {
		// Like Redis, one line per ID asked for, in the order asked.
		for _, id := range ids {
			if ci, ok := x.Clients.Get(id); ok {
				appendClientLine(&b, &ci)
				b.WriteByte('\n')
			}
		}
	} else {
		for _, ci := range x.Clients.List() {
			if filtered && ci.clientType() != typeFilter {
				continue
			}
			appendClientLine(&b, &ci)
			b.WriteByte('\n')
		}
	}
	x.W.Verbatim(b.String())
}

func cmdClientInfo(x *Ctx) {
	var b strings.Builder
	ci := x.Clients.Self()
	appendClientLine(&b, &ci)
	b.WriteByte('\n')
	x.W.Verbatim(b.String())
}

// appendClientLine writes one CLIENT LIST line (without the newline) in
// Redis 7.2's format.
func appendClientLine(b *strings.Builder, ci *ClientInfo) {
	flags := ""
	multi := int64(-1)
	if ci.Monitor {
		flags += "O"
	}
	if ci.pubsubClient() {
		flags += "P"
	}
	if ci.InMulti {
		flags += "x"
		multi = int64(ci.Multi)
	}
	if ci.Blocked {
		flags += "b"
	}
	redir := int64(-1)
	if ci.Tracking.On {
		flags += "t"
		redir = ci.Tracking.Mode.Redirect
		if ci.Tracking.BrokenRedir {
			flags += "R"
		}
		if ci.Tracking.Mode.BCAST {
			flags += "B"
		}
	}
	if ci.NoEvict {
		flags += "e"
	}
	if ci.NoTouch {
		flags += "T"
	}
	if flags == "" {
		flags = "N"
	}
	cmd := ci.LastCmd
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
	num("id", ci.ID)
	field("addr", ci.Addr)
	field("laddr", ci.LAddr)
	num("fd", int64(ci.FD))
	field("name", ci.Name)
	num("age", ci.Age)
	num("idle", ci.Idle)
	field("flags", flags)
	num("db", int64(ci.DB))
	num("sub", int64(ci.Sub))
	num("psub", int64(ci.PSub))
	num("ssub", int64(ci.SSub))
	num("multi", multi)
	num("qbuf", int64(ci.Qbuf))
	num("qbuf-free", int64(ci.QbufFree))
	num("argv-mem", int64(ci.ArgvMem))
	num("multi-mem", int64(ci.MultiMem))
	num("rbs", int64(ci.Rbs))
	num("rbp", int64(ci.Rbp))
	num("obl", int64(ci.Obl))
	num("oll", 0)
	num("omem", int64(ci.Omem))
	num("tot-mem", int64(ci.TotMem))
	field("events", "r")
	field("cmd", cmd)
	field("user", ci.User)
	num("redir", redir)
	num("resp", int64(ci.Proto))
	field("lib-name", ci.LibName)
	field("lib-ver", ci.LibVer)
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

func (f *killFilter) matches(self int64, ci *ClientInfo) bool {
	if f.skipMe && ci.ID == self {
		return false
	}
	if f.id != 0 && ci.ID != f.id {
		return false
	}
	if f.hasType && f.typ != ci.clientType() {
		return false
	}
	if f.addr != nil && ci.Addr != string(f.addr) {
		return false
	}
	if f.laddr != nil && ci.LAddr != string(f.laddr) {
		return false
	}
	if f.user != nil && ci.User != string(f.user) {
		return false
	}
	return true
}

// cmdClientKill implements CLIENT KILL ip:port (old form: +OK or an error)
// and CLIENT KILL <filter> <value> ... (new form: the number killed). The
// caller is killed only by the old form or with SKIPME no; its reply is
// still written before its connection closes.
func cmdClientKill(x *Ctx) {
	args := x.Args
	f := killFilter{skipMe: true}
	oldForm := len(args) == 3
	if oldForm {
		f.addr = args[2]
		f.skipMe = false
	} else {
		for i := 2; i < len(args); i += 2 {
			if i+1 >= len(args) {
				x.W.Error(errSyntax)
				return
			}
			opt, val := args[i], args[i+1]
			switch {
			case equalFold(opt, "id"):
				id, ok := ParseInt64(val)
				if !ok || id < 1 {
					x.W.Error("ERR client-id should be greater than 0")
					return
				}
				f.id = id
			case equalFold(opt, "type"):
				t, ok := parseClientType(val)
				if !ok {
					x.W.Error("ERR Unknown client type '" + string(val) + "'")
					return
				}
				f.hasType, f.typ = true, t
			case equalFold(opt, "addr"):
				f.addr = val
			case equalFold(opt, "laddr"):
				f.laddr = val
			case equalFold(opt, "user"):
				if !x.Users.Exists(string(val)) {
					x.W.Error("ERR No such user '" + string(val) + "'")
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
					x.W.Error(errSyntax)
					return
				}
			default:
				x.W.Error(errSyntax)
				return
			}
		}
	}
	self := x.Session.ID()
	killed := 0
	for _, ci := range x.Clients.List() {
		if !f.matches(self, &ci) {
			continue
		}
		killed++
		if ci.ID == self {
			x.Session.CloseAfterReply()
			continue
		}
		x.Clients.Kill(ci.ID)
	}
	if !oldForm {
		x.W.Int(int64(killed))
		return
	}
	if killed == 0 {
		x.W.Error("ERR No such client")
		return
	}
	x.W.OK()
}

// cmdClientReply is CLIENT REPLY ON|OFF|SKIP. Only ON answers; the
// connection drops the replies OFF and SKIP suppress.
func cmdClientReply(x *Ctx) {
	switch arg := x.Args[2]; {
	case equalFold(arg, "on"):
		x.Session.SetReply(ReplyOn)
		x.W.OK()
	case equalFold(arg, "off"):
		x.Session.SetReply(ReplyOff)
	case equalFold(arg, "skip"):
		x.Session.SetReply(ReplySkip)
	default:
		x.W.Error(errSyntax)
	}
}

// cmdClientPause is CLIENT PAUSE timeout [WRITE|ALL], checking the mode
// before the timeout as Redis does. A timeout that overflows Redis's
// millisecond clock ends in the past there, so it pauses nothing here.
func cmdClientPause(x *Ctx) {
	args := x.Args
	if len(args) > 4 {
		replySubcommandSyntaxError(x, x.Args[1], "CLIENT")
		return
	}
	all := true
	if len(args) == 4 {
		switch {
		case equalFold(args[3], "write"):
			all = false
		case !equalFold(args[3], "all"):
			x.W.Error("ERR CLIENT PAUSE mode must be WRITE or ALL")
			return
		}
	}
	ms, ok := ParseInt64(args[2])
	if !ok {
		x.W.Error("ERR timeout is not an integer or out of range")
		return
	}
	if ms < 0 {
		x.W.Error("ERR timeout is negative")
		return
	}
	now := time.Now()
	until := now
	if ms <= math.MaxInt64-now.UnixMilli() {
		until = now.Add(time.Duration(min(ms, math.MaxInt64/int64(time.Millisecond))) * time.Millisecond)
	}
	x.Clients.Pause(until, all)
	x.W.OK()
}

func cmdClientUnpause(x *Ctx) {
	x.Clients.Unpause()
	x.W.OK()
}

// cmdClientUnblock is CLIENT UNBLOCK id [TIMEOUT|ERROR]: the reason is
// checked before the id, as in Redis.
func cmdClientUnblock(x *Ctx) {
	args := x.Args
	if len(args) > 4 {
		replySubcommandSyntaxError(x, x.Args[1], "CLIENT")
		return
	}
	reason := UnblockedTimeout
	if len(args) == 4 {
		switch {
		case equalFold(args[3], "error"):
			reason = UnblockedError
		case !equalFold(args[3], "timeout"):
			x.W.Error("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR")
			return
		}
	}
	id, ok := ParseInt64(args[2])
	if !ok {
		x.W.Error(errNotInteger)
		return
	}
	if x.Clients.Unblock(id, reason) {
		x.W.Int(1)
	} else {
		x.W.Int(0)
	}
}

// replySubcommandSyntaxError is Redis's addReplySubcommandSyntaxError: the
// subcommand sub of container, as the client spelled it, got arguments it
// does not take.
func replySubcommandSyntaxError(x *Ctx, sub []byte, container string) {
	x.W.Error("ERR unknown subcommand or wrong number of arguments for '" +
		Sanitize(Truncate(string(sub), 128)) + "'. Try " + container + " HELP.")
}
