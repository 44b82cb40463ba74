package tests

import (
	"strings"
	"testing"
)

// TestDifferentialServerCommands pins the diagnostic server commands to
// Redis 7's replies: ROLE, WAIT, OBJECT, MEMORY, SLOWLOG, LATENCY,
// COMMAND GETKEYSANDFLAGS, MODULE, REPLICAOF and LOLWUT. Replies whose values are the server's own
// (memory sizes, slow log timings and addresses) are compared by type.
func TestDifferentialServerCommands(t *testing.T) {
	t.Parallel()
	runDifferential(t, serverCommandScripts())
}

// serverCommandScripts are the scripts of TestDifferentialServerCommands.
func serverCommandScripts() []script {
	long := strings.Repeat("r", 45)
	emb := strings.Repeat("e", 44)
	return []script{
		{"role and wait", seq(
			do("ROLE"),
			do("role"),
			do("WAIT", "0", "0"),
			do("WAIT", "1", "10"),
			do("WAIT", "-1", "0"),
			do("WAIT", "1", "x"),
			do("WAIT", "x", "0"),
			do("WAIT", "1", "-1"),
			do("WAIT", "-1", "10"),
			arity(line("ROLE", "x"), line("WAIT"), line("WAIT", "1"), line("WAIT", "1", "2", "3")),
		)},
		{"object", seq(
			// Redis shares small integers (REFCOUNT) unless maxmemory is
			// set with an LRU or LFU policy.
			do("CONFIG", "SET", "maxmemory-policy", "allkeys-lru"),
			do("CONFIG", "SET", "maxmemory", "256mb"),
			do("SET", "i", "123"),
			do("SET", "neg", "-5"),
			do("SET", "big", "12345678901234567890"),
			do("SET", "lead", "0123"),
			do("SET", "sp", " 1"),
			do("SET", "emb", emb),
			do("SET", "raw", long),
			do("SET", "empty", ""),
			do("SET", "negzero", "-0"),
			do("SET", "plus", "+1"),
			do("SET", "max", "9223372036854775807"),
			do("SET", "over", "9223372036854775808"),
			do("INCR", "counter"),
			do("INCRBY", "counter", "100000"),
			do("INCRBYFLOAT", "float", "1.5"),
			do("MSET", "m1", "7", "m2", "seven"),
			do("SETEX", "ex", "100", "42"),
			do("OBJECT", "ENCODING", "negzero"),
			do("OBJECT", "ENCODING", "plus"),
			do("OBJECT", "ENCODING", "max"),
			do("OBJECT", "ENCODING", "over"),
			do("OBJECT", "ENCODING", "counter"),
			do("OBJECT", "ENCODING", "float"),
			do("OBJECT", "ENCODING", "m1"),
			do("OBJECT", "ENCODING", "m2"),
			do("OBJECT", "ENCODING", "ex"),
			do("OBJECT", "REFCOUNT", "counter"),
			do("OBJECT", "REFCOUNT", "m1"),
			do("OBJECT", "ENCODING", "i"),
			do("OBJECT", "ENCODING", "neg"),
			do("OBJECT", "ENCODING", "big"),
			do("OBJECT", "ENCODING", "lead"),
			do("OBJECT", "ENCODING", "sp"),
			do("OBJECT", "ENCODING", "emb"),
			do("OBJECT", "ENCODING", "raw"),
			do("OBJECT", "ENCODING", "empty"),
			do("OBJECT", "encoding", "missing"),
			do("OBJECT", "REFCOUNT", "i"),
			do("OBJECT", "REFCOUNT", "raw"),
			do("OBJECT", "REFCOUNT", "missing"),
			do("OBJECT", "IDLETIME", "i"),
			do("OBJECT", "IDLETIME", "missing"),
			do("OBJECT", "FREQ", "i"),
			do("OBJECT", "FREQ", "missing"),
			do("OBJECT", "HELP"),
			do("OBJECT", "help"),
			do("OBJECT", "NOSUCH", "i"),
			arity(line("OBJECT"), line("OBJECT", "ENCODING"), line("OBJECT", "ENCODING", "i", "x"),
				line("OBJECT", "HELP", "x"), line("OBJECT", "FREQ")),
		)},
		{"memory", seq(
			do("SET", "k", "value"),
			typeOnly("MEMORY", "USAGE", "k"),
			typeOnly("MEMORY", "USAGE", "k", "SAMPLES", "0"),
			typeOnly("MEMORY", "USAGE", "k", "samples", "5", "SAMPLES", "1"),
			do("MEMORY", "USAGE", "missing"),
			do("MEMORY", "USAGE", "k", "SAMPLES", "x"),
			do("MEMORY", "USAGE", "k", "SAMPLES"),
			do("MEMORY", "USAGE", "k", "SAMPLES", "-1"),
			do("MEMORY", "USAGE", "k", "SAMPLES", "0", "SAMPLES"),
			do("MEMORY", "USAGE", "missing", "SAMPLES", "x"),
			do("MEMORY", "USAGE", "missing", "SAMPLES", "1"),
			do("MEMORY", "USAGE", "k", "FOO"),
			do("MEMORY", "DOCTOR"),
			typeOnly("MEMORY", "STATS"),
			do("FLUSHALL"),
			typeOnly("MEMORY", "STATS"),
			do("SELECT", "3"),
			do("SET", "k3", "v"),
			typeOnly("MEMORY", "STATS"),
			do("SELECT", "0"),
			do("MEMORY", "HELP"),
			do("MEMORY", "NOSUCH"),
			// jemalloc's report on Redis, Go's runtime's on kvserver.
			typeOnly("MEMORY", "MALLOC-STATS"),
			do("MEMORY", "PURGE"),
			do("memory", "purge"),
			arity(line("MEMORY"), line("MEMORY", "USAGE"), line("MEMORY", "STATS", "x"),
				line("MEMORY", "DOCTOR", "x"), line("MEMORY", "HELP", "x"),
				line("MEMORY", "MALLOC-STATS", "x"), line("MEMORY", "PURGE", "x")),
		)},
		{"module", seq(
			do("MODULE", "LIST"),
			do("module", "list"),
			do("MODULE", "HELP"),
			// enable-module-command is no on both (the default).
			do("CONFIG", "GET", "enable-module-command"),
			do("MODULE", "LOAD", "/nonexistent/module.so"),
			do("MODULE", "LOAD", "/nonexistent/module.so", "arg"),
			do("MODULE", "LOADEX", "/nonexistent/module.so", "CONFIG", "a", "b"),
			do("MODULE", "UNLOAD", "nosuch"),
			do("MODULE", "NOSUCH"),
			arity(line("MODULE"), line("MODULE", "LIST", "x"), line("MODULE", "HELP", "x"),
				line("MODULE", "LOAD"), line("MODULE", "LOADEX"), line("MODULE", "UNLOAD"),
				line("MODULE", "UNLOAD", "a", "b")),
		)},
		{"replicaof", seq(
			do("REPLICAOF", "NO", "ONE"),
			do("replicaof", "no", "one"),
			do("SLAVEOF", "NO", "ONE"),
			do("ROLE"),
			do("REPLICAOF", "127.0.0.1", "x"),
			do("REPLICAOF", "127.0.0.1", "65536"),
			do("REPLICAOF", "127.0.0.1", "-1"),
			do("SLAVEOF", "host", "1.5"),
			do("REPLICAOF", "NO", "TWO"),
			arity(line("REPLICAOF"), line("REPLICAOF", "NO ONE"), line("REPLICAOF", "NO", "ONE", "x"),
				line("SLAVEOF", "NO")),
		)},
		{"lolwut", seq(
			do("LOLWUT"),
			do("lolwut", "5", "6", "7", "8"),
			do("LOLWUT", "VERSION"),
			do("LOLWUT", "VERSION", "7"),
			do("LOLWUT", "version", "4"),
			do("LOLWUT", "VERSION", "-1"),
			do("LOLWUT", "VERSION", "x"),
			do("LOLWUT", "VERSION", "5", "x"),
			do("LOLWUT", "VERSION", "5", "10", "x"),
			do("LOLWUT", "VERSION", "6", "x"),
			do("LOLWUT", "VERSION", "6", "10", "1.5"),
			// Schotter's first two rows of squares are not turned at
			// random: with at most two rows the drawing is Redis's,
			// pixel for pixel.
			do("LOLWUT", "VERSION", "5", "10", "3", "2"),
			do("LOLWUT", "VERSION", "5", "40", "4", "1"),
			do("LOLWUT", "VERSION", "5", "1", "1", "1"),
			do("LOLWUT", "VERSION", "5", "0", "-3", "0"),
			do("LOLWUT", "VERSION", "5", "3", "1", "2"),
			do("LOLWUT", "VERSION", "5", "66", "8", "2"),
			do("LOLWUT", "VERSION", "5", "5000", "500", "1"),
			// 2^32+5 prints as version 5 in Redis's unsigned int.
			do("LOLWUT", "VERSION", "4294967301", "12", "2", "1"),
			typeOnly("LOLWUT", "VERSION", "5"),
			typeOnly("LOLWUT", "VERSION", "6"),
		)},
		{"slowlog", seq(
			unorderedPairs("CONFIG", "GET", "slowlog-*"),
			do("CONFIG", "GET", "latency-monitor-threshold"),
			do("CONFIG", "SET", "slowlog-log-slower-than", "-1"),
			do("SLOWLOG", "RESET"),
			do("PING"),
			do("SLOWLOG", "LEN"),
			do("SLOWLOG", "GET"),
			do("CONFIG", "SET", "slowlog-log-slower-than", "0"),
			do("SLOWLOG", "RESET"),
			do("SET", "k", "v"),
			do("SLOWLOG", "LEN"),
			// Only commands that ran are logged: not unknown ones, nor
			// those refused for their arity.
			do("NOSUCHCOMMAND", "x"),
			do("GET"),
			do("OBJECT", "NOSUCH"),
			do("SLOWLOG", "LEN"),
			typeOnly("SLOWLOG", "GET"),
			typeOnly("SLOWLOG", "GET", "1"),
			typeOnly("SLOWLOG", "GET", "-1"),
			do("SLOWLOG", "GET", "0"),
			do("SLOWLOG", "GET", "-2"),
			do("SLOWLOG", "GET", "x"),
			do("SLOWLOG", "GET", "1", "2"),
			// Commands run by EXEC are logged one by one (EXEC itself
			// is skip_slowlog), as the commands a script runs are not.
			do("SLOWLOG", "RESET"),
			do("MULTI"),
			do("SET", "k", "v"),
			do("INCR", "n"),
			do("EXEC"),
			do("SLOWLOG", "LEN"),
			typeOnly("SLOWLOG", "GET"),
			do("SLOWLOG", "RESET"),
			do("EVAL", "redis.call('SET', 'k', 'v') return redis.call('INCR', 'n')", "0"),
			do("SLOWLOG", "LEN"),
			do("CONFIG", "SET", "slowlog-max-len", "2"),
			do("PING"),
			do("PING"),
			do("SLOWLOG", "LEN"),
			do("CONFIG", "SET", "slowlog-max-len", "0"),
			do("PING"),
			do("SLOWLOG", "LEN"),
			do("SLOWLOG", "GET"),
			do("CONFIG", "SET", "slowlog-max-len", "-1"),
			do("CONFIG", "SET", "slowlog-log-slower-than", "-2"),
			do("CONFIG", "SET", "slowlog-max-len", "128"),
			do("CONFIG", "SET", "slowlog-log-slower-than", "10000"),
			do("SLOWLOG", "RESET"),
			do("SLOWLOG", "HELP"),
			do("SLOWLOG", "NOSUCH"),
			arity(line("SLOWLOG"), line("SLOWLOG", "LEN", "x"), line("SLOWLOG", "RESET", "x"), line("SLOWLOG", "HELP", "x")),
		)},
		{"latency", seq(
			do("LATENCY", "LATEST"),
			do("LATENCY", "HISTORY", "command"),
			do("LATENCY", "RESET"),
			do("LATENCY", "RESET", "command", "fork"),
			do("LATENCY", "HELP"),
			do("LATENCY", "NOSUCH"),
			do("LATENCY", "DOCTOR"),
			do("LATENCY", "GRAPH", "command"),
			do("LATENCY", "GRAPH", "a\nb"),
			// Only commands that never ran: the histograms' values are
			// timings (TestLatencyHistogramMatchesRedis checks the rest).
			do("LATENCY", "HISTOGRAM", "nosuch", "lpop", "xautoclaim"),
			arity(line("LATENCY"), line("LATENCY", "LATEST", "x"), line("LATENCY", "HISTORY"),
				line("LATENCY", "HISTORY", "a", "b"), line("LATENCY", "HELP", "x"),
				line("LATENCY", "DOCTOR", "x"), line("LATENCY", "GRAPH"), line("LATENCY", "GRAPH", "a", "b")),
		)},
		{"command getkeysandflags", seq(
			do("COMMAND", "GETKEYSANDFLAGS", "SET", "a", "b"),
			do("COMMAND", "GETKEYSANDFLAGS", "SET", "a", "b", "GET"),
			do("COMMAND", "GETKEYSANDFLAGS", "SET", "a", "b", "EX", "10", "get"),
			do("COMMAND", "GETKEYSANDFLAGS", "SET", "a", "get"),
			do("COMMAND", "GETKEYSANDFLAGS", "GET", "a"),
			do("COMMAND", "GETKEYSANDFLAGS", "MSET", "a", "1", "b", "2"),
			do("COMMAND", "GETKEYSANDFLAGS", "RENAME", "a", "b"),
			do("COMMAND", "GETKEYSANDFLAGS", "COPY", "a", "b"),
			do("COMMAND", "GETKEYSANDFLAGS", "DEL", "a", "b", "c"),
			do("COMMAND", "GETKEYSANDFLAGS", "object", "encoding", "a"),
			do("COMMAND", "GETKEYSANDFLAGS", "memory", "usage", "a"),
			do("COMMAND", "GETKEYSANDFLAGS", "PING"),
			do("COMMAND", "GETKEYSANDFLAGS", "nosuch", "a"),
			do("COMMAND", "GETKEYSANDFLAGS", "GET"),
			do("COMMAND", "GETKEYSANDFLAGS", "GET", "a", "b"),
			do("COMMAND", "GETKEYS", "SET", "a", "b"),
			do("COMMAND", "HELP"),
			arity(line("COMMAND", "GETKEYSANDFLAGS"), line("COMMAND", "GETKEYSANDFLAGS", "get")),
		)},
	}
}

// TestMemoryStatsHasRedisFields checks that MEMORY STATS names Redis's
// fields in Redis's order and with Redis's reply types, one db.N map per
// database with keys, in RESP2 and RESP3; the values are each server's own.
func TestMemoryStatsHasRedisFields(t *testing.T) {
	t.Parallel()
	ref := startRedis(t, "--maxmemory", "256mb", "--maxmemory-policy", "allkeys-lru")
	kv := startKVServer(t, "--maxmemory", "256mb")
	shapes := [2]string{}
	for i, s := range []*server{ref, kv} {
		c := dialRaw(t, s.Addr)
		for _, cmd := range [][]string{{"SET", "a", "1"}, {"SELECT", "3"}, {"SET", "b", "2"}} {
			c.Do(cmd...)
		}
		for _, hello := range []string{"2", "3"} {
			c.Do("HELLO", hello)
			r, err := parseReply(c.Do("MEMORY", "STATS"))
			if err != nil {
				t.Fatal(err)
			}
			shapes[i] += replyShape(r) + "\n"
		}
	}
	if shapes[0] != shapes[1] {
		t.Errorf("MEMORY STATS shapes differ:\n redis:    %s\n kvserver: %s", shapes[0], shapes[1])
	}
}

// replyShape writes a reply's types and, for aggregates, its string
// elements at even positions (map keys), leaving numbers out.
func replyShape(r Reply) string {
	var b strings.Builder
	b.WriteByte(r.Type)
	if len(r.Elems) > 0 {
		b.WriteByte('[')
		for i, e := range r.Elems {
			if i%2 == 0 && e.Str != "" {
				b.WriteString(e.Str)
			}
			b.WriteString(replyShape(e))
			b.WriteByte(' ')
		}
		b.WriteByte(']')
	}
	return b.String()
}
