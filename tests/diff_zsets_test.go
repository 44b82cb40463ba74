package tests

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// TestDifferentialZSets runs the sorted-set family against redis-server:
// every command's arity, options, errors, wrong types, empty and missing
// keys, score parsing and printing, both encodings and the conversion
// between them, in RESP2 and RESP3.
func TestDifferentialZSets(t *testing.T) {
	t.Parallel()
	runDifferential(t, zsetScripts())
}

// zaddMany is ZADD key with n members m0..m(n-1), member i scored
// i*step.
func zaddMany(key string, n int, step float64) step {
	cmd := []string{"ZADD", key}
	for i := 0; i < n; i++ {
		cmd = append(cmd, strconv.FormatFloat(float64(i)*step, 'g', -1, 64), fmt.Sprintf("m%d", i))
	}
	return do(cmd...)
}

// lexSet is ZADD key 0 a 0 b ... (equal scores, for lex ranges).
func lexSet(key string, members ...string) step {
	cmd := []string{"ZADD", key}
	for _, m := range members {
		cmd = append(cmd, "0", m)
	}
	return do(cmd...)
}

func zsetScripts() []script {
	small := func(steps ...step) []step {
		return append([]step{do("ZADD", "z", "1", "a", "2", "b", "3", "c", "3", "d", "-1.5", "e")}, steps...)
	}
	big := func(steps ...step) []step {
		return append([]step{zaddMany("z", 300, 0.5)}, steps...)
	}
	lex := func(steps ...step) []step {
		return append([]step{lexSet("l", "a", "b", "c", "d", "e", "f", "g", "aa", "bb", "")}, steps...)
	}
	return []script{
		{"arity", arity(
			line("ZADD", "z", "1"), line("ZADD", "z"), line("ZINCRBY", "z", "1"), line("ZREM", "z"),
			line("ZCARD"), line("ZCARD", "z", "x"), line("ZSCORE", "z"), line("ZMSCORE", "z"),
			line("ZRANK", "z"), line("ZREVRANK", "z", "a", "b"), line("ZCOUNT", "z", "0"), line("ZLEXCOUNT", "z", "-"),
			line("ZRANGE", "z", "0"), line("ZRANGEBYSCORE", "z", "0"), line("ZREVRANGEBYSCORE", "z"),
			line("ZRANGEBYLEX", "z", "-"), line("ZREVRANGEBYLEX", "z"), line("ZREVRANGE", "z", "0"),
			line("ZRANGESTORE", "d", "z", "0"), line("ZREMRANGEBYRANK", "z", "0"), line("ZREMRANGEBYSCORE", "z", "0", "1", "2"),
			line("ZREMRANGEBYLEX", "z"), line("ZUNION", "1"), line("ZINTER"), line("ZDIFF", "1"),
			line("ZUNIONSTORE", "d", "1"), line("ZINTERSTORE", "d"), line("ZDIFFSTORE", "d", "1"), line("ZINTERCARD", "1"),
			line("ZRANDMEMBER"), line("ZPOPMIN"), line("ZPOPMAX"), line("ZMPOP", "1", "z"), line("ZSCAN", "z"),
		)},
		{"zadd options and errors", seq(
			do("ZADD", "z", "1", "a", "2", "b"),
			do("ZADD", "z", "1", "a", "2"),
			do("ZADD", "z", "NX", "XX", "1", "a"),
			do("ZADD", "z", "GT", "LT", "1", "a"),
			do("ZADD", "z", "GT", "NX", "1", "a"),
			do("ZADD", "z", "LT", "NX", "1", "a"),
			do("ZADD", "z", "INCR", "1", "a", "2", "b"),
			do("ZADD", "z", "nx", "ch", "incr"),
			do("ZADD", "z", "x", "a"),
			do("ZADD", "z", "1", "a", "nan", "b"),
			do("ZADD", "z", " 1", "a"),
			do("ZADD", "z", "1 ", "a"),
			do("ZADD", "z", "", "a"),
			do("ZADD", "z", "1e400", "a"),
			do("ZADD", "z", "1e-400", "a"),
			do("ZADD", "z", "0x10", "hex"),
			do("ZADD", "z", "1e-320", "denormal"),
			do("ZADD", "z", "+inf", "pinf", "-inf", "ninf", "Infinity", "pinf2"),
			do("ZADD", "z", "1.", "dot", ".5", "half", "+3", "plus", "-0", "negzero"),
			do("ZRANGE", "z", "0", "-1", "WITHSCORES"),
			do("ZADD", "z", "NX", "10", "a", "10", "new"),
			do("ZADD", "z", "XX", "10", "a", "10", "new2"),
			do("ZADD", "z", "XX", "CH", "11", "a", "11", "new2"),
			do("ZADD", "z", "GT", "CH", "5", "a", "20", "b"),
			do("ZADD", "z", "LT", "CH", "5", "a", "20", "b"),
			do("ZADD", "z", "XX", "GT", "100", "a"),
			do("ZADD", "z", "CH", "5", "a", "5", "a"),
			do("ZADD", "z", "INCR", "2.5", "a"),
			do("ZADD", "z", "INCR", "XX", "1", "nosuch"),
			do("ZADD", "z", "INCR", "NX", "1", "a"),
			do("ZADD", "z", "INCR", "GT", "-1", "a"),
			do("ZADD", "z", "INCR", "LT", "-1", "a"),
			do("ZADD", "z", "INCR", "0", "a"),
			do("ZADD", "z", "INCR", "-inf", "pinf"),
			do("ZSCORE", "z", "pinf"),
			do("ZADD", "missing", "XX", "1", "a"),
			do("ZADD", "missing", "XX", "INCR", "1", "a"),
			do("EXISTS", "missing"),
			do("ZADD", "z", "1", "dup", "2", "dup"),
			do("ZSCORE", "z", "dup"),
			do("ZCARD", "z"),
		)},
		{"zincrby", seq(
			do("ZINCRBY", "z", "1.5", "a"),
			do("ZINCRBY", "z", "1.5", "a"),
			do("ZINCRBY", "z", "x", "a"),
			do("ZINCRBY", "z", "nx", "a"),
			do("ZINCRBY", "z", "inf", "a"),
			do("ZINCRBY", "z", "-inf", "a"),
			do("ZINCRBY", "z", "0.1", "b"),
			do("ZINCRBY", "z", "0.2", "b"),
			do("ZINCRBY", "z", "1e308", "c"),
			do("ZINCRBY", "z", "1e308", "c"),
			do("ZRANGE", "z", "0", "-1", "WITHSCORES"),
		)},
		{"score printing", seq(
			do("ZADD", "z", "0.1", "a", "1e17", "b", "123456789012345678", "c", "1e-5", "d", "3.0", "e",
				"4503599627370496", "f", "4503599627370495", "g", "-4503599627370495", "h", "1.5e300", "i",
				"0.30000000000000004", "j", "2.5e-310", "k", "100", "l", "-0.0", "m"),
			do("ZRANGE", "z", "0", "-1", "WITHSCORES"),
			do("ZSCORE", "z", "a"), do("ZSCORE", "z", "b"), do("ZSCORE", "z", "m"),
			do("ZMSCORE", "z", "a", "nosuch", "c", "d"),
			do("ZSCAN", "z", "0"),
			do("ZPOPMAX", "z"),
			do("ZPOPMIN", "z", "2"),
		)},
		{"read commands", small(
			do("ZCARD", "z"), do("ZCARD", "nosuch"),
			do("ZSCORE", "z", "c"), do("ZSCORE", "z", "x"), do("ZSCORE", "nosuch", "x"),
			do("ZMSCORE", "z", "a", "x", "e"), do("ZMSCORE", "nosuch", "a", "b"),
			do("ZRANK", "z", "a"), do("ZRANK", "z", "e"), do("ZRANK", "z", "d"), do("ZRANK", "z", "x"), do("ZRANK", "nosuch", "x"),
			do("ZREVRANK", "z", "a"), do("ZREVRANK", "z", "e"), do("ZREVRANK", "z", "x"),
			do("ZCOUNT", "z", "-inf", "+inf"), do("ZCOUNT", "z", "(1", "3"), do("ZCOUNT", "z", "1", "(3"),
			do("ZCOUNT", "z", "3", "1"), do("ZCOUNT", "z", "(3", "3"), do("ZCOUNT", "z", "x", "1"),
			do("ZCOUNT", "z", "1", "nan"), do("ZCOUNT", "z", "(", "3"), do("ZCOUNT", "z", "", "3"),
			do("ZCOUNT", "z", " 1", "3"), do("ZCOUNT", "z", "1 ", "3"), do("ZCOUNT", "z", "((1", "3"),
			do("ZCOUNT", "z", "-1e400", "1e400"), do("ZCOUNT", "nosuch", "0", "1"), do("ZCOUNT", "nosuch", "x", "1"),
			do("ZCOUNT", "z", "0x1", "inf"), do("ZCOUNT", "z", "-INFINITY", "(2"),
		)},
		{"zrange by rank", small(
			do("ZRANGE", "z", "0", "-1"), do("ZRANGE", "z", "0", "-1", "WITHSCORES"),
			do("ZRANGE", "z", "1", "2"), do("ZRANGE", "z", "-2", "-1"), do("ZRANGE", "z", "-100", "100"),
			do("ZRANGE", "z", "3", "1"), do("ZRANGE", "z", "10", "20"), do("ZRANGE", "z", "0", "-10"),
			do("ZRANGE", "z", "0", "-1", "REV"), do("ZRANGE", "z", "0", "1", "REV", "WITHSCORES"),
			do("ZRANGE", "z", "x", "1"), do("ZRANGE", "z", "0", "1.5"),
			do("ZRANGE", "z", "0", "1", "LIMIT", "0", "1"), do("ZRANGE", "z", "0", "1", "LIMIT", "x", "1"),
			do("ZRANGE", "z", "0", "1", "LIMIT", "0"), do("ZRANGE", "z", "0", "1", "bogus"),
			do("ZRANGE", "z", "0", "1", "REV", "REV"), do("ZRANGE", "z", "0", "1", "BYSCORE", "BYLEX"),
			do("ZREVRANGE", "z", "0", "-1"), do("ZREVRANGE", "z", "0", "1", "WITHSCORES"),
			do("ZREVRANGE", "z", "0", "1", "REV"), do("ZREVRANGE", "z", "0", "1", "BYSCORE"),
			do("ZRANGE", "nosuch", "0", "-1"), do("ZRANGE", "nosuch", "x", "-1"),
		)},
		{"zrange by score", small(
			do("ZRANGE", "z", "-inf", "+inf", "BYSCORE"), do("ZRANGE", "z", "(1", "3", "BYSCORE", "WITHSCORES"),
			do("ZRANGE", "z", "3", "1", "BYSCORE", "REV"), do("ZRANGE", "z", "(3", "-inf", "BYSCORE", "REV", "WITHSCORES"),
			do("ZRANGE", "z", "-inf", "inf", "BYSCORE", "LIMIT", "1", "2"), do("ZRANGE", "z", "-inf", "inf", "BYSCORE", "LIMIT", "1", "-1"),
			do("ZRANGE", "z", "-inf", "inf", "BYSCORE", "LIMIT", "-1", "2"), do("ZRANGE", "z", "-inf", "inf", "BYSCORE", "LIMIT", "10", "2"),
			do("ZRANGE", "z", "-inf", "inf", "BYSCORE", "LIMIT", "0", "0"), do("ZRANGE", "z", "inf", "-inf", "BYSCORE", "REV", "LIMIT", "1", "3"),
			do("ZRANGE", "z", "x", "1", "BYSCORE"), do("ZRANGE", "z", "1", "x", "BYSCORE", "LIMIT", "x", "1"),
			do("ZRANGEBYSCORE", "z", "-inf", "+inf"), do("ZRANGEBYSCORE", "z", "1", "3", "WITHSCORES", "LIMIT", "1", "5"),
			do("ZRANGEBYSCORE", "z", "1", "3", "REV"), do("ZRANGEBYSCORE", "z", "1", "3", "BYSCORE"), do("ZRANGEBYSCORE", "z", "1", "3", "LIMIT", "1"),
			do("ZREVRANGEBYSCORE", "z", "+inf", "-inf"), do("ZREVRANGEBYSCORE", "z", "3", "(1", "WITHSCORES"),
			do("ZREVRANGEBYSCORE", "z", "1", "3"), do("ZREVRANGEBYSCORE", "z", "+inf", "-inf", "LIMIT", "2", "2"),
			do("ZRANGEBYSCORE", "nosuch", "0", "1"), do("ZRANGEBYSCORE", "nosuch", "a", "1"),
		)},
		{"lex ranges", lex(
			do("ZRANGE", "l", "-", "+", "BYLEX"), do("ZRANGE", "l", "[b", "(e", "BYLEX"), do("ZRANGE", "l", "(a", "[bb", "BYLEX"),
			do("ZRANGE", "l", "+", "-", "BYLEX", "REV"), do("ZRANGE", "l", "[e", "[b", "BYLEX", "REV", "LIMIT", "1", "2"),
			do("ZRANGE", "l", "-", "+", "BYLEX", "WITHSCORES"), do("ZRANGE", "l", "a", "+", "BYLEX"), do("ZRANGE", "l", "[a", "+x", "BYLEX"),
			do("ZRANGE", "l", "[", "[c", "BYLEX"), do("ZRANGE", "l", "(", "[c", "BYLEX"), do("ZRANGE", "l", "-", "-", "BYLEX"),
			do("ZRANGE", "l", "+", "+", "BYLEX"), do("ZRANGE", "l", "[c", "[a", "BYLEX"), do("ZRANGE", "l", "[c", "(c", "BYLEX"),
			do("ZRANGEBYLEX", "l", "-", "+"), do("ZRANGEBYLEX", "l", "-", "+", "LIMIT", "2", "3"), do("ZRANGEBYLEX", "l", "-", "+", "WITHSCORES"),
			do("ZREVRANGEBYLEX", "l", "+", "-"), do("ZREVRANGEBYLEX", "l", "[d", "-", "LIMIT", "0", "2"), do("ZREVRANGEBYLEX", "l", "-", "+"),
			do("ZLEXCOUNT", "l", "-", "+"), do("ZLEXCOUNT", "l", "[b", "[d"), do("ZLEXCOUNT", "l", "(b", "(d"), do("ZLEXCOUNT", "l", "b", "d"),
			do("ZLEXCOUNT", "nosuch", "-", "+"), do("ZLEXCOUNT", "nosuch", "x", "+"),
			do("ZREMRANGEBYLEX", "l", "[b", "(d"), do("ZRANGE", "l", "0", "-1"), do("ZREMRANGEBYLEX", "l", "x", "+"),
			do("ZREMRANGEBYLEX", "l", "-", "+"), do("EXISTS", "l"), do("ZREMRANGEBYLEX", "nosuch", "-", "+"),
		)},
		{"zrangestore", small(
			do("ZRANGESTORE", "d", "z", "0", "2"), do("ZRANGE", "d", "0", "-1", "WITHSCORES"), do("OBJECT", "ENCODING", "d"),
			do("ZRANGESTORE", "d", "z", "(1", "inf", "BYSCORE", "LIMIT", "0", "2"), do("ZRANGE", "d", "0", "-1", "WITHSCORES"),
			do("ZRANGESTORE", "d", "z", "+inf", "-inf", "BYSCORE", "REV"), do("ZRANGE", "d", "0", "-1"),
			do("ZRANGESTORE", "d", "z", "0", "-1", "WITHSCORES"), do("ZRANGESTORE", "d", "z", "0", "-1", "REV"),
			do("ZRANGESTORE", "d", "z", "5", "10"), do("EXISTS", "d"),
			do("SET", "s", "x"), do("ZRANGESTORE", "s", "z", "0", "1"), do("TYPE", "s"),
			do("ZRANGESTORE", "s", "nosuch", "0", "1"), do("EXISTS", "s"), do("ZRANGESTORE", "d", "s", "0", "1"),
			do("ZRANGESTORE", "z", "z", "1", "2"), do("ZRANGE", "z", "0", "-1", "WITHSCORES"),
		)},
		{"zrem and zremrange", small(
			do("ZREM", "z", "a", "x", "a"), do("ZREM", "nosuch", "a"), do("ZCARD", "z"),
			do("ZREMRANGEBYRANK", "z", "0", "0"), do("ZREMRANGEBYRANK", "z", "5", "10"), do("ZREMRANGEBYRANK", "z", "x", "1"),
			do("ZREMRANGEBYRANK", "z", "-1", "-1"), do("ZRANGE", "z", "0", "-1"), do("ZREMRANGEBYRANK", "nosuch", "0", "1"),
			do("ZADD", "z", "1", "a", "5", "f"), do("ZREMRANGEBYSCORE", "z", "(1", "3"), do("ZREMRANGEBYSCORE", "z", "x", "3"),
			do("ZRANGE", "z", "0", "-1"), do("ZREMRANGEBYSCORE", "z", "-inf", "inf"), do("EXISTS", "z"),
			do("ZADD", "z", "1", "a"), do("ZREM", "z", "a"), do("EXISTS", "z"),
		)},
		{"set operations", seq(
			do("ZADD", "a", "1", "x", "2", "y", "3", "z"),
			do("ZADD", "b", "10", "y", "20", "z", "30", "w"),
			do("ZADD", "c", "inf", "x", "-inf", "y"),
			do("ZUNION", "2", "a", "b"), do("ZUNION", "2", "a", "b", "WITHSCORES"),
			do("ZUNION", "2", "a", "b", "WEIGHTS", "2", "0.5", "WITHSCORES"),
			do("ZUNION", "2", "a", "b", "AGGREGATE", "MIN", "WITHSCORES"), do("ZUNION", "2", "a", "b", "AGGREGATE", "max", "WITHSCORES"),
			do("ZUNION", "3", "a", "b", "c", "WITHSCORES"), do("ZUNION", "2", "c", "c", "WITHSCORES"),
			do("ZUNION", "2", "a", "c", "WEIGHTS", "0", "-1", "WITHSCORES"),
			do("ZUNION", "2", "a", "nosuch", "WITHSCORES"), do("ZUNION", "1", "nosuch"),
			do("ZINTER", "2", "a", "b", "WITHSCORES"), do("ZINTER", "3", "a", "b", "c", "WITHSCORES"),
			do("ZINTER", "2", "a", "b", "AGGREGATE", "MAX", "WEIGHTS", "1", "2", "WITHSCORES"),
			do("ZINTER", "2", "a", "nosuch"), do("ZINTER", "2", "a", "c", "AGGREGATE", "min", "WITHSCORES"),
			do("ZDIFF", "2", "a", "b"), do("ZDIFF", "2", "a", "b", "WITHSCORES"), do("ZDIFF", "1", "a", "WITHSCORES"),
			do("ZDIFF", "2", "a", "nosuch", "WITHSCORES"), do("ZDIFF", "2", "nosuch", "a"), do("ZDIFF", "3", "a", "b", "c"),
			do("ZDIFF", "2", "a", "b", "WEIGHTS", "1", "1"), do("ZDIFF", "2", "a", "b", "AGGREGATE", "SUM"),
			do("ZUNION", "0", "a"), do("ZUNION", "-1", "a"), do("ZUNION", "x", "a"), do("ZUNION", "3", "a", "b"),
			do("ZUNION", "2", "a", "b", "WEIGHTS", "1"), do("ZUNION", "2", "a", "b", "WEIGHTS", "1", "x"),
			do("ZUNION", "2", "a", "b", "AGGREGATE", "avg"), do("ZUNION", "2", "a", "b", "AGGREGATE"),
			do("ZUNION", "2", "a", "b", "bogus"), do("ZUNION", "2", "a", "b", "WITHSCORES", "WITHSCORES"),
			do("ZUNIONSTORE", "d", "2", "a", "b"), do("ZRANGE", "d", "0", "-1", "WITHSCORES"), do("OBJECT", "ENCODING", "d"),
			do("ZUNIONSTORE", "d", "2", "a", "b", "WITHSCORES"), do("ZINTERSTORE", "d", "2", "a", "b", "WEIGHTS", "2", "3"),
			do("ZRANGE", "d", "0", "-1", "WITHSCORES"), do("ZINTERSTORE", "d", "2", "a", "nosuch"), do("EXISTS", "d"),
			do("ZDIFFSTORE", "d", "2", "a", "b"), do("ZRANGE", "d", "0", "-1", "WITHSCORES"),
			do("ZDIFFSTORE", "d", "2", "b", "b"), do("EXISTS", "d"), do("ZUNIONSTORE", "a", "2", "a", "b"), do("ZRANGE", "a", "0", "-1", "WITHSCORES"),
			do("ZUNIONSTORE", "d", "0", "a"), do("ZINTERSTORE", "d", "0", "a"), do("ZDIFFSTORE", "d", "0", "a"), do("ZDIFF", "0", "a"),
			do("ZINTERCARD", "2", "a", "b"), do("ZINTERCARD", "2", "a", "b", "LIMIT", "1"), do("ZINTERCARD", "2", "a", "b", "LIMIT", "0"),
			do("ZINTERCARD", "2", "a", "b", "LIMIT", "-1"), do("ZINTERCARD", "2", "a", "b", "LIMIT", "x"), do("ZINTERCARD", "2", "a", "b", "WITHSCORES"),
			do("ZINTERCARD", "0", "a"), do("ZINTERCARD", "1", "nosuch"), do("ZINTERCARD", "3", "a", "b"),
			do("SET", "s", "x"), do("ZUNION", "2", "a", "s"), do("ZINTER", "2", "s", "nosuch"), do("ZUNION", "2", "a", "s", "bogus"),
			do("ZDIFF", "2", "a", "s"), do("ZINTERCARD", "2", "a", "s"), do("ZUNIONSTORE", "d", "2", "a", "s"), do("ZUNIONSTORE", "s", "1", "a"), do("TYPE", "s"),
		)},
		{"pops", small(
			do("ZPOPMIN", "z"), do("ZPOPMAX", "z"), do("ZPOPMIN", "z", "2"), do("ZPOPMAX", "z", "0"),
			do("ZPOPMIN", "z", "-1"), do("ZPOPMIN", "z", "x"), do("ZPOPMIN", "z", "1", "2"), do("ZPOPMAX", "z", "100"),
			do("EXISTS", "z"), do("ZPOPMIN", "nosuch"), do("ZPOPMIN", "nosuch", "2"), do("ZPOPMIN", "nosuch", "0"),
			do("ZADD", "z", "1", "a", "2", "b", "3", "c"), do("ZADD", "y", "5", "p"),
			do("ZMPOP", "2", "nosuch", "z", "MIN"), do("ZMPOP", "2", "nosuch", "z", "MAX", "COUNT", "10"), do("ZMPOP", "1", "nosuch", "MIN"),
			do("ZMPOP", "2", "z", "y", "MAX"), do("ZMPOP", "0", "z", "MIN"), do("ZMPOP", "x", "z", "MIN"), do("ZMPOP", "-1", "z", "MIN"),
			do("ZMPOP", "2", "y", "MIN"), do("ZMPOP", "5", "y", "MIN"), do("ZMPOP", "1", "y", "LEFT"), do("ZMPOP", "1", "y", "MIN", "COUNT"),
			do("ZMPOP", "1", "y", "MIN", "COUNT", "0"), do("ZMPOP", "1", "y", "MIN", "COUNT", "x"), do("ZMPOP", "1", "y", "MIN", "COUNT", "1", "COUNT", "1"),
			do("ZMPOP", "1", "y", "MIN", "bogus"), do("ZMPOP", "1", "y", "MIN", "COUNT", "2"),
		)},
		{"zrandmember", small(
			random([]string{"a", "b", "c", "d", "e"}, "ZRANDMEMBER", "z"),
			random([]string{"a", "b", "c", "d", "e"}, "ZRANDMEMBER", "z", "3"),
			random([]string{"a", "b", "c", "d", "e"}, "ZRANDMEMBER", "z", "-8"),
			random([]string{"a", "b", "c", "d", "e", "1", "2", "3", "-1.5"}, "ZRANDMEMBER", "z", "-4", "WITHSCORES"),
			random([]string{"a", "b", "c", "d", "e", "1", "2", "3", "-1.5"}, "ZRANDMEMBER", "z", "2", "WITHSCORES"),
			unordered("ZRANDMEMBER", "z", "5"), unordered("ZRANDMEMBER", "z", "50"),
			do("ZRANDMEMBER", "z", "0"), do("ZRANDMEMBER", "z", "0", "WITHSCORES"), do("ZRANDMEMBER", "z", "x"),
			do("ZRANDMEMBER", "z", "1", "bogus"), do("ZRANDMEMBER", "z", "1", "WITHSCORES", "x"),
			do("ZRANDMEMBER", "z", "-9223372036854775808"), do("ZRANDMEMBER", "z", "9223372036854775807", "WITHSCORES"),
			do("ZRANDMEMBER", "nosuch"), do("ZRANDMEMBER", "nosuch", "5"), do("ZRANDMEMBER", "nosuch", "x"),
			do("ZRANDMEMBER", "nosuch", "5", "WITHSCORES"),
		)},
		{"zscan", small(
			do("ZSCAN", "z", "0"), do("ZSCAN", "z", "0", "MATCH", "[a-c]"), do("ZSCAN", "z", "0", "COUNT", "1"),
			do("ZSCAN", "z", "0", "COUNT", "0"), do("ZSCAN", "z", "0", "COUNT", "x"), do("ZSCAN", "z", "0", "TYPE", "zset"),
			do("ZSCAN", "z", "0", "MATCH"), do("ZSCAN", "z", "x"), do("ZSCAN", "z", "-1"),
			do("ZSCAN", "nosuch", "0"), do("ZSCAN", "nosuch", "0", "bogus"), do("ZSCAN", "nosuch", "x"),
		)},
		{"big sets and encodings", big(
			do("OBJECT", "ENCODING", "z"), do("ZCARD", "z"),
			do("ZRANGE", "z", "100", "110", "WITHSCORES"), do("ZRANGE", "z", "-5", "-1", "REV"),
			do("ZRANGE", "z", "(10", "20", "BYSCORE", "LIMIT", "3", "4", "WITHSCORES"),
			do("ZRANGE", "z", "20", "(10", "BYSCORE", "REV", "LIMIT", "3", "4"),
			do("ZRANGEBYSCORE", "z", "50", "inf", "LIMIT", "100", "-1"),
			do("ZRANK", "z", "m150"), do("ZREVRANK", "z", "m150"), do("ZCOUNT", "z", "10", "(100"),
			do("ZINCRBY", "z", "-1000", "m299"), do("ZRANGE", "z", "0", "1", "WITHSCORES"),
			do("ZREMRANGEBYRANK", "z", "10", "19"), do("ZREMRANGEBYSCORE", "z", "(100", "120"),
			do("ZRANGE", "z", "0", "-1", "WITHSCORES"),
			do("ZPOPMAX", "z", "5"), do("ZPOPMIN", "z", "5"),
			scanKeyAll("ZSCAN", "z"), scanKeyAll("ZSCAN", "z", "COUNT", "7"), scanKeyAll("ZSCAN", "z", "MATCH", "m1*"),
			do("ZREMRANGEBYRANK", "z", "0", "-100"), do("OBJECT", "ENCODING", "z"), do("ZCARD", "z"),
			do("ZRANGESTORE", "d", "z", "0", "-1"), do("OBJECT", "ENCODING", "d"),
			do("ZRANGESTORE", "d2", "z", "0", "200"), do("OBJECT", "ENCODING", "d2"),
			do("ZUNIONSTORE", "u", "1", "z"), do("OBJECT", "ENCODING", "u"),
			zaddMany("y", 129, 1), do("OBJECT", "ENCODING", "y"),
			zaddMany("w", 128, 1), do("OBJECT", "ENCODING", "w"), do("ZADD", "w", "1000", strings.Repeat("x", 64)), do("OBJECT", "ENCODING", "w"),
			do("ZADD", "w", "1001", strings.Repeat("x", 65)), do("OBJECT", "ENCODING", "w"),
			do("ZADD", "v", "1", strings.Repeat("v", 65)), do("OBJECT", "ENCODING", "v"),
			do("CONFIG", "SET", "zset-max-listpack-entries", "4"),
			do("ZADD", "c", "1", "a", "2", "b", "3", "c", "4", "d"), do("OBJECT", "ENCODING", "c"),
			do("ZADD", "c", "5", "e"), do("OBJECT", "ENCODING", "c"), do("ZREM", "c", "a", "b", "c"), do("OBJECT", "ENCODING", "c"),
			do("ZUNIONSTORE", "c2", "1", "c"), do("OBJECT", "ENCODING", "c2"),
			do("CONFIG", "SET", "zset-max-listpack-entries", "0"), do("ZADD", "c3", "1", "a"), do("OBJECT", "ENCODING", "c3"),
			unorderedPairs("CONFIG", "GET", "zset-max-listpack-*"),
			do("CONFIG", "SET", "zset-max-listpack-entries", "128"),
		)},
		{"huge set", seq(
			zaddMany("h", 5000, 1), do("ZCARD", "h"), do("OBJECT", "ENCODING", "h"),
			scanKeyAll("ZSCAN", "h"), scanKeyAll("ZSCAN", "h", "COUNT", "1000"), unordered("ZRANDMEMBER", "h", "6000"),
			unordered("ZRANDMEMBER", "h", "5000", "WITHSCORES"),
			do("ZRANGE", "h", "2500", "2510", "WITHSCORES"), do("ZCOUNT", "h", "1000", "(4000"),
			do("ZREMRANGEBYSCORE", "h", "0", "2999"), do("ZCARD", "h"), do("ZRANGE", "h", "0", "2"),
			do("ZUNIONSTORE", "h2", "2", "h", "h", "WEIGHTS", "1", "2"), do("ZRANGE", "h2", "-3", "-1", "WITHSCORES"),
			do("ZINTERCARD", "2", "h", "h2"), do("ZDIFFSTORE", "h3", "2", "h", "h2"), do("EXISTS", "h3"),
		)},
		{"wrong types", seq(
			do("SET", "s", "x"), do("HSET", "hh", "f", "v"),
			do("ZADD", "s", "1", "a"), do("ZADD", "s", "x", "a"), do("ZADD", "s", "XX", "1", "a"), do("ZINCRBY", "s", "1", "a"),
			do("ZREM", "s", "a"), do("ZCARD", "s"), do("ZSCORE", "s", "a"), do("ZMSCORE", "hh", "a"), do("ZRANK", "s", "a"),
			do("ZREVRANK", "s", "a"), do("ZCOUNT", "s", "0", "1"), do("ZCOUNT", "s", "x", "1"), do("ZLEXCOUNT", "s", "-", "+"),
			do("ZRANGE", "s", "0", "1"), do("ZRANGE", "s", "0", "1", "bogus"), do("ZRANGEBYSCORE", "hh", "0", "1"),
			do("ZREVRANGEBYSCORE", "s", "0", "1"), do("ZRANGEBYLEX", "s", "-", "+"), do("ZREVRANGEBYLEX", "s", "+", "-"),
			do("ZREVRANGE", "s", "0", "1"), do("ZREMRANGEBYRANK", "s", "0", "1"), do("ZREMRANGEBYSCORE", "s", "0", "1"),
			do("ZREMRANGEBYLEX", "s", "-", "+"), do("ZREMRANGEBYRANK", "s", "x", "1"),
			do("ZRANDMEMBER", "s"), do("ZRANDMEMBER", "s", "1"), do("ZRANDMEMBER", "s", "x"),
			do("ZPOPMIN", "s"), do("ZPOPMAX", "hh", "2"), do("ZPOPMIN", "s", "0"), do("ZMPOP", "1", "s", "MIN"), do("ZMPOP", "2", "nosuch", "s", "MAX"),
			do("ZSCAN", "s", "0"), do("ZSCAN", "s", "x"),
			do("ZADD", "z", "1", "a"), do("GET", "z"), do("HSET", "z", "f", "v"), do("HGET", "z", "f"), do("TYPE", "z"),
			do("SET", "z", "x"), do("TYPE", "z"),
		)},
		{"transactions and WATCH", seq(
			do("ZADD", "z", "1", "a"), do("WATCH", "z"), onOther(do("ZINCRBY", "z", "1", "a")),
			do("MULTI"), do("ZADD", "z", "5", "b"), do("ZRANGE", "z", "0", "-1", "WITHSCORES"), do("EXEC"),
			do("WATCH", "z"), onOther(do("ZADD", "z", "XX", "2", "a")), do("MULTI"), do("ZCARD", "z"), do("EXEC"),
			do("WATCH", "z"), onOther(do("ZREM", "z", "nosuch")), do("MULTI"), do("ZCARD", "z"), do("EXEC"),
			do("WATCH", "d"), onOther(do("ZUNIONSTORE", "d", "1", "z")), do("MULTI"), do("ZCARD", "d"), do("EXEC"),
			do("WATCH", "z"), onOther(do("ZPOPMIN", "z", "10")), do("MULTI"), do("ZCARD", "z"), do("EXEC"),
			do("MULTI"), do("ZADD", "z", "1", "a", "2", "b"), do("ZADD", "z", "x", "c"), do("ZPOPMAX", "z"),
			do("ZRANGE", "z", "0", "-1", "BYLEX", "WITHSCORES"), do("EXEC"),
			do("MULTI"), do("ZADD", "z"), do("EXEC"),
		)},
		{"keyspace commands on a zset", seq(
			do("ZADD", "z", "1", "a", "2", "b"), do("TYPE", "z"), do("OBJECT", "ENCODING", "z"),
			do("RENAME", "z", "z2"), do("ZRANGE", "z2", "0", "-1", "WITHSCORES"), do("COPY", "z2", "z3"),
			do("MOVE", "z3", "1"), do("SELECT", "1"), do("ZRANGE", "z3", "0", "-1"), do("MOVE", "z3", "0"), do("SELECT", "0"),
			do("OBJECT", "ENCODING", "z3"), do("RENAMENX", "z3", "z2"),
			do("ZADD", "z3", "3", "c"), do("ZCARD", "z2"), do("ZCARD", "z3"), do("EXPIRE", "z3", "100"), do("TTL", "z3"),
			scanAll("TYPE", "zset"), do("DEL", "z2", "z3"), do("EXISTS", "z2"),
		)},
	}
}
