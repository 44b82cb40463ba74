package tests

import (
	"strconv"
	"testing"

	"github.com/kvserver/kvserver/datatype"
	"github.com/kvserver/kvserver/rdb"
)

// TestDifferentialSets runs the set family against redis-server 7.0:
// arity and option errors, wrong types, both encodings and the
// conversions between them (OBJECT ENCODING, *STORE destinations
// included), intsets' ascending order exactly and hashtables' order as a
// multiset, random picks by count, type and membership, and SSCAN to
// completion.
func TestDifferentialSets(t *testing.T) {
	t.Parallel()
	runDifferential(t, setScripts())
}

// members returns prefix0 .. prefix<n-1>.
func members(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = prefix + strconv.Itoa(i)
	}
	return out
}

// cmd joins a command's fixed words and a list of arguments.
func cmd(words []string, rest ...[]string) []string {
	out := append([]string(nil), words...)
	for _, r := range rest {
		out = append(out, r...)
	}
	return out
}

// setScripts are the scripts of TestDifferentialSets.
func setScripts() []script {
	small := []string{"1", "2", "3", "a", "b"}
	ints600 := members("", 600)
	strs3000 := members("member:", 3000)
	return []script{
		{"arity", arity(
			line("SADD"), line("SADD", "s"),
			line("SREM"), line("SREM", "s"),
			line("SMEMBERS"), line("SMEMBERS", "s", "t"),
			line("SISMEMBER", "s"), line("SISMEMBER", "s", "a", "b"),
			line("SMISMEMBER", "s"),
			line("SCARD"), line("SCARD", "s", "t"),
			line("SPOP"), line("SPOP", "s", "1", "2"),
			line("SRANDMEMBER"), line("SRANDMEMBER", "s", "1", "2"),
			line("SMOVE", "a", "b"), line("SMOVE", "a", "b", "c", "d"),
			line("SINTER"), line("SINTERCARD", "1"), line("SINTERSTORE", "d"),
			line("SUNION"), line("SUNIONSTORE", "d"),
			line("SDIFF"), line("SDIFFSTORE", "d"),
			line("SSCAN", "s"),
		)},
		{"intset basics and order", []step{
			do("SADD", "s", "5", "-3", "100", "0", "5", "-9223372036854775808", "9223372036854775807"),
			do("OBJECT", "ENCODING", "s"),
			do("SMEMBERS", "s"),
			do("SCARD", "s"),
			do("SISMEMBER", "s", "5"),
			do("SISMEMBER", "s", "05"),
			do("SISMEMBER", "s", "x"),
			do("SMISMEMBER", "s", "5", "x", "0", "-0", "100"),
			do("SMISMEMBER", "nokey", "5", "x"),
			do("SREM", "s", "5", "x", "05", "100"),
			do("SMEMBERS", "s"),
			do("SADD", "s", "+1", "01", "-0", " 1", "9223372036854775808"),
			do("OBJECT", "ENCODING", "s"),
			unordered("SMEMBERS", "s"),
			do("SREM", "s", "+1", "01", "-0", " 1", "9223372036854775808"),
			do("OBJECT", "ENCODING", "s"),
			unordered("SMEMBERS", "s"),
			do("SREM", "s", "-3", "0", "-9223372036854775808", "9223372036854775807"),
			do("EXISTS", "s"),
			do("SREM", "s", "1"),
			do("SCARD", "s"),
			do("SMEMBERS", "nokey"),
			do("SISMEMBER", "nokey", "1"),
		}},
		{"hashtable basics", []step{
			do("SADD", "h", "b", "a", "c", "a"),
			do("OBJECT", "ENCODING", "h"),
			unordered("SMEMBERS", "h"),
			do("SISMEMBER", "h", "a"),
			do("SMISMEMBER", "h", "a", "zz", "c"),
			do("SREM", "h", "a", "zz"),
			do("SCARD", "h"),
			do("SADD", "h", ""),
			do("SISMEMBER", "h", ""),
			do("SREM", "h", "b", "c", ""),
			do("EXISTS", "h"),
		}},
		{"intset conversion by size", []step{
			do(cmd([]string{"SADD", "big"}, ints600[:512])...),
			do("OBJECT", "ENCODING", "big"),
			do("SADD", "big", "512"),
			do("OBJECT", "ENCODING", "big"),
			do(cmd([]string{"SADD", "big"}, ints600)...),
			do("SCARD", "big"),
			scanKeyAll("SSCAN", "big"),
			scanKeyAll("SSCAN", "big", "MATCH", "1*", "COUNT", "7"),
			do(cmd([]string{"SREM", "big"}, ints600[10:])...),
			do("OBJECT", "ENCODING", "big"),
			unordered("SMEMBERS", "big"),
			do("CONFIG", "SET", "set-max-intset-entries", "3"),
			do("CONFIG", "GET", "set-max-intset-entries"),
			do("SADD", "c", "1", "2", "3"),
			do("OBJECT", "ENCODING", "c"),
			do("SADD", "c", "4"),
			do("OBJECT", "ENCODING", "c"),
			do("SADD", "c0", "1", "2", "3", "4"),
			do("OBJECT", "ENCODING", "c0"),
			do("CONFIG", "SET", "set-max-intset-entries", "512"),
		}},
		{"huge hashtable", []step{
			do(cmd([]string{"SADD", "h"}, strs3000)...),
			do("SCARD", "h"),
			do("OBJECT", "ENCODING", "h"),
			unordered("SMEMBERS", "h"),
			scanKeyAll("SSCAN", "h"),
			scanKeyAll("SSCAN", "h", "COUNT", "100"),
			scanKeyAll("SSCAN", "h", "MATCH", "member:1?"),
			do(cmd([]string{"SMISMEMBER", "h"}, strs3000[:20], []string{"nope"})...),
			do(cmd([]string{"SREM", "h"}, strs3000[100:])...),
			do("SCARD", "h"),
			unordered("SMEMBERS", "h"),
			scanKeyAll("SSCAN", "h", "COUNT", "3"),
		}},
		{"wrong types", []step{
			do("SET", "str", "x"),
			do("HSET", "hash", "f", "v"),
			do("SADD", "s", "1"),
			do("SADD", "str", "a"),
			do("SREM", "str", "a"),
			do("SMEMBERS", "str"),
			do("SISMEMBER", "str", "a"),
			do("SMISMEMBER", "hash", "a"),
			do("SCARD", "str"),
			do("SPOP", "str"),
			do("SPOP", "str", "1"),
			do("SPOP", "str", "-1"),
			do("SRANDMEMBER", "str"),
			do("SRANDMEMBER", "str", "2"),
			do("SRANDMEMBER", "str", "x"),
			do("SMOVE", "str", "s", "a"),
			do("SMOVE", "s", "str", "1"),
			do("SMOVE", "s", "str", "nope"),
			do("SMOVE", "missing", "str", "1"),
			do("SINTER", "s", "str"),
			do("SINTER", "missing", "str"),
			do("SINTERCARD", "2", "s", "hash"),
			do("SINTERSTORE", "d", "s", "str"),
			do("SUNION", "s", "missing", "str"),
			do("SUNIONSTORE", "d", "str"),
			do("SDIFF", "missing", "str"),
			do("SDIFFSTORE", "d", "s", "str"),
			do("SSCAN", "str", "0"),
			do("SSCAN", "str", "0", "COUNT", "0"),
			do("SSCAN", "str", "x"),
			do("GET", "s"),
			do("HSET", "s", "f", "v"),
			do("TYPE", "s"),
			do("SCAN", "0", "TYPE", "set"),
			do("EXISTS", "d"),
			do("SET", "s", "now a string"),
			do("TYPE", "s"),
		}},
		{"spop", []step{
			do("SPOP", "nokey"),
			do("SPOP", "nokey", "3"),
			do("SPOP", "nokey", "-1"),
			do("SPOP", "nokey", "x"),
			do("SPOP", "nokey", "0"),
			do(cmd([]string{"SADD", "s"}, small)...),
			do("SPOP", "s", "0"),
			do("SPOP", "s", "-5"),
			randomDistinct(small, "SPOP", "s"),
			do("SCARD", "s"),
			randomDistinct(small, "SPOP", "s", "2"),
			do("SCARD", "s"),
			do("DEL", "s"),
			do("SADD", "i", "3", "1", "2"),
			do("SPOP", "i", "3"),
			do("EXISTS", "i"),
			do("SADD", "i", "3", "1", "2", "x"),
			do("SREM", "i", "x"),
			do("SPOP", "i", "100"),
			do(cmd([]string{"SADD", "big"}, ints600)...),
			do("OBJECT", "ENCODING", "big"),
			randomDistinct(ints600, "SPOP", "big", "500"),
			do("SCARD", "big"),
			do("OBJECT", "ENCODING", "big"),
			do(cmd([]string{"SADD", "h"}, strs3000[:50])...),
			randomDistinct(strs3000[:50], "SPOP", "h", "45"),
			do("SCARD", "h"),
			do("OBJECT", "ENCODING", "h"),
			randomDistinct(strs3000[:50], "SPOP", "h", "2"),
			do("SCARD", "h"),
			randomDistinct(strs3000[:50], "SPOP", "h", "10"),
			do("EXISTS", "h"),
			do("SADD", "ttl", "a", "b", "c", "d", "e", "f"),
			do("EXPIRE", "ttl", "100"),
			randomDistinct([]string{"a", "b", "c", "d", "e", "f"}, "SPOP", "ttl", "5"),
			approxInt(2, "TTL", "ttl"),
		}},
		{"srandmember", []step{
			do("SRANDMEMBER", "nokey"),
			do("SRANDMEMBER", "nokey", "5"),
			do("SRANDMEMBER", "nokey", "-5"),
			do("SRANDMEMBER", "nokey", "x"),
			do("SRANDMEMBER", "nokey", "-9223372036854775808"),
			do("SRANDMEMBER", "nokey", "9223372036854775808"),
			do(cmd([]string{"SADD", "s"}, small)...),
			do("SRANDMEMBER", "s", "0"),
			random(small, "SRANDMEMBER", "s"),
			randomDistinct(small, "SRANDMEMBER", "s", "1"),
			randomDistinct(small, "SRANDMEMBER", "s", "2"),
			randomDistinct(small, "SRANDMEMBER", "s", "4"),
			randomDistinct(small, "SRANDMEMBER", "s", "5"),
			unordered("SRANDMEMBER", "s", "50"),
			random(small, "SRANDMEMBER", "s", "-20"),
			random(small, "SRANDMEMBER", "s", "-1"),
			do("SADD", "i", "3", "1", "2"),
			do("SRANDMEMBER", "i", "3"),
			do("SRANDMEMBER", "i", "30"),
			randomDistinct([]string{"1", "2", "3"}, "SRANDMEMBER", "i", "2"),
			do(cmd([]string{"SADD", "h"}, strs3000[:200])...),
			randomDistinct(strs3000[:200], "SRANDMEMBER", "h", "10"),
			randomDistinct(strs3000[:200], "SRANDMEMBER", "h", "150"),
			random(strs3000[:200], "SRANDMEMBER", "h", "-300"),
			do("SCARD", "h"),
		}},
		{"smove", []step{
			do("SMOVE", "nokey", "d", "a"),
			do("SADD", "src", "1", "2", "a"),
			do("SMOVE", "src", "d", "nope"),
			do("EXISTS", "d"),
			do("SMOVE", "src", "d", "1"),
			do("OBJECT", "ENCODING", "d"),
			do("SMOVE", "src", "d2", "a"),
			do("OBJECT", "ENCODING", "d2"),
			do("SMOVE", "src", "src", "2"),
			do("SMOVE", "src", "src", "9"),
			do("SADD", "d", "2"),
			do("SMOVE", "src", "d", "2"),
			do("EXISTS", "src"),
			do("SMEMBERS", "d"),
			do("SMOVE", "d", "d2", "1"),
			unordered("SMEMBERS", "d2"),
			do("OBJECT", "ENCODING", "d2"),
		}},
		{"sinter and sintercard", []step{
			do("SADD", "a", "1", "2", "3", "4", "x"),
			do("SADD", "b", "4", "3", "2", "9"),
			do("SADD", "c", "2", "3", "4", "5"),
			do("SADD", "h", "x", "y", "3"),
			do("SINTER", "a", "b", "c"),
			do("SINTER", "b", "c"),
			do("SINTER", "c", "b"),
			unordered("SINTER", "a"),
			unordered("SINTER", "a", "h"),
			do("SINTER", "a", "missing"),
			do("SINTER", "missing", "a"),
			do("SINTER", "b", "b"),
			do("SINTERCARD", "3", "a", "b", "c"),
			do("SINTERCARD", "3", "a", "b", "c", "LIMIT", "1"),
			do("SINTERCARD", "3", "a", "b", "c", "LIMIT", "0"),
			do("SINTERCARD", "3", "a", "b", "c", "limit", "100"),
			do("SINTERCARD", "2", "a", "missing"),
			do("SINTERCARD", "1", "a"),
			do("SINTERCARD", "0", "a"),
			do("SINTERCARD", "x", "a"),
			do("SINTERCARD", "-1", "a"),
			do("SINTERCARD", "3", "a", "b"),
			do("SINTERCARD", "1", "a", "LIMIT"),
			do("SINTERCARD", "1", "a", "LIMIT", "-1"),
			do("SINTERCARD", "1", "a", "LIMIT", "x"),
			do("SINTERCARD", "1", "a", "FOO", "1"),
			do("SINTERCARD", "1", "a", "LIMIT", "1", "LIMIT", "2"),
			do("SINTERSTORE", "d", "a", "b"),
			do("OBJECT", "ENCODING", "d"),
			do("SMEMBERS", "d"),
			do("SINTERSTORE", "d", "a", "h"),
			do("OBJECT", "ENCODING", "d"),
			do("SINTERSTORE", "d", "h", "h"),
			do("OBJECT", "ENCODING", "d"),
			do("SET", "str", "x"),
			do("EXPIRE", "str", "100"),
			do("SINTERSTORE", "str", "a", "b"),
			do("TTL", "str"),
			do("TYPE", "str"),
			do("SINTERSTORE", "str", "a", "missing"),
			do("EXISTS", "str"),
			do("SINTERSTORE", "a", "a", "b"),
			do("SMEMBERS", "a"),
		}},
		{"sunion and sdiff", []step{
			do("SADD", "a", "3", "1", "2"),
			do("SADD", "b", "2", "5", "4"),
			do("SADD", "h", "x", "1"),
			do("SUNION", "a", "b"),
			do("SUNION", "a", "missing", "b"),
			do("SUNION", "missing"),
			unordered("SUNION", "a", "h"),
			do("SDIFF", "a", "b"),
			do("SDIFF", "a", "missing"),
			do("SDIFF", "missing", "a"),
			do("SDIFF", "a", "a"),
			do("SDIFF", "a", "b", "a"),
			do("SDIFF", "h", "h"),
			do("SDIFF", "h", "a"),
			do("SUNIONSTORE", "d", "a", "b"),
			do("OBJECT", "ENCODING", "d"),
			do("SMEMBERS", "d"),
			do("SUNIONSTORE", "d", "a", "h"),
			do("OBJECT", "ENCODING", "d"),
			do("SUNIONSTORE", "d", "missing"),
			do("EXISTS", "d"),
			do("SDIFFSTORE", "d", "a", "b"),
			do("SMEMBERS", "d"),
			do("OBJECT", "ENCODING", "d"),
			do("SDIFFSTORE", "d", "a", "a"),
			do("EXISTS", "d"),
			// One small set minus a big one: the first algorithm only adds
			// the survivors (an intset); a big first set minus a small
			// one: the second adds the whole first set (a hashtable past
			// 512 members) before removing.
			do(cmd([]string{"SADD", "big"}, ints600)...),
			do("SADD", "few", "1", "2", "700"),
			do("SDIFFSTORE", "d", "few", "big"),
			do("OBJECT", "ENCODING", "d"),
			do("SMEMBERS", "d"),
			do(cmd([]string{"SADD", "many"}, ints600[:520], []string{"x"})...),
			do(cmd([]string{"SADD", "nearly"}, ints600[10:520])...),
			do("SDIFFSTORE", "d", "many", "nearly"),
			do("OBJECT", "ENCODING", "d"),
			unordered("SMEMBERS", "d"),
			do("SDIFFSTORE", "d", "many", "nearly", "missing"),
			do("OBJECT", "ENCODING", "d"),
			do("SUNIONSTORE", "d", "big", "few"),
			do("OBJECT", "ENCODING", "d"),
			do("SCARD", "d"),
		}},
		{"sscan", []step{
			do("SSCAN", "nokey", "0"),
			do("SSCAN", "nokey", "0", "COUNT", "0"),
			do("SSCAN", "nokey", "x"),
			do("SADD", "i", "10", "2", "33", "-4"),
			do("SSCAN", "i", "0"),
			do("SSCAN", "i", "123"),
			do("SSCAN", "i", "0", "MATCH", "3*"),
			do("SSCAN", "i", "0", "COUNT", "1"),
			do("SSCAN", "i", "0", "COUNT", "0"),
			do("SSCAN", "i", "0", "COUNT", "x"),
			do("SSCAN", "i", "0", "TYPE", "set"),
			do("SSCAN", "i", "0", "MATCH"),
			do("SSCAN", "i", "0", "foo", "bar"),
			do("SSCAN", "i", "-1"),
			do("SADD", "h", "a", "b", "c"),
			scanKeyAll("SSCAN", "h"),
			scanKeyAll("SSCAN", "h", "MATCH", "[ab]"),
			scanKeyAll("SSCAN", "h", "TYPE", "set"),
		}},
		{"watch sees set writes", []step{
			do("SADD", "s", "a"),
			do("WATCH", "s"),
			onOther(do("SADD", "s", "a")),
			do("MULTI"),
			do("SCARD", "s"),
			do("EXEC"),
			do("WATCH", "s"),
			onOther(do("SADD", "s", "b")),
			do("MULTI"),
			do("SCARD", "s"),
			do("EXEC"),
			do("WATCH", "s"),
			onOther(do("SREM", "s", "nope")),
			do("MULTI"),
			do("SCARD", "s"),
			do("EXEC"),
		}},
		{"keyspace notifications of set commands", []step{
			onOther(do("CONFIG", "SET", "notify-keyspace-events", "KEA")),
			do("PSUBSCRIBE", "__key*__:*"),
			onOther(do("SADD", "s", "1", "2")),
			listen(2),
			onOther(do("SADD", "s", "1")),
			onOther(do("SREM", "s", "nope")),
			quiet(),
			onOther(do("SREM", "s", "1")),
			listen(2),
			onOther(do("SREM", "s", "2")),
			listen(4),
			onOther(do("SADD", "a", "1", "2", "3")),
			onOther(do("SPOP", "a", "0")),
			onOther(do("SPOP", "a", "3")),
			listen(6),
			onOther(do("SADD", "a", "1")),
			onOther(do("SPOP", "a")),
			listen(6),
			onOther(do("SADD", "a", "1")),
			onOther(do("SMOVE", "a", "b", "1")),
			listen(8),
			onOther(do("SADD", "c", "5")),
			onOther(do("SINTERSTORE", "d", "b", "c")),
			listen(2),
			onOther(do("SUNIONSTORE", "d", "b", "c")),
			listen(2),
			onOther(do("SDIFFSTORE", "d", "b", "b")),
			listen(2),
			onOther(do("SINTERSTORE", "d", "b", "missing")),
			quiet(),
			onOther(do("SMOVE", "b", "c", "1")),
			listen(6),
			onOther(do("CONFIG", "SET", "notify-keyspace-events", "")),
			do("PUNSUBSCRIBE"),
		}},
		{"set values through keyspace commands", []step{
			do("SADD", "s", "1", "2", "x"),
			do("COPY", "s", "c"),
			do("SADD", "c", "3"),
			unordered("SMEMBERS", "s"),
			unordered("SMEMBERS", "c"),
			do("RENAME", "c", "r"),
			do("OBJECT", "ENCODING", "r"),
			do("TYPE", "r"),
			do("SADD", "i", "1", "2"),
			do("MOVE", "i", "1"),
			do("SELECT", "1"),
			do("SMEMBERS", "i"),
			do("OBJECT", "ENCODING", "i"),
			do("SELECT", "0"),
		}},
	}
}

// TestCompareRandomCatchesWrongPicks pins what the random comparison
// rejects: another count, a non-member, a repeat where picks must differ,
// another reply type, and a null against a member.
func TestCompareRandomCatchesWrongPicks(t *testing.T) {
	abc := []string{"a", "b", "c"}
	arr := func(elems ...string) []byte {
		out := "*" + strconv.Itoa(len(elems)) + "\r\n"
		for _, e := range elems {
			out += bulk(e)
		}
		return []byte(out)
	}
	for _, tc := range []struct {
		name     string
		distinct bool
		a, b     []byte
		ok       bool
	}{
		{"same picks in another order", true, arr("a", "b"), arr("b", "a"), true},
		{"repeats allowed", false, arr("a", "a", "a"), arr("c", "b", "c"), true},
		{"another count", false, arr("a", "b"), arr("a"), false},
		{"a non-member", false, arr("a"), arr("z"), false},
		{"a repeat", true, arr("a", "b"), arr("c", "c"), false},
		{"a set against an array", false, []byte("~1\r\n$1\r\na\r\n"), arr("a"), false},
		{"single members", false, []byte(bulk("a")), []byte(bulk("c")), true},
		{"null against a member", false, []byte("_\r\n"), []byte(bulk("a")), false},
	} {
		st := random(abc)
		if tc.distinct {
			st = randomDistinct(abc)
		}
		if why := compareReplies(st, tc.a, tc.b); (why == "") != tc.ok {
			t.Errorf("%s: compareReplies = %q, want ok=%v", tc.name, why, tc.ok)
		}
	}
}

// TestDifferentialSetDumpRestore pins DUMP of intsets byte for byte
// (Redis's intset blob at each width, LZF-compressed when long) and
// RESTORE of both encodings: payloads kvserver's rdb package writes load
// in redis-server with the same members and encodings.
func TestDifferentialSetDumpRestore(t *testing.T) {
	t.Parallel()
	payload := func(members ...string) string {
		s := datatype.NewSet()
		for _, m := range members {
			s.Add([]byte(m), datatype.SetLimits{MaxIntsetEntries: 512})
		}
		p, err := rdb.Dump(rdb.Value{Object: s})
		if err != nil {
			t.Fatal(err)
		}
		return string(p)
	}
	ints600 := members("", 600)
	runDifferential(t, []script{
		{"dump intsets", []step{
			do("SADD", "w2", "1", "-5", "300"),
			do("DUMP", "w2"),
			do("SADD", "w4", "1", "70000"),
			do("DUMP", "w4"),
			do("SADD", "w8", "-1", "9223372036854775807"),
			do("DUMP", "w8"),
			do(cmd([]string{"SADD", "long"}, ints600[:300])...),
			do("DUMP", "long"),
			do("SREM", "w4", "70000"),
			do("DUMP", "w4"),
			do("DUMP", "missing"),
		}},
		{"restore sets", []step{
			do("RESTORE", "i", "0", payload("3", "1", "2")),
			do("OBJECT", "ENCODING", "i"),
			do("SMEMBERS", "i"),
			do("DUMP", "i"),
			do("RESTORE", "h", "0", payload("a", "b", "1")),
			do("OBJECT", "ENCODING", "h"),
			unordered("SMEMBERS", "h"),
			do("RESTORE", "big", "0", payload(ints600...)),
			do("OBJECT", "ENCODING", "big"),
			do("SCARD", "big"),
			do("CONFIG", "SET", "set-max-intset-entries", "2"),
			do("RESTORE", "i2", "0", payload("3", "1", "2")),
			do("OBJECT", "ENCODING", "i2"),
			do("CONFIG", "SET", "set-max-intset-entries", "512"),
			do("RESTORE", "i", "0", payload("1")),
			do("RESTORE", "i", "0", payload("1"), "REPLACE"),
			do("SMEMBERS", "i"),
		}},
	})
}
