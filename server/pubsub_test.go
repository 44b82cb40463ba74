package server

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kvserver/kvserver/engine"
	"github.com/kvserver/kvserver/resp"
)

// TestSubscriberGetsEveryMessageBetweenItsReplies has a RESP3 subscriber
// run commands while four publishers publish to it concurrently: every
// reply arrives whole and in order among the pushes, each publisher's
// messages arrive in its order, and none is lost. Run with -race it checks
// the hand-over between publishers and the subscriber's goroutine.
func TestSubscriberGetsEveryMessageBetweenItsReplies(t *testing.T) {
	as := startAdminServer(t, Options{})
	sub := as.dial(t)
	sub.do("HELLO", "3")
	if r := sub.do("SUBSCRIBE", "ch"); r != ">3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n" {
		t.Fatalf("SUBSCRIBE = %q", r)
	}
	const publishers, each = 4, 200
	var wg sync.WaitGroup
	for p := range publishers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := as.dial(t)
			for i := range each {
				if r := c.do("PUBLISH", "ch", fmt.Sprintf("%d:%d", p, i)); r != ":1\r\n" {
					t.Errorf("PUBLISH = %q", r)
					return
				}
			}
		}()
	}
	next := make([]int, publishers)
	received, replies := 0, 0
	deadline := time.Now().Add(30 * time.Second)
	for received < publishers*each && time.Now().Before(deadline) {
		if replies < 300 {
			sub.send("ECHO", fmt.Sprint(replies))
		}
		for {
			r, err := sub.reply()
			if err != nil {
				t.Fatalf("after %d messages: %v", received, err)
			}
			if strings.HasPrefix(r, ">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n") {
				var p, i int
				body := strings.Split(r, "\r\n")[6]
				fmt.Sscanf(body, "%d:%d", &p, &i)
				if i != next[p] {
					t.Fatalf("publisher %d: message %d after %d", p, i, next[p]-1)
				}
				next[p]++
				received++
				if replies >= 300 || received == publishers*each {
					break
				}
				continue
			}
			if want := fmt.Sprintf("$%d\r\n%d\r\n", len(fmt.Sprint(replies)), replies); r != want {
				t.Fatalf("reply %q, want %q", r, want)
			}
			replies++
			break
		}
	}
	wg.Wait()
	if received != publishers*each {
		t.Fatalf("received %d of %d messages", received, publishers*each)
	}
}

// TestSubscribedClientIsAPubsubClient checks CLIENT LIST's view (flag P,
// sub, psub and ssub, TYPE pubsub) and INFO's counts.
func TestSubscribedClientIsAPubsubClient(t *testing.T) {
	as := startAdminServer(t, Options{})
	sub := as.dial(t)
	sub.do("HELLO", "3")
	sub.do("SUBSCRIBE", "a")
	sub.do("PSUBSCRIBE", "p*")
	sub.do("SSUBSCRIBE", "s")
	info := sub.do("CLIENT", "INFO")
	for _, f := range []string{" flags=P ", " sub=1 ", " psub=1 ", " ssub=1 "} {
		if !strings.Contains(info, f) {
			t.Errorf("CLIENT INFO lacks %q: %s", f, info)
		}
	}
	other := as.dial(t)
	if l := other.do("CLIENT", "LIST", "TYPE", "pubsub"); strings.Count(l, "id=") != 1 || !strings.Contains(l, "flags=P") {
		t.Errorf("CLIENT LIST TYPE pubsub = %q", l)
	}
	if l := other.do("CLIENT", "LIST", "TYPE", "normal"); strings.Count(l, "id=") != 1 || strings.Contains(l, "flags=P") {
		t.Errorf("CLIENT LIST TYPE normal = %q", l)
	}
	stats := other.do("INFO", "stats")
	for _, f := range []string{"pubsub_channels:1\r\n", "pubsub_patterns:1\r\n", "pubsubshard_channels:1\r\n"} {
		if !strings.Contains(stats, f) {
			t.Errorf("INFO stats lacks %q", f)
		}
	}
	other.do("CLIENT", "KILL", "TYPE", "pubsub")
	if !sub.closedByServer(5 * time.Second) {
		t.Error("CLIENT KILL TYPE pubsub left the subscriber connected")
	}
}

// TestMailboxStaysBoundedWhenAlwaysBehind feeds a mailbox faster than it
// is drained, a piece at a time, and checks that its array holds about
// what is queued, not every message since it was last empty.
func TestMailboxStaysBoundedWhenAlwaysBehind(t *testing.T) {
	srv := New(engine.New(engine.Options{}), Options{})
	c := &Client{srv: srv, w: resp.NewWriter(io.Discard)}
	msg := make([]byte, 1024)
	for round := range 50 {
		for range 2000 {
			c.enqueue(msg)
		}
		if !c.takeMessages() {
			t.Fatalf("round %d: drained a mailbox that is always behind", round)
		}
		c.w.Flush()
		c.messagesWritten()
		if queued := len(c.mbox.queue) - c.mbox.head; cap(c.mbox.queue) > 4*queued+2*maxKeptQueue {
			t.Fatalf("round %d: array of %d for %d queued messages", round, cap(c.mbox.queue), queued)
		}
		// Drain most of it so the pubsub limit is never reached.
		for c.mbox.queued > 1<<20 {
			c.takeMessages()
			c.w.Flush()
			c.messagesWritten()
		}
	}
}

// TestSubscribersAreWokenWhenThePublishersBatchEnds pins down the
// deferred wake-ups (pubsub.go, deferWake): a publisher's pipelined
// PUBLISHes reach a waiting subscriber once the batch is done, and no
// later than before the publisher waits: a blocking command after the
// PUBLISH, a command cut in the middle, a pause. Each case would leave
// the message unsent for seconds if the wake-up waited for the
// publisher's next turn.
func TestSubscribersAreWokenWhenThePublishersBatchEnds(t *testing.T) {
	as := startAdminServer(t, Options{})
	sub := as.dial(t)
	if r := sub.do("SUBSCRIBE", "ch"); !strings.HasSuffix(r, ":1\r\n") {
		t.Fatalf("SUBSCRIBE = %q", r)
	}
	pub := as.dial(t)
	admin := as.dial(t)
	const message = "*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n"
	expect := func(what string, payloads ...string) {
		t.Helper()
		for _, p := range payloads {
			sub.conn.SetReadDeadline(time.Now().Add(2 * time.Second))
			line, err := sub.rd.ReadString('\n')
			rest := make([]byte, len(message)-len(line)+len(fmt.Sprintf("$%d\r\n%s\r\n", len(p), p)))
			if err == nil {
				_, err = io.ReadFull(sub.rd, rest)
			}
			if got, want := line+string(rest), message+fmt.Sprintf("$%d\r\n%s\r\n", len(p), p); err != nil || got != want {
				t.Fatalf("%s: subscriber got %q, %v; want %q", what, got, err, want)
			}
		}
	}
	cmd := func(args ...string) string {
		var b strings.Builder
		fmt.Fprintf(&b, "*%d\r\n", len(args))
		for _, a := range args {
			fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
		}
		return b.String()
	}
	write := func(s string) {
		t.Helper()
		if _, err := io.WriteString(pub.conn, s); err != nil {
			t.Fatal(err)
		}
	}

	write(cmd("PUBLISH", "ch", "a") + cmd("PUBLISH", "ch", "b") + cmd("PUBLISH", "ch", "c"))
	expect("a pipeline", "a", "b", "c")
	for range 3 {
		if r, err := pub.reply(); err != nil || r != ":1\r\n" {
			t.Fatalf("PUBLISH = %q, %v", r, err)
		}
	}

	write(cmd("PUBLISH", "ch", "before-blpop") + cmd("BLPOP", "nolist", "10"))
	expect("a blocking command next", "before-blpop")
	admin.do("LPUSH", "nolist", "x")
	pub.reply()
	pub.reply()

	whole := cmd("PUBLISH", "ch", "before-partial")
	next := cmd("PING")
	write(whole + next[:5])
	expect("half a command next", "before-partial")
	write(next[5:])
	pub.reply()
	pub.reply()

	admin.do("CLIENT", "PAUSE", "10000", "WRITE")
	write(cmd("PUBLISH", "ch", "unpaused") + cmd("PUBLISH", "ch", "paused"))
	expect("a pause", "unpaused")
	admin.do("CLIENT", "UNPAUSE")
	expect("after the pause", "paused")
}

// TestMessagesSentByThePublisherStayInOrder fills a subscriber's socket
// while it reads nothing, so that the publisher's direct sends (pubsub.go,
// sendQueued) stop in the middle of a message and leave the rest to the
// subscriber's goroutine: every message then arrives whole and in order.
func TestMessagesSentByThePublisherStayInOrder(t *testing.T) {
	as := startAdminServer(t, Options{})
	sub := as.dial(t)
	if r := sub.do("SUBSCRIBE", "ch"); !strings.HasSuffix(r, ":1\r\n") {
		t.Fatalf("SUBSCRIBE = %q", r)
	}
	pub := as.dial(t)
	const messages, batch = 3000, 50
	body := strings.Repeat("x", 1000)
	for sent := 0; sent < messages; sent += batch {
		var b strings.Builder
		for i := sent; i < sent+batch; i++ {
			p := fmt.Sprintf("%d:%s", i, body)
			fmt.Fprintf(&b, "*3\r\n$7\r\nPUBLISH\r\n$2\r\nch\r\n$%d\r\n%s\r\n", len(p), p)
		}
		if _, err := io.WriteString(pub.conn, b.String()); err != nil {
			t.Fatal(err)
		}
		for range batch {
			if r, err := pub.reply(); err != nil || r != ":1\r\n" {
				t.Fatalf("PUBLISH = %q, %v", r, err)
			}
		}
	}
	for i := range messages {
		r, err := sub.reply()
		p := fmt.Sprintf("%d:%s", i, body)
		if want := fmt.Sprintf("*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$%d\r\n%s\r\n", len(p), p); err != nil || r != want {
			t.Fatalf("message %d: %.60q, %v", i, r, err)
		}
	}
}
