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
