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
// that may grow it, then call the handler. Handlers never repeat these
// checks.
func (s *Server) dispatch(c *Client) {
	args := c.cmd.Args
	s.stats.commandsProcessed.Add(1)
	spec := s.table.Lookup(args[0])
	if spec == nil {
		c.w.Error(unknownCommandError(args))
		s.observe("unknown", 0, true)
		return
	}
	if !spec.CheckArity(len(args)) {
		c.w.Error("ERR wrong number of arguments for '" + spec.Name + "' command")
		s.observe(spec.Name, 0, true)
		return
	}
	if spec.IsContainer() && len(args) > 1 {
		sub := spec.Sub(args[1])
		if sub == nil {
			c.w.Error("ERR unknown subcommand '" + sanitize(truncate(string(args[1]), 128)) +
				"'. Try " + strings.ToUpper(spec.Name) + " HELP.")
			s.observe(spec.Name, 0, true)
			return
		}
		spec = sub
		if !spec.CheckArity(len(args)) {
			c.w.Error("ERR wrong number of arguments for '" + spec.Name + "' command")
			s.observe(spec.Name, 0, true)
			return
		}
	}
	if spec.Handler == nil {
		// A container called without a subcommand (only COMMAND's arity
		// allows it, and it has its own handler).
		c.w.Error("ERR wrong number of arguments for '" + spec.Name + "' command")
		return
	}
	// Before authentication, as in Redis 7.0's processCommand.
	if spec.Protected && !s.debugAllowed(c) {
		c.w.Error(errDebugNotAllowed)
		s.observe(spec.Name, 0, true)
		return
	}
	if s.authRequired(c) && spec.Flags&commands.FlagNoAuth == 0 {
		c.w.Error("NOAUTH Authentication required.")
		s.observe(spec.Name, 0, true)
		return
	}
	if !s.checkACL(c, spec, args) {
		s.observe(spec.Name, 0, true)
		return
	}
	// After ACLs, as in Redis's processCommand.
	if msg := s.clusterRedirect(spec, args); msg != "" {
		c.w.Error(msg)
		s.observe(spec.Name, 0, true)
		return
	}
	if spec.Flags&commands.FlagDenyoom != 0 {
		if err := s.eng.Reserve(c.ctx); err != nil {
			if errors.Is(err, engine.ErrOOM) {
				c.w.Error(err.Error())
			} else {
				c.w.Error("ERR " + err.Error())
			}
			s.observe(spec.Name, 0, true)
			return
		}
	}
	start := time.Now()
	c.mu.Lock()
	c.lastCmd = spec.Name
	c.lastUsed = start
	c.mu.Unlock()
	if keys := spec.ValueKeys(args); keys != nil {
		// Values only on disk are loaded into fresh memory for the reply:
		// they wait for the budget that bounds what clients hold
		// (budget.go), like request values.
		if err := c.budget.Acquire(c.ctx, s.eng.DiskOnlyBytes(c.DB(), keys)); err != nil {
			c.w.Error("ERR client closed while waiting for memory: " + err.Error())
			s.observe(spec.Name, 0, true)
			return
		}
		// Bring values that are only on disk into memory before the
		// handler runs under the engine lock.
		s.eng.Preload(c.ctx, c.DB(), keys)
	}
	c.x.Args = args
	spec.Handler(c.x)
	c.x.Args = nil
	s.observe(spec.Name, time.Since(start), false)
}

// errDebugNotAllowed is Redis 7's refusal of DEBUG where
// enable-debug-command does not allow it.
const errDebugNotAllowed = `ERR DEBUG command not allowed. If the enable-debug-command option is set to "local", ` +
	"you can run it from a local connection, otherwise you need to set this option in the configuration file, " +
	"and then restart the server."

// debugAllowed is Redis's allowProtectedAction for enable-debug-command.
func (s *Server) debugAllowed(c *Client) bool {
	switch s.options().EnableDebugCommand {
	case "yes":
		return true
	case "local":
		return isLocal(c.conn.RemoteAddr())
	}
	return false
}

func (s *Server) observe(name string, d time.Duration, failed bool) {
	if s.metrics != nil {
		s.metrics.ObserveCommand(name, d, failed)
	}
}

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
