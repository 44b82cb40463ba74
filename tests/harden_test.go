package tests

import (
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"sync"
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

// growingCollection is one collection a crash test grows by batches of
// hardenBatch elements, element i being strconv.Itoa(i).
type growingCollection struct {
	key string
	// add is the command that appends elements [from, from+n).
	add func(key string, from, n int) []string
	// read returns the collection's elements as numbers, in any order.
	read []string
	// ordered: read returns the elements in insertion order (a list).
	ordered bool
	mu      sync.Mutex
	acks    []crashAck // acks[i].seq: batches acknowledged by then
}

const hardenBatch = 100

// TestKillNineDuringCollectionGrowthKeepsAcknowledgedPrefixes grows a
// hash, a sorted set, a set and a list by batches of elements from four
// writers, with --maxmemory small enough that the collections are demoted
// whole and promoted again while they grow, and kills the server with
// SIGKILL. After the restart every collection must decode and hold
// exactly its first k batches, k at least what was acknowledged
// durabilityBound before the kill: never torn, never a batch in part.
func TestKillNineDuringCollectionGrowthKeepsAcknowledgedPrefixes(t *testing.T) {
	if diffAgainstRedis() {
		t.Skip("kvserver's disk tier has no Redis counterpart")
	}
	s := startKVServer(t, "--maxmemory", "16mb")
	members := func(cmd, key string, from, n int, score bool) []string {
		args := []string{cmd, key}
		for i := from; i < from+n; i++ {
			if score {
				args = append(args, strconv.Itoa(i))
			}
			args = append(args, strconv.Itoa(i))
		}
		return args
	}
	cols := []*growingCollection{
		{key: "h", read: []string{"HKEYS", "h"}, add: func(k string, from, n int) []string {
			return members("HSET", k, from, n, true) // field i, value i
		}},
		{key: "z", read: []string{"ZRANGE", "z", "0", "-1"}, add: func(k string, from, n int) []string {
			return members("ZADD", k, from, n, true)
		}},
		{key: "s", read: []string{"SMEMBERS", "s"}, add: func(k string, from, n int) []string {
			return members("SADD", k, from, n, false)
		}},
		{key: "l", read: []string{"LRANGE", "l", "0", "-1"}, ordered: true, add: func(k string, from, n int) []string {
			return members("RPUSH", k, from, n, false)
		}},
	}
	var wg sync.WaitGroup
	for _, col := range cols {
		wc := dialRaw(t, s.Addr)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for batch := 0; ; {
				raw, err := wc.Call(col.add(col.key, batch*hardenBatch, hardenBatch)...)
				if err != nil {
					return // the kill
				}
				if raw[0] == '-' { // OOM while nothing can be demoted: retry
					time.Sleep(50 * time.Millisecond)
					continue
				}
				batch++
				col.mu.Lock()
				col.acks = append(col.acks, crashAck{batch, time.Now()})
				col.mu.Unlock()
			}
		}()
	}
	time.Sleep(durabilityBound + 4*time.Second)
	info, err := infoFields(dialRaw(t, s.Addr), "tiers")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("before the kill: %s demotions, %s promotions", info["tier_memory_demotions"], info["tier_memory_promotions"])
	if info["tier_memory_demotions"] == "0" {
		t.Error("no collection was demoted: the kill did not come amid demotions")
	}
	s.Crash()
	killedAt := time.Now()
	wg.Wait()

	s.Relaunch(t)
	c := dialRaw(t, s.Addr)
	for _, col := range cols {
		var must, sent int
		for _, a := range col.acks {
			if a.at.Before(killedAt.Add(-durabilityBound)) {
				must = a.seq
			}
		}
		if n := len(col.acks); n > 0 {
			sent = col.acks[n-1].seq + 1 // one more may have been applied, unacknowledged
		}
		raw, err := c.Call(col.read...)
		if err != nil {
			t.Fatalf("%s: %v", quoteArgs(col.read), err)
		}
		r, err := parseReply(raw)
		if err != nil || r.IsError() {
			t.Fatalf("%s after the restart: %.200q %v", quoteArgs(col.read), raw, err)
		}
		got := make([]int, 0, len(r.Elems))
		for _, e := range r.Elems {
			n, err := strconv.Atoi(e.Str)
			if err != nil {
				t.Fatalf("%s: element %q", col.key, e.Str)
			}
			got = append(got, n)
		}
		if !col.ordered {
			slices.Sort(got)
		}
		for i, n := range got {
			if n != i {
				t.Fatalf("%s: element %d is %d: not a prefix of what was written", col.key, i, n)
			}
		}
		if len(got)%hardenBatch != 0 {
			t.Errorf("%s: %d elements, a batch in part", col.key, len(got))
		}
		batches := len(got) / hardenBatch
		if batches < must || batches > sent {
			t.Errorf("%s: %d batches after the restart, want %d..%d (acknowledged %v before the kill, %d in all)",
				col.key, batches, must, sent, durabilityBound, len(col.acks))
		}
		t.Logf("%s: %d elements after the restart; %d batches acknowledged, %d of them %v before the kill",
			col.key, len(got), len(col.acks), must, durabilityBound)
	}
}

// TestUnreadCollectionRepliesStayWithinTheMemoryBound has 60 clients ask
// for the whole of a 2M-element list (a 44 MB reply each) and never read:
// the replies wait for the large-value budget like values read from disk,
// so the process stays within --maxmemory + 1 GiB and clients that hold
// budget without reading are disconnected. Before replies of @slow
// commands took budget, the 60 replies were built at once: 3 GB resident
// with --maxmemory 256mb.
func TestUnreadCollectionRepliesStayWithinTheMemoryBound(t *testing.T) {
	if diffAgainstRedis() {
		t.Skip("redis-server builds every reply (no output limit for normal clients by default)")
	}
	s := startKVServer(t, "--maxmemory", "256mb")
	c := dialRaw(t, s.Addr)
	const elements, batch = 2_000_000, 10_000
	for from := 0; from < elements; from += batch {
		args := []string{"RPUSH", "l"}
		for i := from; i < from+batch; i++ {
			args = append(args, fmt.Sprintf("element-%08d", i))
		}
		if raw, err := c.Call(args...); err != nil || raw[0] != ':' {
			t.Fatalf("RPUSH: %.80q %v", raw, err)
		}
	}
	rss := watchRSS(s.Cmd.Process.Pid)
	var conns []*net.TCPConn
	defer func() {
		for _, conn := range conns {
			conn.Close()
		}
	}()
	for range 60 {
		conn, err := net.Dial("tcp", s.Addr)
		if err != nil {
			t.Fatal(err)
		}
		tc := conn.(*net.TCPConn)
		tc.SetReadBuffer(4096)
		conns = append(conns, tc)
		if _, err := tc.Write(encodeCommand([]string{"LRANGE", "l", "0", "-1"})); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(12 * time.Second)
	checkReply(t, c, "+PONG\r\n", "PING")
	info, err := infoFields(c, "stats")
	if err != nil {
		t.Fatal(err)
	}
	peak := rss.peak(t)
	t.Logf("peak resident %d MiB, %s clients evicted", peak>>20, info["evicted_clients"])
	if peak > (256+1024)<<20 {
		t.Errorf("peak resident size %d MiB, want within --maxmemory + 1 GiB (1280 MiB)", peak>>20)
	}
}
