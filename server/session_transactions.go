package server

import (
	"time"

	"github.com/kvserver/kvserver/commands"
	"github.com/kvserver/kvserver/engine"
)

// multiState is a connection's transaction while it is in MULTI.
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
}

// queuedCommand is one command queued by MULTI, with arguments of its own
// (the reader's buffers are reused by the next command).
type queuedCommand struct {
	spec *commands.Spec
	args [][]byte
}

var _ commands.Transaction = session{}

func (s session) InMulti() bool { return s.c.multi != nil }
func (s session) InExec() bool  { return s.c.queuedArgs != nil }
func (s session) Multi() {
	s.c.multi = &multiState{}
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
	if c.multi != nil {
		c.srv.queuedTxBytes.Add(-int64(c.multi.mem))
		c.multi = nil
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
			continue
		}
		start := time.Now()
		c.cmdStart = start
		c.queuedArgs = q.args
		c.x.Args = q.args
		q.spec.Handler(c.x)
		srv.rememberReads(c, q.spec, q.args)
		srv.feedMonitors(c, q.spec, q.args)
		c.x.Args = nil
		c.queuedArgs = nil
		srv.observe(q.spec.Name, time.Since(start), false)
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
		s.observe(spec.Name, 0, true)
		return
	}
	args := make([][]byte, len(c.cmd.Args))
	for i := range args {
		args[i] = c.cmd.Own(i)
	}
	// Redis counts a pointer per argument too.
	c.multi.mem += size
	c.multi.cmds = append(c.multi.cmds, queuedCommand{spec: spec, args: args})
	c.multi.denyoom = c.multi.denyoom || spec.Flags&commands.FlagDenyoom != 0
	c.multi.mayWrite = c.multi.mayWrite || spec.Flags&commands.FlagWrite != 0 || spec.MayReplicate
	c.publishMulti()
	c.w.Simple("QUEUED")
}

// publishMulti copies the transaction's size where CLIENT LIST reads it.
func (c *Client) publishMulti() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.inMulti = c.multi != nil
	c.multiLen, c.multiMem = 0, 0
	if c.multi != nil {
		c.multiLen, c.multiMem = len(c.multi.cmds), c.multi.mem
	}
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
