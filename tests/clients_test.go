package tests

// End-to-end tests with the clients that KV-cache connectors actually use:
// go-redis v9, redis-cli, Debian's redis-py, and the exact opening that
// redis-py 8 sends over a raw socket.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// randomBytes returns n deterministic pseudo-random bytes for seed.
func randomBytes(seed uint64, n int) []byte {
	var s [32]byte
	for i := range 8 {
		s[i] = byte(seed >> (8 * i))
	}
	b := make([]byte, n)
	rand.NewChaCha8(s).Read(b)
	return b
}

// newGoRedis returns a go-redis client for addr speaking proto, closed when
// the test ends. Timeouts are generous because a 64 MiB value crosses the
// connection in one reply.
func newGoRedis(t *testing.T, addr string, proto, pool int) *redis.Client {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{
		Addr:         addr,
		Protocol:     proto,
		PoolSize:     pool,
		DialTimeout:  5 * time.Second,
		ReadTimeout:  20 * time.Second,
		WriteTimeout: 20 * time.Second,
		MaxRetries:   -1, // a retried command would hide a dropped connection
	})
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

// helloProto extracts "proto" from a HELLO reply as go-redis decodes it: a
// map in RESP3, a flat key/value list in RESP2.
func helloProto(v any) (int64, error) {
	switch h := v.(type) {
	case map[any]any:
		if p, ok := h["proto"].(int64); ok {
			return p, nil
		}
	case []any:
		for i := 0; i+1 < len(h); i += 2 {
			if h[i] == "proto" {
				if p, ok := h[i+1].(int64); ok {
					return p, nil
				}
			}
		}
	}
	return 0, fmt.Errorf("no integer proto in HELLO reply %#v", v)
}

// TestGoRedisClient drives the server through go-redis v9 in RESP3 (its
// default) and RESP2: strings and key commands, SCAN's iterator, a pipeline
// of 1000 commands, 50 goroutines sharing one pool, and values from 1 B to
// 64 MiB that must come back byte for byte.
func TestGoRedisClient(t *testing.T) {
	t.Parallel()
	s := startKVServer(t)
	for _, proto := range []int{3, 2} {
		t.Run(fmt.Sprintf("RESP%d", proto), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
			defer cancel()
			rdb := newGoRedis(t, s.Addr, proto, 50)
			p := fmt.Sprintf("gr%d:", proto)

			t.Run("negotiates the protocol", func(t *testing.T) {
				// HELLO without a version reports the connection's protocol
				// without changing it.
				v, err := rdb.Do(ctx, "HELLO").Result()
				if err != nil {
					t.Fatalf("HELLO: %v", err)
				}
				got, err := helloProto(v)
				if err != nil {
					t.Fatal(err)
				}
				if got != int64(proto) {
					t.Fatalf("connection speaks proto %d, want %d (go-redis falls back to RESP2 when HELLO 3 fails)", got, proto)
				}
			})

			t.Run("strings and keys", func(t *testing.T) {
				if err := rdb.Set(ctx, p+"k", "v", 0).Err(); err != nil {
					t.Fatalf("SET: %v", err)
				}
				if got, err := rdb.Get(ctx, p+"k").Result(); err != nil || got != "v" {
					t.Errorf("GET = %q, %v; want v", got, err)
				}
				if _, err := rdb.Get(ctx, p+"missing").Result(); !errors.Is(err, redis.Nil) {
					t.Errorf("GET missing: err = %v, want redis.Nil", err)
				}
				if n, err := rdb.Exists(ctx, p+"k", p+"missing").Result(); err != nil || n != 1 {
					t.Errorf("EXISTS = %d, %v; want 1", n, err)
				}
				if ttl, err := rdb.TTL(ctx, p+"k").Result(); err != nil || ttl != -1 {
					t.Errorf("TTL without expiry = %v, %v; want -1", ttl, err)
				}
				if ok, err := rdb.Expire(ctx, p+"k", 100*time.Second).Result(); err != nil || !ok {
					t.Errorf("EXPIRE = %v, %v; want true", ok, err)
				}
				if ttl, err := rdb.TTL(ctx, p+"k").Result(); err != nil || ttl < 98*time.Second || ttl > 100*time.Second {
					t.Errorf("TTL = %v, %v; want 98s..100s", ttl, err)
				}
				if ok, err := rdb.Expire(ctx, p+"missing", time.Minute).Result(); err != nil || ok {
					t.Errorf("EXPIRE missing = %v, %v; want false", ok, err)
				}
				if err := rdb.Set(ctx, p+"ex", "x", 30*time.Second).Err(); err != nil {
					t.Errorf("SET EX: %v", err)
				}
				if ttl, err := rdb.TTL(ctx, p+"ex").Result(); err != nil || ttl < 28*time.Second || ttl > 30*time.Second {
					t.Errorf("TTL after SET EX 30 = %v, %v; want 28s..30s", ttl, err)
				}
				if ttl, err := rdb.TTL(ctx, p+"missing").Result(); err != nil || ttl != -2 {
					t.Errorf("TTL missing = %v, %v; want -2", ttl, err)
				}
				if err := rdb.MSet(ctx, p+"a", "1", p+"b", "2").Err(); err != nil {
					t.Errorf("MSET: %v", err)
				}
				got, err := rdb.MGet(ctx, p+"a", p+"missing", p+"b").Result()
				if want := []any{"1", nil, "2"}; err != nil || !slices.Equal(got, want) {
					t.Errorf("MGET = %#v, %v; want %#v", got, err, want)
				}
				for want := int64(1); want <= 3; want++ {
					if n, err := rdb.Incr(ctx, p+"counter").Result(); err != nil || n != want {
						t.Errorf("INCR = %d, %v; want %d", n, err, want)
					}
				}
				if err := rdb.Incr(ctx, p+"k").Err(); err == nil || err.Error() != "ERR value is not an integer or out of range" {
					t.Errorf("INCR of a non-integer: err = %v, want ERR value is not an integer or out of range", err)
				}
				if n, err := rdb.Del(ctx, p+"k", p+"missing", p+"a").Result(); err != nil || n != 2 {
					t.Errorf("DEL = %d, %v; want 2", n, err)
				}
				if n, err := rdb.Exists(ctx, p+"k", p+"a").Result(); err != nil || n != 0 {
					t.Errorf("EXISTS after DEL = %d, %v; want 0", n, err)
				}
			})

			t.Run("scan iterator visits every key once", func(t *testing.T) {
				const n = 500
				pipe := rdb.Pipeline()
				for i := range n {
					pipe.Set(ctx, fmt.Sprintf("%sscan:%03d", p, i), i, 0)
				}
				if _, err := pipe.Exec(ctx); err != nil {
					t.Fatalf("pipelined SETs: %v", err)
				}
				seen := make(map[string]int)
				it := rdb.Scan(ctx, 0, p+"scan:*", 37).Iterator()
				for steps := 0; it.Next(ctx); steps++ {
					if steps > 10*n {
						t.Fatal("SCAN iterator did not finish")
					}
					seen[it.Val()]++
				}
				if err := it.Err(); err != nil {
					t.Fatalf("SCAN: %v", err)
				}
				if len(seen) != n {
					t.Errorf("SCAN MATCH found %d distinct keys, want %d", len(seen), n)
				}
				for k, c := range seen {
					if !strings.HasPrefix(k, p+"scan:") {
						t.Errorf("SCAN MATCH %sscan:* returned %q", p, k)
					}
					if c != 1 {
						// SCAN may return a key twice only if the table was
						// resized during the scan; nothing was written.
						t.Errorf("SCAN returned %q %d times", k, c)
					}
				}
			})

			t.Run("pipeline of 1000 commands", func(t *testing.T) {
				const n = 1000
				pipe := rdb.Pipeline()
				sets := make([]*redis.StatusCmd, n)
				for i := range n {
					sets[i] = pipe.Set(ctx, fmt.Sprintf("%spipe:%d", p, i), fmt.Sprintf("value-%d", i), 0)
				}
				if _, err := pipe.Exec(ctx); err != nil {
					t.Fatalf("pipeline of %d SETs: %v", n, err)
				}
				for i, c := range sets {
					if c.Val() != "OK" {
						t.Fatalf("SET #%d in the pipeline = %q, want OK", i, c.Val())
					}
				}
				pipe = rdb.Pipeline()
				gets := make([]*redis.StringCmd, n)
				for i := range n {
					gets[i] = pipe.Get(ctx, fmt.Sprintf("%spipe:%d", p, i))
				}
				if _, err := pipe.Exec(ctx); err != nil {
					t.Fatalf("pipeline of %d GETs: %v", n, err)
				}
				for i, c := range gets {
					if want := fmt.Sprintf("value-%d", i); c.Val() != want {
						t.Fatalf("GET #%d in the pipeline = %q, want %q", i, c.Val(), want)
					}
				}
			})

			t.Run("50 goroutines share the pool", func(t *testing.T) {
				const workers, ops = 50, 100
				var wg sync.WaitGroup
				errs := make(chan error, workers)
				for w := range workers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := range ops {
							k := fmt.Sprintf("%spool:%d:%d", p, w, i)
							v := strings.Repeat(strconv.Itoa(w), i%7+1)
							if err := rdb.Set(ctx, k, v, 0).Err(); err != nil {
								errs <- fmt.Errorf("worker %d SET %s: %w", w, k, err)
								return
							}
							got, err := rdb.Get(ctx, k).Result()
							if err != nil || got != v {
								errs <- fmt.Errorf("worker %d GET %s = %q, %v; want %q", w, k, got, err, v)
								return
							}
						}
						if n, err := rdb.Incr(ctx, p+"pool:counter").Result(); err != nil || n < 1 {
							errs <- fmt.Errorf("worker %d INCR = %d, %v", w, n, err)
						}
					}()
				}
				wg.Wait()
				close(errs)
				for err := range errs {
					t.Error(err)
				}
				if n, err := rdb.Get(ctx, p+"pool:counter").Int(); err != nil || n != workers {
					t.Errorf("counter after %d concurrent INCRs = %d, %v", workers, n, err)
				}
			})

			t.Run("values round-trip byte for byte", func(t *testing.T) {
				for i, size := range []int{1, 1 << 20, 64 << 20} {
					v := randomBytes(uint64(100*proto+i), size)
					k := fmt.Sprintf("%sblob:%d", p, size)
					if err := rdb.Set(ctx, k, v, 0).Err(); err != nil {
						t.Fatalf("SET %d bytes: %v", size, err)
					}
					got, err := rdb.Get(ctx, k).Bytes()
					if err != nil {
						t.Fatalf("GET %d bytes: %v", size, err)
					}
					if sha256.Sum256(got) != sha256.Sum256(v) {
						t.Fatalf("GET of a %d-byte value returned %d bytes with a different sha256", size, len(got))
					}
					if n, err := rdb.StrLen(ctx, k).Result(); err != nil || n != int64(size) {
						t.Errorf("STRLEN = %d, %v; want %d", n, err, size)
					}
					if err := rdb.Del(ctx, k).Err(); err != nil {
						t.Errorf("DEL: %v", err)
					}
				}
			})
		})
	}
}

// redisCLI runs redis-cli against s with args, feeding stdin, and returns
// its standard output.
func redisCLI(t *testing.T, s *server, stdin string, args ...string) string {
	t.Helper()
	bin, err := exec.LookPath("redis-cli")
	if err != nil {
		t.Fatalf("redis-cli is not on PATH (%v); .ci/run installs it (Debian package redis-tools)", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"-h", "127.0.0.1", "-p", strconv.Itoa(s.Port)}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("redis-cli %q: %v\nstdout: %q\nstderr: %q", args, err, out, stderr.String())
	}
	return string(out)
}

// TestRedisCLI checks what an operator sees through redis-cli. When its
// output is not a terminal redis-cli prints raw replies, one per line.
func TestRedisCLI(t *testing.T) {
	t.Parallel()
	s := startKVServer(t)
	tests := []struct {
		name  string
		stdin string
		args  []string
		want  string
	}{
		{"ping", "", []string{"PING"}, "PONG\n"},
		{"set", "", []string{"SET", "cli:k", "hello"}, "OK\n"},
		{"get", "", []string{"GET", "cli:k"}, "hello\n"},
		{"get --raw", "", []string{"--raw", "GET", "cli:k"}, "hello\n"},
		{"get --no-raw quotes the value", "", []string{"--no-raw", "GET", "cli:k"}, "\"hello\"\n"},
		{"get missing --no-raw is nil", "", []string{"--no-raw", "GET", "cli:missing"}, "(nil)\n"},
		{"exists", "", []string{"EXISTS", "cli:k", "cli:missing"}, "1\n"},
		{"incr", "", []string{"INCR", "cli:n"}, "1\n"},
		{"--no-raw integer", "", []string{"--no-raw", "INCR", "cli:n"}, "(integer) 2\n"},
		{"mget", "", []string{"MGET", "cli:k", "cli:missing", "cli:n"}, "hello\n\n2\n"},
		{"resp3 get", "", []string{"-3", "GET", "cli:k"}, "hello\n"},
		{"resp3 get missing", "", []string{"-3", "--no-raw", "GET", "cli:missing"}, "(nil)\n"},
		{"del", "", []string{"DEL", "cli:k", "cli:n"}, "2\n"},
		{"stdin value with spaces and newlines", "a value with spaces\nand a second line\n\tand a tab",
			[]string{"-x", "SET", "cli:x"}, "OK\n"},
		{"get stdin value", "", []string{"GET", "cli:x"}, "a value with spaces\nand a second line\n\tand a tab\n"},
	}
	for _, tt := range tests {
		if got := redisCLI(t, s, tt.stdin, tt.args...); got != tt.want {
			t.Errorf("%s: redis-cli %q printed %q, want %q", tt.name, tt.args, got, tt.want)
		}
	}

	c := dialRaw(t, s.Addr)
	checkReply(t, c, bulk("a value with spaces\nand a second line\n\tand a tab"), "GET", "cli:x")

	t.Run("-3 HELLO 3", func(t *testing.T) {
		out := redisCLI(t, s, "", "-3", "HELLO", "3")
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		for _, want := range []string{"proto 3", "mode standalone", "role master"} {
			if !slices.Contains(lines, want) {
				t.Errorf("redis-cli -3 HELLO 3 printed %q, want a line %q", out, want)
			}
		}
		for _, prefix := range []string{"server ", "version ", "id "} {
			if !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, prefix) }) {
				t.Errorf("redis-cli -3 HELLO 3 printed %q, want a line starting %q", out, prefix)
			}
		}
	})

	t.Run("INFO says role:master", func(t *testing.T) {
		for _, args := range [][]string{{"INFO"}, {"INFO", "replication"}} {
			if out := redisCLI(t, s, "", args...); !strings.Contains(out, "role:master") {
				t.Errorf("redis-cli %q printed %q, want it to contain role:master", args, quoteTrunc([]byte(out)))
			}
		}
	})
}

// systemPython is Debian's interpreter, which has python3-redis; the
// python3 first on PATH may be a pyenv one without it.
const systemPython = "/usr/bin/python3"

// pythonRedisScript exercises redis-py in RESP2 and prints one line per
// check; TestPythonRedis compares the output.
const pythonRedisScript = `
import sys
import redis

kw = dict(host="127.0.0.1", port=int(sys.argv[1]), socket_timeout=5)
try:
    r = redis.Redis(protocol=2, **kw)
except TypeError:
    r = redis.Redis(**kw)  # redis-py before 5.0 speaks RESP2 only

print("ping", r.ping())
print("set", r.set("py:a", b"hello world"))
print("get", r.get("py:a"))
print("get-missing", r.get("py:missing"))
print("exists", r.exists("py:a", "py:missing"))
print("delete", r.delete("py:a", "py:missing"))
print("exists-after", r.exists("py:a"))
blob = bytes(range(256)) * 4096
print("set-blob", r.set("py:blob", blob))
print("get-blob", r.get("py:blob") == blob)
p = r.pipeline(transaction=False)
for i in range(100):
    p.set("py:scan:%03d" % i, str(i))
p.incr("py:counter")
p.incr("py:counter")
p.get("py:counter")
p.mget("py:scan:000", "py:scan:099", "py:missing")
res = p.execute()
print("pipeline", all(x is True for x in res[:100]), res[100:])
keys = sorted(k.decode() for k in r.scan_iter(match="py:scan:*", count=10))
print("scan_iter", len(keys), len(set(keys)), keys[0], keys[-1])
print("expire", r.expire("py:counter", 100), 95 <= r.ttl("py:counter") <= 100)
`

// TestPythonRedis runs Debian's redis-py (RESP2) against the server.
func TestPythonRedis(t *testing.T) {
	t.Parallel()
	out := runPythonRedis(t, pythonRedisScript)
	want := strings.Join([]string{
		"ping True",
		"set True",
		"get b'hello world'",
		"get-missing None",
		"exists 1",
		"delete 1",
		"exists-after 0",
		"set-blob True",
		"get-blob True",
		"pipeline True [1, 2, b'2', [b'0', b'99', None]]",
		"scan_iter 100 100 py:scan:000 py:scan:099",
		"expire True True",
	}, "\n") + "\n"
	if string(out) != want {
		t.Errorf("python redis printed:\n%s\nwant:\n%s", out, want)
	}
}

// runPythonRedis runs script with Debian's python3 and its redis module
// against a fresh kvserver, whose port is the script's first argument,
// and returns what it printed.
func runPythonRedis(t *testing.T, script string) []byte {
	t.Helper()
	if _, err := os.Stat(systemPython); err != nil {
		t.Fatalf("%s: %v; .ci/run installs python3 and python3-redis", systemPython, err)
	}
	if out, err := exec.Command(systemPython, "-c", "import redis").CombinedOutput(); err != nil {
		t.Fatalf("%s cannot import redis (%v: %s); .ci/run installs python3-redis", systemPython, err, out)
	}
	s := startKVServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, systemPython, "-c", script, strconv.Itoa(s.Port))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python script: %v\nstdout:\n%s\nstderr:\n%s", err, out, stderr.String())
	}
	return out
}

// TestHello3LikeRedisPy8 replays the opening of redis-py 8 on a raw socket:
// HELLO 3 must answer Redis's seven-field map (an error kills the
// connection), then CLIENT SETINFO and CLIENT MAINT_NOTIFICATIONS must
// answer +OK, after which replies are RESP3.
func TestHello3LikeRedisPy8(t *testing.T) {
	t.Parallel()
	s := startKVServer(t)
	c := dialRaw(t, s.Addr)

	raw := c.Do("HELLO", "3")
	r, err := parseReply(raw)
	if err != nil || r.Type != '%' || len(r.Elems) != 14 || !bytes.HasPrefix(raw, []byte("%7\r\n")) {
		t.Fatalf("HELLO 3 = %s (%v), want a RESP3 map of 7 fields", quoteTrunc(raw), err)
	}
	var keys []string
	fields := make(map[string]Reply)
	for i := 0; i < len(r.Elems); i += 2 {
		keys = append(keys, r.Elems[i].Str)
		fields[r.Elems[i].Str] = r.Elems[i+1]
	}
	if want := []string{"server", "version", "proto", "id", "mode", "role", "modules"}; !slices.Equal(keys, want) {
		t.Errorf("HELLO 3 keys = %q, want %q in Redis's order", keys, want)
	}
	if f := fields["server"]; f.Type != '$' || f.Str == "" {
		t.Errorf("HELLO 3 server = %q, want a non-empty bulk string", f.Raw)
	}
	if f := fields["version"]; f.Type != '$' || strings.Count(f.Str, ".") != 2 {
		t.Errorf("HELLO 3 version = %q, want a bulk string like 7.x.y", f.Raw)
	}
	if f := fields["proto"]; string(f.Raw) != ":3\r\n" {
		t.Errorf("HELLO 3 proto = %q, want :3", f.Raw)
	}
	if f := fields["id"]; f.Type != ':' || f.Int <= 0 {
		t.Errorf("HELLO 3 id = %q, want a positive integer", f.Raw)
	}
	if f := fields["mode"]; string(f.Raw) != "$10\r\nstandalone\r\n" {
		t.Errorf("HELLO 3 mode = %q, want standalone", f.Raw)
	}
	if f := fields["role"]; string(f.Raw) != "$6\r\nmaster\r\n" {
		t.Errorf("HELLO 3 role = %q, want master", f.Raw)
	}
	if f := fields["modules"]; f.Type != '*' || f.Null {
		t.Errorf("HELLO 3 modules = %q, want an array", f.Raw)
	}

	// Redis 7.0 (the reference on PATH) predates CLIENT SETINFO (7.2) and
	// CLIENT MAINT_NOTIFICATIONS (8.2); redis-py 8 sends both.
	newer := [][]string{
		{"CLIENT", "SETINFO", "LIB-NAME", "redis-py"},
		{"CLIENT", "SETINFO", "LIB-VER", "8.0.0"},
		{"CLIENT", "MAINT_NOTIFICATIONS", "on", "moving-endpoint-type", "internal-ip"},
	}
	for _, cmd := range newer {
		if diffAgainstRedis() {
			c.Do(cmd...)
			continue
		}
		checkReply(t, c, "+OK\r\n", cmd...)
	}

	checkReply(t, c, "_\r\n", "GET", "hello3:missing")
	checkReply(t, c, "+OK\r\n", "SET", "hello3:k", "v")
	checkReply(t, c, "$1\r\nv\r\n", "GET", "hello3:k")
	checkReply(t, c, ":1\r\n", "EXISTS", "hello3:k")
	checkReply(t, c, "*2\r\n$1\r\nv\r\n_\r\n", "MGET", "hello3:k", "hello3:missing")

	// HELLO 2 goes back to RESP2 on the same connection.
	raw = c.Do("HELLO", "2")
	if !bytes.HasPrefix(raw, []byte("*14\r\n")) {
		t.Errorf("HELLO 2 = %s, want a flat array of 14 elements", quoteTrunc(raw))
	}
	checkReply(t, c, "$-1\r\n", "GET", "hello3:missing")
}
