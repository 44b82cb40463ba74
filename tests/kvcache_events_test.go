package tests

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// KV-cache events (README.md, "KV-cache events"): with --kvcache-events a
// router subscribed to __kvcache__@<db>__:<model> sees every chunk become
// whole, move between the tiers and leave, in order.

// eventLog collects the messages of a go-redis PSubscribe, in order.
type eventLog struct {
	mu   sync.Mutex
	msgs []*redis.Message
}

// collect subscribes to pattern on addr and logs its messages until the
// test ends.
func collect(t *testing.T, addr, pattern string) *eventLog {
	t.Helper()
	rdb := newGoRedis(t, addr, 3, 2)
	sub := rdb.PSubscribe(context.Background(), pattern)
	t.Cleanup(func() { sub.Close() })
	if _, err := sub.Receive(context.Background()); err != nil {
		t.Fatalf("PSUBSCRIBE %s: %v", pattern, err)
	}
	log := &eventLog{}
	ch := sub.Channel(redis.WithChannelSize(10000))
	go func() {
		for m := range ch {
			log.mu.Lock()
			log.msgs = append(log.msgs, m)
			log.mu.Unlock()
		}
	}()
	return log
}

// waitQuiet returns the messages once none has arrived for a while.
func (l *eventLog) waitQuiet(t *testing.T, quiet time.Duration) []string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	last, since := -1, time.Now()
	for time.Now().Before(deadline) {
		l.mu.Lock()
		n := len(l.msgs)
		l.mu.Unlock()
		if n != last {
			last, since = n, time.Now()
		} else if time.Since(since) >= quiet {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]string, len(l.msgs))
	for i, m := range l.msgs {
		out[i] = m.Channel + " " + m.Payload
	}
	return out
}

// chunkHash is the hash field of chunkKey(i).
func chunkHash(i int) string { return strings.Split(chunkKey(i), "@")[3] }

// TestKVCacheEventsFollowAScriptedWorkload runs a scripted workload of
// chunk writes, partial deletes, expiry, several models and databases and
// a flush, and requires exactly its events, in order.
func TestKVCacheEventsFollowAScriptedWorkload(t *testing.T) {
	if diffAgainstRedis() {
		t.Skip("KV-cache events are kvserver's own")
	}
	t.Parallel()
	s := startKVServer(t, "--kvcache-events", "yes")
	log := collect(t, s.Addr, "__kvcache__@*")
	c := dialRaw(t, s.Addr)
	const size = 4096
	total := fmt.Sprint(size + 28)
	ok := func(args ...string) {
		t.Helper()
		if r := string(c.Do(args...)); strings.HasPrefix(r, "-") {
			t.Fatalf("%q: %s", args, r)
		}
	}
	put := func(k string, metaFirst bool) {
		data, meta := []string{k + "kv_bytes", string(randomBytes(1, size))}, []string{k + "metadata", chunkMetadata(size)}
		if metaFirst {
			data, meta = meta, data
		}
		ok("SET", data[0], data[1])
		ok("SET", meta[0], meta[1])
	}
	a, b := chunkKey(1), chunkKey(2)
	mistral := "mistral@1@0@-4242@bfloat16"
	layer := chunkKey(3) + "@7" // layer-wise key: hash@layer
	ev := func(db int, model, event, hash, tier string) string {
		return fmt.Sprintf("__kvcache__@%d__:%s %s %s %s %s", db, model, event, hash, tier, total)
	}
	put(a, false)
	put(b, true)
	ok("SET", a+"kv_bytes", string(randomBytes(1, size))) // an overwrite is no event
	ok("DEL", a+"kv_bytes")
	ok("SET", a+"kv_bytes", string(randomBytes(1, size)))
	ok("PEXPIRE", b+"metadata", "1")
	time.Sleep(20 * time.Millisecond)
	ok("EXISTS", b+"metadata")
	put(mistral, false)
	ok("SET", "user:1:metadata", "not a chunk")
	ok("SET", "user:1:kv_bytes", "not a chunk")
	ok("SELECT", "1")
	put(layer, false)
	ok("DEL", layer+"kv_bytes", layer+"metadata") // one event: the chunk stops being whole once
	put(layer, false)
	ok("CONFIG", "SET", "kvcache-events", "no")
	ok("DEL", layer+"metadata")
	put(chunkKey(4), false)
	ok("CONFIG", "SET", "kvcache-events", "yes")
	ok("SELECT", "0")
	ok("FLUSHDB")
	want := []string{
		ev(0, "llama", "whole", chunkHash(1), "memory"),
		ev(0, "llama", "whole", chunkHash(2), "memory"),
		ev(0, "llama", "deleted", chunkHash(1), "memory"),
		ev(0, "llama", "whole", chunkHash(1), "memory"),
		ev(0, "llama", "deleted", chunkHash(2), "memory"),
		ev(0, "mistral", "whole", "-4242", "memory"),
		ev(1, "llama", "whole", chunkHash(3)+"@7", "memory"),
		ev(1, "llama", "deleted", chunkHash(3)+"@7", "memory"),
		ev(1, "llama", "whole", chunkHash(3)+"@7", "memory"),
	}
	// FLUSHDB of database 0 deletes the chunks it holds, in no set order.
	flushed := []string{
		ev(0, "llama", "deleted", chunkHash(1), "memory"),
		ev(0, "mistral", "deleted", "-4242", "memory"),
	}
	got := log.waitQuiet(t, 300*time.Millisecond)
	if len(got) != len(want)+len(flushed) {
		t.Fatalf("%d events, want %d:\n%s", len(got), len(want)+len(flushed), strings.Join(got, "\n"))
	}
	for i, w := range want {
		if got[i] != w {
			t.Errorf("event %d = %q, want %q", i, got[i], w)
		}
	}
	tail := slices.Clone(got[len(want):])
	slices.Sort(tail)
	slices.Sort(flushed)
	if !slices.Equal(tail, flushed) {
		t.Errorf("FLUSHDB events %q, want %q", tail, flushed)
	}
}

// TestKVCacheEventsTrackTiers writes far more chunks than memory and disk
// hold (demotions, then disk evictions), replays the events a router
// receives into its view of every chunk, and requires that view to be
// consistent (no event out of turn) and to match the store: a chunk the
// events say is stored is whole, one they say left is absent; reading a
// chunk that is only on disk is announced as its promotion.
func TestKVCacheEventsTrackTiers(t *testing.T) {
	if diffAgainstRedis() {
		t.Skip("KV-cache events are kvserver's own")
	}
	t.Parallel()
	const chunks, size = 64, 1 << 20
	s := startKVServer(t, "--maxmemory", "8mb", "--maxdisk", "24mb", "--kvcache-events", "yes")
	log := collect(t, s.Addr, "__kvcache__@0__:llama")
	c := dialRaw(t, s.Addr)
	for i := range chunks {
		if err := putChunk(c, i, size); err != nil {
			t.Fatalf("chunk %d: %v", i, err)
		}
	}
	// view replays the events: "memory", "disk" or "" (not stored).
	view := map[string]string{}
	counts := map[string]int{}
	replay := func(events []string) {
		t.Helper()
		for _, e := range events {
			f := strings.Fields(e)
			if len(f) != 5 || f[0] != "__kvcache__@0__:llama" || f[4] != fmt.Sprint(size+28) {
				t.Fatalf("malformed event %q", e)
			}
			kind, hash, tier := f[1], f[2], f[3]
			counts[kind]++
			prev := view[hash]
			switch kind {
			case "whole":
				if prev != "" || tier != "memory" {
					t.Errorf("%s: whole while %q, tier %s", hash, prev, tier)
				}
				view[hash] = "memory"
			case "demoted":
				if prev != "memory" || tier != "disk" {
					t.Errorf("%s: demoted while %q, tier %s", hash, prev, tier)
				}
				view[hash] = "disk"
			case "promoted":
				if prev != "disk" || tier != "memory" {
					t.Errorf("%s: promoted while %q, tier %s", hash, prev, tier)
				}
				view[hash] = "memory"
			case "evicted", "deleted":
				if prev == "" || tier != prev {
					t.Errorf("%s: %s from %s while %q", hash, kind, tier, prev)
				}
				view[hash] = ""
			default:
				t.Errorf("unknown event %q", e)
			}
		}
	}
	events := log.waitQuiet(t, time.Second)
	replay(events)
	if counts["whole"] != chunks || counts["demoted"] == 0 || counts["evicted"] == 0 {
		t.Fatalf("events by kind %v: want %d whole, and demotions and evictions", counts, chunks)
	}
	onDisk := -1
	for i := range chunks {
		n := c.Do("EXISTS", chunkKey(i)+"kv_bytes", chunkKey(i)+"metadata")
		stored := string(n) == ":2\r\n"
		if !stored && string(n) != ":0\r\n" {
			t.Errorf("chunk %d: EXISTS both keys = %q", i, n)
		}
		if want := view[chunkHash(i)] != ""; stored != want {
			t.Errorf("chunk %d: stored %v, the events say %q", i, stored, view[chunkHash(i)])
		}
		if view[chunkHash(i)] == "disk" && onDisk < 0 {
			onDisk = i
		}
	}
	if onDisk < 0 {
		t.Fatalf("no chunk is on disk by the events %v", counts)
	}
	if st := chunkState(c, onDisk, size); st != "whole" {
		t.Fatalf("chunk %d read back %s", onDisk, st)
	}
	more := log.waitQuiet(t, 500*time.Millisecond)[len(events):]
	want := fmt.Sprintf("__kvcache__@0__:llama promoted %s memory %d", chunkHash(onDisk), size+28)
	if !slices.Contains(more, want) {
		t.Errorf("reading chunk %d from disk published %q, want %q among them", onDisk, more, want)
	}
	replay(more)
	t.Logf("events: %v", counts)
}

// TestStalledSubscriberNeverSlowsTheStore subscribes a client that never
// reads (a tiny receive buffer) to every channel, with keyspace
// notifications and KV-cache events on, and runs a workload of chunk
// writes and PUBLISHes. The writers never wait for it: the workload
// completes while its queue grows past the socket, and once the queue
// passes client-output-buffer-limit pubsub the server disconnects it.
func TestStalledSubscriberNeverSlowsTheStore(t *testing.T) {
	if diffAgainstRedis() {
		t.Skip("exercises kvserver's KV-cache events")
	}
	t.Parallel()
	s := startKVServer(t, "--kvcache-events", "yes", "--notify-keyspace-events", "KEA")
	c := dialRaw(t, s.Addr)
	c.Do("CONFIG", "SET", "client-output-buffer-limit", "pubsub 16mb 12mb 60")
	conn, err := net.Dial("tcp", s.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.(*net.TCPConn).SetReadBuffer(4096)
	if _, err := conn.Write(encodeCommand([]string{"PSUBSCRIBE", "*"})); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	payload := strings.Repeat("p", 8<<10)
	// Phase 1: 6 MiB of messages, under the soft limit: everything
	// beyond the socket's buffers waits in the subscriber's queue and
	// no writer waits for it (a writer that did would wait for the
	// soft limit's 60 seconds).
	start := time.Now()
	done := make(chan error, 1)
	go func() {
		for i := range 768 {
			if r := string(c.Do("PUBLISH", "ch", payload)); r != ":1\r\n" {
				done <- fmt.Errorf("PUBLISH %d = %q", i, r)
				return
			}
		}
		for i := range 16 {
			if err := putChunk(c, i, 64<<10); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the workload is stuck behind a subscriber that does not read")
	}
	t.Logf("6 MiB to a stalled subscriber in %v", time.Since(start))
	if list := string(c.Do("CLIENT", "LIST", "TYPE", "pubsub")); !strings.Contains(list, "psub=1") {
		t.Fatalf("the subscriber is gone under its limits: %q", list)
	}
	// Phase 2: past the hard limit the subscriber is disconnected, and
	// the publishers still never wait.
	for i := range 2048 {
		c.Do("PUBLISH", "ch", payload)
		if i%256 == 0 && !strings.Contains(string(c.Do("CLIENT", "LIST", "TYPE", "pubsub")), "psub=1") {
			break
		}
	}
	if list := string(c.Do("CLIENT", "LIST", "TYPE", "pubsub")); strings.Contains(list, "psub=1") {
		t.Fatalf("the stalled subscriber is still connected: %q", list)
	}
	if r := string(c.Do("PUBLISH", "ch", "x")); r != ":0\r\n" {
		t.Errorf("PUBLISH after the disconnect = %q, want :0", r)
	}
	// The server holds nothing more for it: this connection is the only
	// client left.
	if list := strings.TrimSpace(string(c.Do("CLIENT", "LIST"))); strings.Count(list, "id=") != 1 {
		t.Errorf("clients after the disconnect: %q", list)
	}
}
