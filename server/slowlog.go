package server

import (
	"sync"
	"time"

	"github.com/kvserver/kvserver/commands"
)

// slowLog is Redis's slow log (slowlog.c): the newest commands that ran
// longer than slowlog-log-slower-than microseconds, at most
// slowlog-max-len of them.
type slowLog struct {
	mu      sync.Mutex
	entries []commands.SlowLogEntry // oldest first
	nextID  int64
}

// recordSlow adds a command that ran (dispatch calls it after the handler,
// with the time dispatch measured, and EXEC for each command it runs)
// when it took longer than the threshold; skip_slowlog commands are left
// out.
func (s *Server) recordSlow(c *Client, spec *commands.Spec, args [][]byte, start time.Time, took time.Duration) {
	if !s.isSlow(spec, took) {
		return
	}
	c.mu.Lock()
	name := c.name
	c.mu.Unlock()
	s.addSlow(spec, args, start, took, clientAddr(c.conn.RemoteAddr(), c.conn.LocalAddr()), name)
}

// scriptClientAddr is the address Redis 7.0's slow log shows for the
// commands a script runs: its Lua client has no connection.
const scriptClientAddr = "?:0"

// recordSlowInScript is recordSlow for a command a script ran, which
// Redis 7.0 logs as its Lua client's (no address, no name).
func (s *Server) recordSlowInScript(spec *commands.Spec, args [][]byte, start time.Time, took time.Duration) {
	if s.isSlow(spec, took) {
		s.addSlow(spec, args, start, took, scriptClientAddr, "")
	}
}

// isSlow reports whether a command of spec that took took goes into the
// slow log.
func (s *Server) isSlow(spec *commands.Spec, took time.Duration) bool {
	threshold := s.slowlogSlowerThan.Load()
	return threshold >= 0 && took.Microseconds() >= threshold && spec.Flags&commands.FlagSkipSlowlog == 0
}

// addSlow appends an entry, dropping the oldest past slowlog-max-len.
func (s *Server) addSlow(spec *commands.Spec, args [][]byte, start time.Time, took time.Duration, addr, name string) {
	e := commands.SlowLogEntry{
		Time: start.Unix(), Micros: took.Microseconds(), Args: commands.SlowLogArgs(args),
		Addr: addr, Name: name,
	}
	maxLen := s.settings.Int("slowlog-max-len")
	l := &s.slowlog
	l.mu.Lock()
	defer l.mu.Unlock()
	e.ID = l.nextID
	l.nextID++
	l.entries = append(l.entries, e)
	if over := int64(len(l.entries)) - maxLen; over > 0 {
		l.entries = append(l.entries[:0], l.entries[over:]...)
	}
}

// newest returns up to n entries, newest first (all when n < 0).
func (l *slowLog) newest(n int) []commands.SlowLogEntry {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n < 0 || n > len(l.entries) {
		n = len(l.entries)
	}
	out := make([]commands.SlowLogEntry, n)
	for i := range n {
		out[i] = l.entries[len(l.entries)-1-i]
	}
	return out
}

func (l *slowLog) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.entries)
}

func (l *slowLog) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.entries = nil
}
