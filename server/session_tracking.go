package server

import (
	"strings"

	"github.com/kvserver/kvserver/commands"
	"github.com/kvserver/kvserver/tracking"
)

// Client-side caching (commands.Tracking) over the server's
// tracking.Table.
//
// Reads are remembered in one place: after a read-only command runs
// (dispatch, and each command EXEC runs), the keys its key specs name,
// Redis's trackingRememberKeys. Changes come from the engine's key-change
// path (engine.Events.KeyChanged and Flushed, eventSink below), which sees
// every write, deletion, expiry and eviction, Redis's signalModifiedKey.
// Invalidations reach other connections through their mailbox (pubsub.go),
// like pub/sub messages: the engine never waits for a slow reader. Those
// caused by a connection's own command wait in trackPending and follow its
// reply, as Redis 7.0's tracking_pending_keys.

var _ commands.Tracking = session{}

// TrackingOn is CLIENT TRACKING ON.
func (s session) TrackingOn(mode tracking.Mode) string {
	srv := s.c.srv
	if msg := srv.track.Enable(s.c.ID, mode); msg != "" {
		return msg
	}
	srv.tracked.Store(true)
	s.c.tracking = true
	s.c.useMailbox()
	return ""
}

// TrackingOff is CLIENT TRACKING OFF (and RESET's).
func (s session) TrackingOff() {
	s.c.srv.track.Disable(s.c.ID)
	s.c.tracking = false
}

// TrackingInfo is the connection's tracking state.
func (s session) TrackingInfo() tracking.Info { return s.c.srv.track.Get(s.c.ID) }

// TrackingStats are INFO's tracking counters.
func (s session) TrackingStats() tracking.Stats { return s.c.srv.track.Stats() }

// SetCaching is CLIENT CACHING YES|NO.
func (s session) SetCaching(on bool) { s.c.srv.track.SetCaching(s.c.ID, on) }

// rememberReads records the keys a tracking connection's read-only
// command read (not those of pub/sub commands, whose keys are shard
// channels, nor of read-only scripts, whose own calls count), then keeps
// the table within tracking-table-max-keys.
func (s *Server) rememberReads(c *Client, spec *commands.Spec, args [][]byte) {
	if !c.tracking || spec.Flags&commands.FlagReadonly == 0 || spec.Flags&commands.FlagPubsub != 0 {
		return
	}
	switch spec.Name {
	case "eval_ro", "evalsha_ro", "fcall_ro":
		return
	}
	idx := spec.Keys(args)
	if len(idx) == 0 {
		return
	}
	keys := make([][]byte, len(idx))
	for i, j := range idx {
		keys[i] = args[j]
	}
	s.rememberKeys(c, keys)
}

// rememberKeys records keys as read by the tracking connection c, then
// keeps the table within tracking-table-max-keys.
func (s *Server) rememberKeys(c *Client, keys [][]byte) {
	s.track.Remember(c.ID, keys)
	s.track.Limit(int(s.settings.Int("tracking-table-max-keys")))
}

// commandDoneTracking clears CLIENT CACHING's flag after any command,
// refused ones included, but CLIENT, outside MULTI (Redis's resetClient).
func (s *Server) commandDoneTracking(c *Client) {
	if c.tracking && c.multi == nil && len(c.cmd.Args) > 0 && !strings.EqualFold(string(c.cmd.Args[0]), "client") {
		s.track.CommandDone(c.ID)
	}
}

// afterCommandTracking writes the invalidations c's own command caused,
// after its reply, and sends the BCAST invalidations the command's
// changes queued (Redis does both before its event loop sleeps).
func (s *Server) afterCommandTracking(c *Client) {
	if !s.tracked.Load() {
		return
	}
	for _, wire := range c.trackPending {
		c.w.Raw(wire)
	}
	c.trackPending = nil
	if s.track.Pending() {
		s.track.Broadcast()
	}
}

// clientByID returns the connected client with the given ID, or nil.
func (s *Server) clientByID(id int64) *Client {
	s.clientsMu.Lock()
	defer s.clientsMu.Unlock()
	return s.clients[id]
}

// trackSender delivers the table's invalidations (tracking.Sender), as
// Redis's sendTrackingMessage: to the client in RESP3, or to its redirect
// target in RESP3 or, in RESP2, as a message on __redis__:invalidate when
// the target has subscriptions; nothing otherwise.
type trackSender struct{ s *Server }

func (ts trackSender) SendInvalidation(id, redirect int64, keys []string, null, self bool) bool {
	c := ts.s.clientByID(id)
	if c == nil {
		return false
	}
	ownProto := int(c.proto.Load())
	target := c
	if redirect != 0 {
		if target = ts.s.clientByID(redirect); target == nil {
			if ownProto == 3 {
				c.deliverTracking(tracking.EncodeRedirBroken(nil, redirect), self)
			}
			return true
		}
	}
	proto := int(target.proto.Load())
	if proto != 3 && (target == c || !target.subscribed.Load()) {
		return false
	}
	target.deliverTracking(tracking.Encode(nil, proto, keys, null, ownProto), self && target == c)
	return false
}

// deliverTracking queues an encoded invalidation for c: after the reply
// of the command running when c's own command caused it (only then is
// this c's goroutine), through its mailbox otherwise.
func (c *Client) deliverTracking(wire []byte, self bool) {
	if self {
		c.trackPending = append(c.trackPending, wire)
		return
	}
	c.useMailbox()
	c.enqueue(wire)
}

// useMailbox makes c look at its mailbox before each read from now on. A
// connection that had no mailbox (a redirect target that never
// subscribed) may be blocked in a read that does not look at it: its read
// is cut short, as Deliver does, and flushBeforeRead reads again.
func (c *Client) useMailbox() {
	if c.mailboxUsed.Swap(true) {
		return
	}
	mb := &c.mbox
	mb.mu.Lock()
	defer mb.mu.Unlock()
	if !mb.closed {
		mb.woken = true
		c.conn.SetReadDeadline(pastDeadline)
	}
}

// KeyChanged invalidates key for the clients that cached it (engine.Events).
// An expiry is no client's change, so NOLOOP does not hide it, but one a
// client's read found still follows that client's reply (Redis's
// signalModifiedKey(NULL, ...) with current_client set).
func (e eventSink) KeyChanged(db int, key string, origin any, expired bool) {
	if !e.s.tracked.Load() {
		return
	}
	var current int64
	if o, ok := origin.(session); ok {
		current = o.c.ID
	}
	from := current
	if expired {
		from = 0
	}
	e.s.track.Invalidate(key, from, current)
	if current == 0 && e.s.track.Pending() {
		// Background work (expiry, eviction) has no command after which
		// to broadcast.
		e.s.track.Broadcast()
	}
}

// Flushed sends every tracking client the null invalidation (engine.Events).
func (e eventSink) Flushed() {
	if e.s.tracked.Load() {
		e.s.track.Flush(0)
	}
}
