package tests

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// tieredHash is hash i of TestHashesAreDemotedAndSurviveKillNine: even
// ones stay listpacks (100 short fields), odd ones are hashtables (300
// fields with values past hash-max-listpack-value).
func tieredHash(i int) (key string, fields []string) {
	n, width := 100, 40
	if i%2 == 1 {
		n, width = 300, 100
	}
	for j := range n {
		v := fmt.Sprintf("%d:%d:", i, j)
		fields = append(fields, fmt.Sprintf("field-%03d", j), v+strings.Repeat("v", width-len(v)))
	}
	return fmt.Sprintf("hash:%04d", i), fields
}

// tieredHashState reads hash i back: "whole", "absent" or what is wrong.
// A listpack must come back in its insertion order.
func tieredHashState(c *rawClient, i int) string {
	key, fields := tieredHash(i)
	raw, err := c.Call("HGETALL", key)
	if err != nil {
		return err.Error()
	}
	r, err := parseReply(raw)
	if err != nil {
		return err.Error()
	}
	if len(r.Elems) == 0 {
		return "absent"
	}
	got := make([]string, len(r.Elems))
	for j, e := range r.Elems {
		got[j] = e.Str
	}
	if i%2 == 0 {
		if !slices.Equal(got, fields) {
			return "listpack fields differ or lost their order"
		}
	} else if !maps.Equal(pairMap(got), pairMap(fields)) {
		return fmt.Sprintf("hashtable has %d elements, want %d", len(got), len(fields))
	}
	enc, err := c.Call("OBJECT", "ENCODING", key)
	want := map[bool]string{true: "listpack", false: "hashtable"}[i%2 == 0]
	if err != nil || !strings.Contains(string(enc), want) {
		return fmt.Sprintf("encoding %q, want %s", enc, want)
	}
	return "whole"
}

func pairMap(flat []string) map[string]string {
	m := make(map[string]string, len(flat)/2)
	for j := 0; j+1 < len(flat); j += 2 {
		m[flat[j]] = flat[j+1]
	}
	return m
}

// TestHashesAreDemotedAndSurviveKillNine fills a 16 MiB memory tier with
// about 20 MiB of hashes of both encodings, reads every one back (most
// from disk), then kills the server with SIGKILL more than 5 s after the
// last write (README's durability promise) and checks them all again.
func TestHashesAreDemotedAndSurviveKillNine(t *testing.T) {
	if diffAgainstRedis() {
		t.Skip("kvserver's disk tier has no Redis counterpart")
	}
	t.Parallel()
	const hashes = 1000
	s := startKVServer(t, "--maxmemory", "16mb")
	c := dialRaw(t, s.Addr)
	for i := range hashes {
		key, fields := tieredHash(i)
		if raw, err := c.Call(append([]string{"HSET", key}, fields...)...); err != nil || raw[0] != ':' {
			t.Fatalf("HSET %s: %q %v", key, raw, err)
		}
	}
	if used := infoInt(t, c, "memory", "used_memory"); used > 16<<20 {
		t.Errorf("used_memory %d above maxmemory", used)
	}
	if d := infoInt(t, c, "tiers", "tier_disk_keys"); d < hashes/4 {
		t.Errorf("tier_disk_keys = %d, want many hashes demoted", d)
	}
	check := func(when string) {
		t.Helper()
		bad := 0
		for i := range hashes {
			if st := tieredHashState(c, i); st != "whole" {
				if bad++; bad < 5 {
					t.Errorf("%s: hash %d is %s", when, i, st)
				}
			}
		}
		if bad > 0 {
			t.Errorf("%s: %d of %d hashes not whole", when, bad, hashes)
		}
		checkReply(t, c, fmt.Sprintf(":%d\r\n", hashes), "DBSIZE")
	}
	check("under memory pressure")
	if p := infoInt(t, c, "tiers", "tier_memory_promotions"); p == 0 {
		t.Error("reading hashes back from disk promoted none")
	}
	// Change some after the first check, then wait out the write-behind.
	for i := 0; i < hashes; i += 50 {
		key, _ := tieredHash(i)
		checkReply(t, c, ":1\r\n", "HSET", key, "extra", "x")
		checkReply(t, c, ":1\r\n", "HDEL", key, "extra")
	}
	time.Sleep(6 * time.Second)
	c.Close()
	s.Crash()
	s.Relaunch(t)
	c = dialRaw(t, s.Addr)
	check("after kill -9")
}

// llmdIndex does what llm-d's KV-cache indexer (kvblock.RedisIndex) does
// with Redis through go-redis: a hash per KV block keyed
// "<model>@<block hash>", a field "<pod>@<device tier>" per pod holding it
// (its value the time it was added), pipelined HSETs to add, HKEYS to look
// a prefix up (stopping at the first block no wanted pod holds), HDELs to
// evict.
type llmdIndex struct{ rdb *redis.Client }

func (x llmdIndex) add(ctx context.Context, keys, entries []string) error {
	pipe := x.rdb.Pipeline()
	for _, k := range keys {
		for _, e := range entries {
			pipe.HSet(ctx, k, e, time.Now().Format(time.RFC3339))
		}
	}
	_, err := pipe.Exec(ctx)
	return err
}

func (x llmdIndex) evict(ctx context.Context, key string, entries []string) error {
	pipe := x.rdb.Pipeline()
	for _, e := range entries {
		pipe.HDel(ctx, key, e)
	}
	_, err := pipe.Exec(ctx)
	return err
}

// lookup returns the pods holding each key of the longest prefix of keys
// that some pod in want (all pods when empty) holds.
func (x llmdIndex) lookup(ctx context.Context, keys []string, want map[string]bool) (map[string][]string, error) {
	pipe := x.rdb.Pipeline()
	cmds := make([]*redis.StringSliceCmd, len(keys))
	for i, k := range keys {
		cmds[i] = pipe.HKeys(ctx, k)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for i, cmd := range cmds {
		var pods []string
		for _, p := range cmd.Val() {
			pod, _, _ := strings.Cut(p, "@")
			if len(want) == 0 || want[pod] {
				pods = append(pods, pod)
			}
		}
		if len(pods) == 0 {
			break
		}
		slices.Sort(pods)
		out[keys[i]] = pods
	}
	return out, nil
}

// TestGoRedisLikeLLMDsKVCacheIndex runs llm-d's indexer traffic from 8
// goroutines (one per pod) in RESP3 and RESP2 and checks the lookups
// against what each pod added and evicted.
func TestGoRedisLikeLLMDsKVCacheIndex(t *testing.T) {
	t.Parallel()
	s := startKVServer(t)
	ctx := context.Background()
	const pods, blocks = 8, 400
	blockKey := func(i int) string { return fmt.Sprintf("meta-llama/Llama-3.1-8B@%016x", uint64(i)*0x9e3779b97f4a7c15) }
	for _, proto := range []int{3, 2} {
		t.Run(fmt.Sprintf("RESP%d", proto), func(t *testing.T) {
			rdb := newGoRedis(t, s.Addr, proto, pods)
			if err := rdb.FlushAll(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			x := llmdIndex{rdb}
			// Pod p holds the prefix of blocks [0, blocks-p*40) on gpu and
			// cpu, then evicts its cpu copies of the odd blocks.
			var wg sync.WaitGroup
			errs := make(chan error, pods)
			for p := range pods {
				wg.Go(func() {
					pod := fmt.Sprintf("10.0.0.%d", p)
					entries := []string{pod + "@gpu", pod + "@cpu"}
					var keys []string
					for i := range blocks - p*40 {
						keys = append(keys, blockKey(i))
					}
					for start := 0; start < len(keys); start += 64 {
						if err := x.add(ctx, keys[start:min(start+64, len(keys))], entries); err != nil {
							errs <- fmt.Errorf("pod %d add: %w", p, err)
							return
						}
					}
					for i := 1; i < len(keys); i += 2 {
						if err := x.evict(ctx, keys[i], entries[1:]); err != nil {
							errs <- fmt.Errorf("pod %d evict: %w", p, err)
							return
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			var keys []string
			for i := range blocks + 10 {
				keys = append(keys, blockKey(i))
			}
			got, err := x.lookup(ctx, keys, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != blocks {
				t.Fatalf("lookup found a prefix of %d blocks, want %d", len(got), blocks)
			}
			for i := range blocks {
				var want []string
				for p := range pods {
					if i < blocks-p*40 {
						pod := fmt.Sprintf("10.0.0.%d", p)
						want = append(want, pod)
						if i%2 == 0 {
							want = append(want, pod) // gpu and cpu
						}
					}
				}
				slices.Sort(want)
				if g := got[blockKey(i)]; !slices.Equal(g, want) {
					t.Fatalf("block %d: pods %v, want %v", i, g, want)
				}
			}
			// Only pod 7 wanted: its prefix is blocks-7*40 long.
			got, err = x.lookup(ctx, keys, map[string]bool{"10.0.0.7": true})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != blocks-7*40 {
				t.Fatalf("lookup for pod 7 found %d blocks, want %d", len(got), blocks-7*40)
			}
			// Evicting every entry of a block deletes its hash.
			var all []string
			for p := range pods {
				all = append(all, fmt.Sprintf("10.0.0.%d@gpu", p), fmt.Sprintf("10.0.0.%d@cpu", p))
			}
			if err := x.evict(ctx, blockKey(0), all); err != nil {
				t.Fatal(err)
			}
			if n := rdb.Exists(ctx, blockKey(0)).Val(); n != 0 {
				t.Fatalf("a block with no pods left still exists")
			}
			if got, _ := x.lookup(ctx, keys, nil); len(got) != 0 {
				t.Fatalf("lookup after evicting block 0 found %d blocks, want none", len(got))
			}
		})
	}
}

// TestHrandfieldHugeNegativeCountClosesTheConnection asks for 2^62 random
// fields: Redis builds that reply until its memory runs out; kvserver
// sends a bounded part of it, closes the connection and goes on serving.
func TestHrandfieldHugeNegativeCountClosesTheConnection(t *testing.T) {
	if diffAgainstRedis() {
		t.Skip("redis-server would build the reply until it runs out of memory")
	}
	t.Parallel()
	s := startKVServer(t)
	c := dialRaw(t, s.Addr)
	checkReply(t, c, ":2\r\n", "HSET", "h", "a", "1", "b", "2")
	conn, err := net.Dial("tcp", s.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(60 * time.Second))
	if _, err := conn.Write(encodeCommand([]string{"HRANDFIELD", "h", "-4611686018427387904", "WITHVALUES"})); err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, conn)
	if err != nil && !connClosedErr(err) {
		t.Fatalf("after %d bytes: %v, want the server to close the connection", n, err)
	}
	if n < 1<<20 || n > 256<<20 {
		t.Errorf("got %d bytes before the close, want a bounded part of the reply", n)
	}
	checkReply(t, c, "+PONG\r\n", "PING")
}

// pythonHashScript drives the hash family through Debian's redis-py: hset
// with a mapping, hgetall as a dict, hincrby*, hscan_iter over a
// hashtable, hrandfield and a transactional pipeline (MULTI/EXEC).
const pythonHashScript = `
import sys, redis
r = redis.Redis(port=int(sys.argv[1]))
print("hset", r.hset("py:h", mapping={"a": 1, "b": "two", "c": 3.5}))
print("hgetall", sorted(r.hgetall("py:h").items()))
print("hmget", r.hmget("py:h", ["a", "zz", "c"]))
print("hincrby", r.hincrby("py:h", "a", 41), r.hincrbyfloat("py:h", "c", 0.25))
print("hsetnx", r.hsetnx("py:h", "a", 0), r.hsetnx("py:h", "d", 0))
print("hkeys", r.hkeys("py:h"), r.hlen("py:h"), r.hstrlen("py:h", "b"))
r.hset("py:big", mapping={"f%d" % i: i for i in range(1000)})
seen = dict(r.hscan_iter("py:big", match="f1*", count=50))
print("hscan_iter", len(seen), seen[b"f123"], r.object("encoding", "py:big"))
pick = r.hrandfield("py:big", 5, withvalues=True)
print("hrandfield", len(pick), all(pick[i] == pick[i - 1][1:] for i in range(1, 10, 2)))
p = r.pipeline()
p.hdel("py:h", "a", "b").hexists("py:h", "a").hgetall("missing")
print("pipeline", p.execute())
`

// TestPythonRedisHashes runs pythonHashScript (RESP2) against the server.
func TestPythonRedisHashes(t *testing.T) {
	t.Parallel()
	out := runPythonRedis(t, pythonHashScript)
	want := strings.Join([]string{
		"hset 3",
		"hgetall [(b'a', b'1'), (b'b', b'two'), (b'c', b'3.5')]",
		"hmget [b'1', None, b'3.5']",
		"hincrby 42 3.75",
		"hsetnx 0 1",
		"hkeys [b'a', b'b', b'c', b'd'] 4 3",
		"hscan_iter 111 b'123' b'hashtable'",
		"hrandfield 10 True",
		"pipeline [2, False, {}]",
	}, "\n") + "\n"
	if string(out) != want {
		t.Errorf("python redis printed:\n%s\nwant:\n%s", out, want)
	}
}
