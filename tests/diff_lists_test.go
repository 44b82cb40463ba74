package tests

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestDifferentialLists runs the list family against redis-server: every
// command with bad arity, bad options, wrong types, missing and empty
// keys, large lists spread over many chunks, and the blocking pops'
// timeouts and their non-blocking forms inside MULTI.
func TestDifferentialLists(t *testing.T) {
	t.Parallel()
	runDifferential(t, listScripts())
}

// manyElements returns n numbered elements.
func manyElements(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	return out
}

func listScripts() []script {
	big := strings.Repeat("B", 20000)
	mid := strings.Repeat("m", 5000)
	many := append([]string{"RPUSH", "big"}, manyElements("e", 3000)...)
	list := func(steps ...step) []step {
		return append([]step{do("RPUSH", "l", "a", "b", "c", "b", "d"), do("SET", "s", "x"), do("HSET", "h", "f", "v")}, steps...)
	}
	return []script{
		{"arity", arity(
			line("LPUSH", "l"), line("RPUSH"), line("LPUSHX", "l"), line("RPUSHX", "l"),
			line("LPOP"), line("RPOP"), line("LPOP", "l", "1", "2"), line("RPOP", "l", "1", "2"),
			line("LLEN"), line("LLEN", "l", "x"), line("LRANGE", "l", "0"), line("LINDEX", "l"),
			line("LSET", "l", "0"), line("LINSERT", "l", "BEFORE", "x"), line("LREM", "l", "0"),
			line("LTRIM", "l", "0"), line("LPOS", "l"), line("LMOVE", "a", "b", "LEFT"),
			line("RPOPLPUSH", "a"), line("LMPOP", "1", "l"), line("BLPOP", "l"), line("BRPOP", "l"),
			line("BLMOVE", "a", "b", "LEFT", "LEFT"), line("BRPOPLPUSH", "a", "b"), line("BLMPOP", "0", "1", "l"),
		)},
		{"push and pop", list(
			do("LPUSH", "l", "z", "y"),
			do("RPUSHX", "l", "e"),
			do("LPUSHX", "missing", "e"),
			do("RPUSHX", "missing", "e"),
			do("EXISTS", "missing"),
			do("LRANGE", "l", "0", "-1"),
			do("LLEN", "l"),
			do("LLEN", "missing"),
			do("LPOP", "l"),
			do("RPOP", "l"),
			do("LPOP", "l", "2"),
			do("RPOP", "l", "0"),
			do("RPOP", "l", "100"),
			do("EXISTS", "l"),
			do("LPOP", "l"),
			do("LPOP", "l", "1"),
			do("LPOP", "missing", "0"),
			do("LPOP", "missing", "-1"),
			do("LPOP", "missing", "x"),
			do("RPOP", "s", "-1"),
			do("TYPE", "l"),
			do("RPUSH", "l", "only"),
			do("OBJECT", "ENCODING", "l"),
			do("TYPE", "l"),
		)},
		{"wrong types", list(
			do("LPUSH", "s", "x"), do("RPUSH", "h", "x"), do("LPUSHX", "s", "x"), do("RPUSHX", "h", "x"),
			do("LPOP", "s"), do("RPOP", "s", "2"), do("LLEN", "s"), do("LRANGE", "s", "0", "-1"),
			do("LRANGE", "s", "x", "-1"), do("LINDEX", "s", "0"), do("LINDEX", "s", "x"), do("LSET", "s", "0", "v"),
			do("LSET", "s", "x", "v"), do("LINSERT", "s", "BEFORE", "a", "v"), do("LINSERT", "s", "NEAR", "a", "v"),
			do("LREM", "s", "0", "a"), do("LREM", "s", "x", "a"), do("LTRIM", "s", "0", "1"), do("LPOS", "s", "a"),
			do("LPOS", "s", "a", "RANK", "0"), do("LMOVE", "s", "l", "LEFT", "LEFT"), do("LMOVE", "l", "s", "LEFT", "LEFT"),
			do("LRANGE", "l", "0", "-1"), do("RPOPLPUSH", "l", "h"), do("RPOPLPUSH", "missing", "h"),
			do("LMPOP", "2", "missing", "s", "LEFT"), do("LMPOP", "2", "l", "s", "LEFT"),
			do("BLPOP", "s", "0"), do("BLPOP", "missing", "s", "l", "0"), do("BRPOP", "l", "s", "0"),
			do("BLMOVE", "s", "l", "LEFT", "LEFT", "0"), do("BLMOVE", "l", "s", "LEFT", "LEFT", "0"),
			do("BRPOPLPUSH", "h", "l", "0"), do("BLMPOP", "0", "1", "s", "LEFT"),
			do("GET", "l"), do("HGET", "l", "f"), do("LRANGE", "l", "0", "-1"),
		)},
		{"ranges and indexes", list(
			do("LRANGE", "l", "0", "-1"), do("LRANGE", "l", "-100", "100"), do("LRANGE", "l", "2", "1"),
			do("LRANGE", "l", "5", "10"), do("LRANGE", "l", "-2", "-1"), do("LRANGE", "l", "0", "-100"),
			do("LRANGE", "l", "1", "x"), do("LRANGE", "missing", "0", "-1"), do("LRANGE", "l", "9223372036854775807", "-9223372036854775808"),
			do("LINDEX", "l", "0"), do("LINDEX", "l", "-1"), do("LINDEX", "l", "-5"), do("LINDEX", "l", "-6"),
			do("LINDEX", "l", "5"), do("LINDEX", "missing", "x"), do("LINDEX", "l", "x"),
			do("LSET", "l", "1", "B"), do("LSET", "l", "-1", "D"), do("LSET", "l", "5", "v"), do("LSET", "l", "-6", "v"),
			do("LSET", "missing", "0", "v"), do("LSET", "missing", "x", "v"), do("LSET", "l", "x", "v"),
			do("LRANGE", "l", "0", "-1"),
		)},
		{"insert remove trim", list(
			do("LINSERT", "l", "BEFORE", "b", "X"), do("LINSERT", "l", "after", "d", "Y"), do("LINSERT", "l", "AFTER", "nope", "Z"),
			do("LINSERT", "missing", "BEFORE", "a", "Z"), do("LINSERT", "l", "MIDDLE", "a", "Z"), do("LRANGE", "l", "0", "-1"),
			do("RPUSH", "r", "a", "b", "a", "c", "a", "b", "a"),
			do("LREM", "r", "2", "a"), do("LRANGE", "r", "0", "-1"), do("LREM", "r", "-1", "a"), do("LRANGE", "r", "0", "-1"),
			do("LREM", "r", "0", "b"), do("LREM", "r", "x", "b"), do("LREM", "missing", "0", "b"), do("LREM", "r", "9223372036854775807", "a"),
			do("LRANGE", "r", "0", "-1"), do("LREM", "r", "-9223372036854775808", "c"), do("EXISTS", "r"),
			do("LTRIM", "l", "1", "-2"), do("LRANGE", "l", "0", "-1"), do("LTRIM", "l", "x", "1"), do("LTRIM", "missing", "0", "1"),
			do("LTRIM", "l", "5", "1"), do("EXISTS", "l"), do("RPUSH", "t", "1", "2", "3"), do("LTRIM", "t", "-100", "100"),
			do("LRANGE", "t", "0", "-1"), do("LTRIM", "t", "0", "-4"), do("EXISTS", "t"),
		)},
		{"lpos", list(
			do("RPUSH", "p", "a", "b", "c", "1", "2", "3", "c", "c"),
			do("LPOS", "p", "c"), do("LPOS", "p", "c", "RANK", "2"), do("LPOS", "p", "c", "RANK", "-1"), do("LPOS", "p", "c", "RANK", "-3"),
			do("LPOS", "p", "c", "RANK", "4"), do("LPOS", "p", "c", "COUNT", "0"), do("LPOS", "p", "c", "COUNT", "2"),
			do("LPOS", "p", "c", "COUNT", "2", "RANK", "-1"), do("LPOS", "p", "c", "MAXLEN", "3"), do("LPOS", "p", "c", "MAXLEN", "2"),
			do("LPOS", "p", "c", "COUNT", "0", "MAXLEN", "7"), do("LPOS", "p", "x"), do("LPOS", "p", "x", "COUNT", "1"),
			do("LPOS", "missing", "x"), do("LPOS", "missing", "x", "COUNT", "1"), do("LPOS", "p", "c", "RANK", "0"),
			do("LPOS", "p", "c", "RANK", "x"), do("LPOS", "p", "c", "RANK", "-9223372036854775808"), do("LPOS", "p", "c", "COUNT", "-1"),
			do("LPOS", "p", "c", "COUNT", "x"), do("LPOS", "p", "c", "MAXLEN", "-1"), do("LPOS", "p", "c", "MAXLEN", "x"),
			do("LPOS", "p", "c", "RANK"), do("LPOS", "p", "c", "FOO", "1"), do("LPOS", "p", "c", "COUNT", "1", "RANK"),
		)},
		{"lmove and rpoplpush", list(
			do("LMOVE", "l", "d", "LEFT", "RIGHT"), do("LMOVE", "l", "d", "right", "left"), do("LRANGE", "d", "0", "-1"),
			do("LMOVE", "l", "l", "LEFT", "RIGHT"), do("LRANGE", "l", "0", "-1"), do("LMOVE", "l", "d", "UP", "LEFT"),
			do("LMOVE", "l", "d", "LEFT", "DOWN"), do("LMOVE", "missing", "d", "LEFT", "LEFT"), do("EXISTS", "missing"),
			do("RPOPLPUSH", "l", "d"), do("RPOPLPUSH", "l", "l"), do("LRANGE", "l", "0", "-1"), do("LRANGE", "d", "0", "-1"),
			do("RPUSH", "one", "x"), do("RPOPLPUSH", "one", "one"), do("LRANGE", "one", "0", "-1"),
			do("LMOVE", "one", "two", "LEFT", "LEFT"), do("EXISTS", "one"), do("LRANGE", "two", "0", "-1"),
		)},
		{"lmpop", list(
			do("LMPOP", "2", "missing", "l", "LEFT"), do("LMPOP", "2", "missing", "l", "RIGHT", "COUNT", "2"),
			do("LMPOP", "1", "l", "LEFT", "COUNT", "100"), do("LMPOP", "1", "l", "LEFT"), do("LMPOP", "1", "missing", "LEFT"),
			do("LMPOP", "0", "l", "LEFT"), do("LMPOP", "-1", "l", "LEFT"), do("LMPOP", "x", "l", "LEFT"), do("LMPOP", "2147483648", "l", "LEFT"),
			do("LMPOP", "3", "l", "LEFT"), do("LMPOP", "2", "l", "LEFT"), do("LMPOP", "1", "l", "MIDDLE"),
			do("LMPOP", "1", "l", "LEFT", "COUNT"), do("LMPOP", "1", "l", "LEFT", "COUNT", "0"), do("LMPOP", "1", "l", "LEFT", "COUNT", "-1"),
			do("LMPOP", "1", "l", "LEFT", "COUNT", "x"), do("LMPOP", "1", "l", "LEFT", "COUNT", "1", "COUNT", "1"),
			do("LMPOP", "1", "l", "LEFT", "FOO"), do("LMPOP", "9999999999999999999", "l", "LEFT"),
		)},
		{"blocking timeouts and bad timeouts", list(
			do("BLPOP", "missing", "0.01"), do("BRPOP", "missing", "other", "0.01"), do("BLMOVE", "missing", "d", "LEFT", "LEFT", "0.01"),
			do("BRPOPLPUSH", "missing", "d", "0.01"), do("BLMPOP", "0.01", "2", "missing", "other", "LEFT"),
			do("BLPOP", "missing", "-1"), do("BLPOP", "missing", "abc"), do("BLPOP", "missing", "inf"), do("BLPOP", "missing", "1e400"),
			do("BLPOP", "missing", "nan"), do("BLPOP", "missing", " 1"), do("BLPOP", "missing", "9999999999999999"),
			do("BLPOP", "missing", "-0.0011"), do("BLPOP", "missing", ".001"), do("BLPOP", "missing", "0x0.01p0"),
			do("BLMOVE", "missing", "d", "LEFT", "UP", "0"), do("BLMOVE", "missing", "d", "LEFT", "LEFT", "x"),
			do("BRPOPLPUSH", "missing", "d", "-1"), do("BLMPOP", "x", "1", "l", "LEFT"), do("BLMPOP", "0", "0", "l", "LEFT"),
			do("BLMPOP", "-1", "x", "l", "LEFT"), do("BLMPOP", "0", "1", "l", "LEFT", "COUNT", "0"),
			do("BLPOP", "l", "0"), do("BRPOP", "missing", "l", "0"), do("BLMOVE", "l", "d", "RIGHT", "LEFT", "0"),
			do("BRPOPLPUSH", "l", "d", "0"), do("BLMPOP", "0", "2", "missing", "l", "RIGHT", "COUNT", "9"), do("LRANGE", "d", "0", "-1"),
			do("EXISTS", "l"),
		)},
		{"blocking pops inside MULTI do not block", list(
			do("MULTI"), do("BLPOP", "missing", "0"), do("BRPOP", "missing", "0"), do("BLMOVE", "missing", "d", "LEFT", "LEFT", "0"),
			do("BRPOPLPUSH", "missing", "d", "0"), do("BLMPOP", "0", "1", "missing", "LEFT"), do("BLPOP", "l", "0"),
			do("BLPOP", "missing", "-1"), do("EXEC"),
		)},
		{"large lists across encodings", seq(
			do(many...), do("LLEN", "big"), do("LINDEX", "big", "1500"), do("LINDEX", "big", "-1"), do("LRANGE", "big", "1000", "1010"),
			do("LSET", "big", "1500", big), do("LINDEX", "big", "1500"), do("LINSERT", "big", "BEFORE", "e1500", mid),
			do("LINSERT", "big", "AFTER", "e1600", big), do("LRANGE", "big", "1497", "1503"), do("LPOS", "big", "e2999"),
			do("LPOS", "big", big, "COUNT", "0"), do("LREM", "big", "0", big), do("LLEN", "big"), do("LTRIM", "big", "100", "-100"),
			do("LLEN", "big"), do("LINDEX", "big", "0"), do("LPUSH", "big", big, mid, big), do("LPOP", "big", "4"),
			do("RPOP", "big", "3"), do("OBJECT", "ENCODING", "big"), do("LMPOP", "1", "big", "RIGHT", "COUNT", "5"),
			do("DEL", "big"), do("EXISTS", "big"),
		)},
		{"rename and copy keep lists", list(
			do("RENAME", "l", "l2"), do("LRANGE", "l2", "0", "-1"), do("COPY", "l2", "l3"), do("LPUSH", "l3", "new"),
			do("LRANGE", "l2", "0", "-1"), do("LRANGE", "l3", "0", "-1"), do("TYPE", "l3"),
		)},
	}
}

// The blocking pops' wake-ups, timeouts and disconnects compared with
// redis-server: the same sequence of commands over several connections
// runs on both, and the replies each connection reads must agree.
func TestDifferentialBlockingPops(t *testing.T) {
	t.Parallel()
	runBlockingScenarios(t, blockingScenarios())
}

// runBlockingScenarios runs each scenario on a redis-server and on
// kvserver, started for them, and compares what they read.
func runBlockingScenarios(t *testing.T, scenarios []blockingScenario) {
	ref := startRedis(t)
	kv := startKVServer(t)
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			want := sc.run(t, ref.Addr)
			got := sc.run(t, kv.Addr)
			if want != got {
				t.Errorf("redis:\n%s\nkvserver:\n%s", want, got)
			}
		})
	}
}

// blockingScenario drives several connections to one server and returns
// the replies it read, in order.
type blockingScenario struct {
	name string
	run  func(t *testing.T, addr string) string
}

// transcript records replies for a scenario.
type transcript struct {
	t     *testing.T
	conns []*rawClient
	b     strings.Builder
}

func newTranscript(t *testing.T, addr string, n int) *transcript {
	tr := &transcript{t: t}
	for i := 0; i < n; i++ {
		c := dialRaw(t, addr)
		if _, err := c.Call("FLUSHALL"); err != nil && i == 0 {
			t.Fatal(err)
		}
		tr.conns = append(tr.conns, c)
	}
	return tr
}

// send writes a command on connection i without reading the reply.
func (tr *transcript) send(i int, cmd ...string) {
	tr.t.Helper()
	tr.conns[i].Send(encodeCommand(cmd))
}

// read reads connection i's next reply into the transcript.
func (tr *transcript) read(i int) {
	tr.t.Helper()
	raw, err := readWithin(tr.conns[i], 5*time.Second)
	fmt.Fprintf(&tr.b, "%d: %q %v\n", i, raw, err)
}

// clientID is connection i's CLIENT ID.
func (tr *transcript) clientID(i int) string {
	tr.t.Helper()
	raw, err := tr.conns[i].Call("CLIENT", "ID")
	if err != nil {
		tr.t.Fatal(err)
	}
	return strings.TrimSuffix(strings.TrimPrefix(string(raw), ":"), "\r\n")
}

// call sends and reads on connection i.
func (tr *transcript) call(i int, cmd ...string) {
	tr.t.Helper()
	tr.send(i, cmd...)
	tr.read(i)
}

// settle gives blocked commands time to reach the server.
func settle() { time.Sleep(100 * time.Millisecond) }

func blockingScenarios() []blockingScenario {
	return []blockingScenario{
		{"clients blocked on a key are served first come first served", func(t *testing.T, addr string) string {
			tr := newTranscript(t, addr, 4)
			for i := 0; i < 3; i++ {
				tr.send(i, "BLPOP", "k", "other", "0")
				settle()
			}
			tr.call(3, "RPUSH", "k", "a", "b")
			tr.read(0)
			tr.read(1)
			tr.call(3, "LPUSH", "other", "c")
			tr.read(2)
			tr.call(3, "EXISTS", "k", "other")
			return tr.b.String()
		}},
		{"a push inside MULTI serves after EXEC, with what is left", func(t *testing.T, addr string) string {
			tr := newTranscript(t, addr, 3)
			tr.send(0, "BRPOP", "k", "0")
			settle()
			tr.send(1, "BRPOP", "k", "0")
			settle()
			tr.call(2, "MULTI")
			tr.call(2, "RPUSH", "k", "a", "b", "c")
			tr.call(2, "RPOP", "k")
			tr.call(2, "EXEC")
			tr.read(0)
			tr.read(1)
			tr.call(2, "LRANGE", "k", "0", "-1")
			return tr.b.String()
		}},
		{"BLMOVE wakes a client blocked on its destination", func(t *testing.T, addr string) string {
			tr := newTranscript(t, addr, 3)
			tr.send(0, "BLMOVE", "src", "dst", "RIGHT", "LEFT", "0")
			settle()
			tr.send(1, "BLPOP", "dst", "0")
			settle()
			tr.call(2, "RPUSH", "src", "x", "y")
			tr.read(0)
			tr.read(1)
			tr.call(2, "LRANGE", "src", "0", "-1")
			tr.call(2, "EXISTS", "dst")
			return tr.b.String()
		}},
		{"a key of another type keeps the client blocked, RENAME serves it", func(t *testing.T, addr string) string {
			tr := newTranscript(t, addr, 2)
			tr.send(0, "BLMPOP", "0", "1", "k", "RIGHT", "COUNT", "2")
			settle()
			tr.call(1, "SET", "k", "string")
			tr.call(1, "DEL", "k")
			tr.call(1, "RPUSH", "tmp", "1", "2", "3")
			tr.call(1, "RENAME", "tmp", "k")
			tr.read(0)
			tr.call(1, "LRANGE", "k", "0", "-1")
			return tr.b.String()
		}},
		{"BLMOVE to a destination of another type answers WRONGTYPE when served", func(t *testing.T, addr string) string {
			tr := newTranscript(t, addr, 2)
			tr.call(1, "SET", "dst", "x")
			tr.send(0, "BLMOVE", "src", "dst", "LEFT", "LEFT", "0")
			settle()
			tr.call(1, "RPUSH", "src", "a")
			tr.read(0)
			tr.call(1, "LRANGE", "src", "0", "-1")
			return tr.b.String()
		}},
		{"timeouts and blocked_clients", func(t *testing.T, addr string) string {
			tr := newTranscript(t, addr, 3)
			tr.send(0, "BLPOP", "k", "0.2")
			tr.send(1, "BRPOPLPUSH", "k", "d", "0")
			settle()
			raw, _ := tr.conns[2].Call("INFO", "clients")
			fmt.Fprintf(&tr.b, "blocked: %v\n", strings.Contains(string(raw), "blocked_clients:2\r\n"))
			tr.read(0)
			tr.call(2, "RPUSH", "k", "v")
			tr.read(1)
			raw, _ = tr.conns[2].Call("INFO", "clients")
			fmt.Fprintf(&tr.b, "blocked: %v\n", strings.Contains(string(raw), "blocked_clients:0\r\n"))
			return tr.b.String()
		}},
		{"CLIENT UNBLOCK ends a blocked pop with a timeout or an error", func(t *testing.T, addr string) string {
			tr := newTranscript(t, addr, 2)
			id := tr.clientID(0)
			tr.send(0, "BLPOP", "k", "0")
			settle()
			tr.call(1, "CLIENT", "UNBLOCK", id)
			tr.read(0)
			tr.send(0, "BLMOVE", "k", "d", "LEFT", "LEFT", "0")
			settle()
			tr.call(1, "CLIENT", "UNBLOCK", id, "ERROR")
			tr.read(0)
			tr.call(1, "CLIENT", "UNBLOCK", id)
			tr.call(1, "RPUSH", "k", "v")
			tr.call(1, "LLEN", "k")
			return tr.b.String()
		}},
		{"a client that disconnects while blocked is released", func(t *testing.T, addr string) string {
			tr := newTranscript(t, addr, 3)
			tr.send(0, "BLPOP", "k", "0")
			settle()
			tr.send(1, "BLPOP", "k", "0")
			settle()
			tr.conns[0].Close()
			deadline := time.Now().Add(5 * time.Second)
			for time.Now().Before(deadline) {
				raw, _ := tr.conns[2].Call("INFO", "clients")
				if strings.Contains(string(raw), "blocked_clients:1\r\n") {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			tr.call(2, "RPUSH", "k", "v")
			tr.read(1)
			tr.call(2, "EXISTS", "k")
			return tr.b.String()
		}},
	}
}
