package server

import (
	"github.com/kvserver/kvserver/commands"
	"github.com/kvserver/kvserver/engine"
	"github.com/kvserver/kvserver/resp"
)

// multiState is a connection's transaction while it is in MULTI. The
// connection keeps it after EXEC or DISCARD (Client.spareMulti) for its
// next transaction, so that a client that runs one after the other
// allocates its queue and argument copies once.
type multiState struct {
	// flagged: a command failed to queue, so EXEC aborts.
	flagged bool
	cmds    []queuedCommand
	// mem is the queued arguments' size as CLIENT LIST's multi-mem counts
	// it.
	mem int
	// denyoom: a queued command may grow memory, so EXEC makes room
	// first, as Redis's processCommand does for EXEC.
	denyoom bool
	// mayWrite: a queued command may write, so CLIENT PAUSE WRITE holds
	// EXEC.
	mayWrite bool
	// args holds the queued commands' argument lists and copies of their
	// small arguments (queueArena).
	args queueArena
}

// queuedCommand is one command queued by MULTI, with arguments of its own
// (the reader's buffers are reused by the next command).
type queuedCommand struct {
	spec *commands.Spec
	args [][]byte
}

// reset empties m for the connection's next transaction, keeping its
// buffers unless they grew past what an idle connection should hold.
func (m *multiState) reset() {
	clear(m.cmds)
	m.cmds = m.cmds[:0]
	if cap(m.cmds) > maxSpareQueue {
		m.cmds = nil
	}
	m.args.reset()
	m.flagged, m.mem, m.denyoom, m.mayWrite = false, 0, false, false
}

// maxSpareQueue is the most queued commands (and four times as many
// arguments) whose room a connection keeps between transactions;
// maxSpareArgBytes is the most bytes of argument copies it keeps.
const (
	maxSpareQueue    = 1024
	maxSpareArgBytes = 64 << 10
)

// queueArena holds the argument lists of a transaction's queued commands
// in one slice and the copies of their arguments smaller than
// resp.BigBulkThreshold in one buffer, instead of a slice per command and
// per argument: queuing a command costs no allocation once the arena has
// room. A full slice or buffer is replaced by a larger one, not grown, so
// the arguments already queued stay where they are. The next transaction
// reuses the room, so a queued small argument is valid only until EXEC or
// DISCARD ends, like a request's arguments in the reader's buffer:
// Session.Own copies it (ownQueued). An argument of resp.BigBulkThreshold
// bytes or more has a slice of its own, handed over as the reader hands
// over a big bulk.
type queueArena struct {
	argv  [][]byte
	bytes []byte
}

// argList returns room for n arguments.
func (a *queueArena) argList(n int) [][]byte {
	if cap(a.argv)-len(a.argv) < n {
		a.argv = make([][]byte, 0, max(2*cap(a.argv), n, 64))
	}
	start := len(a.argv)
	a.argv = a.argv[:start+n]
	return a.argv[start : start+n : start+n]
}

// copyOf returns a copy of the small argument b.
func (a *queueArena) copyOf(b []byte) []byte {
	if cap(a.bytes)-len(a.bytes) < len(b) {
		a.bytes = make([]byte, 0, max(2*cap(a.bytes), len(b), 1024))
	}
	start := len(a.bytes)
	a.bytes = append(a.bytes, b...)
	return a.bytes[start:len(a.bytes):len(a.bytes)]
}

// reset empties a for the next transaction, letting go of the big
// arguments it references and of room past the spare bounds.
func (a *queueArena) reset() {
	clear(a.argv)
	a.argv = a.argv[:0]
	if cap(a.argv) > maxSpareQueue*4 {
		a.argv = nil
	}
	a.bytes = a.bytes[:0]
	if cap(a.bytes) > maxSpareArgBytes {
		a.bytes = nil
	}
}

// ownQueued is Session.Own for an argument of the queued command EXEC
// runs: a big one is handed over (EXEC runs each queued command once), a
// small one, in the arena the next transaction reuses, is copied.
func ownQueued(arg []byte) []byte {
	if len(arg) >= resp.BigBulkThreshold {
		return arg
	}
	return append([]byte(nil), arg...)
}

var _ commands.Transaction = session{}

func (s session) InMulti() bool { return s.c.multi != nil }
func (s session) InExec() bool  { return s.c.queuedArgs != nil }
func (s session) Multi() {
	m := s.c.spareMulti
	if m == nil {
		m = &multiState{}
	}
	s.c.multi, s.c.spareMulti = m, nil
	s.c.publishMulti()
}
func (s session) Flagged() bool { return s.c.multi != nil && s.c.multi.flagged }
func (s session) Queued() int   { return len(s.c.multi.cmds) }

func (s session) Discard() {
	s.c.dropQueued()
	s.c.publishMulti()
	s.Unwatch()
}

// dropQueued leaves MULTI, returning the queued arguments' bytes to the
// server's bound on queued transactions.
func (c *Client) dropQueued() {
	if m := c.multi; m != nil {
		c.srv.queuedTxBytes.Add(-int64(m.mem))
		m.reset()
		c.multi, c.spareMulti = nil, m
	}
}

func (s session) Watch(keys [][]byte) {
	s.c.srv.eng.View(s.c.DB(), func(tx *engine.Tx) {
		for _, k := range keys {
			s.c.watches = append(s.c.watches, tx.Watch(k))
		}
	})
}

func (s session) Unwatch() {
	s.c.srv.eng.Unwatch(s.c.watches)
	s.c.watches = nil
}

func (s session) WatchChanged() bool { return s.c.srv.eng.WatchChanged(s.c.watches) }

// RunQueued runs the queued commands in order. Dispatch holds every other
// client's command off for the whole EXEC (Server.exclusive) and loaded
// the values they read beforehand (Server.preloadQueued).
func (s session) RunQueued() {
	c, srv := s.c, s.c.srv
	// CLIENT REPLY inside the transaction changes, from the next reply
	// on, which of them the client gets.
	defer c.dropSuppressedReplies()
	// The clock is read once per command, each one's end being the next
	// one's start: for the command statistics, the slow log (which logs
	// each command EXEC runs, as Redis 7.0 does, and not EXEC), and a
	// script's start.
	start := srv.clock.Now()
	for _, q := range c.multi.cmds {
		c.dropSuppressedReplies() // EXEC's header, then each reply
		// ACLs are checked again, in case they changed since the
		// command was queued (Redis's execCommand).
		if d, _ := srv.aclCheck(c.user.Load(), q.spec, q.args); d != commands.ACLAllowed {
			reason := "no permission to execute the command or subcommand"
			if d == commands.ACLDeniedKey {
				reason = "no permission to touch the specified keys"
			}
			c.w.Error("NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. " +
				"This command is no longer allowed for the following reason: " + reason)
			srv.countRejected(q.spec)
			start = srv.clock.Now()
			continue
		}
		c.cmdStart = start
		mark := c.w.Mark()
		c.queuedArgs = q.args
		c.x.Args = q.args
		q.spec.Handler(c.x)
		srv.rememberReads(c, q.spec, q.args)
		srv.feedMonitors(c, q.spec, q.args)
		c.x.Args = nil
		c.queuedArgs = nil
		end := srv.clock.Now()
		srv.observe(q.spec, end.Sub(start), c.w.ErrorSince(mark))
		srv.recordSlow(c, q.spec, q.args, start, end.Sub(start))
		start = end
	}
}

// queue adds the command dispatch is running to c's transaction, with
// arguments of its own.
func (s *Server) queue(c *Client, spec *commands.Spec) {
	// The queued values stay in memory until EXEC, outside the budget
	// that bounds request values in flight (which the reader returns once
	// the command is dispatched): all transactions together may hold at
	// most as much, or MULTI would let clients grow the process without
	// bound. Past it the command is refused as over maxmemory, as Redis
	// refuses queuing when client memory pushes it over, and EXEC aborts.
	size := 8 * len(c.cmd.Args)
	for _, a := range c.cmd.Args {
		size += len(a)
	}
	if s.queuedTxBytes.Add(int64(size)) > s.bulks.limit {
		s.queuedTxBytes.Add(-int64(size))
		s.rejectCommand(c, spec, errQueuedOOM)
		s.countRejected(spec)
		return
	}
	m := c.multi
	args := m.args.argList(len(c.cmd.Args))
	for i, a := range c.cmd.Args {
		if len(a) >= resp.BigBulkThreshold {
			args[i] = c.cmd.Own(i)
		} else {
			args[i] = m.args.copyOf(a)
		}
	}
	// Redis counts a pointer per argument too.
	m.mem += size
	m.cmds = append(m.cmds, queuedCommand{spec: spec, args: args})
	m.denyoom = m.denyoom || spec.Flags&commands.FlagDenyoom != 0
	m.mayWrite = m.mayWrite || spec.Flags&commands.FlagWrite != 0 || spec.MayReplicate
	c.w.Simple("QUEUED") // published with the reply (Server.flush)
}

// publishMulti copies the transaction's size where the other clients'
// CLIENT LIST reads it: when the connection enters or leaves MULTI, and
// for the commands it queued, when their +QUEUED replies go out
// (Server.flush), rather than with two atomic stores per queued command.
// Another client cannot tell the difference: it learns that a command was
// queued from its reply at the earliest.
func (c *Client) publishMulti() {
	var n, mem int64
	if c.multi != nil {
		n, mem = 1+int64(len(c.multi.cmds)), int64(c.multi.mem)
	}
	c.multiMem.Store(mem)
	c.multiCmds.Store(n)
}

// preloadQueued loads the values the queued commands of c read that are
// only on disk, before EXEC holds the other clients off, so that EXEC does
// no disk reads while they wait. A value demoted again meanwhile is read
// under the engine lock (engine.Tx reads it from disk), still correct.
func (s *Server) preloadQueued(c *Client) error {
	db := c.DB()
	for _, q := range c.multi.cmds {
		if q.spec.Name == "select" {
			// Keys after a SELECT are in another database: load them
			// when their command reads them.
			return nil
		}
		keys := q.spec.ValueKeys(q.args)
		if keys == nil {
			continue
		}
		if err := c.budget.Acquire(c.ctx, s.eng.DiskOnlyBytes(db, keys)); err != nil {
			return err
		}
		s.eng.Preload(c.ctx, db, keys)
		if q.spec.Flags&commands.FlagWrite != 0 {
			// Not under the engine lock, with EXEC's own wait.
			s.eng.AwaitEncoded(c.ctx, db, keys, c.leaveLoop)
		}
	}
	return nil
}

// execRedirect is EXEC's cluster check: every key of every queued command
// must hash to one slot that this node serves (Redis's getNodeByQuery for
// EXEC); "" when they do.
func (s *Server) execRedirect(c *Client) string {
	m := s.slotMap.Load()
	if m == nil || c.multi == nil {
		return ""
	}
	slot := -1
	for _, q := range c.multi.cmds {
		var msg string
		if slot, msg = s.keysSlot(slot, q.spec, q.args); msg != "" {
			return msg
		}
	}
	return s.slotRedirect(m, slot)
}

// unwatchAll releases c's watched keys when the connection ends.
// errQueuedOOM refuses a command that would take the queued transactions
// past their bound (Redis's OOM error).
const errQueuedOOM = "OOM command not allowed when used memory > 'maxmemory'."

func (c *Client) unwatchAll() {
	c.srv.eng.Unwatch(c.watches)
	c.watches = nil
}
