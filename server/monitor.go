package server

import (
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kvserver/kvserver/commands"
)

// MONITOR (Redis's replicationFeedMonitors). After a command runs (each of
// EXEC's, then EXEC), every monitoring connection is sent one line:
//
//	+<unix seconds>.<micros> [<db> <client addr>] "arg" "arg"...
//
// with the arguments quoted as Redis's sdscatrepr, AUTH's and HELLO AUTH's
// secrets redacted, and nothing for admin commands or those flagged
// skip_monitor. The line goes to each monitor's mailbox like a pub/sub
// message: a monitor that does not read is closed by the output limit
// (pubsub.go) and never slows the command.

// monitors is the server's monitoring connections.
type monitors struct {
	mu  sync.Mutex
	set map[*Client]struct{}
	// n is len(set), read without the lock on every command.
	n atomic.Int32
}

var _ commands.Monitor = session{}

// StartMonitor makes the connection a monitor (commands.Monitor).
func (s session) StartMonitor() bool {
	m := &s.c.srv.mons
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.set[s.c]; ok {
		return false
	}
	if m.set == nil {
		m.set = make(map[*Client]struct{})
	}
	m.set[s.c] = struct{}{}
	m.n.Store(int32(len(m.set)))
	s.c.monitor.Store(true)
	s.c.useMailbox()
	return true
}

// StopMonitor ends it (RESET, disconnection).
func (s session) StopMonitor() {
	m := &s.c.srv.mons
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.set, s.c)
	m.n.Store(int32(len(m.set)))
	s.c.monitor.Store(false)
}

// touchesKeyspace is Redis's test of a command a replica (a monitor) may
// not run: it reads, writes or may replicate, itself or, for EXEC, one of
// the commands it queued.
func (s *Server) touchesKeyspace(c *Client, spec *commands.Spec) bool {
	keyspace := func(sp *commands.Spec) bool {
		return sp.Flags&(commands.FlagWrite|commands.FlagReadonly) != 0 || sp.MayReplicate
	}
	if commands.IsExec(spec) && c.multi != nil {
		for _, q := range c.multi.cmds {
			if keyspace(q.spec) {
				return true
			}
		}
		return false
	}
	return keyspace(spec)
}

// feedMonitors sends the monitors the command c ran. QUIT never gets
// there in Redis (processCommand answers it itself).
func (s *Server) feedMonitors(c *Client, spec *commands.Spec, args [][]byte) {
	if s.mons.n.Load() == 0 || !monitored(spec) {
		return
	}
	s.sendMonitors(c.DB(), peerID(c.conn), redacted(spec, args))
}

// monitored reports whether the monitors see the command: not admin
// commands nor those flagged skip_monitor. QUIT never gets there in Redis
// (processCommand answers it itself).
func monitored(spec *commands.Spec) bool {
	return spec.Flags&(commands.FlagAdmin|commands.FlagSkipMonitor) == 0 && spec.Name != "quit"
}

// scriptPeer is where the monitor feed says a script's commands come from.
const scriptPeer = "lua"

// feedScriptMonitors sends the monitors a command a script ran, in the
// script's database (after the command: a SELECT shows the new one), as
// from "lua".
func (s *Server) feedScriptMonitors(db int, spec *commands.Spec, args [][]byte) {
	if s.mons.n.Load() == 0 || !monitored(spec) {
		return
	}
	s.sendMonitors(db, scriptPeer, redacted(spec, args))
}

// MonitorScriptCommand shows a script command to the monitors before it
// runs (commands.Scripting).
func (s session) MonitorScriptCommand(args [][]byte) {
	if srv := s.c.srv; srv.mons.n.Load() != 0 {
		srv.sendMonitors(s.c.DB(), peerID(s.c.conn), args)
	}
}

// sendMonitors sends every monitor the line of one command.
func (s *Server) sendMonitors(db int, peer string, args [][]byte) {
	line := monitorLine(nil, time.Now(), db, peer, args)
	s.mons.mu.Lock()
	defer s.mons.mu.Unlock()
	for m := range s.mons.set {
		m.enqueue(line)
	}
}

// peerID is Redis's getClientPeerId as the monitor feed writes it.
func peerID(conn net.Conn) string {
	if _, ok := conn.RemoteAddr().(*net.UnixAddr); ok {
		return "unix:" + conn.LocalAddr().String()
	}
	return conn.RemoteAddr().String()
}

// redactedArg is what Redis shows in place of a secret.
var redactedArg = []byte("(redacted)")

// redacted returns args with AUTH's arguments, HELLO's AUTH username
// and password and MIGRATE's AUTH and AUTH2 values replaced, as Redis 7.0's redactClientCommandArgument.
func redacted(spec *commands.Spec, args [][]byte) [][]byte {
	switch spec.Name {
	case "auth":
		out := make([][]byte, len(args))
		out[0] = args[0]
		for j := 1; j < len(args); j++ {
			out[j] = redactedArg
		}
		return out
	case "hello":
		var out [][]byte
		for j := 2; j < len(args); j++ {
			if len(args)-1-j >= 2 && equalFoldASCII(args[j], "auth") {
				if out == nil {
					out = append([][]byte(nil), args...)
				}
				out[j+1], out[j+2] = redactedArg, redactedArg
				j += 2
			}
		}
		if out != nil {
			return out
		}
	case "migrate":
		secret := commands.MigrateSecretArgs(args)
		out := append([][]byte(nil), args...)
		for j := range out {
			if secret(j) {
				out[j] = redactedArg
			}
		}
		return out
	}
	return args
}

func equalFoldASCII(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		if b[i]|0x20 != s[i]|0x20 {
			return false
		}
	}
	return true
}

// monitorLine appends one line of the monitor feed.
func monitorLine(dst []byte, now time.Time, db int, peer string, args [][]byte) []byte {
	dst = append(dst, '+')
	dst = strconv.AppendInt(dst, now.Unix(), 10)
	dst = append(dst, '.')
	us := strconv.AppendInt(nil, int64(now.Nanosecond()/1000), 10)
	for range 6 - len(us) {
		dst = append(dst, '0')
	}
	dst = append(dst, us...)
	dst = append(dst, " ["...)
	dst = strconv.AppendInt(dst, int64(db), 10)
	dst = append(dst, ' ')
	dst = append(dst, peer...)
	dst = append(dst, "] "...)
	for j, a := range args {
		if j > 0 {
			dst = append(dst, ' ')
		}
		dst = appendRepr(dst, a)
	}
	return append(dst, '\r', '\n')
}

// appendRepr is Redis's sdscatrepr: a quoted string with \\, \", \n, \r,
// \t, \a and \b escaped, other bytes outside printable ASCII as \xhh.
func appendRepr(dst, s []byte) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for _, ch := range s {
		switch ch {
		case '\\', '"':
			dst = append(dst, '\\', ch)
		case '\n':
			dst = append(dst, `\n`...)
		case '\r':
			dst = append(dst, `\r`...)
		case '\t':
			dst = append(dst, `\t`...)
		case '\a':
			dst = append(dst, `\a`...)
		case '\b':
			dst = append(dst, `\b`...)
		default:
			if ch >= 0x20 && ch < 0x7f {
				dst = append(dst, ch)
			} else {
				dst = append(dst, '\\', 'x', hex[ch>>4], hex[ch&15])
			}
		}
	}
	return append(dst, '"')
}
