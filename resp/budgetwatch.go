package resp

import (
	"context"
	"time"
)

// The budget watch: what keeps a dead or stalled connection from keeping
// the memory budget (budget.go) that other clients wait for.

const (
	// budgetWatchTick is how often the watch looks at the clients.
	budgetWatchTick = 250 * time.Millisecond
	// stallGrace is how long a client may hold budget bytes while the
	// server waits on it (blocked reading from or writing to it) without
	// receiving or sending a byte, when other clients wait for the
	// budget, before it is disconnected (unless CLIENT NO-EVICT is on).
	// Time the server spends on its own side (running the command,
	// allocating the value's buffer) never counts. A
	// client that keeps reading or sending, however slowly (flushPiece
	// bytes per grace), is never cut off, and nobody is while nobody waits.
	stallGrace = 2 * time.Second
)

// watchBudget runs until ctx ends: every budgetWatchTick it ends the wait
// of clients whose peer has closed the connection, and disconnects
// stalled holders while others wait.
func (s *Server) watchBudget(ctx context.Context) {
	t := time.NewTicker(budgetWatchTick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			waiters := s.bulks.waiting()
			s.forEachClient(func(c *Client) { s.watchClient(c, now, waiters) })
		}
	}
}

func (s *Server) watchClient(c *Client, now time.Time, waiters int) {
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
	if held == 0 || !c.onClient.Load() || p != c.seenProgress || c.stallSince.IsZero() {
		c.seenProgress, c.stallSince = p, now
		return
	}
	if waiters == 0 || now.Sub(c.stallSince) < stallGrace {
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
