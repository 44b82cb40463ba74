package server

import (
	"context"
	"errors"
	"time"

	"github.com/kvserver/kvserver/evloop"
	"github.com/kvserver/kvserver/resp"
)

// Connections of the TCP and Unix listeners live on event loops (package
// evloop) while idle: an idle connection parks on its loop, and the loop
// runs the commands of every connection whose bytes arrived, one after
// the other on its own goroutine, as Redis's event loop does. A command
// costs one read and one write then, and no goroutine is woken for it.
// Anything that may wait leaves the loop first (leaveLoop): a command that
// blocks (blocking.go), a script, a wait for the budget, a write to a
// client that does not read, a large request value other than a command's
// last argument (a last one is read on the loop as it arrives, when its
// budget is free at once: resp.Reader.StartBig); the connection then
// runs on a goroutine of its own (serveClient) until it is idle again.
// Connections with a mailbox (subscribers, monitors, tracking redirect
// targets) and TLS connections always run on their own goroutine.

// park hands an idle connection to its event loop and reports whether it
// did; serveClient must then return without touching c.
func (s *Server) park(c *Client) bool {
	pc, ok := c.conn.(*evloop.Conn)
	if !ok || c.r.Buffered() || c.w.Pending() > 0 || c.mailboxUsed.Load() || c.killed.Load() || len(c.trackPending) > 0 {
		return false
	}
	s.releaseExclusive(c)
	if c.readDeadline {
		// The loop reads without waiting; the idle timeout of a parked
		// connection is sweepIdleParked's.
		c.conn.SetReadDeadline(time.Time{})
		c.readDeadline, c.idle = false, 0
	}
	return pc.Park() == nil
}

// leaveLoop takes c off its event loop before the goroutine serving it
// waits: the loop goes on in another goroutine, and this one stays with c.
func (c *Client) leaveLoop() {
	if pc, ok := c.conn.(*evloop.Conn); ok {
		pc.Detach()
	}
}

// serveLoopConn is the loops' handler: it runs the commands that arrived
// on a parked connection and answers them.
func (s *Server) serveLoopConn(pc *evloop.Conn) {
	c := pc.Owner().(*Client)
	if c.killed.Load() || c.mailboxUsed.Load() {
		s.serveDetached(c, pc)
		return
	}
	if pc.Again() {
		// The replies deferred below, after the loop's other clients.
		s.flushParked(c, pc)
		return
	}
	var n int
	var err error
	if c.r.BigPending() {
		n, err = c.r.FillBig(pc.TryRead)
	} else {
		n, err = c.r.Fill(pc.TryRead)
	}
	if n > 0 {
		c.progress.Add(int64(n))
		if c.r.BigHeld() > 0 {
			// A large value arriving slowly is not idle
			// (sweepIdleParked): as in Redis, idle time counts from
			// the last byte received.
			c.mu.Lock()
			c.lastUsed = time.Now()
			c.mu.Unlock()
		}
	}
	s.countIO(c)
	switch {
	case errors.Is(err, evloop.ErrWouldBlock):
		return
	case err != nil:
		s.endClient(c, err)
		return
	}
	for {
		if c.r.BigPending() {
			// The rest of a large value: read as it arrives.
			s.flushParked(c, pc)
			return
		}
		// Before Next: an unauthenticated client's limits decide
		// whether a command's header alone is an error.
		c.r.SetAuthRequired(s.authRequired(c))
		switch c.r.Next() {
		case resp.NextEmpty, resp.NextPartial:
			// The replies go out after the other clients the loop found
			// ready have been served, all together (evloop's Defer).
			if c.w.Pending() > 0 && pc.Defer() {
				s.releaseExclusive(c)
				return
			}
			s.flushParked(c, pc)
			return
		case resp.NextBig:
			if c.r.StartBig() {
				// Read on the loop, as it arrives, into a value of
				// its size: the command's last argument, with its
				// budget free.
				continue
			}
			// Read by its goroutine, which may wait for the budget.
			s.serveDetached(c, pc)
			return
		}
		err := c.r.ReadCommand(&c.cmd)
		s.countIO(c)
		if err != nil || !s.runCommand(c, pc) {
			s.endClient(c, err)
			return
		}
		if pc.Running() || c.mailboxUsed.Load() {
			// The command waited (and left the loop), or subscribed.
			s.serveDetached(c, pc)
			return
		}
	}
}

// flushParked sends what the commands of a parked connection answered,
// before the loop goes on to other connections (which a lock kept after a
// script must not hold up).
func (s *Server) flushParked(c *Client, pc *evloop.Conn) {
	if c.w.Pending() == 0 {
		s.releaseExclusive(c)
		return
	}
	if err := s.sendReplies(c); err != nil {
		s.endClient(c, nil)
		return
	}
	if pc.Running() {
		// The client did not read: the write waited off the loop.
		s.serveClient(c)
	}
}

// serveDetached moves c off its loop, if it is still on it, and serves it
// on this goroutine.
func (s *Server) serveDetached(c *Client, pc *evloop.Conn) {
	pc.Detach()
	s.serveClient(c)
}

// sweepIdleParked closes the parked connections idle for longer than
// CONFIG SET timeout, once a second; connections on goroutines time out
// through their read deadline (armIdleTimeout).
func (s *Server) sweepIdleParked(ctx context.Context) {
	everySecond(ctx, func() {
		t := s.idleTimeout.Load()
		if t <= 0 {
			return
		}
		limit := time.Duration(t) * time.Second
		now := time.Now()
		s.forEachClient(func(c *Client) {
			pc, ok := c.conn.(*evloop.Conn)
			if !ok || !pc.Parked() {
				return
			}
			c.mu.Lock()
			idle := now.Sub(c.lastUsed)
			c.mu.Unlock()
			if idle > limit {
				s.log.Debug("closing idle client", "client", c.ID, "addr", c.conn.RemoteAddr().String())
				c.kill()
			}
		})
	})
}
