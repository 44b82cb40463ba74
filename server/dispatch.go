package server

import (
	"errors"
	"strings"
	"time"

	"github.com/kvserver/kvserver/commands"
	"github.com/kvserver/kvserver/engine"
)

// dispatch runs one command the way Redis's processCommand does: look it
// up, check arity, check authentication, make room in memory for commands
// that may grow it, then call the handler, or queue the command when the
// connection is in MULTI. Handlers never repeat these checks.
func (s *Server) dispatch(c *Client) {
	args := c.cmd.Args
	s.stats.commandsProcessed.Add(1)
	spec := s.table.Lookup(args[0])
	// A container's subcommand, looked up with the command as Redis's
	// lookupCommand does; the client's last command is what they found
	// (nothing for an unknown one), before any check.
	var sub *commands.Spec
	found := spec
	if spec != nil && spec.IsContainer() && len(args) > 1 {
		sub = spec.Sub(args[1])
		found = sub
	}
	c.setLastCmd(found)
	if spec == nil {
		s.rejectCommand(c, nil, unknownCommandError(args))
		s.countRejected(nil)
		return
	}
	if !spec.CheckArity(len(args)) {
		s.rejectCommand(c, spec, "ERR wrong number of arguments for '"+spec.Name+"' command")
		s.countRejected(spec)
		return
	}
	if spec.IsContainer() && len(args) > 1 {
		if sub == nil {
			s.rejectCommand(c, spec, "ERR unknown subcommand '"+sanitize(truncate(string(args[1]), 128))+
				"'. Try "+strings.ToUpper(spec.Name)+" HELP.")
			s.countRejected(nil) // no command, as in Redis
			return
		}
		spec = sub
		if !spec.CheckArity(len(args)) {
			s.rejectCommand(c, spec, "ERR wrong number of arguments for '"+spec.Name+"' command")
			s.countRejected(spec)
			return
		}
	}
	if c.holdsExclusive && !keepsExclusive(c, spec) {
		s.releaseExclusive(c)
	}
	if spec.Handler == nil {
		// A container called without a subcommand (only COMMAND's arity
		// allows it, and it has its own handler).
		s.rejectCommand(c, spec, "ERR wrong number of arguments for '"+spec.Name+"' command")
		return
	}
	// Before authentication, as in Redis 7.0's processCommand.
	if spec.Protected != commands.Unprotected && !s.protectedAllowed(c, spec.Protected) {
		s.rejectCommand(c, spec, spec.Protected.Refusal())
		s.countRejected(spec)
		return
	}
	if s.authRequired(c) && spec.Flags&commands.FlagNoAuth == 0 {
		s.rejectCommand(c, spec, "NOAUTH Authentication required.")
		s.countRejected(spec)
		return
	}
	if c.multi != nil && spec.Flags&commands.FlagNoMulti != 0 {
		s.rejectCommand(c, spec, "ERR Command not allowed inside a transaction")
		s.countRejected(spec)
		return
	}
	if msg := s.aclError(c, spec, args); msg != "" {
		s.rejectCommand(c, spec, msg)
		s.countRejected(spec)
		return
	}
	// After ACLs, as in Redis's processCommand.
	if msg := s.routeError(c, spec, args); msg != "" {
		// Redis discards the transaction of a redirected EXEC and flags
		// that of any other command, then answers the redirect as is.
		if c.multi != nil {
			c.multi.flagged = true
			if commands.IsExec(spec) {
				session{c}.Discard()
			}
		}
		c.w.Error(msg)
		s.countRejected(spec)
		return
	}
	if spec.Flags&commands.FlagDenyoom != 0 || (commands.IsExec(spec) && c.multi != nil && c.multi.denyoom) {
		if err := s.eng.Reserve(c.ctx, c.leaveLoop); err != nil {
			if errors.Is(err, engine.ErrOOM) {
				s.rejectCommand(c, spec, err.Error())
			} else {
				s.rejectCommand(c, spec, "ERR "+err.Error())
			}
			s.countRejected(spec)
			return
		}
	}
	// After the memory check, as in Redis's processCommand: only a few
	// commands run in RESP2 subscribed mode (RESP3 has no limit).
	if c.subscribed.Load() && c.proto.Load() == 2 && !commands.AllowedWhileSubscribed(spec) {
		s.rejectCommand(c, spec, commands.SubscribedModeError(spec))
		s.countRejected(spec)
		return
	}
	// Next, as in Redis 7.0's processCommand: a monitor, a replica to
	// Redis, may not touch the keyspace.
	if c.monitor.Load() && s.touchesKeyspace(c, spec) {
		s.rejectCommand(c, spec, "ERR Replica can't interact with the keyspace")
		s.countRejected(spec)
		return
	}
	if msg := s.busyError(c, spec); msg != "" {
		s.rejectCommand(c, spec, msg)
		s.countRejected(spec)
		return
	}
	// Last, as in Redis's processCommand: a refused command is answered
	// even while clients are paused.
	if !s.waitWhilePaused(c, spec) {
		return
	}
	if c.multi != nil && !commands.RunsInMulti(spec) {
		s.queue(c, spec)
		return
	}
	start := s.clock.Now()
	c.cmdStart = start
	c.mu.Lock()
	c.lastUsed = start
	c.mu.Unlock()
	if !s.preload(c, spec, args) {
		s.countRejected(spec)
		return
	}
	c.x.Args = args
	s.runHandler(c, spec)
	s.rememberReads(c, spec, args)
	s.feedMonitors(c, spec, args)
	c.x.Args = nil
	s.serveBlocked(c)
	took := time.Since(start)
	s.recordSlow(c, spec, args, start, took)
	s.observe(spec, took, c.w.ErrorSince(c.cmdMark))
}

// runHandler runs the command's handler under Server.exclusive: alone for
// the EXEC of a transaction and for scripts (Spec.Exclusive), shared with the other clients' commands that
// touch the keyspace, so that none of them runs between the queued ones.
// Commands that do not touch it (WAIT, CLIENT, CONFIG...) take no part:
// a WAIT blocking for its timeout must not hold up an EXEC, nor, through
// the EXEC waiting for it, every other client.
//
// A script keeps the lock when it ends (holdsExclusive): if the client's
// next command, already read, is a script too, it runs without taking the
// lock again, as Redis runs a client's pipelined commands one after the
// other. The lock goes before any other command (dispatch), before a read
// that may wait for the network (flushBeforeRead) and once the client's
// buffered commands are done (serveClient): other clients wait at most for
// one buffer of commands, and never for this client's network.
func (s *Server) runHandler(c *Client, spec *commands.Spec) {
	// A script runs on the event loop, as in Redis; one that runs past
	// busy-reply-threshold leaves it (watchScripts).
	switch {
	case c.holdsExclusive:
		// Only a script gets here so (dispatch released it otherwise).
	case spec.Exclusive && keepsExclusive(c, spec):
		s.exclusive.Lock()
		c.holdsExclusive = true
	case spec.Exclusive || commands.IsExec(spec) && c.multi != nil:
		s.exclusive.Lock()
		defer s.exclusive.Unlock()
	case spec.TouchesData():
		s.exclusive.RLock()
		c.holdsShared = true
		defer func() {
			c.holdsShared = false
			s.exclusive.RUnlock()
		}()
	}
	spec.Handler(c.x)
}

// leaveShared lets Server.exclusive go while c's command waits (for keys,
// for the network), if the command holds it shared; inside EXEC or a
// script, which hold it alone for their whole run, it stays. Other
// clients' commands may run meanwhile in any case: letting it go adds the
// EXECs and scripts, which then need not wait for this wait. The function
// returned takes it again.
func (c *Client) leaveShared() (retake func()) {
	if !c.holdsShared {
		return func() {}
	}
	c.srv.exclusive.RUnlock()
	return c.srv.exclusive.RLock
}

// keepsExclusive reports whether c may hold Server.exclusive across the
// command spec (runHandler): scripts outside MULTI, which wait for nothing
// before they run (no memory reservation; preload and waitWhilePaused let
// the lock go before they wait).
func keepsExclusive(c *Client, spec *commands.Spec) bool {
	return spec.Exclusive && c.multi == nil && spec.Flags&commands.FlagDenyoom == 0
}

// releaseExclusive lets Server.exclusive go if c kept it after a script,
// and wakes the subscribers c published to (deferWake): the client may
// wait next.
func (s *Server) releaseExclusive(c *Client) {
	// Whatever waits next, the subscribers c published to do not.
	c.wakeSubscribers()
	if c.holdsExclusive {
		c.holdsExclusive = false
		s.exclusive.Unlock()
	}
}

// serveBlocked serves the clients blocked on keys the last command wrote
// (blockkeys.go), after it and after a whole EXEC, as Redis does; under
// the lock c kept after a script, if it did.
func (s *Server) serveBlocked(c *Client) {
	if !s.eng.HasReady() {
		return
	}
	if c.holdsExclusive {
		s.keyWaits.serveReady()
		return
	}
	s.exclusive.RLock()
	defer s.exclusive.RUnlock()
	s.keyWaits.serveReady()
}

// preload loads the values the command reads that are only on disk, or
// for EXEC those its queued commands read; false when the client left
// while waiting for the memory to load them into (the error is answered).
func (s *Server) preload(c *Client, spec *commands.Spec, args [][]byte) bool {
	var err error
	if commands.IsExec(spec) && c.multi != nil {
		err = s.preloadQueued(c)
	} else if keys := spec.ValueKeys(args); keys != nil {
		s.releaseExclusive(c)
		// Values only on disk are loaded into fresh memory for the reply:
		// they wait for the budget that bounds what clients hold
		// (budget.go), like request values. So do the replies of @slow
		// commands, which may copy whole collections (LRANGE 0 -1 of 2M
		// elements is 44 MB): 60 clients that never read held 2.6 GB
		// of them with --maxmemory 256mb.
		need := s.eng.DiskOnlyBytes
		if spec.HasCategory("@slow") {
			need = s.eng.ReplyBytes
		}
		if err = c.budget.Acquire(c.ctx, need(c.DB(), keys)); err == nil {
			// Bring values that are only on disk into memory before the
			// handler runs under the engine lock.
			s.eng.Preload(c.ctx, c.DB(), keys)
			if spec.Flags&commands.FlagWrite != 0 {
				// A write waits here, not under the lock, while an
				// object it may change is being written to disk.
				s.eng.AwaitEncoded(c.ctx, c.DB(), keys, c.leaveLoop)
			}
		}
	}
	if err != nil {
		c.w.Error("ERR client closed while waiting for memory: " + err.Error())
		return false
	}
	return true
}

// rejectCommand answers a command dispatch refuses with msg, Redis's
// rejectCommand: inside MULTI the refusal flags the transaction, so that
// EXEC aborts, and a refused EXEC aborts it at once (and answers
// EXECABORT, in MULTI or not).
func (s *Server) rejectCommand(c *Client, spec *commands.Spec, msg string) {
	if spec != nil && commands.IsExec(spec) {
		session{c}.Discard()
		c.w.Error(commands.ExecAbortError(msg))
		return
	}
	if c.multi != nil {
		c.multi.flagged = true
	}
	c.w.Error(msg)
}

// routeError is the cluster redirect of a command, "" when this node runs
// it; EXEC's is that of its queued commands.
func (s *Server) routeError(c *Client, spec *commands.Spec, args [][]byte) string {
	if commands.IsExec(spec) {
		return s.execRedirect(c)
	}
	return s.clusterRedirect(spec, args)
}

// protectedAllowed is Redis's allowProtectedAction: whether the setting
// that guards a protected command (read as CONFIG GET reads it) lets c run
// it.
func (s *Server) protectedAllowed(c *Client, p commands.Protection) bool {
	switch configState[p.Setting()].get(s) {
	case "yes":
		return true
	case "local":
		return isLocal(c.conn.RemoteAddr())
	}
	return false
}

// observe counts a call of spec that ran for d and answered an error if
// failed: INFO commandstats and latencystats and the command metrics read
// these counts.
func (s *Server) observe(spec *commands.Spec, d time.Duration, failed bool) {
	if st := s.cmdStats.At(spec.ID); st != nil {
		st.Record(d, failed)
		if s.latencyTracking.Load() {
			st.RecordLatency(d)
		}
	}
}

// countRejected counts a call of spec refused before it ran (Redis's
// rejected_calls); nil is an unknown command, which only the command
// metrics count (as "unknown").
func (s *Server) countRejected(spec *commands.Spec) {
	id := s.unknownCommandID()
	if spec != nil {
		id = spec.ID
	}
	if st := s.cmdStats.At(id); st != nil {
		st.Reject()
	}
}

// unknownCommandID is the statistics slot of unknown commands, after the
// table's.
func (s *Server) unknownCommandID() int { return s.table.NumIDs() }

// unknownCommandError formats Redis 7's unknown-command error.
func unknownCommandError(args [][]byte) string {
	var b strings.Builder
	for _, a := range args[1:] {
		if b.Len() >= 128 {
			break
		}
		room := 128 - b.Len()
		b.WriteByte('\'')
		b.WriteString(truncate(string(a), room))
		b.WriteString("' ")
	}
	return sanitize("ERR unknown command '" + truncate(string(args[0]), 128) +
		"', with args beginning with: " + b.String())
}

// truncate is commands.Truncate, for the error replies dispatch writes.
func truncate(s string, n int) string { return commands.Truncate(s, n) }

// sanitize replaces newlines, which cannot appear in an error reply.
func sanitize(s string) string { return commands.Sanitize(s) }

// authRequired reports whether c must authenticate before running commands:
// c has not authenticated and the default user has a password or is off
// (Redis's authRequired). Like Redis, clearing the password with CONFIG
// SET releases clients that never authenticated.
func (s *Server) authRequired(c *Client) bool {
	if c.authenticated {
		return false
	}
	def := s.users.Default()
	return !def.NoPass() || !def.Enabled()
}
