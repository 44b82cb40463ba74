package tests

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestDifferentialTracking pins client-side caching to Redis 7's bytes:
// CLIENT TRACKING's options and errors, TRACKINGINFO, GETREDIR, CACHING,
// and the invalidation pushes (RESP3) that another connection's writes,
// the connection's own writes (after the reply), MULTI/EXEC, flushes,
// BCAST prefixes, NOLOOP and OPTIN/OPTOUT cause, and the keys of scripts
// (RESP3 only: a RESP2 connection gets invalidations only through a
// redirect, see TestTrackingRedirectMatchesRedis).
func TestDifferentialTracking(t *testing.T) {
	t.Parallel()
	runDifferential(t, trackingScripts())
}

func trackingScripts() []script {
	return []script{
		{"tracking options and errors", []step{
			do("CLIENT", "TRACKINGINFO"),
			do("CLIENT", "GETREDIR"),
			do("CLIENT", "CACHING", "YES"),
			do("CLIENT", "TRACKING", "ON", "PREFIX", "a"),
			do("CLIENT", "TRACKING", "ON", "OPTIN", "OPTOUT"),
			do("CLIENT", "TRACKING", "ON", "BCAST", "OPTIN"),
			do("CLIENT", "TRACKING", "ON", "REDIRECT", "999999"),
			do("CLIENT", "TRACKING", "ON", "REDIRECT", "x"),
			do("CLIENT", "TRACKING", "ON", "REDIRECT"),
			do("CLIENT", "TRACKING", "ON", "FOO"),
			do("CLIENT", "TRACKING", "MAYBE"),
			do("CLIENT", "TRACKING"),
			do("CLIENT", "CACHING"),
			do("CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "c", "PREFIX", "cd"),
			do("CLIENT", "TRACKING", "ON"),
			do("CLIENT", "TRACKINGINFO"),
			do("CLIENT", "GETREDIR"),
			do("CLIENT", "CACHING", "YES"),
			do("CLIENT", "CACHING", "NO"),
			do("CLIENT", "CACHING", "MAYBE"),
			do("CLIENT", "TRACKING", "ON", "BCAST"),
			do("CLIENT", "TRACKING", "ON", "OPTIN"),
			do("CLIENT", "TRACKINGINFO"),
			do("CLIENT", "TRACKING", "ON", "OPTOUT"),
			do("CLIENT", "CACHING", "YES"),
			do("CLIENT", "TRACKINGINFO"),
			do("CLIENT", "TRACKING", "OFF"),
			do("CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "a", "PREFIX", "b", "NOLOOP"),
			do("CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "ab"),
			do("CLIENT", "TRACKINGINFO"),
			do("CLIENT", "TRACKING", "ON"),
			do("RESET"),
			do("CLIENT", "TRACKINGINFO"),
			do("CLIENT", "GETREDIR"),
		}},
		{"default mode invalidations", []step{
			onlyProto(3),
			do("CLIENT", "TRACKING", "ON"),
			do("GET", "k"),
			do("MGET", "k", "k2", "k3"),
			do("HGET", "h", "f"),
			onOther(do("SET", "k", "1")),
			listen(1),
			onOther(do("SET", "k", "2")),
			quiet(),
			onOther(do("MSET", "k2", "a", "k3", "b")),
			listen(2),
			onOther(do("HSET", "h", "f", "v")),
			listen(1),
			do("GET", "k"),
			do("SET", "k", "mine"),
			listen(1),
			do("GET", "k"),
			do("MULTI"),
			do("SET", "k", "x"),
			do("GET", "k"),
			do("EXEC"),
			listen(1),
			do("GET", "k"),
			onOther(do("DEL", "k")),
			listen(1),
			do("GET", "k"),
			onOther(do("SET", "k", "v", "PX", "1")),
			listen(1),
			do("GET", "ex"),
			onOther(do("SET", "ex", "v", "PX", "50")),
			listen(1),
			do("GET", "ex"),
			sleep(150 * time.Millisecond),
			onOther(do("GET", "ex")),
			listen(1),
			do("GET", "k"),
			onOther(do("FLUSHDB")),
			listen(1),
			onOther(do("SET", "k", "after flush")),
			quiet(),
			do("CLIENT", "TRACKING", "OFF"),
		}},
		{"keys of scripts", []step{
			// Redis 7.0 remembers, when a script runs a read-only
			// command, the keys the script declared (EVAL's own keys),
			// not those the command read.
			onlyProto(3),
			do("MSET", "k1", "a", "k2", "b", "k3", "c", "k4", "d", "k5", "e"),
			do("CLIENT", "TRACKING", "ON"),
			do("EVAL", "return redis.call('get', KEYS[1])", "1", "k1"),
			do("EVAL", "return redis.call('get', 'k2')", "0"),
			do("EVAL", "return 1", "1", "k3"),
			do("EVAL_RO", "return redis.call('get', 'k4')", "0"),
			do("EVAL", "return redis.call('strlen', 'nosuch')", "1", "k5"),
			onOther(do("MSET", "k1", "x", "k2", "x", "k3", "x", "k4", "x", "k5", "x")),
			listen(2),
			quiet(),
		}},
		{"noloop", []step{
			onlyProto(3),
			do("CLIENT", "TRACKING", "ON", "NOLOOP"),
			do("GET", "n"),
			do("SET", "n", "1"),
			quiet(),
			do("GET", "n"),
			onOther(do("SET", "n", "2")),
			listen(1),
		}},
		{"optin and optout", []step{
			onlyProto(3),
			do("CLIENT", "TRACKING", "ON", "OPTIN"),
			do("GET", "a"),
			do("CLIENT", "CACHING", "YES"),
			do("GET", "b"),
			do("GET", "c"),
			onOther(do("MSET", "a", "1", "b", "1", "c", "1")),
			listen(1),
			// A refused command uses up CACHING YES too; a CLIENT one
			// does not; MULTI keeps it for the transaction.
			do("CLIENT", "CACHING", "YES"),
			do("GET"),
			do("GET", "d"),
			do("CLIENT", "CACHING", "YES"),
			do("CLIENT", "GETREDIR"),
			do("GET", "e"),
			do("CLIENT", "CACHING", "YES"),
			do("MULTI"),
			do("GET", "f"),
			do("EXEC"),
			do("GET", "g"),
			onOther(do("MSET", "d", "1", "e", "1", "f", "1", "g", "1")),
			unorderedN(2),
			quiet(),
			do("CLIENT", "TRACKING", "OFF"),
			do("CLIENT", "TRACKING", "ON", "OPTOUT"),
			do("GET", "a"),
			do("CLIENT", "CACHING", "NO"),
			do("GET", "b"),
			onOther(do("MSET", "a", "2", "b", "2")),
			listen(1),
		}},
		{"bcast prefixes", []step{
			onlyProto(3),
			do("CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "user:", "PREFIX", "obj:"),
			onOther(do("SET", "user:1", "x")),
			listen(1),
			onOther(do("MSET", "user:3", "x", "other", "y", "user:2", "z", "obj:9", "w")),
			listen(2),
			do("SET", "obj:1", "mine"),
			listen(1),
			do("CLIENT", "TRACKING", "OFF"),
			do("CLIENT", "TRACKING", "ON", "BCAST"),
			onOther(do("SET", "anything", "x")),
			listen(1),
			onOther(do("FLUSHALL")),
			listen(1),
		}},
		{"bcast noloop", []step{
			onlyProto(3),
			do("CLIENT", "TRACKING", "ON", "BCAST", "NOLOOP"),
			do("SET", "a", "mine"),
			quiet(),
			onOther(do("SET", "a", "theirs")),
			listen(1),
		}},
		{"tracking in client list and info", []step{
			do("CLIENT", "TRACKING", "ON", "BCAST"),
			info("clients", "tracking_clients"),
			info("stats", "tracking_total_prefixes"),
			do("CLIENT", "TRACKING", "OFF"),
			do("CLIENT", "TRACKING", "ON"),
			do("GET", "x"),
			do("GET", "y"),
			info("stats", "tracking_total_keys", "tracking_total_items", "tracking_total_prefixes"),
		}},
	}
}

// TestTrackingRedirectMatchesRedis runs CLIENT TRACKING REDIRECT on both
// servers (the target's ID differs, so the harness's fixed scripts cannot):
// a RESP2 target subscribed to __redis__:invalidate gets message-shaped
// invalidations and flushes, a RESP3 target pushes, and a gone target
// marks the redirect broken.
func TestTrackingRedirectMatchesRedis(t *testing.T) {
	t.Parallel()
	ref := startRedis(t)
	kv := startKVServer(t)
	for _, protos := range [][2]string{{"2", "2"}, {"3", "2"}, {"2", "3"}, {"3", "3"}} {
		targetProto, trackerProto := protos[0], protos[1]
		var got [2][]string
		for i, srv := range []*server{ref, kv} {
			var out []string
			rec := func(b []byte) { out = append(out, string(b)) }
			target := dialRaw(t, srv.Addr)
			tracker := dialRaw(t, srv.Addr)
			writer := dialRaw(t, srv.Addr)
			target.Do("HELLO", targetProto)
			id := strings.TrimSuffix(strings.TrimPrefix(string(target.Do("CLIENT", "ID")), ":"), "\r\n")
			idReply := []byte(":" + id + "\r\n")
			tracker.Do("HELLO", trackerProto)
			if targetProto == "2" {
				rec(target.Do("SUBSCRIBE", "__redis__:invalidate"))
			}
			rec(tracker.Do("CLIENT", "TRACKING", "ON", "REDIRECT", id))
			rec(bytes.ReplaceAll(tracker.Do("CLIENT", "TRACKINGINFO"), idReply, []byte(":ID\r\n")))
			rec(tracker.Do("GET", "rk"))
			rec(writer.Do("SET", "rk", "1"))
			reply, err := target.ReadReply()
			if err != nil {
				t.Fatalf("invalidation: %v", err)
			}
			rec(reply)
			rec(tracker.Do("GET", "rk"))
			rec(writer.Do("FLUSHALL"))
			if reply, err = target.ReadReply(); err != nil {
				t.Fatalf("flush invalidation: %v", err)
			}
			rec(reply)
			target.Close()
			// Both servers notice the close asynchronously: wait for it.
			for deadline := time.Now().Add(5 * time.Second); ; {
				if !strings.Contains(string(writer.Do("CLIENT", "LIST")), "id="+id+" ") {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the closed target is still listed")
				}
				time.Sleep(10 * time.Millisecond)
			}
			rec(tracker.Do("GET", "rk2"))
			rec(writer.Do("SET", "rk2", "1"))
			if trackerProto == "3" {
				// The tracker hears that its target is gone.
				push, err := tracker.ReadReply()
				if err != nil {
					t.Fatalf("tracking-redir-broken: %v", err)
				}
				rec(bytes.ReplaceAll(push, idReply, []byte(":ID\r\n")))
			}
			rec(tracker.Do("PING"))
			rec(bytes.ReplaceAll(tracker.Do("CLIENT", "TRACKINGINFO"), idReply, []byte(":ID\r\n")))
			got[i] = out
		}
		if strings.Join(got[0], "|") != strings.Join(got[1], "|") {
			t.Errorf("target RESP%s, tracker RESP%s:\nredis    %q\nkvserver %q", targetProto, trackerProto, got[0], got[1])
		}
	}
}

// TestTrackingTableStaysWithinMaxKeys reads more keys than
// tracking-table-max-keys allows: kvserver forgets random keys down to the
// bound and tells the reader, after the reply, as Redis does.
func TestTrackingTableStaysWithinMaxKeys(t *testing.T) {
	t.Parallel()
	kv := startKVServer(t)
	c := dialRaw(t, kv.Addr)
	c.Do("HELLO", "3")
	if got := string(c.Do("CONFIG", "SET", "tracking-table-max-keys", "2")); got != "+OK\r\n" {
		t.Fatalf("CONFIG SET answered %q", got)
	}
	c.Do("CLIENT", "TRACKING", "ON")
	if got := string(c.Do("MGET", "a", "b", "c", "d")); got != "*4\r\n_\r\n_\r\n_\r\n_\r\n" {
		t.Fatalf("MGET answered %q", got)
	}
	for range 2 {
		push, err := c.ReadReply()
		if err != nil {
			t.Fatalf("eviction invalidation: %v", err)
		}
		if !bytes.HasPrefix(push, []byte(">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\n")) {
			t.Fatalf("eviction invalidation %q", push)
		}
	}
	info := string(c.Do("INFO", "stats"))
	if !strings.Contains(info, "tracking_total_keys:2\r\n") {
		t.Fatalf("INFO stats after the bound:\n%s", info)
	}
}
