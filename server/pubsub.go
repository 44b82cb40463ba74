package server

import (
	"crypto/tls"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kvserver/kvserver/config"
	"github.com/kvserver/kvserver/engine"
	"github.com/kvserver/kvserver/evloop"
	"github.com/kvserver/kvserver/notify"
	"github.com/kvserver/kvserver/pubsub"
)

// Pub/sub delivery.
//
// A publisher never writes to a subscriber's connection: pubsub.Hub calls
// Client.Deliver, which appends the encoded message (shared by every
// receiver) to the subscriber's mailbox and returns. The subscriber's own
// goroutine writes the mailbox between its replies: after each command
// (serveClient) and, while it waits for the client's next request, as
// soon as a message arrives: Deliver moves the connection's read deadline
// to the past, the blocked read returns at once, flushBeforeRead writes
// the messages and reads again. So replies and messages never interleave
// mid-reply, and a publisher costs a subscriber one append.
//
// A subscriber that does not read is bounded by client-output-buffer-limit
// pubsub (Redis's default 32mb 8mb 60): Deliver counts the bytes queued and
// being written, and closes the connection, without blocking, once they
// reach the hard limit or have stayed above the soft one for soft-seconds;
// the queue is dropped with it. A message from the subscriber's own command
// (PUBLISH to itself, a keyspace event of its own write in RESP3) goes
// straight into its reply buffer, ahead of the reply, as in Redis.

// mailbox is a subscriber's queue of encoded messages.
type mailbox struct {
	mu sync.Mutex
	// queue holds encoded messages, shared with the other receivers,
	// from head on; its array is reused once it is drained.
	queue [][]byte
	head  int
	// queued counts their bytes; writing counts the bytes taken into the
	// connection's writer and not yet flushed.
	queued, writing int64
	// softSince is when queued+writing last reached the soft limit.
	softSince time.Time
	// reading is set while the connection's goroutine is blocked reading
	// the client's request with nothing to send; woken once Deliver has
	// cut that read short, or left it to the publisher to (wakePending,
	// deferWake).
	reading, woken, wakePending bool
	// closed is set once the connection is gone or over its limit.
	closed bool
}

// pastDeadline is a read deadline in the past: it wakes a blocked read.
var pastDeadline = time.Unix(1, 0)

// Deliver queues m for c (pubsub.Subscriber). It runs on the publisher's
// goroutine, under the Hub's lock, and never blocks.
func (c *Client) Deliver(m *pubsub.Message, self bool) {
	wire := m.Wire(int(c.proto.Load()))
	if self {
		// c's own goroutine is running the command that published.
		c.w.Raw(wire)
		return
	}
	from, _ := m.From.(*Client)
	c.enqueueFrom(wire, from)
}

// Unsubscribed queues the sunsubscribe notice of a shard channel the
// server dropped (pubsub.Subscriber), as Redis's
// addReplyPubsubUnsubscribed; the connection leaves subscribed mode with
// its last subscription.
func (c *Client) Unsubscribed(channel []byte, count, total int) {
	c.enqueue(pubsub.EncodeUnsubscribed(nil, int(c.proto.Load()), channel, count))
	c.subscribed.Store(total > 0)
}

// enqueue appends an encoded message to c's mailbox, closing c when that
// breaks its pubsub output limit, and wakes c's goroutine if it waits.
func (c *Client) enqueue(wire []byte) { c.enqueueFrom(wire, nil) }

// enqueueFrom is enqueue of a message that client from's command
// published: from wakes c once its batch of commands is done (deferWake).
func (c *Client) enqueueFrom(wire []byte, from *Client) {
	mb := &c.mbox
	mb.mu.Lock()
	defer mb.mu.Unlock()
	if mb.closed {
		return
	}
	mb.queue = append(mb.queue, wire)
	mb.queued += int64(len(wire))
	if which := c.srv.overPubsubLimit(mb); which != "" {
		mb.closed = true
		mb.queue, mb.head, mb.queued = nil, 0, 0
		c.srv.log.Warn("client closed for overcoming of output buffer limits",
			"client", c.ID, "addr", c.conn.RemoteAddr().String(), "limit", which, "class", "pubsub")
		c.abort()
		return
	}
	if mb.reading && !mb.woken {
		mb.woken = true
		if from != nil {
			mb.wakePending = true
			from.deferWake(c)
			return
		}
		c.conn.SetReadDeadline(pastDeadline)
	}
}

// Deferred wake-ups. A publisher's pipeline of PUBLISHes would otherwise
// wake every subscriber once per message, and each wake-up costs the
// subscriber's goroutine a read deadline set and reset, a read that finds
// nothing and a write of one message. As Redis writes a subscriber's
// output buffer once per event-loop pass (handleClientsWithPendingWrites),
// the publisher wakes the subscribers its commands wrote to once, when
// its batch is done: before a command other than PUBLISH or SPUBLISH runs
// (it might wait), once no more commands are buffered, and before it waits
// for anything (releaseExclusive) or leaves.

// deferWake records that sub, waiting to read, has messages c published;
// under sub's mailbox lock.
func (c *Client) deferWake(sub *Client) {
	c.wakesMu.Lock()
	c.wakes = append(c.wakes, sub)
	c.hasWakes.Store(true)
	c.wakesMu.Unlock()
}

// wakeSubscribers wakes the subscribers c's commands deferred.
func (c *Client) wakeSubscribers() {
	if !c.hasWakes.Load() {
		return
	}
	c.wakesMu.Lock()
	subs := c.wakes
	c.wakes, c.wakesSpare = c.wakesSpare, nil
	c.hasWakes.Store(false)
	c.wakesMu.Unlock()
	// One write of a contiguous copy costs the kernel less than a writev
	// of the many small messages of a batch.
	var scratch [sendScratch]byte
	for i, sub := range subs {
		sub.sendOrWake(scratch[:0])
		subs[i] = nil
	}
	if cap(subs) <= maxKeptQueue {
		c.wakesMu.Lock()
		c.wakesSpare = subs[:0]
		c.wakesMu.Unlock()
	}
}

// sendOrWake sends c's queued messages, whose wake-up a publisher
// deferred, from the publisher's goroutine when c's socket takes them all
// now, as Redis's event loop writes a subscriber's output buffer; c's
// goroutine, blocked reading, then stays so. Otherwise it wakes c's
// goroutine, which sends what is left.
func (c *Client) sendOrWake(scratch []byte) {
	mb := &c.mbox
	mb.mu.Lock()
	defer mb.mu.Unlock()
	if !mb.wakePending {
		return
	}
	mb.wakePending = false
	if c.sendQueued(scratch) {
		mb.woken = false
		return
	}
	c.conn.SetReadDeadline(pastDeadline)
}

// sendScratch is the most bytes of messages sendQueued copies into one
// buffer to write them at once; more go out with writev.
const sendScratch = 16 << 10

// sendQueued writes c's queued messages straight to its socket, without
// waiting, and reports whether it took them all (copied into scratch
// first when they fit); under the mailbox lock,
// while c's goroutine is blocked reading with nothing left to write
// (startRead), so that no other write interleaves. A TLS connection's
// messages are its goroutine's to write.
func (c *Client) sendQueued(scratch []byte) bool {
	mb := &c.mbox
	pc, ok := c.conn.(*evloop.Conn)
	if !ok || !mb.reading || mb.closed || mb.head >= len(mb.queue) {
		return false
	}
	bufs := mb.queue[mb.head:]
	if mb.queued <= int64(cap(scratch)) {
		for _, b := range bufs {
			scratch = append(scratch, b...)
		}
		bufs = [][]byte{scratch}
	}
	n, err := pc.TryWriteBuffers(bufs)
	c.srv.countOutput(n)
	mb.queued -= int64(n)
	for n > 0 {
		b := mb.queue[mb.head]
		if n < len(b) {
			// The rest of a message shared with other receivers: only
			// this slice of it changes.
			mb.queue[mb.head] = b[n:]
			break
		}
		n -= len(b)
		mb.queue[mb.head] = nil
		mb.head++
	}
	if err != nil || mb.head < len(mb.queue) {
		return false
	}
	mb.queue, mb.head = mb.queue[:0], 0
	return true
}

// wakesBefore wakes the subscribers c deferred unless its next command
// cmd is one more publish, which never waits.
func (c *Client) wakesBefore(cmd [][]byte) {
	if !c.hasWakes.Load() {
		return
	}
	if len(cmd) > 0 && (strings.EqualFold(string(cmd[0]), "publish") || strings.EqualFold(string(cmd[0]), "spublish")) {
		return
	}
	c.wakeSubscribers()
}

// overPubsubLimit reports which pubsub limit mb's bytes break, "" none.
// The clock is read only above the soft limit.
func (s *Server) overPubsubLimit(mb *mailbox) string {
	lim := s.obufLimits.Load().PubSub
	n := mb.queued + mb.writing
	if lim.Hard > 0 && n >= lim.Hard {
		return "hard"
	}
	if lim.Soft <= 0 || n < lim.Soft {
		mb.softSince = time.Time{}
		return ""
	}
	now := time.Now()
	if mb.softSince.IsZero() {
		mb.softSince = now
		return ""
	}
	if now.Sub(mb.softSince) > time.Duration(lim.SoftSeconds)*time.Second {
		return "soft"
	}
	return ""
}

// abort closes c from another goroutine without blocking: unlike kill it
// closes the raw connection under TLS, whose Close could wait to send its
// closing alert to a client that reads nothing.
func (c *Client) abort() {
	c.killed.Store(true)
	if c.cancel != nil {
		c.cancel()
	}
	raw := c.conn
	if t, ok := raw.(*tls.Conn); ok {
		raw = t.NetConn()
	}
	raw.Close()
}

// takeMessages moves queued messages into c's writer, about flushPiece at
// most at a time (the rest stays counted in the mailbox), and reports
// whether any are left. Only c's goroutine calls it.
func (c *Client) takeMessages() (more bool) {
	mb := &c.mbox
	mb.mu.Lock()
	defer mb.mu.Unlock()
	for ; mb.head < len(mb.queue) && c.w.Pending() < flushPiece; mb.head++ {
		b := mb.queue[mb.head]
		mb.queue[mb.head] = nil
		c.w.Raw(b)
		mb.queued -= int64(len(b))
		mb.writing += int64(len(b))
	}
	if mb.head < len(mb.queue) {
		if mb.head >= maxKeptQueue && mb.head >= len(mb.queue)/2 {
			// A subscriber that is always behind never drains: move
			// the rest to the front so that the array stays bounded
			// by what is queued.
			n := copy(mb.queue, mb.queue[mb.head:])
			clear(mb.queue[n:])
			mb.queue, mb.head = mb.queue[:n], 0
		}
		return true
	}
	// Drained: keep the array for the next messages, unless a burst
	// made it large.
	if cap(mb.queue) > maxKeptQueue {
		mb.queue = nil
	} else {
		mb.queue = mb.queue[:0]
	}
	mb.head = 0
	return false
}

// takeMessagesAhead moves every message queued for c into its writer, so
// that they go out before the reply of the command c's goroutine runs
// next, or runs now after a blocked wait: as in Redis, where a message
// published before a command runs, or while it is blocked, is in the
// client's output buffer before its reply. Without it a command read in
// the instant Deliver cut the read short, or a blocked WAIT's reply,
// went out ahead of messages published before it. The command's marks
// start after the messages.
func (c *Client) takeMessagesAhead() {
	for c.takeMessages() {
		err := c.srv.flush(c)
		c.srv.countIO(c)
		if err != nil {
			c.kill() // serveClient closes the connection
			return
		}
	}
	c.cmdMark = c.w.Mark()
	c.replyMark = c.cmdMark
}

// maxKeptQueue is the largest drained mailbox array kept for reuse.
const maxKeptQueue = 1024

// messagesWritten is called once c's writer has sent what it held.
func (c *Client) messagesWritten() {
	mb := &c.mbox
	mb.mu.Lock()
	mb.writing = 0
	mb.mu.Unlock()
}

// startRead arms the wake-up before c's goroutine blocks reading; false
// when messages arrived meanwhile (send them first).
func (c *Client) startRead() bool {
	mb := &c.mbox
	mb.mu.Lock()
	defer mb.mu.Unlock()
	if mb.head < len(mb.queue) {
		return false
	}
	mb.reading = true
	return true
}

// endRead disarms it and reports whether Deliver cut the read short; then
// it restores the read deadline the read had (the idle timeout or none).
func (c *Client) endRead() (woken bool) {
	mb := &c.mbox
	mb.mu.Lock()
	defer mb.mu.Unlock()
	woken = mb.woken
	mb.reading, mb.woken, mb.wakePending = false, false, false
	if woken {
		var d time.Time
		if c.idle > 0 {
			d = time.Now().Add(c.idle)
		}
		c.conn.SetReadDeadline(d)
	}
	return woken
}

// closeMailbox drops c's queue when it leaves.
func (c *Client) closeMailbox() {
	mb := &c.mbox
	mb.mu.Lock()
	mb.closed, mb.wakePending = true, false
	mb.queue, mb.head, mb.queued = nil, 0, 0
	mb.mu.Unlock()
}

// limits is the client-output-buffer-limit class of c: pubsub while it
// has subscriptions, as Redis's getClientType.
func (s *Server) limits(c *Client) config.OutputBufferLimit {
	l := s.obufLimits.Load()
	if c.subscribed.Load() {
		return l.PubSub
	}
	return l.Normal
}

// The engine's events (engine.Events), published as keyspace
// notifications and KV-cache events.
type eventSink struct{ s *Server }

var _ engine.Events = eventSink{}

// Notifies reports whether notify-keyspace-events publishes class.
func (e eventSink) Notifies(class notify.Class) bool {
	return notify.Class(e.s.notifyFlags.Load()).Publishes(class)
}

// KeyEvent is Redis's notifyKeyspaceEvent.
func (e eventSink) KeyEvent(db int, class notify.Class, event, key string, origin any) {
	flags := notify.Class(e.s.notifyFlags.Load())
	if !flags.Publishes(class) {
		return
	}
	var from pubsub.Subscriber
	if o, ok := origin.(session); ok {
		from = o.c
	}
	if flags&notify.Keyspace != 0 {
		ch := notify.KeyspaceChannel(nil, db, key)
		e.s.hub.Publish(pubsub.Channel, ch, []byte(event), from)
	}
	if flags&notify.Keyevent != 0 {
		ch := notify.KeyeventChannel(nil, db, event)
		e.s.hub.Publish(pubsub.Channel, ch, []byte(key), from)
	}
}

// ChunkEvent publishes a KV-cache event when kvcache-events is on (see
// README.md, "KV-cache events"): channel __kvcache__@<db>__:<model>,
// payload "<event> <hash> <tier> <bytes>".
func (e eventSink) ChunkEvent(db int, ev engine.ChunkEvent) {
	if !e.s.settings.Bool("kvcache-events") {
		return
	}
	ch := make([]byte, 0, 16+len(ev.Model))
	ch = append(ch, "__kvcache__@"...)
	ch = strconv.AppendInt(ch, int64(db), 10)
	ch = append(ch, "__:"...)
	ch = append(ch, ev.Model...)
	tier := "disk"
	if ev.Memory {
		tier = "memory"
	}
	msg := make([]byte, 0, 32+len(ev.Hash))
	msg = append(msg, ev.Kind.String()...)
	msg = append(msg, ' ')
	msg = append(msg, ev.Hash...)
	msg = append(msg, ' ')
	msg = append(msg, tier...)
	msg = append(msg, ' ')
	msg = strconv.AppendInt(msg, ev.Bytes, 10)
	e.s.hub.Publish(pubsub.Channel, ch, msg, nil)
}

// wakeUp reports whether a timed-out read was Deliver's doing rather
// than the idle timeout's.
func (mb *mailbox) wakeUp() bool {
	mb.mu.Lock()
	defer mb.mu.Unlock()
	return mb.woken
}
