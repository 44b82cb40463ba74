package server

import (
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkTypeWrites replays what kvbench types sends for its write
// tests (redis-benchmark -t hset,sadd,zadd -r 100000 -n 50000): one key
// that grows by random members "element:<12 digits>" of 100000, with a
// random score for ZADD, through a real connection and the real
// dispatch, 64 commands a batch. Every 50000 commands the key is deleted,
// as kvbench flushes between rounds, so the container grows again from
// empty to about 40000 members. HSET is the yardstick: issue 14 measured
// ZADD and SADD costlier than it per command.
func BenchmarkTypeWrites(b *testing.B) {
	for _, tc := range []struct {
		name, key string
		command   func(r *rand.Rand) []string
	}{
		{"HSET", "myhash", func(r *rand.Rand) []string {
			return []string{"HSET", "myhash", benchElement(r), "xxx"}
		}},
		{"SADD", "myset", func(r *rand.Rand) []string {
			return []string{"SADD", "myset", benchElement(r)}
		}},
		{"ZADD", "myzset", func(r *rand.Rand) []string {
			return []string{"ZADD", "myzset", strconv.Itoa(r.IntN(100000)), benchElement(r)}
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			const round, batch = 50000, 64
			r := rand.New(rand.NewPCG(1, 2))
			reqs := make([][]byte, round)
			for i := range reqs {
				reqs[i] = encodeCommand(tc.command(r))
			}
			reqs = append(reqs, encodeCommand([]string{"DEL", tc.key}))
			as := startAdminServer(b, Options{})
			c := as.dial(b)
			c.conn.SetReadDeadline(time.Time{})
			var out []byte
			next := 0
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i += batch {
				out = out[:0]
				for range batch {
					out = append(out, reqs[next]...)
					next = (next + 1) % len(reqs)
				}
				if _, err := c.conn.Write(out); err != nil {
					b.Fatal(err)
				}
				for range batch {
					line, err := c.rd.ReadSlice('\n')
					if err != nil || line[0] != ':' {
						b.Fatalf("reply %q, %v", line, err)
					}
				}
			}
		})
	}
}

// benchElement is redis-benchmark's "element:__rand_int__" for -r 100000.
func benchElement(r *rand.Rand) string {
	return fmt.Sprintf("element:%012d", r.IntN(100000))
}

// encodeCommand is args as a RESP array of bulk strings.
func encodeCommand(args []string) []byte {
	b := fmt.Appendf(nil, "*%d\r\n", len(args))
	for _, a := range args {
		b = fmt.Appendf(b, "$%d\r\n%s\r\n", len(a), a)
	}
	return b
}

// BenchmarkPipelinedStrings measures the per-command cost of the dispatch
// path: GET and SET of a 16-byte value, 64 commands a batch through a real
// connection, so the system calls are shared and what remains is the
// server's own work per command (parse, lookup, checks, engine step,
// metrics, reply).
func BenchmarkPipelinedStrings(b *testing.B) {
	const value, batch = "0123456789abcdef", 64
	for _, tc := range []struct {
		name  string
		args  []string
		reply string
	}{
		{"SET", []string{"SET", "key:1", value}, "+OK\r\n"},
		{"GET", []string{"GET", "key:1"}, "$16\r\n" + value + "\r\n"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			as := startAdminServer(b, Options{})
			c := as.dial(b)
			if got := c.do("SET", "key:1", value); got != "+OK\r\n" {
				b.Fatalf("SET = %q", got)
			}
			benchRoundTrips(b, c, strings.Repeat(string(encodeCommand(tc.args)), batch), strings.Repeat(tc.reply, batch), batch)
		})
	}
}

// benchRoundTrips sends req and reads exactly want, over and over, until
// b.N operations (perRound a round trip) are done.
func benchRoundTrips(b *testing.B, c *adminConn, req, want string, perRound int) {
	b.Helper()
	c.conn.SetReadDeadline(time.Time{})
	out, buf := []byte(req), make([]byte, len(want))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += perRound {
		if _, err := c.conn.Write(out); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(c.rd, buf); err != nil || string(buf) != want {
			b.Fatalf("replies %q, %v", buf, err)
		}
	}
}
