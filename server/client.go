package server

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kvserver/kvserver/acl"
	"github.com/kvserver/kvserver/commands"
	"github.com/kvserver/kvserver/engine"
	"github.com/kvserver/kvserver/resp"
)

// Client is one connection's state. Fields used only by the connection's
// own goroutine are plain; what CLIENT LIST and CLIENT KILL read from other
// goroutines sits behind mu or in atomics.
type Client struct {
	ID  int64
	srv *Server
	// x is the context the connection's commands run with (package
	// commands); x.Args is set per command.
	x *commands.Ctx
	// ctx ends when the server stops or the connection is closed or
	// killed; blocking calls (the budget, the engine) take it.
	ctx    context.Context
	cancel context.CancelFunc
	// serverCtx ends only when the server stops: for work that must not
	// stop halfway because the client left (FLUSHALL, SWAPDB).
	serverCtx context.Context
	// lifetime is done when the connection ends (Serve waits for it).
	lifetime *sync.WaitGroup
	conn     net.Conn
	r        *resp.Reader
	w        *resp.Writer
	cmd      resp.Command
	created  time.Time

	// Set by handlers: close the connection once the reply is flushed.
	closeAfterReply bool
	// CLIENT REPLY: replyOff drops every reply, replySkip those of the
	// command running, replySkipNext those of the next one; replyMark is
	// where the replies not yet let through start (reply.go).
	replyOff, replySkip, replySkipNext bool
	replyMark                          resp.ReplyMark
	// cmdMark is where the reply of the command running starts.
	cmdMark resp.ReplyMark
	// readDeadline is set while an idle timeout (CONFIG SET timeout)
	// is armed on conn; writeDeadline while flush left a deadline on it.
	readDeadline  bool
	writeDeadline bool

	// authenticated is false until the client logs in when the default
	// user needs a password; user is whom it runs as (CLIENT LIST reads
	// it from other goroutines).
	authenticated bool
	user          atomic.Pointer[acl.User]
	noTouch       atomic.Bool
	proto         atomic.Int32
	// db is the selected database; dispatch reads it for every command.
	db atomic.Int64

	mu       sync.Mutex
	name     string
	libName  string
	libVer   string
	noEvict  bool
	lastUsed time.Time
	// multiCmds and multiMem are the other clients' CLIENT LIST view of
	// the transaction (publishMulti): 0 outside MULTI, else 1 + the
	// queued commands; their arguments' bytes.
	multiCmds atomic.Int64
	multiMem  atomic.Int64
	// lastCmd is the command the client sent last, nil for an unknown
	// one (CLIENT LIST cmd=): stored for every command, so not under mu.
	lastCmd atomic.Pointer[commands.Spec]

	killed atomic.Bool
	// holdsShared is set while the handler runs under Server.exclusive's
	// read lock, which a command blocked on keys lets go (blockkeys.go).
	holdsShared bool
	// holdsExclusive is set while the client holds Server.exclusive for
	// writing between pipelined scripts (runHandler, releaseExclusive).
	holdsExclusive bool
	// cmdStart is when the running command started (dispatch, EXEC), for
	// what needs the time again while it runs (a script's start).
	cmdStart time.Time

	// subscribed is Redis's CLIENT_PUBSUB: the connection has pub/sub
	// subscriptions; mbox holds the messages it has yet to write
	// (pubsub.go).
	subscribed atomic.Bool
	mbox       mailbox
	// wakes are the subscribers this connection's commands published to
	// whose wake-up waits for the end of its batch (pubsub.go,
	// deferWake); hasWakes says there are some, wakesSpare is a drained
	// array kept for reuse.
	wakesMu    sync.Mutex
	wakes      []*Client
	wakesSpare []*Client
	hasWakes   atomic.Bool
	// tracking is set while CLIENT TRACKING is on; trackPending holds the
	// invalidations its own command caused, written after the reply
	// (session_tracking.go). Both belong to the connection's goroutine.
	tracking     bool
	trackPending [][]byte
	// monitor is set while the connection runs MONITOR (monitor.go).
	monitor atomic.Bool
	// mailboxUsed is set at the first subscription: a connection that
	// never subscribed has no mailbox to look at before each read.
	mailboxUsed atomic.Bool

	// multi is the transaction while the connection is in MULTI, nil
	// otherwise, and spareMulti the last one, kept for the next; watches
	// are the keys WATCH watches; queuedArgs are the arguments of the
	// queued command EXEC is running (Session.Own hands them out). All
	// four belong to the connection's goroutine.
	multi      *multiState
	spareMulti *multiState
	watches    []engine.WatchMark
	queuedArgs [][]byte

	// budget is the client's share of the server's bulkBudget: its big
	// request values, the values loaded for its command and its queued
	// replies.
	budget *budgetAccount
	// progress counts the bytes received from and sent to the client;
	// onClient is onClientRead or onClientWrite while the connection's
	// goroutine is blocked on the client, reading its request or writing
	// its replies: only then can the client, rather than the server (a
	// command, the allocator, the scheduler), be what delays it. The
	// budget watch reads both from its goroutine.
	progress atomic.Int64
	onClient atomic.Int32
	// idle is the idle timeout armed for the current read (0 none).
	idle time.Duration
	// Owned by the budget watch: the progress it last saw and since when.
	seenProgress int64
	stallSince   time.Time
}

// What a connection's goroutine is blocked on (Client.onClient).
const (
	onClientRead  = 1
	onClientWrite = 2
)

// kill closes the connection from another goroutine (CLIENT KILL, a
// stalled budget holder, shutdown) and ends its waits.
func (c *Client) kill() {
	c.killed.Store(true)
	if c.cancel != nil {
		c.cancel()
	}
	c.conn.Close()
}

// clientConn is what a client's Reader reads from: it counts the bytes
// received and, while an idle timeout is armed, moves the read deadline
// forward on every read that brings bytes, so the timeout counts from the
// last byte received and a client in the middle of sending a large value
// is not idle.
type clientConn struct{ c *Client }

// idleRecheck is how long a read whose idle deadline passed looks once
// more for bytes: the deadline may have passed while the connection's
// goroutine was not running (a loaded machine, a collection, a large
// buffer being allocated) with the client's bytes already waiting.
const idleRecheck = 50 * time.Millisecond

func (cc clientConn) Read(p []byte) (int, error) {
	cc.c.onClient.Store(onClientRead)
	n, err := cc.c.conn.Read(p)
	if n == 0 && cc.c.idle > 0 && isTimeout(err) && !cc.c.mbox.wakeUp() {
		cc.c.conn.SetReadDeadline(time.Now().Add(idleRecheck))
		n, err = cc.c.conn.Read(p)
	}
	cc.c.onClient.Store(0)
	if n > 0 {
		cc.c.progress.Add(int64(n))
		if cc.c.idle > 0 {
			cc.c.conn.SetReadDeadline(time.Now().Add(cc.c.idle))
		}
	}
	return n, err
}

// DB is the selected database.
func (c *Client) DB() int { return int(c.db.Load()) }

// setLastCmd records the command the client sent last, nil for an unknown
// one (CLIENT LIST cmd=, which Redis sets at lookup, before any check).
func (c *Client) setLastCmd(spec *commands.Spec) { c.lastCmd.Store(spec) }

// lastCommand is the name of the command the client sent last, "" for an
// unknown one.
func (c *Client) lastCommand() string {
	if spec := c.lastCmd.Load(); spec != nil {
		return spec.Name
	}
	return ""
}

// setProto switches the connection's protocol version (HELLO).
func (c *Client) setProto(p int) {
	c.w.SetProto(p)
	c.proto.Store(int32(p))
}

func (c *Client) setDB(db int) { c.db.Store(int64(db)) }

// clientInfo is a snapshot for CLIENT LIST / CLIENT INFO.
type clientInfo struct {
	id              int64
	addr, laddr     string
	name            string
	age, idle       int64
	db              int
	lastCmd         string
	libName, libVer string
	proto           int
	noEvict         bool
	noTouch         bool
	qbuf, qbufFree  int
	omem            int
	inMulti         bool
	multiLen        int
	multiMem        int
}

func (c *Client) info(now time.Time) clientInfo {
	queued := c.multiCmds.Load()
	c.mu.Lock()
	defer c.mu.Unlock()
	return clientInfo{
		id:       c.ID,
		addr:     clientAddr(c.conn.RemoteAddr(), c.conn.LocalAddr()),
		laddr:    clientAddr(c.conn.LocalAddr(), c.conn.LocalAddr()),
		name:     c.name,
		age:      int64(now.Sub(c.created) / time.Second),
		idle:     int64(now.Sub(c.lastUsed) / time.Second),
		db:       c.DB(),
		lastCmd:  c.lastCommand(),
		libName:  c.libName,
		libVer:   c.libVer,
		noEvict:  c.noEvict,
		noTouch:  c.noTouch.Load(),
		proto:    int(c.proto.Load()),
		inMulti:  queued > 0,
		multiLen: int(max(queued-1, 0)),
		multiMem: int(c.multiMem.Load()),
	}
}

// clientAddr is how CLIENT LIST and CLIENT INFO write an address: host:port
// for TCP, and for a Unix socket client, whose own address is unnamed,
// Redis's "<socket path>:0" from the listening side.
func clientAddr(a, local net.Addr) string {
	if _, ok := a.(*net.UnixAddr); ok {
		return local.String() + ":0"
	}
	return a.String()
}
