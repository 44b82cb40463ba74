package tests

// Cluster mode end to end: three real kvserver processes share one
// generated slot map (--cluster-config) and are driven by go-redis's
// ClusterClient, redis-cli -c and redis-py's RedisCluster, which route by
// CLUSTER SLOTS and follow MOVED exactly as they do against Redis Cluster.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/kvserver/kvserver/cluster"
)

// testCluster is a set of kvserver nodes started from one cluster config.
type testCluster struct {
	nodes []*server
	ports []int
	// path is the cluster config file every node reads (and re-reads on
	// SIGHUP).
	path string
}

// writeClusterConfig writes a slot map giving node i (on ports[i]) the
// slots in slots[i] ("" for none).
func writeClusterConfig(t testing.TB, path string, ports []int, slots []string) {
	t.Helper()
	var b strings.Builder
	b.WriteString("nodes:\n")
	for i, p := range ports {
		fmt.Fprintf(&b, "  - addr: 127.0.0.1:%d\n", p)
		if slots[i] != "" {
			fmt.Fprintf(&b, "    slots: %s\n", slots[i])
		}
	}
	// Write then rename, so a node reloading meanwhile never reads half.
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// startCluster picks a free port per node, writes the slot map (node i
// serves slots[i]) and starts every node with it.
func startCluster(t testing.TB, slots ...string) *testCluster {
	t.Helper()
	if diffAgainstRedis() {
		t.Skip("cluster mode is kvserver's static slot map; redis-vs-redis mode has no equivalent")
	}
	tc := &testCluster{path: filepath.Join(t.TempDir(), "cluster.yaml")}
	seen := map[int]bool{}
	for len(tc.ports) < len(slots) {
		if p := freePort(t); !seen[p] {
			seen[p] = true
			tc.ports = append(tc.ports, p)
		}
	}
	writeClusterConfig(t, tc.path, tc.ports, slots)
	for _, port := range tc.ports {
		dir := t.TempDir()
		s := &server{Name: "kvserver", Dir: dir, output: &syncBuffer{}, mkCmd: func(port int) *exec.Cmd {
			return exec.Command(kvserverBin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
				"--dir", dir, "--metrics-port", "0", "--cluster-config", tc.path)
		}}
		if _, err := s.launch(port); err != nil {
			t.Fatalf("cluster node on port %d did not start: %v\noutput:\n%s", port, err, s.Output())
		}
		t.Cleanup(func() { s.stop(t) })
		tc.nodes = append(tc.nodes, s)
	}
	return tc
}

// standardSlots is the three-node split redis-cli --cluster create makes.
var standardSlots = []string{"0-5460", "5461-10922", "10923-16383"}

// nodeFor returns the index of the node serving key under standardSlots.
func nodeFor(key string) int {
	switch s := cluster.KeySlot([]byte(key)); {
	case s <= 5460:
		return 0
	case s <= 10922:
		return 1
	}
	return 2
}

// keysOn returns n distinct keys "prefix<i>" that standardSlots gives to
// node.
func keysOn(node, n int, prefix string) []string {
	var out []string
	for i := 0; len(out) < n; i++ {
		if k := prefix + strconv.Itoa(i); nodeFor(k) == node {
			out = append(out, k)
		}
	}
	return out
}

func newClusterClient(t *testing.T, tc *testCluster) *redis.ClusterClient {
	t.Helper()
	rdb := redis.NewClusterClient(&redis.ClusterOptions{
		Addrs:        []string{tc.nodes[0].Addr},
		DialTimeout:  5 * time.Second,
		ReadTimeout:  20 * time.Second,
		WriteTimeout: 20 * time.Second,
		PoolSize:     8,
	})
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

func dbsize(t *testing.T, s *server) int64 {
	t.Helper()
	r, err := parseReply(dialRaw(t, s.Addr).Do("DBSIZE"))
	if err != nil || r.Type != ':' {
		t.Fatalf("DBSIZE on %s: %v %q", s.Addr, err, r.Raw)
	}
	return r.Int
}

// TestClusterGoRedisLargeValues stores 300 values of 1 MiB through
// go-redis's ClusterClient and reads them back byte for byte; the keys
// land on all three nodes, each holding exactly the keys of its slots.
func TestClusterGoRedisLargeValues(t *testing.T) {
	tc := startCluster(t, standardSlots...)
	rdb := newClusterClient(t, tc)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	const n, size = 300, 1 << 20
	key := func(i int) string { return fmt.Sprintf("model@1@0@%08x@bf16kv_bytes", i*7919) }
	var wg sync.WaitGroup
	errs := make(chan error, n)
	work := make(chan int)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				if err := rdb.Set(ctx, key(i), randomBytes(uint64(i), size), 0).Err(); err != nil {
					errs <- fmt.Errorf("SET %s: %w", key(i), err)
				}
			}
		}()
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	mismatches := 0
	perNode := make([]int64, 3)
	for i := range n {
		got, err := rdb.Get(ctx, key(i)).Bytes()
		if err != nil {
			t.Fatalf("GET %s: %v", key(i), err)
		}
		if !bytes.Equal(got, randomBytes(uint64(i), size)) {
			mismatches++
		}
		perNode[nodeFor(key(i))]++
	}
	if mismatches != 0 {
		t.Fatalf("%d of %d values came back different", mismatches, n)
	}
	for i, s := range tc.nodes {
		got := dbsize(t, s)
		if got == 0 || got != perNode[i] {
			t.Errorf("node %d (%s) DBSIZE = %d, want %d (> 0: keys spread over every node)", i, s.Addr, got, perNode[i])
		}
	}
	t.Logf("keys per node: %v", perNode)

	// go-redis routes KVC.PROBE by its first argument, which with LEASE is
	// not a key: the node it reaches redirects to the first key's node.
	k0, k1 := key(0), key(1)
	want := int64(2)
	if nodeFor(k1) != nodeFor(k0) {
		want = 1 // the probe stops at the first key served elsewhere
	}
	if got, err := rdb.Do(ctx, "KVC.PROBE", "LEASE", "1000", k0, k1).Int64(); err != nil || got != want {
		t.Errorf("KVC.PROBE LEASE through go-redis = %d, %v; want %d", got, err, want)
	}

	// The owner enumerates the key by slot.
	slot := strconv.Itoa(cluster.KeySlot([]byte(k0)))
	owner := dialRaw(t, tc.nodes[nodeFor(k0)].Addr)
	if r, _ := parseReply(owner.Do("CLUSTER", "COUNTKEYSINSLOT", slot)); r.Type != ':' || r.Int < 1 {
		t.Errorf("COUNTKEYSINSLOT %s = %q, want >= 1", slot, r.Raw)
	}
	if r := owner.Do("CLUSTER", "GETKEYSINSLOT", slot, "1000"); !bytes.Contains(r, []byte(bulk(k0))) {
		t.Errorf("GETKEYSINSLOT %s = %q, want it to list %s", slot, r, k0)
	}
}

// TestClusterProtocol pins what cluster clients rely on: MOVED and
// CROSSSLOT errors byte for byte, the CLUSTER subcommands' replies, and
// redis-cli -c and redis-py following redirections.
func TestClusterProtocol(t *testing.T) {
	tc := startCluster(t, standardSlots...)
	n0, n1, n2 := tc.nodes[0], tc.nodes[1], tc.nodes[2]
	c0 := dialRaw(t, n0.Addr)

	t.Run("MOVED and CROSSSLOT", func(t *testing.T) {
		// Slots from redis-server 7.0's CLUSTER KEYSLOT: foo 12182, a
		// 15495, user1000 3443.
		moved := fmt.Sprintf("-MOVED 12182 127.0.0.1:%d\r\n", tc.ports[2])
		checkReply(t, c0, moved, "GET", "foo")
		checkReply(t, c0, moved, "SET", "foo", "bar")
		checkReply(t, c0, moved, "EXISTS", "foo")
		checkReply(t, c0, fmt.Sprintf("-MOVED 15495 127.0.0.1:%d\r\n", tc.ports[2]), "MGET", "a", "{a}x")
		crossSlot := "-CROSSSLOT Keys in request don't hash to the same slot\r\n"
		checkReply(t, c0, crossSlot, "MGET", "a", "foo")
		checkReply(t, c0, crossSlot, "DEL", "user1000", "foo")
		checkReply(t, c0, crossSlot, "MSET", "user1000", "1", "foo", "2")
		checkReply(t, c0, crossSlot, "RENAME", "user1000", "foo")
		checkReply(t, c0, crossSlot, "KVC.PIN", "10", "user1000", "foo")
		// Keys of one slot run here, hash tags included.
		checkReply(t, c0, "+OK\r\n", "MSET", "{user1000}.following", "1", "{user1000}.followers", "2")
		checkReply(t, c0, "*2\r\n$1\r\n1\r\n$1\r\n2\r\n", "MGET", "{user1000}.following", "{user1000}.followers")
		checkReply(t, c0, ":2\r\n", "EXISTS", "{user1000}.following", "user1000", "{user1000}.followers")
		// Commands without keys run locally; routing comes after arity.
		checkReply(t, c0, "+PONG\r\n", "PING")
		checkReply(t, c0, ":2\r\n", "DBSIZE")
		checkReply(t, c0, "-ERR wrong number of arguments for 'get' command\r\n", "GET", "foo", "x")
		// One database in cluster mode, as in Redis.
		checkReply(t, c0, "-ERR SELECT is not allowed in cluster mode\r\n", "SELECT", "1")
		checkReply(t, c0, "+OK\r\n", "SELECT", "0")
		checkReply(t, c0, "-ERR SWAPDB is not allowed in cluster mode\r\n", "SWAPDB", "0", "1")
		checkReply(t, c0, "-ERR MOVE is not allowed in cluster mode\r\n", "MOVE", "user1000", "1")
		checkReply(t, c0, "-ERR Copying to another database is not allowed in cluster mode\r\n",
			"COPY", "{user1000}.following", "{user1000}.x", "DB", "1")
		for _, cmd := range []string{"READONLY", "READWRITE", "ASKING"} {
			checkReply(t, c0, "+OK\r\n", cmd)
		}
	})

	t.Run("sharded pub/sub is routed by slot", func(t *testing.T) {
		// Shard channels route like keys (foo 12182 is node 2's, user1000
		// 3443 node 0's); global channels are not routed.
		moved := fmt.Sprintf("-MOVED 12182 127.0.0.1:%d\r\n", tc.ports[2])
		checkReply(t, c0, moved, "SPUBLISH", "foo", "x")
		checkReply(t, c0, moved, "SSUBSCRIBE", "foo")
		checkReply(t, c0, "-CROSSSLOT Keys in request don't hash to the same slot\r\n", "SSUBSCRIBE", "user1000", "foo")
		checkReply(t, c0, ":0\r\n", "PUBLISH", "foo", "x")
		checkReply(t, c0, ":0\r\n", "SPUBLISH", "user1000", "x")
		sub := dialRaw(t, n2.Addr)
		checkReply(t, sub, "*3\r\n$10\r\nssubscribe\r\n$3\r\nfoo\r\n:1\r\n", "SSUBSCRIBE", "foo")
		checkReply(t, dialRaw(t, n2.Addr), ":1\r\n", "SPUBLISH", "foo", "hi")
		if raw, err := sub.ReadReply(); err != nil || string(raw) != "*3\r\n$8\r\nsmessage\r\n$3\r\nfoo\r\n$2\r\nhi\r\n" {
			t.Errorf("shard message = %q, %v", raw, err)
		}
	})

	t.Run("CLUSTER SLOTS covers every slot", func(t *testing.T) {
		ids := map[int]string{}
		for i, s := range tc.nodes {
			r, err := parseReply(dialRaw(t, s.Addr).Do("CLUSTER", "MYID"))
			if err != nil || r.Type != '$' || len(r.Str) != 40 {
				t.Fatalf("CLUSTER MYID on node %d = %q", i, r.Raw)
			}
			ids[tc.ports[i]] = r.Str
		}
		for _, proto := range []string{"2", "3"} {
			c := dialRaw(t, n1.Addr)
			c.Do("HELLO", proto)
			r, err := parseReply(c.Do("CLUSTER", "SLOTS"))
			if err != nil || r.Type != '*' {
				t.Fatalf("RESP%s CLUSTER SLOTS = %q, %v", proto, r.Raw, err)
			}
			var covered [cluster.Slots]int
			for _, row := range r.Elems {
				if len(row.Elems) != 3 || len(row.Elems[2].Elems) != 4 {
					t.Fatalf("row %q is not [start end [ip port id meta]]", row.Raw)
				}
				start, end, node := row.Elems[0].Int, row.Elems[1].Int, row.Elems[2]
				port := int(node.Elems[1].Int)
				if node.Elems[0].Str != "127.0.0.1" || ids[port] == "" || node.Elems[2].Str != ids[port] {
					t.Errorf("row %q names an unknown node or the wrong id", row.Raw)
				}
				wantMeta := map[string]byte{"2": '*', "3": '%'}[proto]
				if meta := node.Elems[3]; meta.Type != wantMeta || len(meta.Elems) != 0 {
					t.Errorf("RESP%s node metadata %q, want an empty map", proto, meta.Raw)
				}
				for s := start; s <= end; s++ {
					covered[s]++
				}
			}
			for s, n := range covered {
				if n != 1 {
					t.Fatalf("RESP%s: slot %d is covered %d times", proto, s, n)
				}
			}
		}
	})

	t.Run("CLUSTER INFO NODES SHARDS KEYSLOT", func(t *testing.T) {
		c := dialRaw(t, n1.Addr)
		r, _ := parseReply(c.Do("CLUSTER", "INFO"))
		info := map[string]string{}
		for _, line := range strings.Split(r.Str, "\r\n") {
			if k, v, ok := strings.Cut(line, ":"); ok {
				info[k] = v
			}
		}
		for k, want := range map[string]string{
			"cluster_state": "ok", "cluster_slots_assigned": "16384", "cluster_slots_ok": "16384",
			"cluster_known_nodes": "3", "cluster_size": "3", "cluster_my_epoch": "2", "cluster_current_epoch": "3",
		} {
			if info[k] != want {
				t.Errorf("CLUSTER INFO %s = %q, want %q (%q)", k, info[k], want, r.Str)
			}
		}
		if f, err := infoFields(c, "cluster"); err != nil || f["cluster_enabled"] != "1" {
			t.Errorf("INFO cluster = %v, %v; want cluster_enabled:1", f, err)
		}
		if f, err := infoFields(c, "server"); err != nil || f["redis_mode"] != "cluster" {
			t.Errorf("INFO server redis_mode = %q, %v", f["redis_mode"], err)
		}

		r, _ = parseReply(c.Do("CLUSTER", "NODES"))
		lines := strings.Split(strings.TrimSuffix(r.Str, "\n"), "\n")
		if len(lines) != 3 {
			t.Fatalf("CLUSTER NODES = %q", r.Str)
		}
		self := strings.Fields(lines[0])
		if len(self) != 9 || self[1] != fmt.Sprintf("127.0.0.1:%d@0", tc.ports[1]) ||
			self[2] != "myself,master" || self[7] != "connected" || self[8] != "5461-10922" {
			t.Errorf("CLUSTER NODES own line = %q", lines[0])
		}

		r, _ = parseReply(c.Do("CLUSTER", "SHARDS"))
		if len(r.Elems) != 3 {
			t.Fatalf("CLUSTER SHARDS = %q", r.Raw)
		}
		first := r.Elems[0] // the file's first node
		if first.Elems[0].Str != "slots" || first.Elems[1].Elems[0].Int != 0 || first.Elems[1].Elems[1].Int != 5460 {
			t.Errorf("first shard %q", first.Raw)
		}

		checkReply(t, c, ":12739\r\n", "CLUSTER", "KEYSLOT", "123456789")
		checkReply(t, c, ":3443\r\n", "CLUSTER", "KEYSLOT", "{user1000}.following")
		checkReply(t, c, "-ERR Invalid slot\r\n", "CLUSTER", "COUNTKEYSINSLOT", "16384")
		checkReply(t, c, "-ERR value is not an integer or out of range\r\n", "CLUSTER", "COUNTKEYSINSLOT", "x")
		checkReply(t, c, "-ERR Invalid slot or number of keys\r\n", "CLUSTER", "GETKEYSINSLOT", "1", "-1")
		checkReply(t, c, "-ERR Unknown node x\r\n", "CLUSTER", "REPLICAS", "x")
		checkReply(t, c, "*0\r\n", "CLUSTER", "LINKS")
		if r := c.Do("CLUSTER", "ADDSLOTS", "1"); !bytes.HasPrefix(r, []byte("-ERR kvserver's slot map is static")) {
			t.Errorf("CLUSTER ADDSLOTS = %q", r)
		}
	})

	t.Run("COUNTKEYSINSLOT and GETKEYSINSLOT", func(t *testing.T) {
		owner := nodeFor("{t}")
		c := dialRaw(t, tc.nodes[owner].Addr)
		slot := strconv.Itoa(cluster.KeySlot([]byte("{t}")))
		for i := range 5 {
			checkReply(t, c, "+OK\r\n", "SET", "{t}"+strconv.Itoa(i), "v")
		}
		// Keys of other slots on the same node are not counted.
		for _, k := range keysOn(owner, 3, "other") {
			checkReply(t, c, "+OK\r\n", "SET", k, "v")
		}
		checkReply(t, c, ":5\r\n", "CLUSTER", "COUNTKEYSINSLOT", slot)
		r, _ := parseReply(c.Do("CLUSTER", "GETKEYSINSLOT", slot, "3"))
		if len(r.Elems) != 3 {
			t.Fatalf("GETKEYSINSLOT %s 3 = %q", slot, r.Raw)
		}
		for _, e := range r.Elems {
			if !strings.HasPrefix(e.Str, "{t}") {
				t.Errorf("GETKEYSINSLOT returned %q", e.Str)
			}
		}
		checkReply(t, c, "*0\r\n", "CLUSTER", "GETKEYSINSLOT", slot, "0")
	})

	t.Run("KVC.PROBE counts the leading keys this node serves", func(t *testing.T) {
		on0 := keysOn(0, 3, "probe")
		on1 := keysOn(1, 1, "probe")
		for _, k := range append(on0, on1...) {
			checkReply(t, dialRaw(t, tc.nodes[nodeFor(k)].Addr), "+OK\r\n", "SET", k, "chunk")
		}
		missing := keysOn(0, 1, "nosuch")[0]
		checkReply(t, c0, ":2\r\n", "KVC.PROBE", on0[0], on0[1], on1[0], on0[2])
		checkReply(t, c0, ":2\r\n", "KVC.PROBE", "LEASE", "1000", on0[0], on0[1], on1[0])
		checkReply(t, c0, ":1\r\n", "KVC.PROBE", on0[0], missing, on0[1])
		moved := fmt.Sprintf("-MOVED %d 127.0.0.1:%d\r\n", cluster.KeySlot([]byte(on1[0])), tc.ports[1])
		checkReply(t, c0, moved, "KVC.PROBE", on1[0], on0[0])
		checkReply(t, c0, moved, "KVC.PROBE", "LEASE", "1000", on1[0], on0[0])
		checkReply(t, dialRaw(t, n1.Addr), ":1\r\n", "KVC.PROBE", on1[0], on0[0])
	})

	t.Run("redis-cli -c follows MOVED", func(t *testing.T) {
		// foo is served by the third node; ask the first.
		if got := redisCLI(t, n0, "", "-c", "SET", "foo", "via-cli"); strings.TrimSpace(got) != "OK" {
			t.Fatalf("redis-cli -c SET printed %q", got)
		}
		if got := redisCLI(t, n0, "", "-c", "GET", "foo"); strings.TrimSpace(got) != "via-cli" {
			t.Errorf("redis-cli -c GET printed %q", got)
		}
		if got := redisCLI(t, n2, "", "GET", "foo"); strings.TrimSpace(got) != "via-cli" {
			t.Errorf("the value is not on the node serving foo: GET there printed %q", got)
		}
		if got := redisCLI(t, n0, "", "GET", "foo"); !strings.Contains(got, "MOVED 12182") {
			t.Errorf("redis-cli without -c printed %q, want the MOVED error", got)
		}
	})

	t.Run("redis-py RedisCluster", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, systemPython, "-c", pythonClusterScript, strconv.Itoa(tc.ports[0]))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("redis-py cluster script: %v\n%s", err, out)
		}
		if got := strings.TrimSpace(string(out)); got != "ok 100" {
			t.Fatalf("redis-py cluster script printed %q, want ok 100", got)
		}
		// The keys are where their slots say, not all on the seed node.
		for i, s := range tc.nodes {
			var want []string
			for j := range 100 {
				if k := "py:" + strconv.Itoa(j); nodeFor(k) == i {
					want = append(want, k)
				}
			}
			c := dialRaw(t, s.Addr)
			for _, k := range want {
				checkReply(t, c, bulk("value-"+strings.TrimPrefix(k, "py:")), "GET", k)
			}
		}
	})
}

// pythonClusterScript sets and reads 100 keys through redis-py's
// RedisCluster, seeded with one node's port.
const pythonClusterScript = `
import sys
from redis.cluster import RedisCluster
rc = RedisCluster(host="127.0.0.1", port=int(sys.argv[1]))
for i in range(100):
    assert rc.set("py:%d" % i, "value-%d" % i)
bad = [i for i in range(100) if rc.get("py:%d" % i) != b"value-%d" % i]
assert not bad, bad
assert rc.cluster_keyslot("123456789") == 12739
print("ok", 100 - len(bad))
`

// TestClusterReloadOnSIGHUP moves a slot range to another node by editing
// the file and sending SIGHUP: the old owner answers MOVED to the new one
// and deletes its keys of those slots, the new owner serves them (as
// misses: this is a cache), go-redis follows, and a broken file keeps the
// map in effect.
func TestClusterReloadOnSIGHUP(t *testing.T) {
	tc := startCluster(t, standardSlots...)
	rdb := newClusterClient(t, tc)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	moving := keysOn(0, 20, "mv")
	for _, k := range moving {
		if err := rdb.Set(ctx, k, "old", 0).Err(); err != nil {
			t.Fatalf("SET %s: %v", k, err)
		}
	}
	if got := dbsize(t, tc.nodes[0]); got != int64(len(moving)) {
		t.Fatalf("node 0 holds %d keys, want %d", got, len(moving))
	}
	hup := func() {
		for _, s := range tc.nodes {
			if err := s.Cmd.Process.Signal(syscall.SIGHUP); err != nil {
				t.Fatal(err)
			}
		}
	}
	// waitFor polls until the raw reply to args contains want (each node
	// reloads on its own time).
	waitFor := func(what string, c *rawClient, want string, args ...string) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			got := string(c.Do(args...))
			if strings.Contains(got, want) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: %q = %q, want %q", what, args, got, want)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	// A subscriber of a shard channel of slot 3443 (user1000) on node 0
	// is unsubscribed when the slot leaves, as in Redis.
	shardSub := dialRaw(t, tc.nodes[0].Addr)
	shardSub.Do("SSUBSCRIBE", "user1000")

	// Node 0 gives 0-5460 to node 1 and keeps nothing.
	writeClusterConfig(t, tc.path, tc.ports, []string{"", "0-10922", "10923-16383"})
	hup()
	if raw, err := shardSub.ReadReply(); err != nil || string(raw) != "*3\r\n$12\r\nsunsubscribe\r\n$8\r\nuser1000\r\n:0\r\n" {
		t.Errorf("shard subscriber after its slot moved: %q, %v", raw, err)
	}
	k := moving[0]
	c0, c1 := dialRaw(t, tc.nodes[0].Addr), dialRaw(t, tc.nodes[1].Addr)
	moved := fmt.Sprintf("-MOVED %d 127.0.0.1:%d\r\n", cluster.KeySlot([]byte(k)), tc.ports[1])
	waitFor("old owner redirects", c0, moved, "GET", k)
	waitFor("new owner serves the slot", c1, "$-1\r\n", "GET", k)
	waitFor("old owner drops the keys", c0, ":0\r\n", "DBSIZE")
	r, _ := parseReply(c0.Do("CLUSTER", "SLOTS"))
	if len(r.Elems) != 2 || r.Elems[0].Elems[1].Int != 10922 || r.Elems[0].Elems[2].Elems[1].Int != int64(tc.ports[1]) {
		t.Errorf("CLUSTER SLOTS after reload = %q", r.Raw)
	}
	// go-redis follows the MOVED and reaches the new owner.
	if err := rdb.Set(ctx, k, "new", 0).Err(); err != nil {
		t.Fatalf("SET after reload: %v", err)
	}
	if got, err := rdb.Get(ctx, k).Result(); err != nil || got != "new" {
		t.Fatalf("GET after reload = %q, %v", got, err)
	}
	checkReply(t, c1, bulk("new"), "GET", k)

	// Slots left without a node answer CLUSTERDOWN.
	unserved := ""
	for i := 0; unserved == ""; i++ {
		if k := "gap" + strconv.Itoa(i); cluster.KeySlot([]byte(k)) >= 16000 {
			unserved = k
		}
	}
	writeClusterConfig(t, tc.path, tc.ports, []string{"", "0-10922", "10923-15999"})
	hup()
	waitFor("unserved slot", c0, "-CLUSTERDOWN Hash slot not served\r\n", "GET", unserved)
	waitFor("assigned slots counted", c1, "cluster_slots_assigned:16000\r\n", "CLUSTER", "INFO")

	// A file that does not parse is logged and changes nothing.
	if err := os.WriteFile(tc.path, []byte("nodes: [\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	before := string(c0.Do("CLUSTER", "SLOTS"))
	hup()
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(tc.nodes[0].Output(), "cluster-config reload failed") {
		if time.Now().After(deadline) {
			t.Fatalf("no reload error logged:\n%s", tc.nodes[0].Output())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if after := string(c0.Do("CLUSTER", "SLOTS")); after != before {
		t.Errorf("a broken file changed CLUSTER SLOTS:\n%q\n%q", before, after)
	}
	checkReply(t, c1, bulk("new"), "GET", k)
}

// TestClusterConfigErrorsStopStart: a node missing from the map, or a map
// that does not parse, stops the server before it listens, saying why.
func TestClusterConfigErrorsStopStart(t *testing.T) {
	if diffAgainstRedis() {
		t.Skip("kvserver's own flag")
	}
	dir := t.TempDir()
	port := freePort(t)
	cases := []struct{ name, file, want string }{
		{"not listed", fmt.Sprintf("nodes:\n  - addr: 127.0.0.1:%d\n    slots: 0-16383\n", port+1),
			fmt.Sprintf("this server (bind 127.0.0.1, port %d) is not one of its nodes", port)},
		{"overlap", fmt.Sprintf("nodes:\n  - addr: 127.0.0.1:%d\n    slots: 0-10\n  - addr: 127.0.0.1:%d\n    slots: 10\n", port, port+1),
			"slot 10 is already served by node 1"},
		{"missing file", "", "no such file"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".yaml")
			if tc.file != "" {
				if err := os.WriteFile(path, []byte(tc.file), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			out, err := exec.CommandContext(ctx, kvserverBin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
				"--dir", t.TempDir(), "--metrics-port", "0", "--cluster-config", path).CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() == 0 {
				t.Fatalf("kvserver exited with %v, want a failure\n%s", err, out)
			}
			if !strings.Contains(string(out), tc.want) || !strings.Contains(string(out), "cluster-config") {
				t.Errorf("output does not say %q:\n%s", tc.want, out)
			}
		})
	}
}
