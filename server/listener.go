package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kvserver/kvserver/acl"
	"github.com/kvserver/kvserver/bufpool"
	"github.com/kvserver/kvserver/cluster"
	"github.com/kvserver/kvserver/cmdstats"
	"github.com/kvserver/kvserver/commands"
	"github.com/kvserver/kvserver/config"
	"github.com/kvserver/kvserver/engine"
	"github.com/kvserver/kvserver/evloop"
	"github.com/kvserver/kvserver/metrics"
	"github.com/kvserver/kvserver/migrate"
	"github.com/kvserver/kvserver/notify"
	"github.com/kvserver/kvserver/pubsub"
	"github.com/kvserver/kvserver/resp"
	"github.com/kvserver/kvserver/scripting"
	"github.com/kvserver/kvserver/tracking"
	"github.com/kvserver/kvserver/wake"
)

// ErrShutdown is returned by Serve when a client ran SHUTDOWN.
var ErrShutdown = errors.New("shutdown requested by a client")

// Options configures a Server.
type Options struct {
	// RequirePass, when set, makes clients AUTH before other commands.
	RequirePass string
	// MaxClients bounds concurrent connections (default 10000).
	MaxClients int
	// ProtoMaxBulkLen bounds a request bulk (default 512 MiB).
	ProtoMaxBulkLen int64
	// Port and Bind are reported by INFO and CONFIG GET.
	Port int
	Bind string
	// Dir is the working directory reported by CONFIG GET dir.
	Dir string
	// ConfigFile is the config file path reported by INFO.
	ConfigFile string
	// InFlightBulkBytes bounds the large request values being read or
	// handled at once over all connections (default 256 MiB).
	InFlightBulkBytes int64
	// KVQuant is the quantization mode reported by INFO ("off" if empty).
	KVQuant string
	// OnMaxMemory, if set, is told the new bound after CONFIG SET
	// maxmemory (the binary adjusts the Go runtime's memory limit).
	OnMaxMemory func(bytes int64)
	// Logger receives the server's logs (default slog.Default()).
	Logger *slog.Logger
	// Metrics, if set, receives per-command and connection metrics.
	Metrics *metrics.Metrics
	// Cluster, when set, turns on Redis Cluster mode with this slot map,
	// its own node located (cluster.Load); nil runs standalone.
	Cluster *cluster.Map
	// ClusterMembership, when set, reports the node's standing in etcd
	// (INFO cluster) in --cluster-etcd mode.
	ClusterMembership func() commands.Membership

	// Users are ACL users, one Redis ACL user line each ("alice on
	// #<sha256> ~cache:* +@read"; package acl). The default user is "on
	// nopass ~* &* +@all" with RequirePass as its password; a line for
	// default replaces it.
	Users []string
	// RenameCommands renames commands (original name to new name) or
	// disables them (new name ""), like Redis's rename-command.
	RenameCommands map[string]string
	// ProtectedModeOff is protected-mode no at start. By default, like
	// Redis, clients from non-loopback addresses are refused while the
	// default user has no password.
	ProtectedModeOff bool
	// EnableDebugCommand is Redis 7's enable-debug-command: "no" (the
	// default, also for ""), "yes", or "local" (loopback clients only).
	EnableDebugCommand string
	// EnableModuleCommand is Redis 7's enable-module-command, the same for
	// MODULE LOAD, LOADEX and UNLOAD.
	EnableModuleCommand string
	// Timeout is the initial CONFIG timeout: seconds a client may stay
	// idle before it is closed (0 = never). New moves it, ProtectedModeOff,
	// ProtoMaxBulkLen and OutputBufferLimits into the server's run-time
	// state, which CONFIG SET changes; options() reads them as zero.
	Timeout int64
	// OutputBufferLimits is client-output-buffer-limit (the zero value
	// means Redis's defaults: no limit for normal clients).
	OutputBufferLimits config.OutputBufferLimits
	// TLS describes the TLS port for CONFIG GET; the TLS listener itself
	// is one of those passed to Serve.
	TLS TLSInfo
	// Settings are the settings as loaded (package config). The server
	// reads those without a field above by name (config.Setting.ReadByName:
	// exists-lease-ms, max-pin-seconds, max-lease-ms, ...) from its live
	// copy, which CONFIG GET and SET use; the zero value means the
	// settings table's defaults.
	Settings config.Config
}

// TLSInfo is the TLS configuration CONFIG GET reports.
type TLSInfo struct {
	Port                          int
	CertFile, KeyFile, CACertFile string
	AuthClients                   string // yes, no or optional
}

// Server is the RESP front end: it accepts connections, parses requests,
// dispatches them through the command table and writes replies.
type Server struct {
	eng *engine.Engine
	// clock times commands (dispatch, EXEC) with one clock reading each.
	clock wallClock
	// migrations are MIGRATE's cached connections to target servers,
	// closed when Serve returns.
	migrations *migrate.Pool
	table      *commands.Table
	// cmdStats counts each command's calls (Spec.ID), with one more slot
	// for unknown commands: INFO commandstats and latencystats, and the
	// command metrics.
	cmdStats *cmdstats.Table
	// latencyTracking is the live latency-tracking: whether calls go
	// into the latency histograms.
	latencyTracking atomic.Bool
	log             *slog.Logger
	metrics         *metrics.Metrics
	started         time.Time
	nextID          atomic.Int64
	shutdown        chan struct{}
	shutOnce        sync.Once

	cfgMu sync.RWMutex
	opts  Options

	// exclusive keeps EXEC atomic: every command's handler runs under
	// its read lock, EXEC's under its write lock, so no other client's
	// command runs between the commands of a transaction.
	exclusive sync.RWMutex
	// blocked are the clients blocked on keys (blockkeys.go).
	keyWaits *blockRegistry
	// queuedTxBytes is what the queued commands of every open MULTI hold
	// (bounded like the request values in flight; session_transactions.go).
	queuedTxBytes atomic.Int64

	clientsMu sync.Mutex
	clients   map[int64]*Client

	// maxBulk is proto-max-bulk-len, shared with every connection's Reader.
	maxBulk atomic.Int64
	// bulks bounds the large request values in flight (budget.go).
	bulks *bulkBudget
	// slowlogSlowerThan is the live slowlog-log-slower-than in
	// microseconds (negative: off), read by every command (recordSlow).
	slowlogSlowerThan atomic.Int64
	// idleTimeout is CONFIG SET timeout in seconds: idle clients are
	// closed after it; 0 disables it.
	idleTimeout atomic.Int64
	// protectedMode is CONFIG SET protected-mode.
	protectedMode atomic.Bool
	// obufLimits is CONFIG SET client-output-buffer-limit.
	obufLimits atomic.Pointer[config.OutputBufferLimits]

	// users are the ACL users; aclIDs maps each command of the table to
	// its id in the users' catalog.
	users  *acl.Users
	aclIDs map[*commands.Spec]int
	// initErr is an invalid option found by New; Serve returns it.
	initErr error

	stats serverStats

	// settings are the settings the server reads by name, as CONFIG SET
	// leaves them.
	settings *config.Live
	slowlog  slowLog
	acllog   aclLog
	// blocked are the clients blocked in a command or CLIENT PAUSE;
	// pause is CLIENT PAUSE (blocking.go).
	blocked blockedClients
	pause   clientPause

	// slotMap is the cluster slot map in effect, nil in standalone mode
	// (cluster.go); purgeWake wakes the sweep of keys of foreign slots.
	slotMap   atomic.Pointer[cluster.Map]
	purgeWake wake.Signal

	// scripts are the Lua scripts and functions and the one running
	// (session_scripting.go).
	scripts scripts
	// hub holds the pub/sub subscriptions (pubsub.go); notifyFlags is
	// notify-keyspace-events as a notify.Class.
	hub         *pubsub.Hub
	notifyFlags atomic.Int32
	// track is client-side caching's table (session_tracking.go);
	// tracked is set once any client turned tracking on, so that key
	// changes cost nothing before.
	track   *tracking.Table
	tracked atomic.Bool
	// mons are the MONITOR connections (monitor.go).
	mons monitors
}

// serverStats are the counters INFO stats reports.
type serverStats struct {
	connectionsReceived atomic.Int64
	rejectedConnections atomic.Int64
	commandsProcessed   atomic.Int64
	netInput            atomic.Int64
	netOutput           atomic.Int64
	lastSave            atomic.Int64
	// evictedClients counts clients closed for holding the budget
	// without progress while others waited (budgetwatch.go).
	evictedClients atomic.Int64
	// memPeak is the highest used_memory INFO has observed.
	memPeak atomic.Int64
	// errors counts error replies by code (INFO errorstats).
	errors errorStats
}

// New returns a Server over eng.
func New(eng *engine.Engine, opts Options) *Server {
	if opts.MaxClients <= 0 {
		opts.MaxClients = 10000
	}
	if opts.ProtoMaxBulkLen <= 0 {
		opts.ProtoMaxBulkLen = 512 << 20
	}
	if opts.InFlightBulkBytes <= 0 {
		opts.InFlightBulkBytes = 256 << 20
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.OutputBufferLimits == (config.OutputBufferLimits{}) {
		opts.OutputBufferLimits = config.DefaultOutputBufferLimits
	}
	if opts.EnableDebugCommand == "" {
		opts.EnableDebugCommand = "no"
	}
	if opts.EnableModuleCommand == "" {
		opts.EnableModuleCommand = "no"
	}
	if opts.TLS.AuthClients == "" {
		opts.TLS.AuthClients = "yes"
	}
	s := &Server{
		eng:      eng,
		table:    commands.NewTable(commands.Specs()),
		keyWaits: newBlockRegistry(eng),
		log:      opts.Logger,
		metrics:  opts.Metrics,
		started:  time.Now(),
		shutdown: make(chan struct{}),
		opts:     opts,
		clients:  make(map[int64]*Client),
	}
	s.cmdStats = cmdstats.NewTable(s.table.NumIDs() + 1)
	if s.metrics != nil {
		s.metrics.SetCommandSource(commandSource{s})
	}
	s.stats.lastSave.Store(time.Now().Unix())
	s.maxBulk.Store(opts.ProtoMaxBulkLen)
	s.bulks = newBulkBudget(opts.InFlightBulkBytes)
	s.purgeWake = wake.New()
	if opts.Cluster != nil {
		s.slotMap.Store(opts.Cluster)
	}
	s.settings = config.NewLive(opts.Settings)
	s.scripts.lua = scripting.New(opts.Logger)
	s.loadFunctions()
	s.scripts.watch.wake = make(chan struct{}, 1)
	s.hub = pubsub.New()
	s.migrations = migrate.New()
	s.track = tracking.New(trackSender{s})
	if flags, ok := notify.Parse(opts.Settings.NotifyKeyspaceEvents); ok {
		s.notifyFlags.Store(int32(flags))
	} else {
		s.initErr = fmt.Errorf("notify-keyspace-events %q: %s", opts.Settings.NotifyKeyspaceEvents, errNotifyClass)
	}
	eng.SetEvents(eventSink{s})
	applyPolicy(s)
	applySlowlogThreshold(s)
	applyLatencyTracking(s)
	// Settings with a parser keep the form CONFIG SET would keep (Redis
	// prints them back so), whatever the file's spelling; the file was
	// validated, so they parse.
	for name, parse := range liveParsers {
		if v, reason := parse(s.settings.Text(name)); reason == "" {
			s.settings.Set(name, v)
		}
	}
	s.idleTimeout.Store(opts.Timeout)
	s.protectedMode.Store(!opts.ProtectedModeOff)
	limits := opts.OutputBufferLimits
	s.obufLimits.Store(&limits)
	// From here on the atomics own these settings (CONFIG SET changes
	// them there): clear the start values so that no stale copy is read.
	s.opts.Timeout, s.opts.ProtectedModeOff, s.opts.ProtoMaxBulkLen = 0, false, 0
	s.opts.OutputBufferLimits = config.OutputBufferLimits{}
	var err error
	s.users, s.aclIDs, err = newUsers(opts, s.table.Original())
	if s.initErr == nil {
		s.initErr = err
	}
	if s.initErr == nil {
		s.initErr = s.table.Rename(opts.RenameCommands)
	}
	return s
}

// Validate reports the first problem New would find in opts: an ACL user
// line with a bad rule, or a rename-command entry Redis would reject.
func (o Options) Validate() error {
	t := commands.NewTable(commands.Specs())
	if _, _, err := newUsers(o, t.Original()); err != nil {
		return err
	}
	return t.Rename(o.RenameCommands)
}

// options returns the current (CONFIG SET-able) options.
func (s *Server) options() Options {
	s.cfgMu.RLock()
	defer s.cfgMu.RUnlock()
	return s.opts
}

// ShutdownRequested is closed when a client runs SHUTDOWN.
func (s *Server) ShutdownRequested() <-chan struct{} { return s.shutdown }

func (s *Server) requestShutdown() { s.shutOnce.Do(func() { close(s.shutdown) }) }

// Serve accepts connections on the listeners (the plain port, a TLS
// listener from crypto/tls, or both) until ctx is cancelled or a client
// runs SHUTDOWN, then closes every connection and returns (ErrShutdown in
// the second case). Options that New found invalid are returned at once.
func (s *Server) Serve(ctx context.Context, lns ...net.Listener) error {
	if s.initErr != nil {
		for _, ln := range lns {
			ln.Close()
		}
		return s.initErr
	}
	if len(lns) == 0 {
		return errors.New("serve: no listener")
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer s.migrations.Close()
	var wg sync.WaitGroup
	if s.ClusterEnabled() {
		// Keys restored from disk may belong to slots of other nodes.
		s.kickSlotPurge()
		stopPurge := runInBackground(ctx, s.runSlotPurge)
		defer stopPurge()
	}
	stopWatch := runInBackground(ctx, s.watchBudget)
	defer stopWatch()
	stopScriptWatch := runInBackground(ctx, s.watchScripts)
	defer stopScriptWatch()
	stopFunctionSaves := runInBackground(ctx, s.keepFunctionsSaved)
	defer stopFunctionSaves()
	go func() {
		select {
		case <-ctx.Done():
		case <-s.shutdown:
		}
		for _, ln := range lns {
			ln.Close()
		}
	}()
	loops, err := evloop.NewGroup(int(max(s.settings.Int("io-threads"), 1)), s.serveLoopConn)
	if err != nil {
		for _, ln := range lns {
			ln.Close()
		}
		return fmt.Errorf("serve: event loops: %w", err)
	}
	stopSweep := runInBackground(ctx, s.sweepIdleParked)
	errs := make([]error, len(lns))
	var accepting sync.WaitGroup
	for i, ln := range lns {
		accepting.Add(1)
		go func() {
			defer accepting.Done()
			errs[i] = s.accept(ctx, ln, loops, &wg)
			cancel() // one listener failing stops the server
		}()
	}
	accepting.Wait()
	stopSweep()
	s.closeAllClients()
	wg.Wait()
	errs = append(errs, loops.Close())
	err = errors.Join(errs...)
	select {
	case <-s.shutdown:
		if err == nil {
			err = ErrShutdown
		}
	default:
	}
	return err
}

// accept runs one listener's accept loop until it is closed; it returns
// an error only when accepting failed while the server was meant to run.
// Connections of TCP and Unix listeners are served by the event loops;
// those of a TLS listener by a goroutine each.
func (s *Server) accept(ctx context.Context, ln net.Listener, loops *evloop.Group, wg *sync.WaitGroup) error {
	next := ln.Accept
	if el, err := loops.Listen(ln); err == nil {
		// Serve closes ln when it stops; the duplicate the loops accept
		// on must be closed too.
		go func() {
			select {
			case <-ctx.Done():
			case <-s.shutdown:
			}
			el.Close()
		}()
		next = func() (net.Conn, error) {
			c, err := el.Accept()
			if err != nil {
				return nil, err
			}
			return c, nil
		}
	} else if !errors.Is(err, evloop.ErrNotSocketListener) {
		return fmt.Errorf("accept on %s: %w", ln.Addr(), err)
	}
	var err error
	for {
		conn, aerr := next()
		if aerr != nil {
			var ne net.Error
			if errors.As(aerr, &ne) && ne.Timeout() {
				time.Sleep(5 * time.Millisecond)
				continue
			}
			if ctx.Err() == nil {
				select {
				case <-s.shutdown:
				default:
					err = fmt.Errorf("accept on %s: %w", ln.Addr(), aerr)
				}
			}
			break
		}
		s.stats.connectionsReceived.Add(1)
		c := s.newClient(ctx, conn, wg)
		if c == nil {
			continue
		}
		wg.Add(1)
		c.lifetime = wg
		go func() {
			if !s.handshake(c) {
				s.endClient(c, nil)
				return
			}
			// readFirst ends the client itself when the read failed.
			if s.readFirst(c) {
				s.serveClient(c)
			}
		}()
	}
	return err
}

// newClient registers a connection, or refuses it with Redis's error when
// maxclients is reached or protected mode denies its address.
func (s *Server) newClient(ctx context.Context, conn net.Conn, wg *sync.WaitGroup) *Client {
	opts := s.options()
	s.clientsMu.Lock()
	if len(s.clients) >= opts.MaxClients {
		s.clientsMu.Unlock()
		s.reject(conn, "-ERR max number of clients reached\r\n", wg)
		return nil
	}
	if s.protectedModeDenies(conn.RemoteAddr()) {
		s.clientsMu.Unlock()
		s.log.Debug("protected mode: refused a client", "addr", conn.RemoteAddr().String())
		s.reject(conn, "-"+errDenied+"\r\n", wg)
		return nil
	}
	now := time.Now()
	c := &Client{
		ID:       s.nextID.Add(1),
		srv:      s,
		conn:     conn,
		w:        resp.NewWriter(vectorConn{conn}),
		created:  now,
		lastUsed: now,
	}
	c.r = resp.NewReader(flushBeforeRead{s, c}, &s.maxBulk)
	c.serverCtx = ctx
	c.ctx, c.cancel = context.WithCancel(ctx)
	c.budget = s.bulks.account()
	if pc, ok := conn.(*evloop.Conn); ok {
		pc.SetOwner(c)
		c.budget.beforeWait = c.leaveLoop
	}
	c.r.SetBulkBudget(c.ctx, readerBudget{c})
	if p := s.eng.ValuePool(); p != nil {
		c.r.SetValuePool(p, bufpool.MinSize)
	}
	c.proto.Store(2)
	c.x = s.newCommandCtx(c)
	s.setDefaultAuth(c)
	s.clients[c.ID] = c
	s.clientsMu.Unlock()
	if s.metrics != nil {
		s.metrics.ConnectionOpened()
	}
	return c
}

// reject refuses conn with a one-line error reply and counts it in
// rejected_connections, as Redis does. A TLS connection is answered by a
// goroutine of its own: its handshake must come first and must not hold
// up the accept loop.
func (s *Server) reject(conn net.Conn, reply string, wg *sync.WaitGroup) {
	s.stats.rejectedConnections.Add(1)
	if s.metrics != nil {
		s.metrics.ConnectionRejected()
	}
	write := func(timeout time.Duration) {
		conn.SetDeadline(time.Now().Add(timeout))
		io.WriteString(conn, reply)
		conn.Close()
		if pc, ok := conn.(*evloop.Conn); ok {
			pc.Release()
		}
	}
	if _, isTLS := conn.(*tls.Conn); !isTLS {
		write(time.Second)
		return
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		write(tlsHandshakeTimeout)
	}()
}

func (s *Server) removeClient(c *Client) {
	s.clientsMu.Lock()
	_, listed := s.clients[c.ID]
	delete(s.clients, c.ID)
	s.clientsMu.Unlock()
	if listed && s.metrics != nil {
		s.metrics.ConnectionClosed() // once, however often it is removed
	}
}

func (s *Server) closeAllClients() {
	s.clientsMu.Lock()
	defer s.clientsMu.Unlock()
	for _, c := range s.clients {
		c.kill()
	}
}

// forEachClient calls fn for a snapshot of the connected clients.
func (s *Server) forEachClient(fn func(c *Client)) {
	s.clientsMu.Lock()
	list := make([]*Client, 0, len(s.clients))
	for _, c := range s.clients {
		list = append(list, c)
	}
	s.clientsMu.Unlock()
	for _, c := range list {
		fn(c)
	}
}

// clientCount is the number of connected clients.
func (s *Server) clientCount() int {
	s.clientsMu.Lock()
	defer s.clientsMu.Unlock()
	return len(s.clients)
}

// serveClient runs a connection on its own goroutine: read a command,
// dispatch it, and flush the replies once no pipelined command is waiting.
// It returns when the connection ends, or when it is idle and parks on its
// event loop (eventloop.go), which runs it from then on.
func (s *Server) serveClient(c *Client) {
	for {
		if s.park(c) {
			return
		}
		if c.w.Pending() > 0 && !c.r.Buffered() {
			// Replies an event loop's pass left for its end, when the
			// connection left the loop before that.
			if err := s.sendReplies(c); err != nil {
				s.endClient(c, nil)
				return
			}
		}
		s.armIdleTimeout(c)
		c.r.SetAuthRequired(s.authRequired(c))
		err := c.r.ReadCommand(&c.cmd)
		s.countIO(c)
		if err != nil || !s.runCommand(c, nil) {
			s.endClient(c, err)
			return
		}
	}
}

// readFirst reads, without waiting, what a new connection of an event loop
// sent with its connection (a client usually sends its first command at
// once), so that serveClient runs it now instead of parking the
// connection and running it at the loop's next wake: a command sent on
// another connection a little later then finds it done, as on Redis,
// which reads its connections in the order their data arrived (go-redis's
// suite subscribes on a new connection and publishes at once on another).
// It reports false, having ended the client, when the connection failed.
func (s *Server) readFirst(c *Client) bool {
	pc, ok := c.conn.(*evloop.Conn)
	if !ok {
		return true
	}
	_, err := c.r.Fill(pc.TryRead)
	s.countIO(c)
	if err != nil && !errors.Is(err, evloop.ErrWouldBlock) {
		s.endClient(c, err)
		return false
	}
	return true
}

// runCommand runs the command just read, answers it, and reports whether
// the connection stays open. The replies are flushed once no more
// pipelined input waits, except on an event loop's pass (loop is the
// connection the loop serves): the loop sends them at the end of its pass,
// as Redis writes in beforeSleep, unless the command left the loop.
func (s *Server) runCommand(c *Client, loop *evloop.Conn) bool {
	c.wakesBefore(c.cmd.Args)
	if c.mailboxUsed.Load() {
		c.takeMessagesAhead()
	}
	c.cmdMark = c.w.Mark()
	c.replyMark = c.cmdMark
	s.dispatch(c)
	s.commandDoneTracking(c)
	// The command's request values are the store's now (or dropped);
	// what it holds from here on is its queued reply.
	c.r.DropArgs(&c.cmd)
	s.countErrorReply(c, c.cmdMark)
	c.endReplies()
	s.afterCommandTracking(c)
	if c.mailboxUsed.Load() {
		c.takeMessages()
	}
	if !c.r.Buffered() {
		c.wakeSubscribers()
	}
	c.budget.settle(heldBytes(c))
	if c.killed.Load() || s.overHardLimit(c) {
		return false
	}
	// Out of input: send now, unless the loop's pass sends at its end.
	sendNow := !c.r.Buffered() && (loop == nil || loop.Running() || c.mailboxUsed.Load())
	if sendNow || c.w.Pending() > maxPendingReply || c.closeAfterReply {
		if err := s.sendReplies(c); err != nil {
			return false
		}
	}
	return !c.closeAfterReply
}

// sendReplies writes c's queued replies, first letting Server.exclusive
// go: no other client waits for this one's network.
func (s *Server) sendReplies(c *Client) error {
	s.releaseExclusive(c)
	err := s.flush(c)
	s.countIO(c)
	return err
}

// endClient closes the connection and forgets the client; readErr is the
// read that ended it, whose protocol error is answered first.
func (s *Server) endClient(c *Client, readErr error) {
	var perr *resp.ProtocolError
	if errors.As(readErr, &perr) {
		c.w.Error("ERR " + perr.Msg)
		c.w.Flush()
		s.countIO(c)
		s.log.Debug("protocol error, closing connection", "client", c.ID, "addr", c.conn.RemoteAddr().String(), "err", perr.Msg)
	}
	s.releaseExclusive(c)
	c.cancel()
	c.budget.settle(0)
	// What the client held goes before its connection closes: a client
	// that saw it close (after QUIT, say) and publishes from another
	// connection, served by another event loop, must find it unsubscribed.
	c.dropQueued()
	c.unwatchAll()
	s.hub.Drop(c)
	s.track.Disable(c.ID)
	session{c}.StopMonitor()
	c.closeMailbox()
	c.conn.Close()
	c.r.Release()
	if pc, ok := c.conn.(*evloop.Conn); ok {
		pc.Release()
	}
	s.removeClient(c)
	if c.lifetime != nil {
		c.lifetime.Done()
	}
}

// readerBudget is the client's budget as its Reader takes large bulks from
// it: the Reader may wait there, so the client first lets go of the lock it
// kept after a script (runHandler).
type readerBudget struct{ c *Client }

func (b readerBudget) Acquire(ctx context.Context, n int64) error {
	b.c.srv.releaseExclusive(b.c)
	return b.c.budget.Acquire(ctx, n)
}

func (b readerBudget) TryAcquire(n int64) bool { return b.c.budget.tryAcquire(n) }

// flushBeforeRead is the connection as a client's Reader sees it: before a
// read that may block, it sends the replies serveClient held back because
// more input was buffered. Buffered input is not always a whole command
// (a pipeline cut mid-command, the "\r\n" left after a bulk whose CRLF
// Redis skips unread, as in *1\r\n$4\r\nPINGXX\r\n), and a reply must
// never wait for bytes the client will only send after reading it.
type flushBeforeRead struct {
	s *Server
	c *Client
}

// It is also where a waiting subscriber sends its messages (pubsub.go):
// a read that Deliver cut short sends them and reads again.
func (f flushBeforeRead) Read(p []byte) (int, error) {
	f.s.releaseExclusive(f.c)
	for {
		subscriber := f.c.mailboxUsed.Load()
		if subscriber {
			f.c.takeMessages()
		}
		if f.c.w.Pending() > 0 {
			err := f.s.flush(f.c)
			f.s.countIO(f.c)
			if err != nil {
				return 0, fmt.Errorf("flush replies before reading: %w", err)
			}
		}
		if !subscriber {
			n, err := clientConn{f.c}.Read(p)
			if n == 0 && isTimeout(err) && f.c.endRead() && !f.c.killed.Load() {
				// useMailbox cut the read short: read the mailbox.
				continue
			}
			return n, err
		}
		if !f.c.startRead() {
			continue
		}
		n, err := clientConn{f.c}.Read(p)
		if f.c.endRead() && n == 0 && isTimeout(err) && !f.c.killed.Load() {
			continue
		}
		return n, err
	}
}

// countOutput counts n bytes written to a client: by its writer
// (countIO), or outside it (a subscriber's messages sent by the
// publisher, sendQueued).
func (s *Server) countOutput(n int) {
	if n <= 0 {
		return
	}
	s.stats.netOutput.Add(int64(n))
	if s.metrics != nil {
		s.metrics.AddBytesWritten(n)
	}
}

// countIO adds what c read and wrote since the last call to the server's
// counters. It runs after every command, most of which read and wrote
// nothing (a pipeline comes in one read, its replies go in one write): no
// atomic add of zero.
func (s *Server) countIO(c *Client) {
	if in := c.r.BytesRead(); in > 0 {
		s.stats.netInput.Add(in)
		if s.metrics != nil {
			s.metrics.AddBytesRead(int(in))
		}
	}
	s.countOutput(int(c.w.BytesWritten()))
}

// maxPendingReply is the buffered reply size that forces a flush even when
// more pipelined commands are waiting.
const maxPendingReply = 1 << 20

// vectorConn is a connection as a client's Writer sees it: queued large
// bulks go out with one vectored write (writev on TCP connections),
// without being copied.
type vectorConn struct{ net.Conn }

// WriteBuffers writes bufs with net.Buffers, vectored where the
// connection supports it.
func (c vectorConn) WriteBuffers(bufs [][]byte) (int64, error) {
	if bw, ok := c.Conn.(interface {
		WriteBuffers([][]byte) (int64, error)
	}); ok {
		return bw.WriteBuffers(bufs)
	}
	nb := net.Buffers(bufs)
	return nb.WriteTo(c.Conn)
}

// everySecond calls fn once a second until ctx ends (the first call a
// second from now): the body of a background task of runInBackground.
func everySecond(ctx context.Context, fn func()) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			fn()
		}
	}
}

// runInBackground runs fn in a goroutine under a context of its own, derived
// from ctx; stop cancels that context and waits for fn to return.
func runInBackground(ctx context.Context, fn func(context.Context)) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(ctx)
	}()
	return func() { cancel(); <-done }
}
