package server

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kvserver/kvserver/cluster"
	"github.com/kvserver/kvserver/commands"
	"github.com/kvserver/kvserver/engine"
	"github.com/kvserver/kvserver/evloop"
	"github.com/kvserver/kvserver/resp"
	"github.com/kvserver/kvserver/scripting"
)

// The server's side of scripting (commands.Scripting): one script runs at a
// time, alone like EXEC (dispatch takes Server.exclusive for writing for
// Spec.Exclusive commands); the commands it calls go through the command
// table with Redis's checks for scripts (script.c's scriptCall); once it has
// run busy-reply-threshold milliseconds, other clients' commands are
// answered BUSY and SCRIPT KILL or FUNCTION KILL may stop it.

const (
	errBusyScript   = commands.ErrBusyScript
	errBusyFunction = commands.ErrBusyFunction
	errUnkillable   = "UNKILLABLE Sorry the script already executed write commands against the dataset. " +
		"You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command."
)

// scripts is the server's scripting: the engine with the scripts and
// libraries, and the script running now.
type scripts struct {
	lua *scripting.Engine
	// running is the script running now. Other goroutines read it
	// through acquireRunning, which holds it against reuse.
	running atomic.Pointer[scriptRun]
	// spare is the last script's run, reused by the next one when no
	// other goroutine held it: a run per EVALSHA was, with the
	// collections it brought, 5-6% of a pipeline of small scripts.
	spare *scriptRun

	// Reused by one script after the other (scripts run one at a time,
	// under Server.exclusive): the caller with its reply buffer, and the
	// switch SCRIPT KILL throws, replaced once thrown. An EVALSHA of a
	// small script then allocates little beyond its Lua values.
	caller *scriptCaller
	kill   *killSwitch
	// watch is the busy watchdog (watchScripts).
	watch scriptWatch
	// saveMu serializes the saves of the function libraries
	// (saveFunctions).
	saveMu sync.Mutex
	// unsaved is set while the disk lacks the libraries' last change (its
	// save failed, say on a full disk); keepFunctionsSaved saves them again.
	unsaved atomic.Bool
}

// scriptWatch is what RunScript and watchScripts share: a script that runs
// past busy-reply-threshold leaves its event loop, so that the loop's other
// clients are answered BUSY and may send SCRIPT KILL. One goroutine watches
// every script, and only while scripts run: a timer armed and stopped per
// script cost a pipeline of EVALSHAs 6% of the server's CPU.
type scriptWatch struct {
	// runs counts the scripts started, so that the watchdog sees that
	// scripts ran between two of its looks.
	runs atomic.Uint64
	// idle is set while the watchdog waits for wake.
	idle atomic.Bool
	wake chan struct{}
}

// killSwitch is the context a script runs under, done once SCRIPT KILL or
// FUNCTION KILL throws it. The Lua interpreter asks for Done before every
// instruction: a context.WithCancel answers through an atomic.Value (4% of
// a pipelined EVALSHA's CPU), this one with a field read.
type killSwitch struct {
	done   chan struct{}
	thrown sync.Once
}

func newKillSwitch() *killSwitch { return &killSwitch{done: make(chan struct{})} }

// throw stops the scripts running under k.
func (k *killSwitch) throw() { k.thrown.Do(func() { close(k.done) }) }

// Deadline implements context.Context: none.
func (k *killSwitch) Deadline() (time.Time, bool) { return time.Time{}, false }

// Done implements context.Context.
func (k *killSwitch) Done() <-chan struct{} { return k.done }

// Err implements context.Context: context.Canceled once thrown.
func (k *killSwitch) Err() error {
	select {
	case <-k.done:
		return context.Canceled
	default:
		return nil
	}
}

// Value implements context.Context: none.
func (k *killSwitch) Value(any) any { return nil }

// started notes that a script started, waking the watchdog if it waits.
func (w *scriptWatch) started() {
	w.runs.Add(1)
	if w.idle.Load() && w.idle.CompareAndSwap(true, false) {
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
}

// watchScripts is the busy watchdog: while scripts run it looks at the
// running one every quarter of busy-reply-threshold (at least every 10 ms)
// and takes one that has run past the threshold off its event loop; once
// a look finds no script and none started since the last, it waits for
// the next one.
func (s *Server) watchScripts(ctx context.Context) {
	w := &s.scripts.watch
	tick := time.NewTimer(time.Hour)
	tick.Stop()
	for {
		w.idle.Store(true)
		// A script that started before idle was set did not wake us.
		if s.scripts.running.Load() == nil || !w.idle.CompareAndSwap(true, false) {
			select {
			case <-ctx.Done():
				return
			case <-w.wake:
			}
		}
		for {
			seen := w.runs.Load()
			period := 100 * time.Millisecond
			if ms := s.settings.Int("busy-reply-threshold"); ms > 0 {
				period = max(time.Duration(ms)*time.Millisecond/4, 10*time.Millisecond)
			}
			tick.Reset(period)
			select {
			case <-ctx.Done():
				tick.Stop()
				return
			case <-tick.C:
			}
			run := s.scripts.acquireRunning()
			if run != nil {
				if run.busy() {
					if pc, ok := run.client.conn.(*evloop.Conn); ok {
						pc.Detach()
					}
				}
				run.release()
			}
			if run == nil && w.runs.Load() == seen {
				break
			}
		}
	}
}

// scriptRun is the script running now, as other clients see it.
type scriptRun struct {
	client   *Client
	function bool
	// command is FCALL's arguments, for FUNCTION STATS.
	command [][]byte
	start   time.Time
	// busyAfter is busy-reply-threshold when the script started; 0 when
	// it never counts as busy (and cannot be killed, as in Redis).
	busyAfter time.Duration
	// kill stops the script; nil when it cannot be killed.
	kill *killSwitch
	// mu guards done and ended: done is made for the first client that
	// waits for the script (most scripts end before anyone does) and
	// closed when it ends.
	mu    sync.Mutex
	done  chan struct{}
	ended bool
	// wrote: the script ran a write command, so it cannot be killed.
	wrote atomic.Bool
	// holds counts the goroutines that read the run through
	// acquireRunning and have not released it; a held run is not reused.
	holds atomic.Int32
}

// acquireRunning returns the running script, held against reuse until
// release, or nil when none runs. A run is reused for a later script only
// when nobody holds it; one that became the running script again after
// the load is that script's, which is what the caller asked for.
func (sp *scripts) acquireRunning() *scriptRun {
	for {
		run := sp.running.Load()
		if run == nil {
			return nil
		}
		run.holds.Add(1)
		if sp.running.Load() == run {
			return run
		}
		run.holds.Add(-1)
	}
}

// release ends a hold taken by acquireRunning.
func (r *scriptRun) release() { r.holds.Add(-1) }

// newRun returns the run of a script that starts: the spare one, reset,
// or a new one.
func (sp *scripts) newRun(c *Client, function bool, start time.Time) *scriptRun {
	run := sp.spare
	sp.spare = nil
	if run == nil {
		run = &scriptRun{}
	}
	run.client, run.function, run.command, run.start = c, function, nil, start
	run.busyAfter, run.kill, run.done, run.ended = 0, nil, nil, false
	run.wrote.Store(false)
	return run
}

// retire keeps run, which has ended and is no longer running, for the
// next script unless a goroutine still holds it.
func (sp *scripts) retire(run *scriptRun) {
	if run.holds.Load() == 0 {
		run.client, run.command = nil, nil
		sp.spare = run
	}
}

// wait returns a channel closed when the script has ended.
func (r *scriptRun) wait() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done == nil {
		r.done = make(chan struct{})
		if r.ended {
			close(r.done)
		}
	}
	return r.done
}

// end marks the script ended, waking the clients waiting for it.
func (r *scriptRun) end() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ended = true
	if r.done != nil {
		close(r.done)
	}
}

// busy reports whether the script has run past busy-reply-threshold.
func (r *scriptRun) busy() bool {
	return r.busyAfter > 0 && time.Since(r.start) >= r.busyAfter
}

var _ commands.Scripting = session{}

func (s session) Lua() *scripting.Engine { return s.c.srv.scripts.lua }

// functionsMeta is the name the function libraries are kept under in the
// disk tier (engine.SaveMeta).
const functionsMeta = "functions"

// FunctionsChanged writes the function libraries to the disk tier, off the
// event loop. A failed write (a full disk) is logged and retried by
// keepFunctionsSaved: the change stands in memory meanwhile, and a restart
// before the retry succeeds finds the libraries of the last save.
func (s session) FunctionsChanged() {
	srv := s.c.srv
	s.c.leaveLoop()
	if err := srv.saveFunctions(s.c.ctx); err != nil {
		srv.log.Warn("function libraries not saved to disk; saving them again each second", "err", err)
	}
}

// saveFunctions writes the libraries' FUNCTION DUMP to the disk tier.
// Saves are serialized, each dumping the libraries as they are when it
// runs, so the last one written is the newest state.
func (s *Server) saveFunctions(ctx context.Context) error {
	s.scripts.saveMu.Lock()
	defer s.scripts.saveMu.Unlock()
	err := s.eng.SaveMeta(ctx, functionsMeta, s.scripts.lua.FunctionDump())
	s.scripts.unsaved.Store(err != nil)
	return err
}

// keepFunctionsSaved saves the libraries again, once a second, while their
// last save failed, so that a disk that filled and freed up gets the newest
// state rather than keeping an older one for the next start.
func (s *Server) keepFunctionsSaved(ctx context.Context) {
	everySecond(ctx, func() {
		if s.scripts.unsaved.Load() && s.saveFunctions(ctx) == nil {
			s.log.Info("function libraries saved to disk")
		}
	})
}

// loadFunctions restores the function libraries the disk tier kept.
func (s *Server) loadFunctions() {
	payload, err := s.eng.LoadMeta(context.Background(), functionsMeta)
	if err != nil {
		s.log.Error("function libraries not read from disk", "err", err)
		return
	}
	if payload == nil {
		return
	}
	if msg := s.scripts.lua.FunctionRestore(payload, scripting.RestoreReplace); msg != "" {
		s.log.Error("function libraries on disk not restored", "err", msg)
	}
}

// RunScript runs call as the server's one running script.
func (s session) RunScript(call commands.ScriptCall) {
	c, srv := s.c, s.c.srv
	function, keys := call.Kind == commands.ScriptFCall, call.Keys
	sp := &srv.scripts
	start := c.cmdStart
	if start.IsZero() {
		start = srv.clock.Now()
	}
	run := sp.newRun(c, function, start)
	if function {
		run.command = make([][]byte, len(c.x.Args))
		for i, a := range c.x.Args {
			run.command[i] = bytes.Clone(a)
		}
	}
	sc := sp.caller
	if sc == nil {
		sc = &scriptCaller{}
		sc.w = resp.NewWriter(&sc.buf)
		sc.checkFn = sc.check
		sp.caller = sc
	}
	sc.start(c, run, srv.ClusterEnabled(), keys)
	r := &sc.r
	*r = scripting.Run{W: c.w, Caller: sc, Keys: keys, Args: call.Args, ReadOnly: call.ReadOnly, Check: sc.checkFn}
	if ms := srv.settings.Int("busy-reply-threshold"); ms > 0 {
		if sp.kill == nil || sp.kill.Err() != nil {
			sp.kill = newKillSwitch()
		}
		run.busyAfter = time.Duration(ms) * time.Millisecond
		r.Ctx, run.kill = sp.kill, sp.kill
	}
	sp.running.Store(run)
	sp.watch.started()
	defer func() {
		sp.running.Store(nil)
		sc.end()
		run.end()
		sp.retire(run)
	}()
	call.Run(sp.lua, r)
}

// KillScript is SCRIPT KILL and FUNCTION KILL (Redis's scriptKill).
func (s session) KillScript(function bool) string {
	run := s.c.srv.scripts.acquireRunning()
	if run == nil {
		return "NOTBUSY No scripts in execution right now."
	}
	defer run.release()
	switch {
	case run.wrote.Load():
		return errUnkillable
	case run.function && !function:
		return errBusyFunction
	case !run.function && function:
		return errBusyScript
	}
	// The context is shared by the scripts that were not killed: cancel
	// it only while this script still runs.
	if run.kill != nil && s.c.srv.scripts.running.Load() == run {
		run.kill.throw()
	}
	return ""
}

// RunningScript is FUNCTION STATS's running_script.
func (s session) RunningScript() (commands.RunningScript, bool) {
	run := s.c.srv.scripts.acquireRunning()
	if run == nil {
		return commands.RunningScript{}, false
	}
	defer run.release()
	r := commands.RunningScript{Function: run.function, Took: time.Since(run.start)}
	if run.function {
		r.Name, r.Command = string(run.command[1]), run.command
	}
	return r, true
}

// busyError is dispatch's answer to a command that arrives while another
// client's script runs (Redis's processCommand): it waits for the script
// to end, and answers BUSY once the script has run past
// busy-reply-threshold, unless the command is allowed then (allow_busy:
// SCRIPT KILL, FUNCTION KILL...). "" lets the command run.
func (s *Server) busyError(c *Client, spec *commands.Spec) string {
	if spec.Flags&commands.FlagAllowBusy != 0 {
		return ""
	}
	run := s.scripts.acquireRunning()
	if run == nil {
		return ""
	}
	defer run.release()
	if run.client == c {
		return ""
	}
	if !run.busy() {
		var busy <-chan time.Time
		if run.busyAfter > 0 {
			t := time.NewTimer(run.busyAfter - time.Since(run.start))
			defer t.Stop()
			busy = t.C
		}
		select {
		case <-run.wait():
			return ""
		case <-c.ctx.Done():
			return ""
		case <-busy:
		}
	}
	select {
	case <-run.wait():
		return ""
	default:
	}
	if run.function {
		return errBusyFunction
	}
	return errBusyScript
}

// lookupCommand finds the command, or subcommand, args name; nil when
// there is none (Redis's lookupCommand).
func (s *Server) lookupCommand(args [][]byte) *commands.Spec {
	spec := s.table.Lookup(args[0])
	if spec != nil && spec.IsContainer() && len(args) > 1 {
		spec = spec.Sub(args[1])
	}
	return spec
}

// scriptCaller runs a script's commands (scripting.Caller): as the
// script's client, with its own selected database and RESP version, and
// with its replies captured for conversion to Lua values.
type scriptCaller struct {
	c   *Client
	run *scriptRun
	// r is the run's scripting.Run, kept here to be reused.
	r scripting.Run
	// db is the script's selected database: SELECT in a script does not
	// change the caller's.
	db int
	// slot is the slot of the keys the script touched so far (cluster
	// mode), -1 before any.
	slot int
	buf  bytes.Buffer
	w    *resp.Writer
	x    commands.Ctx
	// checkFn is check, bound once rather than for every script.
	checkFn func(scripting.Flags) string
	// keys are the script's declared keys; remembered is set once a
	// tracking caller's have been remembered (Call).
	keys       [][]byte
	remembered bool
	// session is the script's commands' session, kept here so that
	// pointing the context at it allocates nothing.
	session scriptSession
}

// start readies the caller for a script c runs with the declared keys.
func (sc *scriptCaller) start(c *Client, run *scriptRun, clusterMode bool, keys [][]byte) {
	sc.c, sc.run, sc.db, sc.slot = c, run, c.DB(), -1
	sc.keys, sc.remembered = keys, false
	if len(keys) > 0 && clusterMode {
		sc.slot = cluster.KeySlot(keys[0])
	}
	sc.x = *c.x
	sc.x.W = sc.w
	sc.session = scriptSession{session{c}, sc}
	sc.x.Session = &sc.session
	sc.x.KeyBlocking = scriptBlocking{session{c}}
}

// scriptBlocking is the key blocking of a script's commands: BLMPOP and
// BZMPOP, allowed in scripts, never block there (Redis runs scripts with
// CLIENT_DENY_BLOCKING) and answer as if they had timed out.
type scriptBlocking struct{ session }

// CanBlock is always false in a script.
func (scriptBlocking) CanBlock() bool { return false }

// end drops what the caller holds of the script that ended.
func (sc *scriptCaller) end() {
	sc.c, sc.run, sc.r, sc.keys = nil, nil, scripting.Run{}, nil
	sc.x, sc.session = commands.Ctx{}, scriptSession{}
	if sc.buf.Cap() > 64<<10 {
		// A large reply's buffer is not kept for the next script.
		sc.buf = bytes.Buffer{}
	}
}

// check is the server's part of scriptPrepareForRun for scripts with a
// shebang or functions: no-cluster, and memory for those that may write.
func (sc *scriptCaller) check(flags scripting.Flags) string {
	srv := sc.c.srv
	if flags&scripting.FlagEvalCompat != 0 {
		return ""
	}
	if flags&scripting.FlagNoCluster != 0 && srv.ClusterEnabled() {
		return "ERR Can not run script on cluster, 'no-cluster' flag is set."
	}
	if flags&(scripting.FlagAllowOOM|scripting.FlagNoWrites) == 0 {
		if err := srv.eng.Reserve(sc.c.ctx, sc.c.leaveLoop); errors.Is(err, engine.ErrOOM) {
			return err.Error()
		}
	}
	return ""
}

// Call runs one command for the script with Redis's checks for scripts, in
// scriptCall's order: the command and its arity, noscript, ACL, writes in
// a read-only script, memory, and the cluster slot.
func (sc *scriptCaller) Call(r *scripting.Run, args [][]byte, proto int) ([]byte, string) {
	c, srv := sc.c, sc.c.srv
	spec := srv.lookupCommand(args)
	if spec == nil {
		return nil, "ERR Unknown Redis command called from script"
	}
	// A refusal counts as the command's rejected call, as scriptCall's
	// error path does.
	refuse := func(msg string) ([]byte, string) {
		srv.countRejected(spec)
		return nil, msg
	}
	if !spec.CheckArity(len(args)) || spec.Handler == nil {
		return refuse("ERR Wrong number of args calling Redis command from script")
	}
	if spec.Flags&commands.FlagNoscript != 0 {
		return refuse("ERR This Redis command is not allowed from script")
	}
	switch d, _ := srv.aclCheck(c.user.Load(), spec, args); d {
	case commands.ACLDeniedCommand:
		return refuse("ERR The user executing the script can't run this command or subcommand")
	case commands.ACLDeniedKey:
		return refuse("ERR The user executing the script can't access at least one of the keys mentioned in the command arguments")
	}
	write := spec.Flags&commands.FlagWrite != 0
	if write && r.NoWrites {
		return refuse("ERR Write commands are not allowed from read-only scripts.")
	}
	// Only before the first write: a script cannot stop halfway.
	if spec.Flags&commands.FlagDenyoom != 0 && r.Flags&scripting.FlagAllowOOM == 0 && !sc.run.wrote.Load() {
		if err := srv.eng.Reserve(c.ctx, c.leaveLoop); errors.Is(err, engine.ErrOOM) {
			return refuse(err.Error())
		}
	}
	if write {
		sc.run.wrote.Store(true)
	}
	if msg := sc.clusterCheck(r, spec, args); msg != "" {
		return refuse(msg)
	}
	// Values only on disk are loaded first, as dispatch does; the engine
	// would otherwise read them under its lock.
	if keys := spec.ValueKeys(args); keys != nil {
		srv.eng.Preload(c.ctx, sc.db, keys)
	}
	sc.buf.Reset()
	sc.w.SetProto(proto)
	sc.x.Args = args
	// Monotonic clock reads only (time.Now reads the wall clock too).
	start := time.Since(sc.run.start)
	spec.Handler(&sc.x)
	sc.x.Args = nil
	took := time.Since(sc.run.start) - start
	// Redis 7.0 logs the commands a script runs (as its Lua client's).
	srv.recordSlowInScript(spec, args, sc.run.start.Add(start), took)
	srv.feedScriptMonitors(sc.db, spec, args)
	// As Redis 7.0's call() does for a read-only command a script runs:
	// the keys the caller's command declared (its getkeys: the script's
	// KEYS, not the keys the command read) are remembered for it.
	if c.tracking && !sc.remembered && len(sc.keys) > 0 && spec.Flags&commands.FlagReadonly != 0 {
		sc.remembered = true
		srv.rememberKeys(c, sc.keys)
	}
	sc.w.Flush()
	reply := sc.buf.Bytes()
	srv.observe(spec, took, len(reply) > 0 && reply[0] == '-')
	return reply, ""
}

// clusterCheck is scriptVerifyClusterState: in cluster mode every key must
// be served here, and, unless the script allows cross-slot keys, hash to
// the slot of the script's other keys.
func (sc *scriptCaller) clusterCheck(r *scripting.Run, spec *commands.Spec, args [][]byte) string {
	srv := sc.c.srv
	m := srv.slotMap.Load()
	if m == nil {
		return ""
	}
	slot, msg := srv.keysSlot(-1, spec, args)
	if msg != "" || srv.slotRedirect(m, slot) != "" {
		return "ERR Script attempted to access a non local key in a cluster node"
	}
	if slot < 0 || r.Flags&(scripting.FlagAllowCrossSlot|scripting.FlagEvalCompat) != 0 {
		return ""
	}
	if sc.slot == -1 {
		sc.slot = slot
	} else if sc.slot != slot {
		return "ERR Script attempted to access keys that do not hash to the same slot"
	}
	return ""
}

// ACLCheck answers redis.acl_check_cmd (scripting.ACLChecker).
func (sc *scriptCaller) ACLCheck(args [][]byte) (known, allowed bool) {
	spec := sc.c.srv.lookupCommand(args)
	if spec == nil {
		return false, false
	}
	d, _ := sc.c.srv.aclCheck(sc.c.user.Load(), spec, args)
	return true, d == commands.ACLAllowed
}

// scriptSession is the session of the script's commands: the caller's,
// with the script's own database and RESP version, and arguments that are
// already the command's own (Lua made them).
type scriptSession struct {
	session
	sc *scriptCaller
}

func (s scriptSession) DB() int      { return s.sc.db }
func (s scriptSession) SetDB(db int) { s.sc.db = db }

// Own copies: a script's arguments are in the Lua state's buffer, which
// its next redis.call reuses.
func (s scriptSession) Own(i int) []byte { return bytes.Clone(s.sc.x.Args[i]) }
func (s scriptSession) Proto() int       { return s.sc.w.Proto() }

// InScript marks a script's calls (commands.ScriptAware): XREAD refuses
// BLOCK there, as in Redis.
func (s scriptSession) InScript() bool { return true }
