package tests

import (
	"fmt"
	"testing"
)

// TestDifferentialStreams runs the stream family against redis-server:
// arity, ID parsing (explicit, partial, automatic), trimming exact and
// approximate (Redis's node boundaries), ranges, consumer groups with
// their PEL, claiming, XINFO and XSETID, errors and wrong types, in RESP2
// and RESP3. Automatic IDs are compared by type; times within a margin.
func TestDifferentialStreams(t *testing.T) {
	t.Parallel()
	runDifferential(t, streamScripts())
}

// xaddMany adds n entries with IDs <ms>-1 for ms from first, small fields.
func xaddMany(key string, first, n int, extra ...string) []step {
	steps := make([]step, 0, n)
	for i := first; i < first+n; i++ {
		cmd := append([]string{"XADD", key}, extra...)
		cmd = append(cmd, fmt.Sprintf("%d-1", i), "f", fmt.Sprint(i), "g", "v")
		steps = append(steps, do(cmd...))
	}
	return steps
}

// infoMask are XINFO's fields that cannot match: the radix tree's inner
// node count and times.
var infoMask = []string{"radix-tree-nodes", "idle", "seen-time"}

func streamScripts() []script {
	small := func(steps ...any) []step {
		return seq(append([]any{
			do("XADD", "s", "1-1", "a", "1"), do("XADD", "s", "1-2", "b", "2", "c", "3"),
			do("XADD", "s", "2-0", "a", "x"), do("XADD", "s", "5-5", "d", "4"),
		}, steps...)...)
	}
	return []script{
		{"arity", arity(
			line("XADD", "s", "*"), line("XADD", "s", "*", "f"), line("XADD", "s"), line("XLEN"), line("XLEN", "a", "b"),
			line("XRANGE", "s", "-"), line("XREVRANGE", "s", "+"), line("XDEL", "s"), line("XTRIM", "s", "MAXLEN"),
			line("XREAD", "STREAMS", "s"), line("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s"),
			line("XACK", "s", "g"), line("XPENDING", "s"), line("XCLAIM", "s", "g", "c", "0"),
			line("XAUTOCLAIM", "s", "g", "c", "0"), line("XSETID", "s"), line("XGROUP"), line("XINFO"),
			line("XGROUP", "CREATE", "s", "g"), line("XGROUP", "DESTROY", "s"), line("XGROUP", "DESTROY", "s", "g", "x"),
			line("XGROUP", "CREATECONSUMER", "s", "g"), line("XGROUP", "DELCONSUMER", "s", "g"), line("XGROUP", "SETID", "s", "g"),
			line("XGROUP", "HELP", "x"), line("XGROUP", "NOPE"), line("XINFO", "STREAM"), line("XINFO", "GROUPS"),
			line("XINFO", "CONSUMERS", "s"), line("XINFO", "NOPE", "s"), line("XINFO", "HELP", "x"),
		)},
		{"xadd ids", seq(
			typeOnly("XADD", "auto", "*", "f", "v"), do("XLEN", "auto"), do("TYPE", "auto"), do("OBJECT", "ENCODING", "auto"),
			do("XADD", "s", "0-0", "f", "v"), do("EXISTS", "s"), do("XADD", "s", "0", "f", "v"), do("XADD", "s", "0-*", "f", "v"),
			do("XADD", "s", "0-*", "f", "v"), do("XADD", "s", "5", "f", "v"), do("XADD", "s", "5", "f", "v"),
			do("XADD", "s", "5-*", "f", "v"), do("XADD", "s", "4-9", "f", "v"), do("XADD", "s", "6-*", "f", "v"),
			do("XADD", "s", "007-3", "f", "v"), do("XADD", "s", "+", "f", "v"), do("XADD", "s", "-", "f", "v"),
			do("XADD", "s", "1-2-3", "f", "v"), do("XADD", "s", "-5", "f", "v"), do("XADD", "s", "x", "f", "v"),
			do("XADD", "s", "10-", "f", "v"), do("XADD", "s", "18446744073709551615-18446744073709551615", "f", "v"),
			do("XADD", "s", "*", "f", "v"), do("XADD", "s", "18446744073709551615-*", "f", "v"),
			do("XADD", "s2", "18446744073709551615-18446744073709551614", "f", "v"), do("XADD", "s2", "18446744073709551615-*", "f", "v"),
			do("XADD", "s", "20-1", "f"), do("XADD", "s", "20-1", "f", "v", "g"), do("XADD", "s", "20-1", "f", "v", "f", "w"),
			do("XRANGE", "s", "-", "+"), do("XADD", "s3", "NOMKSTREAM", "1-1", "f", "v"), do("EXISTS", "s3"),
			do("XADD", "s", "nomkstream", "30-1", "f", "v"), do("XADD", "s", "MAXLEN"), do("XADD", "s", "MAXLEN", "1", "f", "v"),
			do("SET", "str", "x"), do("XADD", "str", "1-1", "f", "v"), do("XADD", "str", "NOMKSTREAM", "*", "f", "v"),
			do("XADD", "s", "1-1", "f", "v", "g"), do("XLEN", "str"), do("XLEN", "missing"),
		)},
		{"xadd trimming options", seq(
			xaddMany("s", 1, 10),
			do("XADD", "s", "MAXLEN", "5", "11-1", "f", "v"), do("XLEN", "s"), do("XRANGE", "s", "-", "+", "COUNT", "2"),
			do("XADD", "s", "MAXLEN", "=", "3", "12-1", "f", "v"), do("XLEN", "s"),
			do("XADD", "s", "MAXLEN", "-1", "13-1", "f", "v"), do("XADD", "s", "MAXLEN", "x", "13-1", "f", "v"),
			do("XADD", "s", "MAXLEN", "1", "MINID", "1", "13-1", "f", "v"), do("XADD", "s", "MINID", "1", "MAXLEN", "1", "13-1", "f", "v"),
			do("XADD", "s", "LIMIT", "10", "13-1", "f", "v"), do("XADD", "s", "MAXLEN", "1", "LIMIT", "10", "13-1", "f", "v"),
			do("XADD", "s", "MAXLEN", "~", "1", "LIMIT", "-1", "13-1", "f", "v"), do("XADD", "s", "MAXLEN", "~", "1", "LIMIT", "x", "13-1", "f", "v"),
			do("XADD", "s", "MINID", "x", "13-1", "f", "v"), do("XADD", "s", "MINID", "+", "13-1", "f", "v"),
			do("XADD", "s", "MINID", "12", "13-1", "f", "v"), do("XRANGE", "s", "-", "+"),
			do("XADD", "s", "MAXLEN", "~", "1", "14-1", "f", "v"), do("XLEN", "s"),
			do("XADD", "s", "MAXLEN", "~", "1", "LIMIT", "0", "15-1", "f", "v"), do("XLEN", "s"),
			do("XADD", "s", "MAXLEN", "0", "16-1", "f", "v"), do("XLEN", "s"), do("EXISTS", "s"),
			do("XADD", "s", "minid", "~", "100", "17-1", "f", "v"), do("XLEN", "s"),
		)},
		{"approximate trimming by nodes", seq(
			xaddMany("s", 1, 350),
			do("XADD", "s", "MAXLEN", "~", "250", "351-1", "f", "351", "g", "v"), do("XLEN", "s"),
			do("XTRIM", "s", "MAXLEN", "~", "120"), do("XLEN", "s"), do("XTRIM", "s", "MAXLEN", "~", "10"), do("XLEN", "s"),
			do("XTRIM", "s", "MINID", "~", "330"), do("XLEN", "s"), do("XRANGE", "s", "-", "+", "COUNT", "1"),
			do("XTRIM", "s", "MAXLEN", "~", "0", "LIMIT", "5"), do("XLEN", "s"), do("XTRIM", "s", "MAXLEN", "~", "0", "LIMIT", "200"),
			do("XLEN", "s"), do("XTRIM", "s", "MAXLEN", "5"), do("XLEN", "s"), do("XRANGE", "s", "-", "+"),
			masked(0, infoMask, "XINFO", "STREAM", "s"),
			xaddMany("t", 1, 250), do("XDEL", "t", "5-1", "6-1", "150-1"), do("XTRIM", "t", "MAXLEN", "~", "140"), do("XLEN", "t"),
			do("CONFIG", "SET", "stream-node-max-entries", "10"), xaddMany("u", 1, 35),
			do("XTRIM", "u", "MAXLEN", "~", "18"), do("XLEN", "u"), do("XTRIM", "u", "MINID", "~", "27"), do("XLEN", "u"),
			masked(0, infoMask, "XINFO", "STREAM", "u"),
			do("CONFIG", "SET", "stream-node-max-entries", "100"),
			do("CONFIG", "SET", "stream-node-max-bytes", "200"), xaddMany("b", 1, 40),
			do("XTRIM", "b", "MAXLEN", "~", "15"), do("XLEN", "b"), masked(0, infoMask, "XINFO", "STREAM", "b"),
			do("CONFIG", "SET", "stream-node-max-bytes", "4096"),
		)},
		{"xtrim", small(
			do("XTRIM", "missing", "MAXLEN", "x"), do("XTRIM", "s", "MAXLEN", "x"), do("XTRIM", "s", "FOO", "1"),
			do("XTRIM", "s", "MAXLEN", "1", "extra"), do("XTRIM", "s", "LIMIT", "1"), do("XTRIM", "s", "MAXLEN", "-1"),
			do("XTRIM", "s", "MAXLEN", "10"), do("XTRIM", "s", "MINID", "2"), do("XRANGE", "s", "-", "+"),
			do("XTRIM", "s", "MINID", "=", "5-5"), do("XTRIM", "s", "MAXLEN", "0"), do("XLEN", "s"), do("EXISTS", "s"),
			do("SET", "str", "x"), do("XTRIM", "str", "MAXLEN", "1"), do("XTRIM", "str", "bad"),
		)},
		{"xrange and xrevrange", small(
			do("XRANGE", "s", "-", "+"), do("XREVRANGE", "s", "+", "-"), do("XRANGE", "s", "1", "1"), do("XRANGE", "s", "1-2", "2"),
			do("XRANGE", "s", "(1-1", "(5-5"), do("XREVRANGE", "s", "(5-5", "(1-1"), do("XRANGE", "s", "(-", "+"),
			do("XRANGE", "s", "(18446744073709551615-18446744073709551615", "+"), do("XRANGE", "s", "-", "(0-0"),
			do("XRANGE", "s", "(", "+"), do("XRANGE", "s", "((1", "+"), do("XRANGE", "s", "x", "+"), do("XRANGE", "s", "-", "y"),
			do("XRANGE", "s", "-", "+", "COUNT", "2"), do("XREVRANGE", "s", "+", "-", "COUNT", "2"), do("XRANGE", "s", "-", "+", "COUNT", "0"),
			do("XRANGE", "s", "-", "+", "COUNT", "-3"), do("XRANGE", "s", "-", "+", "COUNT"), do("XRANGE", "s", "-", "+", "COUNT", "x"),
			do("XRANGE", "s", "-", "+", "LIMIT", "1"), do("XRANGE", "s", "5", "1"), do("XRANGE", "missing", "-", "+"),
			do("XRANGE", "missing", "-", "+", "COUNT", "0"), do("XRANGE", "s", "(2-0", "+"), do("XRANGE", "s", "2-0", "(2-1"),
			do("SET", "str", "x"), do("XRANGE", "str", "-", "+"), do("XRANGE", "str", "x", "+"), do("XREVRANGE", "str", "+", "-"),
		)},
		{"xdel", small(
			do("XDEL", "s", "1-2", "1-2", "9-9"), do("XLEN", "s"), do("XRANGE", "s", "-", "+"), do("XDEL", "s", "x"),
			do("XDEL", "s", "2-0", "x"), do("XLEN", "s"), do("XDEL", "missing", "x"), do("XDEL", "s", "1-1", "2-0", "5-5"),
			do("XLEN", "s"), do("EXISTS", "s"), do("XADD", "s", "5-5", "f", "v"), do("XADD", "s", "6", "f", "v"),
			do("XRANGE", "s", "-", "+"), masked(0, infoMask, "XINFO", "STREAM", "s"),
			do("SET", "str", "x"), do("XDEL", "str", "1-1"),
		)},
		{"xread", small(
			do("XREAD", "STREAMS", "s", "0"), do("XREAD", "COUNT", "2", "STREAMS", "s", "0-0"), do("XREAD", "STREAMS", "s", "1-2"),
			do("XREAD", "STREAMS", "s", "5-5"), do("XREAD", "STREAMS", "s", "$"), do("XREAD", "STREAMS", "s", "missing", "0", "0"),
			do("XREAD", "STREAMS", "missing", "s", "0", "2"), do("XREAD", "STREAMS", "s", "t", "0"), do("XREAD", "STREAMS", "s", ">"),
			do("XREAD", "STREAMS", "s", "x"), do("XREAD", "STREAMS", "s", "-"), do("XREAD", "COUNT", "x", "STREAMS", "s", "0"),
			do("XREAD", "COUNT", "-1", "STREAMS", "s", "0"), do("XREAD", "GROUP", "g", "c", "STREAMS", "s", "0"),
			do("XREAD", "NOACK", "STREAMS", "s", "0"), do("XREAD", "FOO", "STREAMS", "s", "0"), do("XREAD", "COUNT", "1", "s", "0"),
			do("XREAD", "BLOCK", "x", "STREAMS", "s", "0"), do("XREAD", "BLOCK", "-1", "STREAMS", "s", "0"),
			do("XREAD", "BLOCK", "0", "STREAMS", "s", "0"), do("XREAD", "BLOCK", "10", "STREAMS", "s", "5"),
			do("SET", "str", "x"), do("XREAD", "STREAMS", "s", "str", "0", "0"),
		)},
		{"consumer groups", small(
			do("XGROUP", "CREATE", "s", "g", "0"), do("XGROUP", "CREATE", "s", "g", "0"), do("XGROUP", "CREATE", "missing", "g", "$"),
			do("XGROUP", "CREATE", "m", "g", "$", "MKSTREAM"), do("TYPE", "m"), do("XLEN", "m"), do("XINFO", "GROUPS", "m"),
			do("XGROUP", "CREATE", "s", "g2", "$"), do("XGROUP", "CREATE", "s", "g3", "x"), do("XGROUP", "CREATE", "s", "g3", "-"),
			do("XGROUP", "CREATE", "s", "g3", "0", "FOO"), do("XGROUP", "CREATE", "s", "g3", "0", "ENTRIESREAD", "-2"),
			do("XGROUP", "CREATE", "s", "g3", "0", "ENTRIESREAD", "x"), do("XGROUP", "CREATE", "s", "g3", "1-2", "ENTRIESREAD", "2"),
			do("XGROUP", "CREATE", "s", "g4", "0", "MKSTREAM", "ENTRIESREAD", "1", "MKSTREAM"),
			do("XINFO", "GROUPS", "s"),
			do("XREADGROUP", "GROUP", "g", "alice", "COUNT", "2", "STREAMS", "s", ">"),
			do("XREADGROUP", "GROUP", "g", "bob", "STREAMS", "s", ">"), do("XREADGROUP", "GROUP", "g", "bob", "STREAMS", "s", ">"),
			do("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", "0"), do("XREADGROUP", "GROUP", "g", "alice", "COUNT", "1", "STREAMS", "s", "1-1"),
			do("XREADGROUP", "GROUP", "g", "carol", "STREAMS", "s", "0"), do("XREADGROUP", "GROUP", "nogroup", "c", "STREAMS", "s", ">"),
			do("XREADGROUP", "GROUP", "g", "c", "STREAMS", "missing", ">"), do("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "$"),
			do("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s"), do("XREADGROUP", "COUNT", "1", "STREAMS", "s", ">", "x"),
			do("XREADGROUP", "GROUP", "g3", "c", "NOACK", "STREAMS", "s", ">"),
			do("XINFO", "GROUPS", "s"), masked(2000, infoMask, "XINFO", "CONSUMERS", "s", "g"), do("XINFO", "CONSUMERS", "s", "nope"),
			do("XPENDING", "s", "g"), do("XPENDING", "s", "g3"), do("XPENDING", "s", "nope"), do("XPENDING", "missing", "g"),
			approxInt(2000, "XPENDING", "s", "g", "-", "+", "10"), approxInt(2000, "XPENDING", "s", "g", "-", "+", "10", "alice"),
			approxInt(2000, "XPENDING", "s", "g", "(1-1", "+", "1"), do("XPENDING", "s", "g", "-", "+", "10", "nobody"),
			do("XPENDING", "s", "g", "IDLE", "100000", "-", "+", "10"), do("XPENDING", "s", "g", "IDLE", "x", "-", "+", "10"),
			do("XPENDING", "s", "g", "IDLE", "10", "-", "+"), do("XPENDING", "s", "g", "-", "+"), do("XPENDING", "s", "g", "-", "+", "x"),
			do("XPENDING", "s", "g", "x", "+", "10"), do("XPENDING", "s", "g", "-", "+", "0"), do("XPENDING", "s", "g", "-", "+", "-1"),
			do("XACK", "s", "g", "1-1", "9-9", "1-1"), do("XACK", "s", "g", "x"), do("XACK", "s", "nope", "1-1"), do("XACK", "missing", "g", "1-1"),
			do("XPENDING", "s", "g"), do("XDEL", "s", "1-2"), do("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", "0"),
			do("XINFO", "GROUPS", "s"),
			do("XGROUP", "CREATECONSUMER", "s", "g", "dave"), do("XGROUP", "CREATECONSUMER", "s", "g", "dave"),
			do("XGROUP", "CREATECONSUMER", "s", "nope", "dave"), do("XGROUP", "DELCONSUMER", "s", "g", "bob"),
			do("XGROUP", "DELCONSUMER", "s", "g", "nobody"), do("XGROUP", "DELCONSUMER", "missing", "g", "x"), do("XPENDING", "s", "g"),
			do("XGROUP", "SETID", "s", "g", "0"), do("XGROUP", "SETID", "s", "g", "$", "ENTRIESREAD", "3"), do("XGROUP", "SETID", "s", "g", "x"),
			do("XGROUP", "SETID", "s", "g", "-"), do("XGROUP", "SETID", "s", "g", "0", "FOO", "1"), do("XGROUP", "SETID", "s", "nope", "0"),
			do("XINFO", "GROUPS", "s"), do("XGROUP", "SETID", "s", "g", "0"),
			do("XREADGROUP", "GROUP", "g", "erin", "STREAMS", "s", ">"), do("XPENDING", "s", "g"),
			do("XGROUP", "DESTROY", "s", "g"), do("XGROUP", "DESTROY", "s", "g"), do("XGROUP", "DESTROY", "missing", "g"),
			do("XGROUP", "HELP"), do("XINFO", "HELP"), do("XGROUP", "FOO", "s", "g"), do("XINFO", "GROUPS", "s"),
			do("SET", "str", "x"), do("XGROUP", "CREATE", "str", "g", "0"), do("XREADGROUP", "GROUP", "g", "c", "STREAMS", "str", ">"),
			do("XACK", "str", "g", "1-1"), do("XPENDING", "str", "g"), do("XINFO", "STREAM", "str"), do("XINFO", "GROUPS", "missing"),
		)},
		{"claiming", small(
			do("XGROUP", "CREATE", "s", "g", "0"), do("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", ">"),
			do("XCLAIM", "s", "g", "bob", "0", "1-1", "1-2"), approxInt(2000, "XPENDING", "s", "g", "-", "+", "10"),
			do("XCLAIM", "s", "g", "bob", "0", "1-1", "JUSTID"), do("XCLAIM", "s", "g", "bob", "100000", "1-1"),
			do("XCLAIM", "s", "g", "carol", "0", "2-0", "RETRYCOUNT", "7", "IDLE", "5000"), approxInt(2000, "XPENDING", "s", "g", "-", "+", "10"),
			do("XCLAIM", "s", "g", "carol", "0", "9-9", "FORCE"), do("XCLAIM", "s", "g", "carol", "0", "5-5", "TIME", "1000"),
			do("XADD", "s", "6-0", "z", "z"), do("XCLAIM", "s", "g", "carol", "0", "6-0", "FORCE", "JUSTID"),
			do("XCLAIM", "s", "g", "carol", "0", "6-0", "LASTID", "7-0"), do("XINFO", "GROUPS", "s"),
			do("XCLAIM", "s", "g", "c", "x", "1-1"), do("XCLAIM", "s", "g", "c", "0", "1-1", "IDLE", "x"), do("XCLAIM", "s", "g", "c", "0", "1-1", "TIME", "x"),
			do("XCLAIM", "s", "g", "c", "0", "1-1", "RETRYCOUNT", "x"), do("XCLAIM", "s", "g", "c", "0", "1-1", "LASTID", "x"),
			do("XCLAIM", "s", "g", "c", "0", "1-1", "BOGUS"), do("XCLAIM", "s", "g", "c", "0", "x"), do("XCLAIM", "s", "nope", "c", "0", "1-1"),
			do("XCLAIM", "missing", "g", "c", "x", "1-1"), do("XDEL", "s", "1-2"), do("XCLAIM", "s", "g", "dave", "0", "1-2"),
			do("XPENDING", "s", "g"),
			do("XAUTOCLAIM", "s", "g", "erin", "0", "0", "COUNT", "2"), do("XAUTOCLAIM", "s", "g", "erin", "0", "(1-1", "JUSTID"),
			do("XDEL", "s", "2-0"), do("XAUTOCLAIM", "s", "g", "frank", "0", "-"), do("XAUTOCLAIM", "s", "g", "frank", "100000", "0"),
			do("XAUTOCLAIM", "s", "g", "c", "x", "0"), do("XAUTOCLAIM", "s", "g", "c", "0", "x"), do("XAUTOCLAIM", "s", "g", "c", "0", "0", "COUNT", "0"),
			do("XAUTOCLAIM", "s", "g", "c", "0", "0", "COUNT", "x"), do("XAUTOCLAIM", "s", "g", "c", "0", "0", "BOGUS"),
			do("XAUTOCLAIM", "s", "nope", "c", "0", "0"), do("XAUTOCLAIM", "missing", "g", "c", "0", "0"),
			do("XAUTOCLAIM", "s", "g", "c", "0", "(18446744073709551615-18446744073709551615"), do("XPENDING", "s", "g"),
			do("SET", "str", "x"), do("XCLAIM", "str", "g", "c", "0", "1-1"), do("XAUTOCLAIM", "str", "g", "c", "0", "0"),
		)},
		{"xsetid and xinfo", small(
			do("XSETID", "s", "4-0"), do("XSETID", "s", "5-5"), do("XSETID", "s", "10-0", "ENTRIESADDED", "2"),
			do("XSETID", "s", "10-0", "ENTRIESADDED", "-1"), do("XSETID", "s", "10-0", "MAXDELETEDID", "11-0"),
			do("XSETID", "s", "10-0", "ENTRIESADDED", "9", "MAXDELETEDID", "3-0"), masked(0, infoMask, "XINFO", "STREAM", "s"),
			do("XSETID", "s", "9-0"), do("XSETID", "s", "x"), do("XSETID", "s", "10-0", "FOO"), do("XSETID", "missing", "1-1"),
			do("XADD", "s", "10-0", "f", "v"), do("XADD", "s", "11-0", "f", "v"), typeOnly("XADD", "auto", "*", "f", "v"), // an automatic ID differs by the millisecond between servers
			do("XADD", "e", "1-1", "f", "v"), do("XDEL", "e", "1-1"), masked(0, infoMask, "XINFO", "STREAM", "e"),
			do("XSETID", "e", "0-1"), do("XSETID", "e", "5-0"), do("XREAD", "STREAMS", "e", "0"),
			do("XINFO", "STREAM", "s", "FULL", "COUNT"), do("XINFO", "STREAM", "s", "FULL", "x"), do("XINFO", "STREAM", "s", "LIMIT", "COUNT", "1"),
			do("XINFO", "STREAM", "s", "FULL", "COUNT", "x"), do("XINFO", "STREAM", "missing"), do("XINFO", "CONSUMERS", "missing", "g"),
			do("XGROUP", "CREATE", "s", "g", "0"), do("XREADGROUP", "GROUP", "g", "alice", "COUNT", "2", "STREAMS", "s", ">"),
			masked(3000, infoMask, "XINFO", "STREAM", "s", "FULL"), masked(3000, infoMask, "XINFO", "STREAM", "s", "FULL", "COUNT", "1"),
			masked(3000, infoMask, "XINFO", "STREAM", "s", "FULL", "COUNT", "0"), masked(0, infoMask, "XINFO", "STREAM", "s"),
			do("XINFO", "GROUPS", "s"), masked(3000, infoMask, "XINFO", "STREAM", "m"),
		)},
		{"lag and entries read", seq(
			xaddMany("s", 1, 5), do("XGROUP", "CREATE", "s", "g", "0"), do("XGROUP", "CREATE", "s", "h", "$"),
			do("XGROUP", "CREATE", "s", "i", "3-1"), do("XINFO", "GROUPS", "s"),
			do("XREADGROUP", "GROUP", "g", "c", "COUNT", "2", "STREAMS", "s", ">"), do("XINFO", "GROUPS", "s"),
			do("XDEL", "s", "4-1"), do("XINFO", "GROUPS", "s"), do("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"),
			do("XREADGROUP", "GROUP", "i", "c", "STREAMS", "s", ">"), do("XINFO", "GROUPS", "s"),
			do("XADD", "s", "9-1", "f", "v"), do("XINFO", "GROUPS", "s"), do("XTRIM", "s", "MAXLEN", "1"), do("XINFO", "GROUPS", "s"),
			do("XGROUP", "SETID", "s", "g", "0", "ENTRIESREAD", "0"), do("XINFO", "GROUPS", "s"),
		)},
		{"stream keyspace notifications", []step{
			onOther(do("CONFIG", "SET", "notify-keyspace-events", "Et")),
			do("PSUBSCRIBE", "__keyevent*__:*"),
			onOther(do("XADD", "s", "1-1", "f", "v")), listen(1),
			onOther(do("XADD", "s", "MAXLEN", "1", "2-1", "f", "v")), listen(2),
			onOther(do("XADD", "s", "MAXLEN", "5", "3-1", "f", "v")), listen(1),
			onOther(do("XDEL", "s", "2-1", "9-9")), listen(1), onOther(do("XDEL", "s", "9-9")), quiet(),
			onOther(do("XTRIM", "s", "MAXLEN", "5")), quiet(), onOther(do("XTRIM", "s", "MAXLEN", "0")), listen(1),
			onOther(do("XGROUP", "CREATE", "m", "g", "$", "MKSTREAM")), listen(1),
			onOther(do("XGROUP", "CREATECONSUMER", "m", "g", "c")), listen(1),
			onOther(do("XGROUP", "CREATECONSUMER", "m", "g", "c")), quiet(),
			onOther(do("XADD", "m", "1-1", "f", "v")), listen(1),
			onOther(do("XREADGROUP", "GROUP", "g", "c2", "STREAMS", "m", ">")), listen(1),
			onOther(do("XREADGROUP", "GROUP", "g", "c3", "STREAMS", "m", ">")), quiet(),
			onOther(do("XCLAIM", "m", "g", "c4", "0", "1-1")), listen(1),
			onOther(do("XAUTOCLAIM", "m", "g", "c5", "0", "0")), listen(1),
			onOther(do("XACK", "m", "g", "1-1")), quiet(),
			onOther(do("XGROUP", "SETID", "m", "g", "0")), listen(1),
			onOther(do("XGROUP", "DELCONSUMER", "m", "g", "c")), listen(1),
			onOther(do("XGROUP", "DELCONSUMER", "m", "g", "nobody")), quiet(),
			onOther(do("XGROUP", "DESTROY", "m", "g")), listen(1), onOther(do("XGROUP", "DESTROY", "m", "g")), quiet(),
			onOther(do("XSETID", "m", "5-0")), listen(1),
			onOther(do("CONFIG", "SET", "notify-keyspace-events", "")),
			do("PUNSUBSCRIBE"),
		}},
		{"streams as keys", small(
			do("COPY", "s", "c"), do("XADD", "c", "9-9", "x", "y"), do("XLEN", "s"), do("XLEN", "c"), do("RENAME", "c", "r"),
			do("XRANGE", "r", "-", "+"), do("TYPE", "r"), do("OBJECT", "ENCODING", "r"), unordered("KEYS", "*"),
			scanAll("TYPE", "stream"), do("SET", "str", "x"), do("GET", "s"), do("HSET", "s", "a", "b"), do("LPUSH", "s", "x"),
			do("XGROUP", "CREATE", "e", "g", "0", "MKSTREAM"), do("EXISTS", "e"), do("COPY", "e", "e2"), do("XINFO", "GROUPS", "e2"),
			do("EVAL", "return redis.pcall('xread','block','0','streams','s','$')", "0"),
			do("EVAL", "return redis.pcall('XREADGROUP','GROUP','g','c','BLOCK','10','STREAMS','s','>')", "0"),
			do("EVAL", "return redis.call('xadd','s','10-1','f','v')", "0"), do("EVAL", "return redis.call('xrange','s','-','+','COUNT','1')", "0"),
		)},
		{"big stream", seq(
			xaddMany("s", 1, 1200), do("XLEN", "s"), do("XRANGE", "s", "598", "603"), do("XREVRANGE", "s", "+", "-", "COUNT", "3"),
			do("XDEL", "s", "100-1", "101-1", "700-1"), do("XRANGE", "s", "99", "102"), do("XTRIM", "s", "MINID", "~", "650"),
			do("XLEN", "s"), do("XTRIM", "s", "MAXLEN", "~", "333"), do("XLEN", "s"), masked(0, infoMask, "XINFO", "STREAM", "s"),
			do("XREAD", "COUNT", "2", "STREAMS", "s", "1000"),
		)},
	}
}

// TestDifferentialStreamBlocking compares XREAD and XREADGROUP BLOCK with
// redis-server over several connections: wake-ups by XADD, $ and >,
// COUNT, timeouts, a destroyed group, a deleted key, MULTI and CLIENT
// UNBLOCK.
func TestDifferentialStreamBlocking(t *testing.T) {
	t.Parallel()
	ref := startRedis(t)
	kv := startKVServer(t)
	for _, sc := range streamBlockingScenarios() {
		t.Run(sc.name, func(t *testing.T) {
			want := sc.run(t, ref.Addr)
			got := sc.run(t, kv.Addr)
			if want != got {
				t.Errorf("redis:\n%s\nkvserver:\n%s", want, got)
			}
		})
	}
}

func streamBlockingScenarios() []blockingScenario {
	return []blockingScenario{
		{"XREAD BLOCK wakes on XADD, $ and explicit IDs, one key served", func(t *testing.T, addr string) string {
			tr := newTranscript(t, addr, 4)
			tr.call(3, "XADD", "s", "1-1", "f", "v")
			tr.sendBlocked(0, "XREAD", "BLOCK", "0", "STREAMS", "s", "other", "$", "$")
			tr.sendBlocked(1, "XREAD", "COUNT", "1", "BLOCK", "0", "STREAMS", "s", "1-1")
			tr.sendBlocked(2, "XREAD", "BLOCK", "0", "STREAMS", "other", "0")
			tr.call(3, "XADD", "s", "2-1", "a", "1")
			tr.read(0)
			tr.read(1)
			tr.call(3, "XADD", "other", "3-1", "b", "2")
			tr.read(2)
			tr.send(0, "XREAD", "BLOCK", "100", "STREAMS", "s", "$")
			tr.read(0)
			tr.call(3, "MULTI")
			tr.call(3, "XREAD", "BLOCK", "0", "STREAMS", "s", "$")
			tr.call(3, "EXEC")
			return tr.b.String()
		}},
		{"XREAD BLOCK ignores other types, RESP3 map reply", func(t *testing.T, addr string) string {
			tr := newTranscript(t, addr, 2)
			if _, err := tr.conns[0].Call("HELLO", "3"); err != nil {
				t.Fatal(err)
			}
			tr.sendBlocked(0, "XREAD", "BLOCK", "0", "STREAMS", "k", "0")
			tr.call(1, "SET", "k", "x")
			tr.call(1, "DEL", "k")
			tr.call(1, "XADD", "k", "5-5", "f", "v")
			tr.read(0)
			return tr.b.String()
		}},
		{"XREADGROUP BLOCK > is served new entries in turn", func(t *testing.T, addr string) string {
			tr := newTranscript(t, addr, 3)
			tr.call(2, "XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
			tr.sendBlocked(0, "XREADGROUP", "GROUP", "g", "alice", "BLOCK", "0", "STREAMS", "s", ">")
			tr.sendBlocked(1, "XREADGROUP", "GROUP", "g", "bob", "COUNT", "1", "NOACK", "BLOCK", "0", "STREAMS", "s", ">")
			tr.call(2, "XADD", "s", "1-1", "f", "v")
			tr.read(0)
			tr.call(2, "XADD", "s", "2-1", "f", "w")
			tr.read(1)
			tr.call(2, "XPENDING", "s", "g")
			tr.call(2, "XINFO", "GROUPS", "s")
			tr.send(0, "XREADGROUP", "GROUP", "g", "alice", "BLOCK", "50", "STREAMS", "s", ">")
			tr.read(0)
			tr.call(0, "XREADGROUP", "GROUP", "g", "alice", "BLOCK", "0", "STREAMS", "s", "0")
			return tr.b.String()
		}},
		{"XREADGROUP BLOCK ends with errors when the group or the key goes", func(t *testing.T, addr string) string {
			tr := newTranscript(t, addr, 3)
			tr.call(2, "XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
			tr.sendBlocked(0, "XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">")
			tr.call(2, "XGROUP", "DESTROY", "s", "g")
			tr.read(0)
			tr.call(2, "XGROUP", "CREATE", "s", "g", "$")
			tr.sendBlocked(0, "XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">")
			tr.sendBlocked(1, "XREAD", "BLOCK", "300", "STREAMS", "s", "$")
			tr.call(2, "DEL", "s")
			tr.read(0)
			tr.read(1)
			return tr.b.String()
		}},
		{"CLIENT UNBLOCK ends XREAD BLOCK", func(t *testing.T, addr string) string {
			tr := newTranscript(t, addr, 2)
			id := tr.clientID(0)
			tr.sendBlocked(0, "XREAD", "BLOCK", "0", "STREAMS", "s", "$")
			tr.call(1, "CLIENT", "UNBLOCK", id)
			tr.read(0)
			tr.sendBlocked(0, "XREAD", "BLOCK", "0", "STREAMS", "s", "$")
			tr.call(1, "CLIENT", "UNBLOCK", id, "ERROR")
			tr.read(0)
			return tr.b.String()
		}},
	}
}

// sendBlocked sends a command that blocks on connection i and gives it
// time to reach the server.
func (tr *transcript) sendBlocked(i int, cmd ...string) {
	tr.t.Helper()
	tr.send(i, cmd...)
	settle()
}
