package server

import (
	"context"
	"time"

	"github.com/kvserver/kvserver/wake"
)

// The budget watch: what keeps a dead or stalled connection from keeping
// the memory budget (budget.go) that other clients wait for.

const (
	// budgetWatchTick is how often the watch looks at the clients.
	budgetWatchTick = 250 * time.Millisecond
	// A client that holds budget bytes while other clients wait for the
	// budget is disconnected (unless CLIENT NO-EVICT is on) when it
	// leaves its queued replies unread (no byte accepted while the server
	// is blocked writing to it) for client-stall-grace-ms. A client that
	// keeps reading, however slowly, is never cut off, and nobody is while
	// nobody waits.
	//
	// senderGrace is the same for a client that announced a large value
	// and sends none of its bytes. It is longer: a value's buffer costs
	// memory only as its bytes arrive, and a client under load (one that
	// builds its 32 MiB requests while the server waits) must not lose
	// its write (30 s cut off a test client starved of CPU on a loaded
	// two-core machine). Time the server spends on its own side (running
	// the command, allocating a buffer) never counts toward either.
	senderGrace = 2 * time.Minute
)

// watchBudget runs until ctx ends: every budgetWatchTick it ends the wait
// of clients whose peer has closed the connection, and disconnects
// stalled holders while others wait.
func (s *Server) watchBudget(ctx context.Context) {
	wake.Every(ctx, budgetWatchTick, func(now time.Time) {
		waiters := s.bulks.waiting()
		s.forEachClient(func(c *Client) { s.watchClient(c, now, waiters) })
	})
}

func (s *Server) watchClient(c *Client, now time.Time, waiters int) {
	if s.blocked.isBlocked(c.ID) && peerClosed(c.conn) {
		// A client blocked in BLPOP, WAIT and their kin is not read
		// either.
		c.kill()
		return
	}
	if c.budget == nil {
		return
	}
	held, waiting := c.budget.holding()
	if waiting {
		if peerClosed(c.conn) {
			// Nobody reads the connection while it waits, so nothing
			// else would notice; its budget returns as it closes.
			c.kill()
		}
		c.stallSince = time.Time{}
		return
	}
	p := c.progress.Load()
	on := c.onClient.Load()
	if held == 0 || on == 0 || p != c.seenProgress || c.stallSince.IsZero() {
		c.seenProgress, c.stallSince = p, now
		return
	}
	grace := time.Duration(s.settings.Int("client-stall-grace-ms")) * time.Millisecond
	if on == onClientRead {
		grace = senderGrace
	}
	if waiters == 0 || now.Sub(c.stallSince) < grace {
		return
	}
	c.mu.Lock()
	noEvict := c.noEvict
	c.mu.Unlock()
	if noEvict {
		return
	}
	s.stats.evictedClients.Add(1)
	s.log.Warn("client closed: it held memory budget without progress while others waited",
		"client", c.ID, "addr", c.conn.RemoteAddr().String(), "held", held,
		"stalled", now.Sub(c.stallSince).Round(time.Millisecond).String(), "cmd", c.lastCommand())
	c.kill()
}
