package tests

import (
	"testing"

	"github.com/kvserver/kvserver/rdb"
)

// TestDifferentialObjectFreq pins OBJECT FREQ under the LFU policies to
// Redis 7's counts. The counter's increment is random above LFU_INIT_VAL
// (5): with lfu-log-factor 10 only the first access after a key's creation
// is certain (5 -> 6), and with lfu-log-factor 0 every access is; with
// lfu-decay-time 0 a minute boundary during the test decrements nothing.
// So every value compared is deterministic on both servers.
func TestDifferentialObjectFreq(t *testing.T) {
	t.Parallel()
	runDifferential(t, lfuScripts(t))
}

// lfuScripts are the scripts of TestDifferentialObjectFreq.
func lfuScripts(t *testing.T) []script {
	p, err := rdb.Dump(rdb.Value{String: []byte("restored")})
	if err != nil {
		t.Fatal(err)
	}
	payload := string(p)
	reset := seq(
		do("CONFIG", "SET", "maxmemory-policy", "allkeys-lru"),
		do("CONFIG", "SET", "lfu-log-factor", "10"),
		do("CONFIG", "SET", "lfu-decay-time", "1"),
	)
	return []script{
		{"object freq", seq(
			do("CONFIG", "SET", "maxmemory-policy", "allkeys-lfu"),
			do("CONFIG", "SET", "lfu-decay-time", "0"),
			unorderedPairs("CONFIG", "GET", "lfu-*"),
			do("SET", "k", "v"),
			do("OBJECT", "FREQ", "k"),
			do("GET", "k"),
			do("OBJECT", "FREQ", "k"),
			// Neither EXISTS, TYPE nor OBJECT counts as an access.
			do("EXISTS", "k"),
			do("TYPE", "k"),
			do("OBJECT", "ENCODING", "k"),
			do("OBJECT", "FREQ", "k"),
			do("OBJECT", "FREQ", "missing"),
			do("OBJECT", "IDLETIME", "k"),
			do("CONFIG", "SET", "lfu-log-factor", "0"),
			do("GET", "k"),
			do("GET", "k"),
			do("GET", "k"),
			do("OBJECT", "FREQ", "k"),
			// An overwrite keeps the key's counter (and counts its lookup).
			do("SET", "k", "v2"),
			do("OBJECT", "FREQ", "k"),
			do("APPEND", "k", "x"),
			do("OBJECT", "FREQ", "k"),
			do("HSET", "h", "f", "v"),
			do("OBJECT", "FREQ", "h"),
			do("HGET", "h", "f"),
			do("HGET", "h", "f"),
			do("OBJECT", "FREQ", "h"),
			do("RPUSH", "l", "a"),
			do("LRANGE", "l", "0", "-1"),
			do("OBJECT", "FREQ", "l"),
			do("CONFIG", "SET", "maxmemory-policy", "volatile-lfu"),
			info("memory", "maxmemory_policy"),
			do("OBJECT", "FREQ", "k"),
			// RESTORE: a new key starts at 5, FREQ sets the counter, and
			// REPLACE makes a new key.
			do("RESTORE", "r1", "0", payload),
			do("OBJECT", "FREQ", "r1"),
			do("RESTORE", "r2", "0", payload, "FREQ", "100"),
			do("OBJECT", "FREQ", "r2"),
			do("RESTORE", "r2", "0", payload, "REPLACE", "FREQ", "0"),
			do("OBJECT", "FREQ", "r2"),
			do("RESTORE", "r2", "0", payload, "REPLACE", "FREQ", "255"),
			do("OBJECT", "FREQ", "r2"),
			do("RESTORE", "r2", "0", payload, "REPLACE"),
			do("OBJECT", "FREQ", "r2"),
			do("RESTORE", "r3", "0", payload, "FREQ", "256"),
			do("RESTORE", "r3", "0", payload, "FREQ", "-1"),
			do("RESTORE", "r3", "0", payload, "FREQ", "x"),
			do("RESTORE", "r3", "0", payload, "FREQ", "1", "IDLETIME", "1"),
			// IDLETIME counts only under an LRU policy.
			do("RESTORE", "r4", "0", payload, "IDLETIME", "1000"),
			do("OBJECT", "FREQ", "r4"),
			do("CONFIG", "SET", "maxmemory-policy", "allkeys-lru"),
			do("OBJECT", "FREQ", "k"),
			do("RESTORE", "r5", "0", payload, "IDLETIME", "1000"),
			approxInt(1, "OBJECT", "IDLETIME", "r5"),
			do("RESTORE", "r6", "0", payload, "FREQ", "7"),
			do("OBJECT", "IDLETIME", "r6"),
			do("CONFIG", "SET", "maxmemory-policy", "noeviction"),
			do("OBJECT", "FREQ", "k"),
			do("CONFIG", "GET", "maxmemory-policy"),
			do("CONFIG", "SET", "lfu-log-factor", "-1"),
			do("CONFIG", "SET", "lfu-decay-time", "x"),
			reset,
		)},
	}
}
