package server

import (
	"errors"
	"net"
	"os"
	"time"

	"github.com/kvserver/kvserver/config"
	"github.com/kvserver/kvserver/resp"
)

// Output buffer limits and the idle timeout on the write side.
//
// kvserver writes a client's replies before it reads the client's next
// request, so a client that reads slowly holds at most one batch of
// replies: up to maxPendingReply of pipelined replies plus the last one.
// Large values in that batch are references to the stored values (the
// zero-copy GET path), so they cost memory only once the store drops them;
// they still count in full toward the limits, as a copied reply does in
// Redis. What the limits bound is how long such a batch may stay unsent:
//
//   - hard: a client whose pending replies reach it is closed at once and
//     its replies dropped, like Redis's freeClientAsync.
//   - soft and soft-seconds: a client whose pending replies stay at or
//     above soft for soft-seconds is closed. The bytes above soft are
//     written under a deadline at that moment.
//   - timeout (CONFIG SET timeout): a client that accepts no reply bytes
//     for that long is idle, as in Redis, and is closed. Replies are
//     written in pieces of flushPiece under that deadline, so a slow
//     reader that keeps reading is not cut off.
//
// Without a soft limit or a timeout, replies go out in one vectored write,
// unless they are large enough to count toward the memory budget
// (budget.go): those go out in pieces of flushPiece, and what each piece
// sends is returned to the budget at once, so that a slow reader holds only
// what it has not read and the budget watch sees its progress.

// flushPiece is the most one write sends: under one deadline, or before
// the budget is told.
const flushPiece = 1 << 20

// queuedReplyBytes is what c's queued replies count toward the budget:
// all of them once they reach bigBulkThreshold, nothing below (small
// replies are bounded by maxPendingReply and the hard limit).
func queuedReplyBytes(c *Client) int64 {
	if n := c.w.Pending(); n >= resp.BigBulkThreshold {
		return int64(n)
	}
	return 0
}

// heldBytes is what the bulk budget counts for c: its queued replies
// (queuedReplyBytes) and a large request value its event loop is reading
// (resp.Reader.StartBig).
func heldBytes(c *Client) int64 { return queuedReplyBytes(c) + c.r.BigHeld() }

// outputLimits returns the client-output-buffer-limit in effect.
func (s *Server) outputLimits() config.OutputBufferLimits { return *s.obufLimits.Load() }

// overHardLimit reports whether c's pending replies reached the normal
// class's hard limit; the caller then closes c without sending them.
func (s *Server) overHardLimit(c *Client) bool {
	hard := s.limits(c).Hard
	if hard <= 0 || int64(c.w.Pending()) < hard {
		return false
	}
	s.logOutputLimit(c, "hard")
	return true
}

// logOutputLimit logs a client closed for its output buffer, as Redis
// does at warning level.
func (s *Server) logOutputLimit(c *Client, which string) {
	s.log.Warn("client closed for overcoming of output buffer limits",
		"client", c.ID, "addr", c.conn.RemoteAddr().String(), "limit", which,
		"omem", c.w.Pending(), "cmd", c.lastCommand())
}

// flush writes c's pending replies; see the top of this file.
func (s *Server) flush(c *Client) error {
	if c.multi != nil {
		c.publishMulti()
	}
	// The replies are sent or the client is closed: either way they
	// stop counting.
	defer func() { c.budget.settle(heldBytes(c)) }()
	if c.mailboxUsed.Load() {
		defer c.messagesWritten()
	}
	lim := s.limits(c)
	idle := time.Duration(s.idleTimeout.Load()) * time.Second
	if lim.Soft <= 0 && idle <= 0 && queuedReplyBytes(c) == 0 {
		if c.writeDeadline {
			c.conn.SetWriteDeadline(time.Time{})
			c.writeDeadline = false
		}
		return c.w.Flush()
	}
	var overSince time.Time
	for c.w.Pending() > 0 {
		pending := c.w.Pending()
		n := min(pending, flushPiece)
		now := time.Now()
		var deadline time.Time
		if idle > 0 {
			deadline = now.Add(idle)
		}
		soft := false
		if lim.Soft > 0 && int64(pending) >= lim.Soft {
			if overSince.IsZero() {
				overSince = now
			}
			// Redis measures soft-seconds in whole seconds and closes
			// once more than that has passed, so 0 means about a second.
			d := overSince.Add(time.Duration(max(lim.SoftSeconds, 1)) * time.Second)
			if deadline.IsZero() || d.Before(deadline) {
				deadline, soft = d, true
			}
			n = min(n, pending-int(lim.Soft)+1)
		} else {
			overSince = time.Time{}
		}
		c.conn.SetWriteDeadline(deadline)
		c.writeDeadline = !deadline.IsZero()
		c.onClient.Store(onClientWrite)
		err := c.w.FlushN(n)
		c.onClient.Store(0)
		if err != nil {
			if isTimeout(err) {
				if soft {
					s.logOutputLimit(c, "soft")
				} else {
					s.log.Debug("closing idle client", "client", c.ID, "addr", c.conn.RemoteAddr().String())
				}
			}
			return err
		}
		c.progress.Add(int64(n))
		c.budget.settle(heldBytes(c))
	}
	return nil
}

// isTimeout reports whether err is a missed deadline.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}
