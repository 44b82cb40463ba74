package server

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/kvserver/kvserver/commands"
)

// Blocked clients and CLIENT PAUSE: a connection whose command waits (WAIT
// today; BLPOP, BRPOP, XREAD and the other blocking commands use the same
// path) is registered while it waits, so that CLIENT UNBLOCK can end the
// wait, CLIENT LIST shows it with the b flag and INFO counts it in
// blocked_clients. A command held back by CLIENT PAUSE waits the same way
// (Redis's BLOCKED_POSTPONE). Waits are selects on channels and timers:
// nothing polls.

// blockedClients is the server's registry of blocked clients by ID. Its
// zero value is ready.
type blockedClients struct {
	mu   sync.Mutex
	byID map[int64]*blockedWait
	// withTimeout counts the waits that end on their own (INFO
	// clients_in_timeout_table).
	withTimeout int
}

// blockedWait is one registered wait.
type blockedWait struct {
	// unblock receives CLIENT UNBLOCK's reason; it has room for one, so
	// the sender never waits.
	unblock chan commands.Unblocked
	// unblockable: CLIENT UNBLOCK may end the wait. A paused command is
	// not: it would only wait again (Redis 7.0 crashes there).
	unblockable bool
	timeout     bool
}

func (r *blockedClients) add(id int64, w *blockedWait) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byID == nil {
		r.byID = make(map[int64]*blockedWait)
	}
	r.byID[id] = w
	if w.timeout {
		r.withTimeout++
	}
}

// remove forgets w, unless CLIENT UNBLOCK already did.
func (r *blockedClients) remove(id int64, w *blockedWait) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byID[id] != w {
		return
	}
	delete(r.byID, id)
	if w.timeout {
		r.withTimeout--
	}
}

// unblock ends the wait of client id with reason, reporting whether the
// client was blocked in a wait that CLIENT UNBLOCK may end. The client is
// no longer blocked from then on: a second CLIENT UNBLOCK answers 0.
func (r *blockedClients) unblock(id int64, reason commands.Unblocked) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	w := r.byID[id]
	if w == nil || !w.unblockable {
		return false
	}
	delete(r.byID, id)
	if w.timeout {
		r.withTimeout--
	}
	w.unblock <- reason
	return true
}

func (r *blockedClients) isBlocked(id int64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.byID[id] != nil
}

func (r *blockedClients) counts() (blocked, withTimeout int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.byID), r.withTimeout
}

// block makes c wait, registered as blocked, until deadline (never when
// zero), until ready is closed, until CLIENT UNBLOCK ends the wait (when
// unblockable), or until the connection closes or the server stops, and
// says which.
func (c *Client) block(deadline time.Time, ready <-chan struct{}, unblockable bool) commands.Unblocked {
	w := &blockedWait{unblock: make(chan commands.Unblocked, 1), unblockable: unblockable, timeout: !deadline.IsZero() && unblockable}
	c.leaveLoop()
	c.sendPendingReplies()
	if c.mailboxUsed.Load() {
		// Messages published while it waits precede its reply.
		defer c.takeMessagesAhead()
	}
	reg := &c.srv.blocked
	reg.add(c.ID, w)
	defer reg.remove(c.ID, w)
	var expired <-chan time.Time
	if !deadline.IsZero() {
		t := time.NewTimer(time.Until(deadline))
		defer t.Stop()
		expired = t.C
	}
	select {
	case <-expired:
		return commands.UnblockedTimeout
	case reason := <-w.unblock:
		return reason
	case <-ready:
		return commands.UnblockedReady
	case <-c.ctx.Done():
		return commands.UnblockedClosed
	case <-c.srv.shutdown:
		return commands.UnblockedClosed
	}
}

// sendPendingReplies writes the replies of the commands before this one
// before it waits, as Redis's event loop writes a blocked client's output:
// a GET pipelined before a paused SET is answered at once. The command
// running has written nothing yet, so its marks start after them.
func (c *Client) sendPendingReplies() {
	if c.w.Pending() == 0 {
		return
	}
	err := c.srv.flush(c)
	c.srv.countIO(c)
	if err != nil {
		c.kill() // the wait ends at once; serveClient closes the connection
	}
	c.cmdMark = c.w.Mark()
	c.replyMark = c.cmdMark
}

var _ commands.Blocker = session{}

// Block is commands.Blocker: a blocking command's wait, which CLIENT
// UNBLOCK may end.
func (s session) Block(timeout time.Duration, ready <-chan struct{}) commands.Unblocked {
	var deadline time.Time
	if timeout > 0 {
		deadline = time.Now().Add(timeout)
	}
	return s.c.block(deadline, ready, true)
}

// Unblock is CLIENT UNBLOCK.
func (s session) Unblock(id int64, reason commands.Unblocked) bool {
	return s.c.srv.blocked.unblock(id, reason)
}

// Blocked is INFO's blocked_clients and clients_in_timeout_table.
func (s session) Blocked() (blocked, withTimeout int) { return s.c.srv.blocked.counts() }

// clientPause is CLIENT PAUSE (Redis's pauseClients for the CLIENT
// command): until when commands wait, and whether all of them do or only
// those that may write. Its zero value is no pause.
type clientPause struct {
	// active is set while a pause may be in force, so that commands
	// need neither the lock nor the clock when there is none.
	active atomic.Bool
	mu     sync.Mutex
	until  time.Time
	all    bool
	// changed is closed, and replaced, whenever the pause is lifted or
	// changed, so that waiting commands look again.
	changed chan struct{}
}

// pause pauses until until; a pause still in force is extended to the
// later end and the stricter mode, as in Redis.
func (p *clientPause) pause(until time.Time, all bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if time.Now().Before(p.until) {
		if until.After(p.until) {
			p.until = until
		}
		p.all = p.all || all
	} else {
		p.until, p.all = until, all
	}
	p.active.Store(true)
	p.signalLocked()
}

// unpause lifts the pause (CLIENT UNPAUSE).
func (p *clientPause) unpause() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.until = time.Time{}
	p.active.Store(false)
	p.signalLocked()
}

func (p *clientPause) signalLocked() {
	if p.changed != nil {
		close(p.changed)
	}
	p.changed = make(chan struct{})
}

// holds reports whether a command waits now (mayWrite: it may write), and
// if so until when and the channel closed when the pause changes.
func (p *clientPause) holds(mayWrite bool) (until time.Time, changed <-chan struct{}, ok bool) {
	if !p.active.Load() {
		return time.Time{}, nil, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !time.Now().Before(p.until) {
		p.active.Store(false)
		return time.Time{}, nil, false
	}
	if !(p.all || mayWrite) {
		return time.Time{}, nil, false
	}
	if p.changed == nil {
		p.changed = make(chan struct{})
	}
	return p.until, p.changed, true
}

// Pause is CLIENT PAUSE.
func (s session) Pause(until time.Time, all bool) { s.c.srv.pause.pause(until, all) }

// Unpause is CLIENT UNPAUSE.
func (s session) Unpause() { s.c.srv.pause.unpause() }

// waitWhilePaused holds c's command while CLIENT PAUSE applies to it, as
// Redis's processCommand postpones it: in ALL mode every command, in WRITE
// mode those that may write (write commands, PFCOUNT, and an EXEC that
// queued one). It reports false when the connection closed meanwhile.
func (s *Server) waitWhilePaused(c *Client, spec *commands.Spec) bool {
	mayWrite := spec.Flags&commands.FlagWrite != 0 || spec.MayReplicate ||
		(commands.IsExec(spec) && c.multi != nil && c.multi.mayWrite)
	for {
		until, changed, ok := s.pause.holds(mayWrite)
		if !ok {
			return true
		}
		s.releaseExclusive(c)
		if c.block(until, changed, false) == commands.UnblockedClosed {
			return false
		}
	}
}
