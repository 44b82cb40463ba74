package tests

import (
	"bytes"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestDifferentialClientArguments pins the argument errors of CLIENT
// REPLY, PAUSE, UNPAUSE and UNBLOCK, and the replies that need no second
// client, to Redis 7's.
func TestDifferentialClientArguments(t *testing.T) {
	t.Parallel()
	runDifferential(t, []script{
		{"client reply, pause, unpause, unblock arguments", arity(
			line("CLIENT", "REPLY"),
			line("CLIENT", "REPLY", "maybe"),
			line("CLIENT", "REPLY", "ON", "x"),
			line("CLIENT", "REPLY", "on"),
			line("CLIENT", "PAUSE"),
			line("CLIENT", "PAUSE", "x"),
			line("CLIENT", "PAUSE", "-1"),
			line("CLIENT", "PAUSE", "1.5"),
			line("CLIENT", "PAUSE", "100", "sometimes"),
			line("CLIENT", "PAUSE", "x", "sometimes"),
			line("CLIENT", "PAUSE", "100", "WRITE", "x"),
			line("CLIENT", "UNPAUSE", "x"),
			line("CLIENT", "PAUSE", "0", "write"),
			line("CLIENT", "UNPAUSE"),
			line("CLIENT", "UNPAUSE"),
			line("CLIENT", "UNBLOCK"),
			line("CLIENT", "UNBLOCK", "x"),
			line("CLIENT", "UNBLOCK", "1", "sometimes"),
			line("CLIENT", "UNBLOCK", "x", "sometimes"),
			line("CLIENT", "UNBLOCK", "1", "TIMEOUT", "x"),
			line("CLIENT", "UNBLOCK", "999999"),
			line("CLIENT", "UNBLOCK", "999999", "error"),
			line("CLIENT", "UNBLOCK", "-1", "timeout"),
			line("CLIENT", "NO-EVICT", "on"),
			line("CLIENT", "NO-EVICT", "maybe"),
			line("CLIENT", "NO-EVICT", "off"),
			line("WAIT", "0", "0"),
			line("MULTI"),
			line("WAIT", "1", "0"),
			line("EXEC"),
		)},
	})
}

// clientPair is one connection to redis-server and one to kvserver that
// receive the same commands; every reply is compared byte for byte.
type clientPair struct {
	t     *testing.T
	conns [2]*rawClient
}

func dialPair(t *testing.T, ref, kv *server, proto int) clientPair {
	t.Helper()
	p := clientPair{t: t, conns: [2]*rawClient{dialRaw(t, ref.Addr), dialRaw(t, kv.Addr)}}
	if proto == 3 {
		p.same("HELLO", "3") // compared loosely below: only checked to succeed
	}
	return p
}

// same sends cmd to both servers and requires identical replies.
func (p clientPair) same(cmd ...string) {
	p.t.Helper()
	p.sameEach(func(int) []string { return cmd })
}

// sameEach sends each server its own command (one naming a client ID,
// which differs between them) and requires identical replies.
func (p clientPair) sameEach(cmd func(side int) []string) {
	p.t.Helper()
	var raws [2][]byte
	for i, c := range p.conns {
		raw, err := c.Call(cmd(i)...)
		if err != nil {
			p.t.Fatalf("%q on side %d: %v", cmd(i), i, err)
		}
		raws[i] = raw
	}
	if cmd(0)[0] == "HELLO" {
		return // server versions differ; TestDifferential* pins HELLO
	}
	if !bytes.Equal(raws[0], raws[1]) {
		p.t.Fatalf("%q: replies differ\n  redis:    %s\n  kvserver: %s", cmd(0), quoteTrunc(raws[0]), quoteTrunc(raws[1]))
	}
}

// send writes cmd to both servers without reading a reply.
func (p clientPair) send(cmd ...string) {
	p.t.Helper()
	p.pipeline(cmd)
}

// pipeline writes cmds to both servers in one write, reading nothing.
func (p clientPair) pipeline(cmds ...[]string) {
	p.t.Helper()
	var req []byte
	for _, cmd := range cmds {
		req = append(req, encodeCommand(cmd)...)
	}
	for _, c := range p.conns {
		c.Send(req)
	}
}

// nothingFor requires that neither server answers within d, both
// watched over the same span.
func (p clientPair) nothingFor(d time.Duration) {
	p.t.Helper()
	deadline := time.Now().Add(d)
	for i, c := range p.conns {
		if raw, err := readWithin(c, max(time.Until(deadline), time.Millisecond)); !isTimeoutErr(err) {
			p.t.Fatalf("side %d answered %s (%v) while it should wait", i, quoteTrunc(raw), err)
		}
	}
}

// read reads one reply from each server, waiting up to wait, and requires
// them identical.
func (p clientPair) read(wait time.Duration) {
	p.t.Helper()
	var raws [2][]byte
	for i, c := range p.conns {
		raw, err := readWithin(c, wait)
		if err != nil {
			p.t.Fatalf("side %d: no reply within %v: %v", i, wait, err)
		}
		raws[i] = raw
	}
	if !bytes.Equal(raws[0], raws[1]) {
		p.t.Fatalf("replies differ\n  redis:    %s\n  kvserver: %s", quoteTrunc(raws[0]), quoteTrunc(raws[1]))
	}
}

// stream pipelines cmds to both servers, then ECHO of a marker, and
// compares everything each sends back up to the marker's reply: for
// replies that CLIENT REPLY drops, and for EXEC replies it cuts short. The
// commands must leave replies on. Use it on a pair with no reply unread.
func (p clientPair) stream(cmds ...[]string) {
	p.t.Helper()
	const marker = "end-of-stream"
	var req []byte
	for _, cmd := range append(cmds, []string{"ECHO", marker}) {
		req = append(req, encodeCommand(cmd)...)
	}
	end := []byte("$" + strconv.Itoa(len(marker)) + "\r\n" + marker + "\r\n")
	var outs [2][]byte
	for i, c := range p.conns {
		c.Send(req)
		outs[i] = readUntil(p.t, c.conn, end)
	}
	if !bytes.Equal(outs[0], outs[1]) {
		p.t.Fatalf("%q: streams differ\n  redis:    %s\n  kvserver: %s", cmds, quoteTrunc(outs[0]), quoteTrunc(outs[1]))
	}
}

// readUntil reads conn until what it read ends with end, which it strips.
func readUntil(t *testing.T, conn net.Conn, end []byte) []byte {
	t.Helper()
	var out []byte
	buf := make([]byte, 64<<10)
	conn.SetReadDeadline(time.Now().Add(replyTimeout))
	for !bytes.HasSuffix(out, end) {
		n, err := conn.Read(buf)
		out = append(out, buf[:n]...)
		if err != nil {
			t.Fatalf("read %s: %v", quoteTrunc(out), err)
		}
	}
	return out[:len(out)-len(end)]
}

// ids returns the CLIENT ID of each side's connection.
func (p clientPair) ids() [2]string {
	p.t.Helper()
	var ids [2]string
	for i, c := range p.conns {
		r, err := parseReply(c.Do("CLIENT", "ID"))
		if err != nil {
			p.t.Fatal(err)
		}
		ids[i] = strconv.FormatInt(r.Int, 10)
	}
	return ids
}

// sameExtract runs cmd(side) on each side, keeps what keep extracts from
// the parsed reply, and requires the two identical: for replies that hold
// volatile fields beside the ones compared.
func (p clientPair) sameExtract(cmd func(side int) []string, keep func(text string) string) {
	p.t.Helper()
	var got [2]string
	for i, c := range p.conns {
		r, err := parseReply(c.Do(cmd(i)...))
		if err != nil {
			p.t.Fatal(err)
		}
		got[i] = keep(r.Str)
	}
	if got[0] != got[1] {
		p.t.Fatalf("%q: redis %q, kvserver %q", cmd(0), got[0], got[1])
	}
}

// infoFields compares the lines of INFO section that start with one of
// prefixes.
func (p clientPair) infoFields(section string, prefixes ...string) {
	p.t.Helper()
	p.sameExtract(func(int) []string { return []string{"INFO", section} }, func(text string) string {
		var kept []string
		for _, l := range strings.Split(text, "\r\n") {
			for _, pre := range prefixes {
				if strings.HasPrefix(l, pre) {
					kept = append(kept, l)
				}
			}
		}
		return strings.Join(kept, " ")
	})
}

// clientFlags compares the flags= and cmd= fields of CLIENT LIST ID for
// each side's client ids[side].
func (p clientPair) clientFlags(ids [2]string) {
	p.t.Helper()
	p.sameExtract(func(side int) []string { return []string{"CLIENT", "LIST", "ID", ids[side]} }, func(text string) string {
		var kept []string
		for _, f := range strings.Fields(text) {
			if strings.HasPrefix(f, "flags=") || strings.HasPrefix(f, "cmd=") {
				kept = append(kept, f)
			}
		}
		return strings.Join(kept, " ")
	})
}

// TestDifferentialClientReply pins CLIENT REPLY ON, OFF and SKIP: which
// replies reach the client, through errors, RESET, MULTI/EXEC and large
// values, in RESP2 and RESP3.
func TestDifferentialClientReply(t *testing.T) {
	t.Parallel()
	ref, kv := startRedis(t), startKVServer(t)
	big := strings.Repeat("v", 100<<10)
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprintf("RESP%d", proto), func(t *testing.T) {
			p := dialPair(t, ref, kv, proto)
			p.same("FLUSHALL")
			p.same("SET", "big", big)
			for _, tc := range []struct {
				name string
				cmds [][]string
			}{
				{"off then on", [][]string{
					{"CLIENT", "REPLY", "OFF"}, {"SET", "k", "1"}, {"GET", "k"}, {"NOSUCHCOMMAND"},
					{"GET"}, {"CLIENT", "REPLY", "SKIP"}, {"CLIENT", "REPLY", "ON"}, {"GET", "k"},
				}},
				{"skip", [][]string{{"CLIENT", "REPLY", "SKIP"}, {"GET", "k"}, {"GET", "k"}}},
				{"skip an error", [][]string{{"CLIENT", "REPLY", "SKIP"}, {"INCR", "big"}, {"PING"}}},
				{"skip twice", [][]string{{"CLIENT", "REPLY", "SKIP"}, {"CLIENT", "REPLY", "SKIP"}, {"GET", "k"}, {"PING"}}},
				{"skip then on", [][]string{{"CLIENT", "REPLY", "SKIP"}, {"CLIENT", "REPLY", "ON"}, {"PING"}}},
				{"skip, off, reset", [][]string{{"CLIENT", "REPLY", "SKIP"}, {"CLIENT", "REPLY", "OFF"}, {"GET", "k"}, {"RESET"}, {"GET", "k"}}},
				{"skip reset", [][]string{{"CLIENT", "REPLY", "SKIP"}, {"RESET"}, {"GET", "k"}}},
				{"skip a large value", [][]string{{"GET", "big"}, {"CLIENT", "REPLY", "SKIP"}, {"GET", "big"}, {"PING"}}},
				{"off with large values", [][]string{{"CLIENT", "REPLY", "OFF"}, {"GET", "big"}, {"GET", "big"}, {"CLIENT", "REPLY", "ON"}, {"STRLEN", "big"}}},
				{"off inside exec", [][]string{
					{"MULTI"}, {"CLIENT", "REPLY", "OFF"}, {"SET", "a", "b"}, {"GET", "a"}, {"EXEC"}, {"CLIENT", "REPLY", "ON"}, {"GET", "a"},
				}},
				{"on inside exec", [][]string{
					{"CLIENT", "REPLY", "OFF"}, {"MULTI"}, {"GET", "a"}, {"CLIENT", "REPLY", "ON"}, {"GET", "a"}, {"EXEC"}, {"PING"},
				}},
				{"skip exec", [][]string{{"MULTI"}, {"GET", "a"}, {"CLIENT", "REPLY", "SKIP"}, {"EXEC"}, {"PING"}}},
				{"skip inside exec", [][]string{{"MULTI"}, {"CLIENT", "REPLY", "SKIP"}, {"GET", "a"}, {"EXEC"}, {"GET", "a"}, {"PING"}}},
			} {
				t.Run(tc.name, func(t *testing.T) {
					p.t = t
					p.stream(tc.cmds...)
				})
			}
		})
	}
}

// TestDifferentialClientPause pins CLIENT PAUSE and UNPAUSE: which
// commands wait in WRITE and ALL mode, that they run once the pause ends or
// is lifted, how a second pause extends the first, and how a paused client
// shows in INFO and CLIENT LIST.
func TestDifferentialClientPause(t *testing.T) {
	t.Parallel()
	ref, kv := startRedis(t), startKVServer(t)
	const (
		quiet = 150 * time.Millisecond
		// long is a pause no step waits for: each ends with UNPAUSE.
		long = "60000"
		wait = 10 * time.Second
	)
	a, b := dialPair(t, ref, kv, 2), dialPair(t, ref, kv, 2)
	a.same("FLUSHALL")
	idB := b.ids()

	t.Run("write mode holds writes, not reads", func(t *testing.T) {
		a.same("CLIENT", "PAUSE", long, "WRITE")
		b.same("GET", "k")
		b.same("PING")
		b.same("INFO", "keyspace")
		b.send("SET", "k", "v")
		b.nothingFor(quiet)
		a.infoFields("clients", "blocked_clients", "clients_in_timeout_table")
		a.clientFlags(idB)
		// No CLIENT UNBLOCK of the paused client: redis-server 7.0.15
		// crashes on it (kvserver answers 0 and the command stays held).
		a.same("CLIENT", "UNPAUSE")
		b.read(wait)
		a.infoFields("clients", "blocked_clients")
		b.same("GET", "k")
	})
	t.Run("replies before a paused command are sent", func(t *testing.T) {
		a.same("CLIENT", "PAUSE", long, "WRITE")
		b.pipeline([]string{"GET", "k"}, []string{"SET", "k", "p"})
		b.read(wait)
		b.nothingFor(quiet)
		a.same("CLIENT", "UNPAUSE")
		b.read(wait)
	})
	t.Run("write mode holds PFCOUNT and EXEC of a write", func(t *testing.T) {
		b.same("MULTI")
		b.same("SET", "k", "w")
		a.same("CLIENT", "PAUSE", long, "WRITE")
		b.send("EXEC")
		b.nothingFor(quiet)
		a.same("CLIENT", "UNPAUSE")
		b.read(wait)
		a.same("CLIENT", "PAUSE", long, "WRITE")
		b.send("PFCOUNT", "h")
		b.nothingFor(quiet)
		a.same("CLIENT", "UNPAUSE")
		b.read(wait)
		a.same("CLIENT", "PAUSE", long, "WRITE")
		b.same("MULTI")
		b.same("GET", "k")
		b.same("EXEC")
		b.send("MULTI")
		b.read(wait)
		b.send("SET", "k", "queued")
		b.nothingFor(quiet)
		a.same("CLIENT", "UNPAUSE")
		b.read(wait)
		b.same("EXEC")
	})
	t.Run("all mode holds every command, UNPAUSE included", func(t *testing.T) {
		a.same("CLIENT", "PAUSE", "1000", "ALL")
		start := time.Now()
		b.send("PING")
		b.nothingFor(quiet)
		a.send("CLIENT", "UNPAUSE")
		a.nothingFor(quiet)
		a.read(wait)
		b.read(wait)
		if d := time.Since(start); d < 900*time.Millisecond {
			t.Fatalf("PING answered %v after a 1000ms pause began", d)
		}
	})
	t.Run("a pause ends by itself", func(t *testing.T) {
		a.same("CLIENT", "PAUSE", "1000", "WRITE")
		start := time.Now()
		b.send("SET", "k", "x")
		b.nothingFor(quiet)
		b.read(wait)
		if d := time.Since(start); d < 900*time.Millisecond {
			t.Fatalf("SET answered %v after a 1000ms pause began", d)
		}
	})
	t.Run("a second pause extends the first to the stricter mode", func(t *testing.T) {
		a.same("CLIENT", "PAUSE", "1000", "WRITE")
		a.same("CLIENT", "PAUSE", "50", "ALL")
		start := time.Now()
		b.send("GET", "k")
		b.nothingFor(quiet)
		b.read(wait)
		if d := time.Since(start); d < 900*time.Millisecond {
			t.Fatalf("GET answered %v into a pause extended to 1000ms", d)
		}
	})
	t.Run("a paused client that disconnects", func(t *testing.T) {
		c := dialPair(t, ref, kv, 2)
		a.same("CLIENT", "PAUSE", long, "WRITE")
		c.send("SET", "gone", "1")
		c.nothingFor(quiet)
		for _, conn := range c.conns {
			conn.Close()
		}
		a.same("CLIENT", "UNPAUSE")
		b.same("PING")
	})
}

// TestDifferentialClientUnblock pins CLIENT UNBLOCK on a client blocked in
// WAIT (the blocking command kvserver has today): TIMEOUT answers what the
// timeout would, ERROR answers UNBLOCKED, a client is unblocked once, and
// INFO and CLIENT LIST show the blocked client.
func TestDifferentialClientUnblock(t *testing.T) {
	t.Parallel()
	ref, kv := startRedis(t), startKVServer(t)
	const (
		quiet = 150 * time.Millisecond
		wait  = 10 * time.Second
	)
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprintf("RESP%d", proto), func(t *testing.T) {
			a, b := dialPair(t, ref, kv, proto), dialPair(t, ref, kv, proto)
			idB := b.ids()
			each := func(args ...string) func(int) []string {
				return func(side int) []string { return append(append([]string(nil), args...), idB[side]) }
			}
			a.infoFields("clients", "blocked_clients", "clients_in_timeout_table")
			a.sameEach(each("CLIENT", "UNBLOCK"))

			b.send("WAIT", "1", "0")
			b.nothingFor(quiet)
			a.infoFields("clients", "blocked_clients", "clients_in_timeout_table")
			a.clientFlags(idB)
			a.sameEach(each("CLIENT", "UNBLOCK"))
			b.read(wait)
			a.sameEach(each("CLIENT", "UNBLOCK"))
			a.infoFields("clients", "blocked_clients", "clients_in_timeout_table")

			b.send("WAIT", "2", "60000")
			b.nothingFor(quiet)
			a.infoFields("clients", "blocked_clients", "clients_in_timeout_table")
			a.sameEach(func(side int) []string { return []string{"CLIENT", "UNBLOCK", idB[side], "ERROR"} })
			b.read(wait)
			a.sameEach(func(side int) []string { return []string{"CLIENT", "UNBLOCK", idB[side], "ERROR"} })

			b.send("WAIT", "1", "0")
			b.nothingFor(quiet)
			a.sameEach(func(side int) []string { return []string{"CLIENT", "UNBLOCK", idB[side], "timeout"} })
			b.read(wait)

			// A reply pipelined before the blocking command is sent at once.
			b.pipeline([]string{"SET", "k", "v"}, []string{"WAIT", "1", "0"})
			b.read(wait)
			b.nothingFor(quiet)
			a.sameEach(each("CLIENT", "UNBLOCK"))
			b.read(wait)

			b.same("WAIT", "1", "100")
			b.same("PING")
			a.infoFields("clients", "blocked_clients", "clients_in_timeout_table")
		})
	}
}
