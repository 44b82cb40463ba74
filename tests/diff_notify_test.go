package tests

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestDifferentialContainerEvents pins the keyspace events of the list,
// set and sorted-set commands to Redis 7.0's, in RESP2 and RESP3: which
// commands publish, the event names, their order (a push before the pop
// of LMOVE, "del" after the change that empties a key), and the changes
// that publish nothing.
func TestDifferentialContainerEvents(t *testing.T) {
	t.Parallel()
	runDifferential(t, containerEventScripts())
}

// withKeyEvents wraps steps between enabling the events of classes and a
// PSUBSCRIBE to every keyspace and keyevent channel, and switching them
// off again.
func withKeyEvents(classes string, steps ...step) []step {
	out := []step{
		onOther(do("CONFIG", "SET", "notify-keyspace-events", classes)),
		do("PSUBSCRIBE", "__key*__:*"),
	}
	out = append(out, steps...)
	return append(out, quiet(), onOther(do("CONFIG", "SET", "notify-keyspace-events", "")), do("PUNSUBSCRIBE"))
}

func containerEventScripts() []script {
	return []script{
		{"list events", withKeyEvents("KEA",
			onOther(do("RPUSH", "l", "a", "b", "c", "d", "e")),
			onOther(do("LPUSH", "l", "z")),
			listen(4),
			onOther(do("LPUSHX", "nosuch", "x")),
			onOther(do("RPUSHX", "l", "y")),
			onOther(do("LPUSHX", "l", "y")),
			listen(4),
			onOther(do("LINSERT", "l", "BEFORE", "nope", "Y")),
			onOther(do("LINSERT", "l", "BEFORE", "a", "X")),
			onOther(do("LSET", "l", "0", "Q")),
			listen(4),
			onOther(do("LREM", "l", "0", "nope")),
			onOther(do("LREM", "l", "1", "X")),
			listen(2),
			onOther(do("LPOP", "l")),
			onOther(do("RPOP", "l", "2")),
			onOther(do("LPOP", "l", "0")),
			onOther(do("LPOP", "nosuch")),
			listen(4),
			onOther(do("LTRIM", "l", "0", "-1")),
			onOther(do("LTRIM", "nosuch", "0", "-1")),
			listen(2),
			onOther(do("LTRIM", "l", "5", "10")),
			listen(4),
			onOther(do("RPUSH", "s", "a", "b")),
			onOther(do("LMOVE", "s", "d", "LEFT", "RIGHT")),
			listen(6),
			onOther(do("RPOPLPUSH", "s", "s")),
			listen(4),
			onOther(do("LMOVE", "s", "d", "RIGHT", "LEFT")),
			listen(6),
			onOther(do("LMOVE", "nosuch", "d", "RIGHT", "LEFT")),
			onOther(do("SET", "str", "v")),
			onOther(do("LMOVE", "d", "str", "RIGHT", "LEFT")),
			listen(2),
			onOther(do("LMPOP", "2", "nosuch", "d", "LEFT", "COUNT", "1")),
			onOther(do("LMPOP", "2", "nosuch", "d", "RIGHT", "COUNT", "5")),
			listen(6),
			onOther(do("BLPOP", "nosuch", "q", "0.01")),
			onOther(do("RPUSH", "q", "1", "2")),
			onOther(do("BRPOP", "nosuch", "q", "0")),
			onOther(do("BLMPOP", "0", "1", "q", "LEFT", "COUNT", "3")),
			listen(8),
		)},
		{"new lists come before their push", withKeyEvents("KEnl",
			onOther(do("RPUSH", "l", "a")),
			listen(4),
			onOther(do("RPOPLPUSH", "l", "d")),
			listen(6),
		)},
		{"set events", withKeyEvents("KEA",
			onOther(do("SADD", "s", "1", "2", "3", "4")),
			onOther(do("SADD", "s", "1")),
			listen(2),
			onOther(do("SREM", "s", "nope")),
			onOther(do("SREM", "s", "1")),
			listen(2),
			onOther(do("SPOP", "s", "0")),
			onOther(do("SPOP", "nosuch")),
			onOther(do("SPOP", "s", "5")),
			listen(4),
			onOther(do("SADD", "one", "x")),
			onOther(do("SPOP", "one")),
			listen(6),
			onOther(do("SADD", "s1", "a", "b")),
			onOther(do("SADD", "s2", "b", "c")),
			listen(4),
			onOther(do("SMOVE", "s1", "s2", "a")),
			listen(4),
			onOther(do("SMOVE", "s1", "s2", "nope")),
			onOther(do("SMOVE", "s2", "s2", "b")),
			onOther(do("SMOVE", "s1", "s3", "b")),
			listen(6),
			onOther(do("SINTERSTORE", "d", "s2", "nosuch")),
			onOther(do("SUNIONSTORE", "d", "s2", "s3")),
			onOther(do("SINTERSTORE", "d2", "s2", "s3")),
			onOther(do("SDIFFSTORE", "d3", "s2", "s3")),
			listen(6),
			onOther(do("SINTERSTORE", "d", "s2", "nosuch")),
			onOther(do("SDIFFSTORE", "d2", "s2", "s2")),
			listen(4),
		)},
		{"own events in RESP3 come where Redis puts them beside the reply", seq(
			onlyProto(3),
			withKeyEvents("Elszg",
				doN(2, "RPUSH", "l", "a", "b", "c"), doN(2, "LSET", "l", "0", "x"), doN(2, "LINSERT", "l", "BEFORE", "x", "y"),
				doN(2, "LREM", "l", "1", "y"), doN(2, "LTRIM", "l", "0", "-1"), doN(2, "LPOP", "l"),
				doN(3, "LMOVE", "l", "m", "LEFT", "RIGHT"), doN(3, "RPOP", "l", "5"), doN(3, "LMPOP", "1", "m", "LEFT"),
				doN(2, "SADD", "s", "a", "b"), doN(3, "SREM", "s", "a", "b"),
				doN(2, "ZADD", "z", "1", "a", "2", "b"), doN(2, "ZINCRBY", "z", "1", "a"), doN(2, "ZREM", "z", "a"),
				doN(3, "ZPOPMIN", "z"), doN(2, "ZADD", "z", "1", "a", "2", "b"), doN(2, "BZPOPMAX", "z", "0"),
				doN(3, "BZMPOP", "0", "1", "z", "MIN"), doN(2, "ZADD", "z", "1", "a"), doN(2, "ZRANGESTORE", "d", "z", "0", "-1"),
				doN(2, "ZUNIONSTORE", "d", "1", "z"), doN(3, "ZREMRANGEBYSCORE", "z", "-inf", "+inf"),
				doN(2, "ZDIFFSTORE", "d", "1", "z"),
			),
		)},
		{"sorted set events", withKeyEvents("KEA",
			onOther(do("ZADD", "z", "1", "a", "2", "b", "3", "c")),
			onOther(do("ZADD", "z", "1", "a")),
			onOther(do("ZADD", "z", "NX", "9", "a")),
			onOther(do("ZADD", "z", "XX", "9", "nope")),
			listen(2),
			onOther(do("ZADD", "z", "CH", "5", "a")),
			onOther(do("ZADD", "z", "INCR", "1", "a")),
			onOther(do("ZINCRBY", "z", "1", "b")),
			onOther(do("ZINCRBY", "z", "0", "b")),
			listen(6),
			onOther(do("ZADD", "z", "LT", "100", "a")),
			onOther(do("ZADD", "z", "GT", "100", "a")),
			onOther(do("ZINCRBY", "z", "-inf", "b")),
			onOther(do("ZINCRBY", "z", "+inf", "b")),
			listen(4),
			onOther(do("ZREM", "z", "nope")),
			onOther(do("ZREM", "z", "b", "nope")),
			listen(2),
			onOther(do("ZADD", "z", "10", "x", "11", "y", "12", "w")),
			onOther(do("ZREMRANGEBYSCORE", "z", "10", "10")),
			onOther(do("ZREMRANGEBYSCORE", "z", "1000", "2000")),
			onOther(do("ZREMRANGEBYRANK", "z", "0", "0")),
			onOther(do("ZREMRANGEBYRANK", "z", "50", "60")),
			listen(6),
			onOther(do("ZADD", "lx", "0", "a", "0", "b", "0", "c")),
			onOther(do("ZREMRANGEBYLEX", "lx", "[a", "[b")),
			onOther(do("ZREMRANGEBYLEX", "lx", "-", "+")),
			listen(8),
			onOther(do("ZPOPMIN", "z")),
			onOther(do("ZPOPMAX", "z", "0")),
			onOther(do("ZPOPMAX", "nosuch")),
			listen(2),
			onOther(do("ZPOPMAX", "z", "10")),
			listen(4),
			onOther(do("ZADD", "z1", "1", "a", "2", "b")),
			onOther(do("ZADD", "z2", "2", "b", "3", "c")),
			listen(4),
			onOther(do("ZUNIONSTORE", "d", "2", "z1", "z2")),
			onOther(do("ZINTERSTORE", "d", "2", "z1", "z2", "WEIGHTS", "2", "3")),
			onOther(do("ZDIFFSTORE", "d", "2", "z1", "z1")),
			onOther(do("ZDIFFSTORE", "d", "2", "z1", "z1")),
			onOther(do("ZDIFFSTORE", "d", "2", "z1", "z2")),
			listen(8),
			onOther(do("ZRANGESTORE", "d2", "z1", "0", "-1")),
			onOther(do("ZRANGESTORE", "d2", "z1", "5", "6")),
			onOther(do("ZRANGESTORE", "d2", "z1", "5", "6")),
			onOther(do("ZRANGESTORE", "d2", "nosuch", "0", "-1")),
			listen(4),
			onOther(do("ZMPOP", "2", "nosuch", "z1", "MIN")),
			onOther(do("ZMPOP", "2", "nosuch", "z1", "MAX", "COUNT", "5")),
			listen(6),
			onOther(do("BZPOPMIN", "nosuch", "z2", "0")),
			onOther(do("BZPOPMAX", "z2", "0.01")),
			onOther(do("BZMPOP", "0", "1", "d", "MAX", "COUNT", "9")),
			listen(10),
		)},
	}
}

// TestDifferentialBlockingZSetPops pins BZPOPMIN, BZPOPMAX and BZMPOP
// (arguments, timeouts, MULTI and scripts, where they do not block) and
// their wake-ups, CLIENT UNBLOCK and the events of served pops to
// redis-server's: scripts first, then scenarios over several connections.
func TestDifferentialBlockingZSetPops(t *testing.T) {
	t.Parallel()
	runDifferential(t, blockingZSetScripts())
	runBlockingScenarios(t, blockingZSetScenarios())
}

func blockingZSetScripts() []script {
	zset := func(steps ...step) []step {
		return append([]step{do("ZADD", "z", "1", "a", "2", "b", "3", "c"), do("ZADD", "y", "5", "p")}, steps...)
	}
	return []script{
		{"arity", arity(
			line("BZPOPMIN"), line("BZPOPMIN", "z"), line("BZPOPMAX"), line("BZPOPMAX", "z"),
			line("BZMPOP"), line("BZMPOP", "0"), line("BZMPOP", "0", "1"), line("BZMPOP", "0", "1", "z"),
		)},
		{"immediate pops", zset(
			do("BZPOPMIN", "nosuch", "z", "0"), do("BZPOPMAX", "z", "y", "0"), do("BZPOPMAX", "y", "z", "0"),
			do("EXISTS", "y"), do("ZADD", "z", "4", "d", "5", "e"), do("BZMPOP", "0", "2", "nosuch", "z", "MIN"), do("BZMPOP", "0", "1", "z", "MAX", "COUNT", "9"),
			do("EXISTS", "z"), do("ZADD", "z", "1.5", "a"), do("BZMPOP", "0.5", "1", "z", "MIN", "COUNT", "1"),
			do("SET", "str", "v"), do("BZPOPMIN", "str", "0"), do("BZPOPMIN", "nosuch", "str", "0"), do("BZMPOP", "0", "1", "str", "MIN"),
			do("LPUSH", "l", "x"), do("BZPOPMAX", "l", "0.01"), do("BLPOP", "z", "y", "0.01"),
		)},
		{"timeouts and bad arguments", zset(
			do("BZPOPMIN", "nosuch", "0.01"), do("BZPOPMAX", "nosuch", "other", "0.01"), do("BZMPOP", "0.01", "2", "nosuch", "other", "MAX"),
			do("BZPOPMIN", "z", "-1"), do("BZPOPMIN", "z", "abc"), do("BZPOPMIN", "z", "inf"), do("BZPOPMIN", "z", "1e400"),
			do("BZPOPMIN", "z", "nan"), do("BZPOPMAX", "z", "-0.0011"), do("BZPOPMAX", "nosuch", ".001"),
			do("BZMPOP", "x", "1", "z", "MIN"), do("BZMPOP", "-1", "1", "z", "MIN"), do("BZMPOP", "0", "0", "z", "MIN"),
			do("BZMPOP", "0", "x", "z", "MIN"), do("BZMPOP", "x", "0", "z", "MIN"), do("BZMPOP", "0", "1", "z", "MIDDLE"),
			do("BZMPOP", "0", "2", "z", "MIN"), do("BZMPOP", "0", "1", "z", "MIN", "COUNT"), do("BZMPOP", "0", "1", "z", "MIN", "COUNT", "0"),
			do("BZMPOP", "x", "1", "z", "MIN", "COUNT", "0"), do("BZMPOP", "0", "1", "z", "MIN", "COUNT", "1", "COUNT", "1"),
			do("BZMPOP", "0", "1", "z", "MIN", "FOO"), do("BZMPOP", "0", "9999999999999999999", "z", "MIN"),
			do("ZRANGE", "z", "0", "-1", "WITHSCORES"),
		)},
		{"inside MULTI and scripts they do not block", zset(
			do("MULTI"), do("BZPOPMIN", "nosuch", "0"), do("BZPOPMAX", "nosuch", "0"), do("BZMPOP", "0", "1", "nosuch", "MIN"),
			do("BZPOPMIN", "z", "0"), do("BZPOPMIN", "nosuch", "-1"), do("EXEC"),
			do("EVAL", "return redis.call('bzmpop', 0, 1, 'nosuch', 'MIN')", "0"),
			do("EVAL", "return redis.call('blmpop', 0, 1, 'nosuch', 'LEFT')", "0"),
			do("EVAL", "return redis.call('bzmpop', 0, 1, 'z', 'MAX', 'COUNT', 2)", "0"),
			do("EVAL", "return redis.pcall('bzpopmin', 'z', 0)", "0"),
			do("EVAL", "return redis.pcall('bzpopmax', 'nosuch', 0)", "0"),
		)},
	}
}

// blockingZSetScenarios are TestDifferentialBlockingZSetPops's scenarios.
func blockingZSetScenarios() []blockingScenario {
	return []blockingScenario{
		{"clients blocked on a sorted set are served first come first served", func(t *testing.T, addr string) string {
			tr := newTranscript(t, addr, 4)
			tr.send(0, "BZPOPMIN", "z", "other", "0")
			tr.waitBlocked(3, 1)
			tr.send(1, "BZMPOP", "0", "2", "other", "z", "MAX", "COUNT", "2")
			tr.waitBlocked(3, 2)
			tr.send(2, "BZPOPMAX", "z", "other", "0")
			tr.waitBlocked(3, 3)
			tr.call(3, "ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d")
			tr.read(0)
			tr.read(1)
			tr.read(2)
			tr.call(3, "EXISTS", "z")
			tr.send(0, "BZPOPMIN", "z", "other", "0")
			tr.waitBlocked(3, 1)
			tr.call(3, "ZADD", "other", "7", "o")
			tr.read(0)
			return tr.b.String()
		}},
		{"a ZADD inside MULTI serves after EXEC, with what is left", func(t *testing.T, addr string) string {
			tr := newTranscript(t, addr, 3)
			tr.send(0, "BZPOPMAX", "z", "0")
			tr.waitBlocked(2, 1)
			tr.send(1, "BZPOPMAX", "z", "0")
			tr.waitBlocked(2, 2)
			tr.call(2, "MULTI")
			tr.call(2, "ZADD", "z", "1", "a", "2", "b")
			tr.call(2, "ZPOPMAX", "z")
			tr.call(2, "EXEC")
			tr.read(0)
			tr.call(2, "ZADD", "z", "5", "e")
			tr.read(1)
			tr.call(2, "EXISTS", "z")
			return tr.b.String()
		}},
		{"a key of another type keeps the client blocked, ZUNIONSTORE serves it", func(t *testing.T, addr string) string {
			tr := newTranscript(t, addr, 2)
			tr.send(0, "BZMPOP", "0", "1", "k", "MIN", "COUNT", "2")
			tr.waitBlocked(1, 1)
			tr.call(1, "RPUSH", "k", "x")
			tr.call(1, "DEL", "k")
			tr.call(1, "ZADD", "tmp", "1", "a", "2", "b", "3", "c")
			tr.call(1, "ZUNIONSTORE", "k", "1", "tmp")
			tr.read(0)
			tr.call(1, "ZRANGE", "k", "0", "-1", "WITHSCORES")
			return tr.b.String()
		}},
		{"CLIENT UNBLOCK ends a blocked BZPOPMIN with a timeout or an error", func(t *testing.T, addr string) string {
			tr := newTranscript(t, addr, 2)
			id := tr.clientID(0)
			tr.send(0, "BZPOPMIN", "z", "0")
			tr.waitBlocked(1, 1)
			tr.call(1, "CLIENT", "UNBLOCK", id)
			tr.read(0)
			tr.send(0, "BZMPOP", "0", "1", "z", "MIN")
			tr.waitBlocked(1, 1)
			tr.call(1, "CLIENT", "UNBLOCK", id, "ERROR")
			tr.read(0)
			tr.send(0, "BZPOPMAX", "z", "0.05")
			tr.read(0)
			tr.call(1, "ZADD", "z", "1", "a")
			tr.call(1, "ZCARD", "z")
			return tr.b.String()
		}},
		{"served blocking pops publish their events after the write's", func(t *testing.T, addr string) string {
			tr := newTranscript(t, addr, 3)
			tr.call(2, "CONFIG", "SET", "notify-keyspace-events", "Elzg")
			defer tr.conns[2].Call("CONFIG", "SET", "notify-keyspace-events", "")
			tr.call(0, "PSUBSCRIBE", "__keyevent@0__:*")
			events := func(n int) {
				for i := 0; i < n; i++ {
					tr.read(0)
				}
			}
			tr.send(1, "BLPOP", "k", "0")
			tr.waitBlocked(2, 1)
			tr.call(2, "RPUSH", "k", "a", "b")
			tr.read(1)
			events(2)
			tr.send(1, "BZPOPMIN", "z", "0")
			tr.waitBlocked(2, 1)
			tr.call(2, "ZADD", "z", "1", "a")
			tr.read(1)
			events(3)
			tr.send(1, "BLMOVE", "src", "k", "RIGHT", "LEFT", "0")
			tr.waitBlocked(2, 1)
			tr.call(2, "RPUSH", "src", "x")
			tr.read(1)
			events(4)
			tr.send(1, "BZMPOP", "0", "1", "z2", "MAX", "COUNT", "5")
			tr.waitBlocked(2, 1)
			tr.call(2, "ZADD", "z2", "1", "a", "2", "b")
			tr.read(1)
			events(3)
			tr.call(2, "DEL", "k")
			events(1)
			tr.send(1, "BLMPOP", "0", "1", "k", "RIGHT", "COUNT", "5")
			tr.waitBlocked(2, 1)
			tr.call(2, "LPUSH", "k", "1", "2")
			tr.read(1)
			events(3)
			return tr.b.String()
		}},
	}
}

// waitBlocked waits, polling INFO on connection i, until n clients are
// blocked, so that blocked clients queue in the order the scenario sends
// them whatever the machine's load.
func (tr *transcript) waitBlocked(i, n int) {
	tr.t.Helper()
	want := fmt.Sprintf("blocked_clients:%d\r\n", n)
	deadline := time.Now().Add(10 * time.Second)
	for {
		raw, err := tr.conns[i].Call("INFO", "clients")
		if err != nil {
			tr.t.Fatal(err)
		}
		if strings.Contains(string(raw), want) {
			return
		}
		if time.Now().After(deadline) {
			tr.t.Fatalf("never %d blocked clients: %s", n, raw)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
