package tests

import (
	"io"
	"net"
	"testing"
	"time"
)

// TestRandomPicksWithHugeNegativeCountsStayBounded asks each family's
// random pick with repetition for 4e9 members of a small collection: Redis
// builds that reply until its memory runs out, under its one thread.
// kvserver sends a bounded part of it (maxRandomReply), closes the
// connection, and goes on serving with its resident size bounded.
// SRANDMEMBER once built the whole reply (6.7 GB resident, the engine lock
// held for minutes).
func TestRandomPicksWithHugeNegativeCountsStayBounded(t *testing.T) {
	if diffAgainstRedis() {
		t.Skip("redis-server would build the reply until it runs out of memory")
	}
	s := startKVServer(t)
	c := dialRaw(t, s.Addr)
	checkReply(t, c, ":3\r\n", "SADD", "s", "a", "b", "c")
	checkReply(t, c, ":2\r\n", "HSET", "h", "a", "1", "b", "2")
	rss := watchRSS(s.Cmd.Process.Pid)
	for _, args := range [][]string{
		{"SRANDMEMBER", "s", "-4000000000"},
		{"SRANDMEMBER", "s", "-9223372036854775807"},
		{"HRANDFIELD", "h", "-4000000000"},
		{"HRANDFIELD", "h", "-4000000000", "WITHVALUES"},
	} {
		conn, err := net.Dial("tcp", s.Addr)
		if err != nil {
			t.Fatal(err)
		}
		conn.SetDeadline(time.Now().Add(60 * time.Second))
		if _, err := conn.Write(encodeCommand(args)); err != nil {
			t.Fatal(err)
		}
		n, err := io.Copy(io.Discard, conn)
		conn.Close()
		if err != nil && !connClosedErr(err) {
			t.Fatalf("%s: after %d bytes: %v, want the server to close the connection", quoteArgs(args), n, err)
		}
		if n < 1<<20 || n > 256<<20 {
			t.Errorf("%s: got %d bytes before the close, want a bounded part of the reply", quoteArgs(args), n)
		}
		checkReply(t, c, "+PONG\r\n", "PING")
	}
	if peak := rss.peak(t); peak > 1<<30 {
		t.Errorf("peak resident size %d MiB, want under 1 GiB", peak>>20)
	}
}
