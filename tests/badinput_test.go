package tests

// Malformed, partial, stalled, hostile and very many connections: each case
// pins Redis's exact reply, whether the connection is closed afterwards,
// and that the server and its data survive. Protocol-error cases run
// against the real redis-server too, because Redis is the reference.

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// wireStep sends raw bytes and expects these raw replies, in order.
type wireStep struct {
	send  string
	wants []string
}

// protocolCase is one connection's worth of raw input.
type protocolCase struct {
	name  string
	steps []wireStep
	// closes: the server closes the connection after the last reply.
	closes bool
}

// protocolErr is Redis's reply to a request it cannot parse.
func protocolErr(msg string) string { return "-ERR Protocol error: " + msg + "\r\n" }

// protocolCases are run with --proto-max-bulk-len 1mb.
func protocolCases() []protocolCase {
	one := func(send string, wants ...string) []wireStep { return []wireStep{{send, wants}} }
	big := 70 << 10 // past Redis's 64 KiB inline and count-line limit
	return []protocolCase{
		{"bulk longer than proto-max-bulk-len",
			one("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$2000000\r\n", protocolErr("invalid bulk length")), true},
		{"multibulk length not a number",
			one("*abc\r\n", protocolErr("invalid multibulk length")), true},
		{"multibulk length over INT_MAX",
			one("*2147483648\r\n", protocolErr("invalid multibulk length")), true},
		{"element without $",
			one("*1\r\nfoo\r\n", protocolErr("expected '$', got 'f'")), true},
		{"negative bulk length",
			one("*1\r\n$-5\r\n", protocolErr("invalid bulk length")), true},
		{"bulk length not a number",
			one("*1\r\n$x\r\n", protocolErr("invalid bulk length")), true},
		{"inline line of 70 KB without newline",
			one(strings.Repeat("a", big), protocolErr("too big inline request")), true},
		{"multibulk count line of 70 KB",
			one("*"+strings.Repeat("1", big), protocolErr("too big mbulk count string")), true},
		{"bulk count line of 70 KB",
			one("*1\r\n$"+strings.Repeat("1", big), protocolErr("too big bulk count string")), true},
		{"inline unbalanced double quote",
			one("SET a \"x y\r\n", protocolErr("unbalanced quotes in request")), true},
		{"inline closing quote not followed by space",
			one("SET a \"x\"y\r\n", protocolErr("unbalanced quotes in request")), true},
		{"inline unbalanced single quote",
			one("SET a 'x\r\n", protocolErr("unbalanced quotes in request")), true},
		{"inline NUL hides the newline until the line is too big", []wireStep{
			// Redis finds the end of an inline request with strchr, which
			// stops at a NUL byte: it waits for more input and gives up
			// at 64 KiB.
			{"SET inl:z ab\x00cd\r\nGET inl:z\r\n", nil},
			{strings.Repeat("x", big), []string{protocolErr("too big inline request")}},
		}, true},
		// Redis ends a multibulk header line (a count or a bulk length)
		// at its first '\r', found with strchr (a NUL stops it), and skips
		// the byte after it unchecked; a bare '\n' ends nothing.
		{"multibulk count ended by a bare LF",
			one("*1\n$4\nPING\n*1\r\n$4\r\nPING\r\n", protocolErr("invalid multibulk length")), true},
		{"bulk length ended by a bare LF",
			one("*2\r\n$4\nECHO\r\n$2\r\nhi\r\n", protocolErr("invalid bulk length")), true},
		{"a header line's CR is followed by any byte",
			one("*1\r_$4\rXPING\r\n", "+PONG\r\n"), false},
		{"NUL in a count line hides its CR until the line is too big", []wireStep{
			{"*1\x00\r\n$4\r\nPING\r\n", nil},
			{strings.Repeat("x", big), []string{protocolErr("too big mbulk count string")}},
		}, true},
		{"error after good pipelined commands",
			one("*1\r\n$4\r\nPING\r\nPING\r\n*x\r\n", "+PONG\r\n", "+PONG\r\n", protocolErr("invalid multibulk length")), true},

		{"inline PING", one("PING\r\n", "+PONG\r\n"), false},
		{"inline with LF only", one("PING\n", "+PONG\r\n"), false},
		{"blank inline lines are ignored", one("\r\n\n  \r\nPING\r\n", "+PONG\r\n"), false},
		{"empty and null multibulk are ignored", one("*0\r\n*-1\r\nPING\r\n", "+PONG\r\n"), false},
		{"inline SET and GET", one("SET inl:a b\r\nGET inl:a\r\n", "+OK\r\n", "$1\r\nb\r\n"), false},
		{"inline double-quoted argument",
			one("SET inl:q \"x y\"\r\nGET inl:q\r\n", "+OK\r\n", "$3\r\nx y\r\n"), false},
		{"inline escapes in double quotes",
			one(`SET inl:e "a\x41\n\"b"`+"\r\n"+"GET inl:e\r\n", "+OK\r\n", "$5\r\naA\n\"b\r\n"), false},
		{"inline single-quoted argument",
			one("SET inl:s 'x \\' y'\r\nGET inl:s\r\n", "+OK\r\n", "$5\r\nx ' y\r\n"), false},
		{"inline and multibulk mixed",
			one("SET inl:m 1\r\n*2\r\n$4\r\nINCR\r\n$5\r\ninl:m\r\nGET inl:m\r\n", "+OK\r\n", ":2\r\n", "$1\r\n2\r\n"), false},
		{"inline vertical tab and form feed inside a word",
			one("SET inl:v a\vb\fc\r\nGET inl:v\r\n", "+OK\r\n", "$5\r\na\vb\fc\r\n"), false},
		{"inline leading vertical tab and form feed are blanks",
			one("\v\fSET inl:w x\r\nGET inl:w\r\n", "+OK\r\n", "$1\r\nx\r\n"), false},
		{"inline quote inside a word opens a quoted part",
			one("SET inl:mq ab\"c d\"\r\nGET inl:mq\r\n", "+OK\r\n", "$5\r\nabc d\r\n"), false},
		{"inline unknown command",
			one("FOO bar baz\r\n", "-ERR unknown command 'FOO', with args beginning with: 'bar' 'baz' \r\n"), false},
		{"request split across writes", []wireStep{
			{"*3\r\n$3\r\nSE", nil},
			{"T\r\n$5\r\nsp", nil},
			{"lit\r\n$3\r\nv", nil},
			{"al\r\n", []string{"+OK\r\n"}},
			{"GET split\r\n", []string{"$3\r\nval\r\n"}},
		}, false},
	}
}

// sentinelKey holds a value that no bad input may change.
const sentinelKey, sentinelValue = "sentinel", "the value before the bad input"

// TestProtocolErrorsLikeRedis sends malformed and inline requests and
// requires Redis's exact replies and connection handling, from kvserver
// and from redis-server alike; afterwards each server must still answer a
// fresh connection with its data intact.
func TestProtocolErrorsLikeRedis(t *testing.T) {
	t.Parallel()
	servers := []*server{
		startKVServer(t, "--proto-max-bulk-len", "1mb"),
		startRedis(t, "--proto-max-bulk-len", "1mb"),
	}
	for _, s := range servers {
		expectReply(t, dialRaw(t, s.Addr), "+OK\r\n", "SET", sentinelKey, sentinelValue)
	}
	for _, tc := range protocolCases() {
		t.Run(tc.name, func(t *testing.T) {
			for _, s := range servers {
				t.Run(s.Name, func(t *testing.T) {
					runProtocolCase(t, s, tc)
					expectServerIntact(t, s)
				})
			}
		})
	}
}

// runProtocolCase plays tc on a fresh connection to s.
func runProtocolCase(t *testing.T, s *server, tc protocolCase) {
	c := dialRaw(t, s.Addr)
	for i, st := range tc.steps {
		// A server that closes early may make a large write fail; the
		// reply it sent first is still readable.
		werr := c.SendErr([]byte(st.send))
		if len(st.wants) == 0 {
			if werr != nil {
				t.Fatalf("step %d: send: %v", i, werr)
			}
			time.Sleep(20 * time.Millisecond) // let the server see a partial request
		}
		for _, want := range st.wants {
			raw, err := c.ReadReply()
			if err != nil {
				t.Fatalf("step %d: after sending %s: %v (read %q, send error %v); want %q",
					i, shortQuote(st.send), err, raw, werr, want)
			}
			if string(raw) != want {
				t.Fatalf("step %d: sending %s got %s, want %s", i, shortQuote(st.send), quoteTrunc(raw), quoteTrunc([]byte(want)))
			}
		}
	}
	if tc.closes {
		expectClosedConn(t, c)
		return
	}
	// The connection stays usable.
	expectReply(t, c, "+PONG\r\n", "PING")
}

// shortQuote quotes a request for a message, eliding the middle of long
// ones.
func shortQuote(s string) string {
	const keep = 60
	if len(s) <= 2*keep {
		return strconv.Quote(s)
	}
	return fmt.Sprintf("%s...(%d bytes)...%s", strconv.Quote(s[:keep]), len(s), strconv.Quote(s[len(s)-keep:]))
}

// expectServerIntact checks that s answers PING on a fresh connection and
// still holds the sentinel key.
func expectServerIntact(t *testing.T, s *server) {
	t.Helper()
	c := dialRaw(t, s.Addr)
	checkReply(t, c, "+PONG\r\n", "PING")
	checkReply(t, c, bulk(sentinelValue), "GET", sentinelKey)
	c.Close()
}

// TestHalfCommandThenClose drops connections in the middle of a request:
// nothing of the request may be applied and the server must carry on.
func TestHalfCommandThenClose(t *testing.T) {
	t.Parallel()
	partials := []struct{ name, send string }{
		{"inside a small bulk", "*3\r\n$3\r\nSET\r\n$4\r\nhalf\r\n$5\r\nab"},
		{"after the bulk header", "*3\r\n$3\r\nSET\r\n$4\r\nhalf\r\n$5\r\n"},
		{"inside a 1 MB bulk", "*3\r\n$3\r\nSET\r\n$4\r\nhalf\r\n$1000000\r\n" + strings.Repeat("x", 500_000)},
		{"before the last argument", "*3\r\n$3\r\nSET\r\n$4\r\nhalf\r\n"},
		{"inside the count", "*3"},
		{"inline without newline", "SET half value"},
	}
	servers := []*server{startKVServer(t), startRedis(t)}
	for _, s := range servers {
		expectReply(t, dialRaw(t, s.Addr), "+OK\r\n", "SET", sentinelKey, sentinelValue)
	}
	for _, p := range partials {
		t.Run(p.name, func(t *testing.T) {
			for _, s := range servers {
				t.Run(s.Name, func(t *testing.T) {
					c := dialRaw(t, s.Addr)
					c.Send([]byte(p.send))
					time.Sleep(20 * time.Millisecond)
					c.Close()
					expectServerIntact(t, s)
					checkReply(t, dialRaw(t, s.Addr), "$-1\r\n", "GET", "half")
				})
			}
		})
	}
}

// TestStalledClientDoesNotBlockOthers holds requests half-sent on some
// connections while another connection works normally, then completes
// them.
func TestStalledClientDoesNotBlockOthers(t *testing.T) {
	t.Parallel()
	s := startKVServer(t)
	bigValue := strings.Repeat("0123456789abcdef", 1<<16) // 1 MiB
	stalled := []struct {
		key, first, rest, value string
	}{
		{"stall:bulk", "*3\r\n$3\r\nSET\r\n$10\r\nstall:bulk\r\n$10\r\nabcde", "fghij\r\n", "abcdefghij"},
		{"stall:big", "*3\r\n$3\r\nSET\r\n$9\r\nstall:big\r\n$1048576\r\n" + bigValue[:100_000], bigValue[100_000:] + "\r\n", bigValue},
		{"stall:inline", "SET stall:inline val", "ue\r\n", "value"},
		{"stall:header", "*3\r\n$3\r\nSET\r\n$12\r\nstall:header\r\n$", "1\r\nv\r\n", "v"},
	}
	conns := make([]*rawClient, len(stalled))
	for i, st := range stalled {
		conns[i] = dialRaw(t, s.Addr)
		conns[i].Send([]byte(st.first))
	}

	worker := dialRaw(t, s.Addr)
	worker.Timeout = 2 * time.Second
	start := time.Now()
	for i := range 200 {
		k, v := fmt.Sprintf("busy:%d", i), strconv.Itoa(i*i)
		expectReply(t, worker, "+OK\r\n", "SET", k, v)
		expectReply(t, worker, bulk(v), "GET", k)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("400 commands beside stalled clients took %v", d)
	}
	for _, st := range stalled {
		checkReply(t, worker, "$-1\r\n", "GET", st.key)
	}

	for i, st := range stalled {
		conns[i].Send([]byte(st.rest))
		raw, err := conns[i].ReadReply()
		if err != nil || string(raw) != "+OK\r\n" {
			t.Errorf("%s: completing the stalled request got %q, %v; want +OK", st.key, raw, err)
		}
		checkReply(t, worker, bulk(st.value), "GET", st.key)
	}
}

// TestThousandConcurrentConnections holds 1,000 connections open at once,
// each doing SET then GET.
func TestThousandConcurrentConnections(t *testing.T) {
	t.Parallel()
	const n = 1000
	raiseNoFileLimit(t, 2*n+256)
	s := startKVServer(t)

	conns := make([]*rawClient, n)
	var mu sync.Mutex
	var errs []error
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if len(errs) < 10 {
			errs = append(errs, err)
		}
	}
	// Dial with bounded concurrency: a burst of 1,000 SYNs would overflow
	// a listen backlog and turn into retransmission delays, not errors.
	sem := make(chan struct{}, 64)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			c, err := dialRawErr(t, s.Addr)
			if err != nil {
				fail(fmt.Errorf("dial #%d: %w", i, err))
				return
			}
			conns[i] = c
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("dialing %d connections: %v", n, errs)
	}

	// Every connection is open now; all of them work at the same time.
	start := make(chan struct{})
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			c.Timeout = 10 * time.Second
			k, v := fmt.Sprintf("conn:%d", i), fmt.Sprintf("value of connection %d", i)
			if raw, err := c.Call("SET", k, v); err != nil || string(raw) != "+OK\r\n" {
				fail(fmt.Errorf("connection %d: SET = %q, %v", i, raw, err))
				return
			}
			if raw, err := c.Call("GET", k); err != nil || string(raw) != bulk(v) {
				fail(fmt.Errorf("connection %d: GET = %q, %v; want %q", i, raw, err, bulk(v)))
			}
		}()
	}
	close(start)
	wg.Wait()
	for _, err := range errs {
		t.Error(err)
	}
	checkReply(t, dialRaw(t, s.Addr), ":"+strconv.Itoa(n)+"\r\n", "DBSIZE")
	for _, c := range conns {
		c.Close()
	}
}

// TestGarbageConnectionsDoNotDisturbGoodClients has 200 connections send
// 4 KiB of seeded random bytes each while 20 well-behaved clients keep
// writing and verifying values: every good operation must succeed, the
// server must survive, and keys stored before must be unchanged.
func TestGarbageConnectionsDoNotDisturbGoodClients(t *testing.T) {
	t.Parallel()
	const (
		garbageConns = 200
		garbageBytes = 4 << 10
		goodClients  = 20
		goodKeys     = 50 // per good client, reused round robin
		minGoodOps   = goodKeys
		maxGoodOps   = 5000
		keptKeys     = 100
	)
	raiseNoFileLimit(t, 2*(garbageConns+goodClients)+256)
	s := startKVServer(t)

	admin := dialRaw(t, s.Addr)
	kept := make([]string, keptKeys)
	for i := range kept {
		kept[i] = fmt.Sprintf("kept value %d %x", i, randomBytes(uint64(i), 16))
		expectReply(t, admin, "+OK\r\n", "SET", fmt.Sprintf("kept:%d", i), kept[i])
	}

	var garbageDone atomic.Bool
	var goodOps atomic.Int64
	goodErrs := make(chan error, goodClients)
	// The good clients connect first and start working together with the
	// garbage, so that the two overlap.
	start := make(chan struct{})
	var goodWG, goodReady sync.WaitGroup
	for w := range goodClients {
		goodWG.Add(1)
		goodReady.Add(1)
		go func() {
			defer goodWG.Done()
			c, err := dialRawErr(t, s.Addr)
			goodReady.Done()
			if err != nil {
				goodErrs <- fmt.Errorf("good client %d: dial: %w", w, err)
				return
			}
			c.Timeout = 5 * time.Second
			<-start
			for i := 0; i < maxGoodOps && (i < minGoodOps || !garbageDone.Load()); i++ {
				k := fmt.Sprintf("good:%d:%d", w, i%goodKeys)
				v := fmt.Sprintf("client %d op %d", w, i)
				if raw, err := c.Call("SET", k, v); err != nil || string(raw) != "+OK\r\n" {
					goodErrs <- fmt.Errorf("good client %d op %d: SET = %q, %v", w, i, raw, err)
					return
				}
				if raw, err := c.Call("GET", k); err != nil || string(raw) != bulk(v) {
					goodErrs <- fmt.Errorf("good client %d op %d: GET = %q, %v; want %q", w, i, raw, err, bulk(v))
					return
				}
				goodOps.Add(1)
			}
		}()
	}

	goodReady.Wait()
	close(start)

	var garbageWG sync.WaitGroup
	garbageErrs := make(chan error, garbageConns)
	for i := range garbageConns {
		garbageWG.Add(1)
		go func() {
			defer garbageWG.Done()
			payload := make([]byte, garbageBytes)
			rng := rand.New(rand.NewPCG(20240601, uint64(i)))
			for j := range payload {
				payload[j] = byte(rng.Uint32())
			}
			conn, err := net.DialTimeout("tcp", s.Addr, 5*time.Second)
			if err != nil {
				garbageErrs <- fmt.Errorf("garbage connection %d: dial: %w", i, err)
				return
			}
			defer conn.Close()
			read := make(chan struct{})
			go func() {
				defer close(read)
				conn.SetReadDeadline(time.Now().Add(2 * time.Second))
				io.Copy(io.Discard, conn)
			}()
			// Dribble the bytes out so that every garbage connection lives
			// for a while; the server may close it first, which is fine.
			const pieces = 8
			conn.SetWriteDeadline(time.Now().Add(2 * time.Second))
			for p := range pieces {
				if _, err := conn.Write(payload[p*garbageBytes/pieces : (p+1)*garbageBytes/pieces]); err != nil {
					break
				}
				time.Sleep(5 * time.Millisecond)
			}
			select {
			case <-read: // the server closed the connection
			case <-time.After(300 * time.Millisecond):
				// It is waiting for the rest of a request.
			}
		}()
	}
	garbageWG.Wait()
	garbageDone.Store(true)
	goodWG.Wait()
	close(goodErrs)
	close(garbageErrs)
	for err := range garbageErrs {
		t.Error(err)
	}
	for err := range goodErrs {
		t.Error(err)
	}
	t.Logf("%d good SET+GET pairs ran beside the garbage", goodOps.Load())

	c := dialRaw(t, s.Addr)
	expectReply(t, c, "+PONG\r\n", "PING")
	for i, v := range kept {
		checkReply(t, c, bulk(v), "GET", fmt.Sprintf("kept:%d", i))
	}
	checkReply(t, c, ":"+strconv.Itoa(keptKeys+goodClients*goodKeys)+"\r\n", "DBSIZE")
	if raw := c.Do("GET", "good:0:0"); !bytes.HasPrefix(raw, []byte("$")) || bytes.Equal(raw, []byte("$-1\r\n")) {
		t.Errorf("GET good:0:0 = %q, want the last value written", raw)
	}
}

// garbagePayload is n seeded pseudo-random bytes for connection i.
func garbagePayload(i, n int) []byte {
	payload := make([]byte, n)
	rng := rand.New(rand.NewPCG(20240601, uint64(i)))
	for j := range payload {
		payload[j] = byte(rng.Uint32())
	}
	return payload
}

// TestGarbageRepliesLikeRedis sends the same seeded random bytes to
// kvserver and to redis-server, closes the sending side, and requires the
// two reply streams to be identical up to the server closing the
// connection. NUL bytes are replaced: Redis looks for an inline request's
// newline with strchr, so a NUL makes it wait for 64 KiB (pinned on its own
// in TestProtocolErrorsLikeRedis); without them the streams exercise the
// inline splitter, the unknown-command error and the protocol errors.
func TestGarbageRepliesLikeRedis(t *testing.T) {
	t.Parallel()
	const conns, size = 40, 4 << 10
	kv, ref := startKVServer(t), startRedis(t)

	// exchange sends payload to addr, half-closes, and reads until the
	// server closes the connection.
	exchange := func(addr string, payload []byte) ([]byte, error) {
		conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			return nil, err
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		werr := make(chan error, 1)
		go func() {
			_, err := conn.Write(payload)
			if err == nil {
				err = conn.(*net.TCPConn).CloseWrite()
			}
			werr <- err
		}()
		out, err := io.ReadAll(conn)
		<-werr // a write cut short by the server closing first is fine
		if err != nil && !connClosedErr(err) {
			return out, err
		}
		return out, nil
	}

	type result struct {
		kv, ref []byte
		err     error
	}
	results := make([]result, conns)
	var wg sync.WaitGroup
	for i := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			payload := garbagePayload(i, size)
			for j, b := range payload {
				if b == 0 {
					payload[j] = 1
				}
			}
			var r result
			if r.kv, r.err = exchange(kv.Addr, payload); r.err == nil {
				r.ref, r.err = exchange(ref.Addr, payload)
			}
			results[i] = r
		}()
	}
	wg.Wait()
	same := 0
	for i, r := range results {
		switch {
		case r.err != nil:
			t.Errorf("connection %d: %v", i, r.err)
		case !bytes.Equal(r.kv, r.ref):
			at := 0
			for at < len(r.kv) && at < len(r.ref) && r.kv[at] == r.ref[at] {
				at++
			}
			from := max(0, bytes.LastIndex(r.ref[:at], []byte("\r\n"))+2)
			if at == 0 {
				from = 0
			}
			clip := func(b []byte) []byte { return b[from:min(len(b), at+200)] }
			t.Errorf("connection %d: replies differ at byte %d of %d (redis) / %d (kvserver):\n  redis:    %q\n  kvserver: %q",
				i, at, len(r.ref), len(r.kv), clip(r.ref), clip(r.kv))
		default:
			same++
		}
	}
	t.Logf("%d of %d garbage streams answered identically", same, conns)
	expectReply(t, dialRaw(t, kv.Addr), "+PONG\r\n", "PING")
}
