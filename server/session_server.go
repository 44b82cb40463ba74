package server

import "github.com/kvserver/kvserver/commands"

// The server's life as SHUTDOWN and DEBUG SLEEP see it
// (commands.Lifecycle).

var _ commands.Lifecycle = session{}

// Shutdown stops the server at the client's request, logging who asked.
func (s session) Shutdown() {
	c := s.c
	c.srv.log.Warn("user requested shutdown", "client", c.ID, "addr", c.conn.RemoteAddr().String())
	c.srv.requestShutdown()
}

// Stopping is closed when the server starts to shut down.
func (s session) Stopping() <-chan struct{} { return s.c.srv.shutdown }

// WillWait takes the connection off its event loop (eventloop.go).
func (s session) WillWait() { s.c.leaveLoop() }

// The settings and slow log as ROLE, OBJECT, MEMORY and SLOWLOG see them
// (commands.Diagnostics).

var _ commands.Diagnostics = session{}

// Setting is a CONFIG parameter's value by name, "" for none.
func (s session) Setting(name string) string {
	for _, p := range s.Params([][]byte{[]byte(name)}) {
		return p.Value
	}
	return ""
}

// SlowLog returns up to n of the newest slow log entries.
func (s session) SlowLog(n int) []commands.SlowLogEntry { return s.c.srv.slowlog.newest(n) }

// SlowLogLen is the slow log's length.
func (s session) SlowLogLen() int { return s.c.srv.slowlog.len() }

// SlowLogReset empties the slow log.
func (s session) SlowLogReset() { s.c.srv.slowlog.reset() }
