package tests

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Pub/sub through real client libraries, run against redis-server and
// kvserver alike: each scenario prints what the client saw, and the two
// transcripts must be equal.

// goRedisPubSub drives go-redis's Subscribe and PSubscribe in proto and
// returns what it saw, one line per observation.
func goRedisPubSub(t *testing.T, addr string, proto int) []string {
	ctx := context.Background()
	rdb := newGoRedis(t, addr, proto, 4)
	var out []string
	logf := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }

	sub := rdb.Subscribe(ctx, "news", "sport")
	defer sub.Close()
	for range 2 {
		m, err := sub.Receive(ctx)
		logf("confirm %v %v", m, err)
	}
	if err := sub.PSubscribe(ctx, "n*"); err != nil {
		t.Fatal(err)
	}
	m, err := sub.Receive(ctx)
	logf("confirm %v %v", m, err)
	logf("publish %d", rdb.Publish(ctx, "news", "hello").Val())
	logf("publish %d", rdb.Publish(ctx, "sport", "\x00\xffbin").Val())
	for range 3 {
		msg, err := sub.ReceiveMessage(ctx)
		if err != nil {
			t.Fatalf("ReceiveMessage: %v", err)
		}
		logf("message pattern=%q channel=%q payload=%q", msg.Pattern, msg.Channel, msg.Payload)
	}
	if err := sub.Ping(ctx, "x"); err != nil {
		t.Fatalf("PubSub.Ping: %v", err)
	}
	pong, err := sub.Receive(ctx)
	logf("pong %v %v", pong, err)
	logf("numsub %v", rdb.PubSubNumSub(ctx, "news", "sport", "none").Val())
	logf("numpat %v", rdb.PubSubNumPat(ctx).Val())
	chans := rdb.PubSubChannels(ctx, "*").Val()
	slices.Sort(chans)
	logf("channels %v", chans)
	if err := sub.Unsubscribe(ctx, "news"); err != nil {
		t.Fatal(err)
	}
	m, err = sub.Receive(ctx)
	logf("unsubscribe %v %v", m, err)

	// Two publishers, 300 messages each, to one channel: two
	// subscribers must each see both sequences in order, and the same
	// interleaving.
	const n = 300
	subs := []*redis.PubSub{rdb.Subscribe(ctx, "seq"), rdb.Subscribe(ctx, "seq")}
	seen := make([][]string, len(subs))
	var wg sync.WaitGroup
	for i, s := range subs {
		defer s.Close()
		if _, err := s.Receive(ctx); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 2 * n {
				msg, err := s.ReceiveMessage(ctx)
				if err != nil {
					return
				}
				seen[i] = append(seen[i], msg.Payload)
			}
		}()
	}
	var pubs sync.WaitGroup
	for p := range 2 {
		pubs.Add(1)
		go func() {
			defer pubs.Done()
			for j := range n {
				rdb.Publish(ctx, "seq", fmt.Sprintf("%d:%d", p, j))
			}
		}()
	}
	pubs.Wait()
	wg.Wait()
	logf("same order %v", slices.Equal(seen[0], seen[1]))
	for p := range 2 {
		next := 0
		for _, s := range seen[0] {
			if strings.HasPrefix(s, strconv.Itoa(p)+":") {
				if s != fmt.Sprintf("%d:%d", p, next) {
					logf("publisher %d out of order at %q", p, s)
					break
				}
				next++
			}
		}
		logf("publisher %d delivered %d", p, next)
	}

	// Keyspace notifications through PSubscribe.
	rdb.ConfigSet(ctx, "notify-keyspace-events", "KEA")
	ks := rdb.PSubscribe(ctx, "__keyspace@0__:gr:*")
	defer ks.Close()
	if _, err := ks.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	rdb.Set(ctx, "gr:k", "v", time.Minute)
	rdb.Append(ctx, "gr:k", "w")
	rdb.Del(ctx, "gr:k")
	for range 4 {
		msg, err := ks.ReceiveMessage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		logf("keyspace %s %s", msg.Channel, msg.Payload)
	}
	rdb.ConfigSet(ctx, "notify-keyspace-events", "")
	return out
}

// TestGoRedisPubSubMatchesRedis runs goRedisPubSub in RESP2 and RESP3
// against redis-server and kvserver.
func TestGoRedisPubSubMatchesRedis(t *testing.T) {
	t.Parallel()
	ref, kv := startRedis(t), startKVServer(t)
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprintf("RESP%d", proto), func(t *testing.T) {
			want := goRedisPubSub(t, ref.Addr, proto)
			got := goRedisPubSub(t, kv.Addr, proto)
			if !slices.Equal(got, want) {
				t.Errorf("go-redis saw on kvserver:\n%s\nand on redis-server:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

// pythonPubSubScript exercises redis-py's PubSub: get_message, patterns,
// PING in subscribed mode, run_in_thread handlers, keyspace events.
const pythonPubSubScript = `
import sys, time
import redis

r = redis.Redis(host="127.0.0.1", port=int(sys.argv[1]), socket_timeout=5)
p = r.pubsub()

def drain(ps, n):
    out = []
    deadline = time.time() + 5
    while len(out) < n and time.time() < deadline:
        m = ps.get_message(timeout=0.5)
        if m:
            out.append(m)
    return out

p.subscribe("news", "sport")
p.psubscribe("n*")
for m in drain(p, 3):
    print("confirm", m["type"], m["channel"], m["data"])
print("publish", r.publish("news", "hello"))
print("publish", r.publish("sport", b"\x00\xffbin"))
for m in drain(p, 3):
    print("message", m["type"], m["pattern"], m["channel"], m["data"])
p.ping()
for m in drain(p, 1):
    print("ping", m["type"], m["data"])
print("numsub", r.pubsub_numsub("news", "sport", "none"))
print("numpat", r.pubsub_numpat())
print("channels", sorted(r.pubsub_channels()))
p.unsubscribe("news")
p.punsubscribe()
for m in drain(p, 2):
    print("unsubscribe", m["type"], m["channel"], m["data"])
p.close()

received = []
h = r.pubsub(ignore_subscribe_messages=True)
h.subscribe(**{"evt": lambda m: received.append(m["data"])})
drain(h, 1)
t = h.run_in_thread(sleep_time=0.01)
for i in range(200):
    r.publish("evt", str(i))
deadline = time.time() + 5
while len(received) < 200 and time.time() < deadline:
    time.sleep(0.01)
t.stop()
print("thread", len(received), received == [str(i).encode() for i in range(200)])

r.config_set("notify-keyspace-events", "KEA")
k = r.pubsub()
k.psubscribe("__keyevent@0__:*")
drain(k, 1)
r.set("py:k", "v")
r.expire("py:k", 100)
r.incr("py:n")
r.delete("py:k", "py:n")
for m in drain(k, 5):
    print("keyevent", m["channel"], m["data"])
r.config_set("notify-keyspace-events", "")
k.close()
`

// TestPythonRedisPubSubMatchesRedis runs pythonPubSubScript with Debian's
// redis-py against redis-server and kvserver.
func TestPythonRedisPubSubMatchesRedis(t *testing.T) {
	t.Parallel()
	ref, kv := startRedis(t), startKVServer(t)
	want := runPython(t, pythonPubSubScript, ref.Port)
	got := runPython(t, pythonPubSubScript, kv.Port)
	if !bytes.Equal(got, want) {
		t.Errorf("redis-py printed on kvserver:\n%s\nand on redis-server:\n%s", got, want)
	}
	if !bytes.Contains(got, []byte("thread 200 True")) {
		t.Errorf("run_in_thread did not receive the 200 messages in order:\n%s", got)
	}
}

// runPython runs script with Debian's python3 and redis-py against the
// server on port and returns what it printed.
func runPython(t *testing.T, script string, port int) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, systemPython, "-c", script, strconv.Itoa(port))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python script: %v\nstdout:\n%s\nstderr:\n%s", err, out, stderr.String())
	}
	return out
}

// clientFields returns the named fields of a CLIENT INFO line.
func clientFields(t *testing.T, raw []byte, names ...string) string {
	t.Helper()
	r, err := parseReply(raw)
	if err != nil {
		t.Fatalf("CLIENT INFO %q: %v", raw, err)
	}
	var out []string
	for _, f := range strings.Fields(strings.TrimPrefix(r.Str, "txt:")) {
		k, _, _ := strings.Cut(f, "=")
		if slices.Contains(names, k) {
			out = append(out, f)
		}
	}
	return strings.Join(out, " ")
}

// TestSubscriberClientStateMatchesRedis compares what CLIENT INFO says of
// a subscribed connection (flags, sub, psub, ssub, resp), CLIENT LIST TYPE
// pubsub, and Redis's exemption of pubsub clients from the idle timeout.
func TestSubscriberClientStateMatchesRedis(t *testing.T) {
	t.Parallel()
	ref, kv := startRedis(t), startKVServer(t)
	var seen [2][]string
	for i, s := range []*server{ref, kv} {
		admin := dialRaw(t, s.Addr)
		admin.Do("CONFIG", "SET", "timeout", "1")
		sub := dialRaw(t, s.Addr)
		sub.Do("HELLO", "3")
		sub.Do("SUBSCRIBE", "a")
		sub.Do("PSUBSCRIBE", "p*")
		sub.Do("SSUBSCRIBE", "s")
		sub.Do("SSUBSCRIBE", "s2")
		seen[i] = append(seen[i], clientFields(t, sub.Do("CLIENT", "INFO"), "flags", "sub", "psub", "ssub", "multi", "resp"))
		list := string(admin.Do("CLIENT", "LIST", "TYPE", "pubsub"))
		seen[i] = append(seen[i], fmt.Sprintf("pubsub clients %d", strings.Count(list, "id=")))
		sub.Do("UNSUBSCRIBE")
		sub.Do("PUNSUBSCRIBE")
		sub.Do("SUNSUBSCRIBE", "s")
		seen[i] = append(seen[i], clientFields(t, sub.Do("CLIENT", "INFO"), "flags", "sub", "psub", "ssub"))
		time.Sleep(2500 * time.Millisecond) // past the timeout: a pubsub client stays
		admin = dialRaw(t, s.Addr)          // the idle one was closed
		seen[i] = append(seen[i], fmt.Sprintf("spublish %q", admin.Do("SPUBLISH", "s2", "still here")))
		raw, err := sub.ReadReply()
		seen[i] = append(seen[i], fmt.Sprintf("message %q %v", raw, err))
		admin.Do("CONFIG", "SET", "timeout", "0")
	}
	if !slices.Equal(seen[0], seen[1]) {
		t.Errorf("kvserver:\n%s\nredis-server:\n%s", strings.Join(seen[1], "\n"), strings.Join(seen[0], "\n"))
	}
	t.Logf("both:\n%s", strings.Join(seen[1], "\n"))
}

// TestCommandsRunInArrivalOrderAcrossConnections checks what go-redis's
// own suite relies on (its PubSub specs): a SUBSCRIBE that a client writes
// on a new connection, without waiting for the answer, has run when a
// command the client sends next on another connection runs, as on Redis,
// which serves all connections from one loop in the order their bytes
// arrived. With two event loops kvserver failed this about 2 times in 5.
// A few misses in 200 are allowed: Redis's order is that of its event
// loop's wake-ups, not a promise.
func TestCommandsRunInArrivalOrderAcrossConnections(t *testing.T) {
	t.Parallel()
	for _, srv := range []*server{startRedis(t), startKVServer(t)} {
		ctx := context.Background()
		const rounds = 200
		misses := 0
		for range rounds {
			rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
			if err := rdb.Ping(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			sub := rdb.Subscribe(ctx, "mychannel", "mychannel2")
			n, err := rdb.PubSubNumSub(ctx, "mychannel", "mychannel2").Result()
			if err != nil {
				t.Fatal(err)
			}
			if n["mychannel"] != 1 || n["mychannel2"] != 1 {
				misses++
			}
			sub.Close()
			rdb.Close()
		}
		t.Logf("%s: PUBSUB NUMSUB missed the SUBSCRIBE sent before it %d times in %d", srv.Name, misses, rounds)
		if misses > rounds/50 {
			t.Errorf("%s: PUBSUB NUMSUB missed the SUBSCRIBE sent before it %d times in %d (want at most %d)", srv.Name, misses, rounds, rounds/50)
		}
	}
}
