package tests

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kvserver/kvserver/respclient"
)

// Issue 12 points 4, 7 and the idle timeout of 9: one memory budget for
// request values, values loaded for replies and queued replies, with
// back-pressure; no command deadlocks on it; dead or stalled connections
// give it back; the idle timeout counts from the last byte received.
//
// The clients here keep their memory small: every large value is streamed
// from one shared buffer (with a per-key prefix), and large replies are
// discarded as they are read.

// streamConn is a bare client connection for large values.
type streamConn struct {
	conn net.Conn
	rd   *respclient.Reader
}

func dialStream(t testing.TB, addr string) *streamConn {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { conn.Close() })
	return &streamConn{conn: conn, rd: respclient.NewReader(conn, 4096)}
}

// bigArg is a command argument: small is sent as is; otherwise n bytes made
// of prefix followed by the start of shared.
type bigArg struct {
	small  string
	prefix string
	n      int
}

func smallArg(s string) bigArg { return bigArg{small: s, n: -1} }

// valueArg is the value of key: a prefix naming it, then shared bytes.
func valueArg(key string, n int) bigArg { return bigArg{prefix: "<" + key + ">", n: n} }

// send writes a command, streaming large arguments from shared. With
// headerOnly set on the last argument, only its length line is sent.
func (c *streamConn) send(shared []byte, args []bigArg, lastHeaderOnly bool) error {
	c.conn.SetWriteDeadline(time.Now().Add(3 * time.Minute))
	var hdr []byte
	hdr = fmt.Appendf(hdr, "*%d\r\n", len(args))
	for i, a := range args {
		if a.n < 0 {
			hdr = fmt.Appendf(hdr, "$%d\r\n%s\r\n", len(a.small), a.small)
			continue
		}
		hdr = fmt.Appendf(hdr, "$%d\r\n", a.n)
		if i == len(args)-1 && lastHeaderOnly {
			break
		}
		hdr = append(hdr, a.prefix...)
		if _, err := c.conn.Write(hdr); err != nil {
			return err
		}
		hdr = hdr[:0]
		if _, err := c.conn.Write(shared[:a.n-len(a.prefix)]); err != nil {
			return err
		}
		hdr = append(hdr, "\r\n"...)
	}
	_, err := c.conn.Write(hdr)
	return err
}

// readLine reads a one-line reply (+OK, -ERR ..., :n) within d and
// returns it without its CRLF.
func (c *streamConn) readLine(d time.Duration) (string, error) {
	c.conn.SetReadDeadline(time.Now().Add(d))
	line, err := c.rd.ReadLine()
	return string(line), err
}

// readBulkLen reads a bulk reply, discarding its bytes, and returns its
// length and its first bytes.
func (c *streamConn) readBulkLen(d time.Duration) (int, string, error) {
	c.conn.SetReadDeadline(time.Now().Add(d))
	n, err := c.rd.ReadBulkLen()
	if err != nil || n < 0 {
		return n, "", err
	}
	head := make([]byte, min(n, 32))
	if err := c.rd.ReadBody(n, head); err != nil {
		return 0, "", err
	}
	return n, string(head), nil
}

// rssWatch samples a process's resident size and, at the end, its peak
// (VmHWM, which the kernel keeps, so no short peak is missed).
type rssWatch struct {
	pid  int
	stop chan struct{}
	done chan struct{}
	max  atomic.Int64
}

func watchRSS(pid int) *rssWatch {
	w := &rssWatch{pid: pid, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for {
			if rss, _ := procStatusKB(pid, "VmRSS:"); rss<<10 > w.max.Load() {
				w.max.Store(rss << 10)
			}
			select {
			case <-w.stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	return w
}

// peak stops sampling and returns the process's peak resident size.
func (w *rssWatch) peak(t *testing.T) int64 {
	t.Helper()
	close(w.stop)
	<-w.done
	hwm, err := procStatusKB(w.pid, "VmHWM:")
	if err != nil {
		t.Fatal(err)
	}
	return max(hwm<<10, w.max.Load())
}

// procStatusKB reads a kB field of /proc/<pid>/status.
func procStatusKB(pid int, field string) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field); ok {
			return strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}

// pinger measures PING round trips on its own connection until stopped.
type pinger struct {
	stop chan struct{}
	done chan struct{}
	rtts []time.Duration
	err  error
}

func startPinger(t *testing.T, addr string) *pinger {
	c := dialStream(t, addr)
	p := &pinger{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		for {
			select {
			case <-p.stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			start := time.Now()
			c.conn.SetWriteDeadline(start.Add(30 * time.Second))
			if _, err := c.conn.Write([]byte("PING\r\n")); err != nil {
				p.err = err
				return
			}
			line, err := c.readLine(30 * time.Second)
			if err != nil || line != "+PONG" {
				p.err = fmt.Errorf("PING: %q, %v", line, err)
				return
			}
			p.rtts = append(p.rtts, time.Since(start))
		}
	}()
	return p
}

// result stops the pinger and returns its p99 and worst round trip.
func (p *pinger) result(t *testing.T) (p99, worst time.Duration) {
	t.Helper()
	close(p.stop)
	<-p.done
	if p.err != nil {
		t.Errorf("pinger: %v", p.err)
	}
	if len(p.rtts) == 0 {
		t.Fatal("no PING answered")
	}
	slices.Sort(p.rtts)
	return p.rtts[len(p.rtts)*99/100], p.rtts[len(p.rtts)-1]
}

const (
	stormMaxMemory = 256 << 20
	// stormBound is the README's promise: maxmemory plus 1 GiB.
	stormBound = stormMaxMemory + 1<<30
	stormValue = 32 << 20
	// stormPingP99 is a generous bound for PING during a storm on a
	// loaded two-core machine (it was 1.9 s without the budget for
	// replies).
	stormPingP99 = time.Second
)

// TestSetStormStaysWithinTheMemoryBound: 150 clients each SET 32 MiB
// values for two rounds (9.4 GiB) into a server with --maxmemory 256mb.
// Every SET succeeds (the disk is healthy, so the demoter always makes
// progress and nothing gets OOM), the process stays under maxmemory +
// 1 GiB, and PING stays answered.
func TestSetStormStaysWithinTheMemoryBound(t *testing.T) {
	if diffAgainstRedis() {
		t.Skip("kvserver's memory bound")
	}
	if raceEnabled {
		t.Skip("memory-bound storm: 9.4 GiB through the race detector's client takes too long")
	}
	const conns, rounds = 150, 2
	raiseNoFileLimit(t, 4*conns)
	s := startKVServer(t, "--maxmemory", strconv.Itoa(stormMaxMemory))
	shared := randomBytes(12, stormValue)
	rss := watchRSS(s.Cmd.Process.Pid)
	ping := startPinger(t, s.Addr)
	var oom, failed atomic.Int64
	var wg sync.WaitGroup
	for i := range conns {
		c := dialStream(t, s.Addr)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				key := fmt.Sprintf("storm:%d", i*rounds+r)
				if err := c.send(shared, []bigArg{smallArg("SET"), smallArg(key), valueArg(key, stormValue)}, false); err != nil {
					t.Errorf("SET %s: %v", key, err)
					failed.Add(1)
					return
				}
				line, err := c.readLine(5 * time.Minute)
				switch {
				case err != nil:
					t.Errorf("SET %s: %v", key, err)
					failed.Add(1)
					return
				case strings.HasPrefix(line, "-OOM"):
					oom.Add(1)
				case line != "+OK":
					t.Errorf("SET %s: %q", key, line)
					failed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	peak := rss.peak(t)
	p99, worst := ping.result(t)
	t.Logf("SET storm: %d clients x %d rounds x %d MiB: peak RSS %d MiB (bound %d MiB), %d OOM, %d failed, PING p99 %v max %v",
		conns, rounds, stormValue>>20, peak>>20, stormBound>>20, oom.Load(), failed.Load(), p99, worst)
	if peak > stormBound {
		t.Errorf("peak RSS %d MiB above maxmemory + 1 GiB = %d MiB", peak>>20, stormBound>>20)
	}
	if oom.Load() > 0 {
		t.Errorf("%d of %d SETs got OOM on a healthy disk", oom.Load(), conns*rounds)
	}
	if p99 > stormPingP99 {
		t.Errorf("PING p99 %v during the storm, want under %v", p99, stormPingP99)
	}
	c := dialStream(t, s.Addr)
	if err := c.send(nil, []bigArg{smallArg("GET"), smallArg("storm:0")}, false); err != nil {
		t.Fatal(err)
	}
	if n, head, err := c.readBulkLen(time.Minute); err != nil || n != stormValue || !strings.HasPrefix(head, "<storm:0>") {
		t.Errorf("GET storm:0 after the storm: %d bytes %q, %v", n, head, err)
	}
}

// TestUnreadGetStormStaysWithinTheMemoryBound: 120 clients each GET a
// different 32 MiB value that is only on disk and never read the reply
// (3.75 GiB of replies). The loaded values wait for the budget, the
// clients that hold it without reading are closed after the grace while
// the others wait (INFO evicted_clients), the process stays under
// maxmemory + 1 GiB and PING stays answered.
func TestUnreadGetStormStaysWithinTheMemoryBound(t *testing.T) {
	if diffAgainstRedis() {
		t.Skip("kvserver's memory bound")
	}
	const conns, extra = 120, 12
	raiseNoFileLimit(t, 4*conns)
	s := startKVServer(t, "--maxmemory", strconv.Itoa(stormMaxMemory))
	shared := randomBytes(13, stormValue)
	// Fill: the first keys written are the first demoted; the last extra
	// ones keep the memory tier full of other values.
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 4 {
		c := dialStream(t, s.Addr)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.conn.Close()
			for {
				i := next.Add(1) - 1
				if i >= conns+extra {
					return
				}
				key := fmt.Sprintf("cold:%d", i)
				if err := c.send(shared, []bigArg{smallArg("SET"), smallArg(key), valueArg(key, stormValue)}, false); err != nil {
					t.Errorf("SET %s: %v", key, err)
					return
				}
				if line, err := c.readLine(5 * time.Minute); err != nil || line != "+OK" {
					t.Errorf("SET %s: %q %v", key, line, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	ctl := dialRaw(t, s.Addr)
	base, err := procStatusKB(s.Cmd.Process.Pid, "VmRSS:")
	if err != nil {
		t.Fatal(err)
	}
	rss := watchRSS(s.Cmd.Process.Pid)
	ping := startPinger(t, s.Addr)
	for i := range conns {
		c := dialStream(t, s.Addr)
		key := fmt.Sprintf("cold:%d", i)
		if err := c.send(nil, []bigArg{smallArg("GET"), smallArg(key)}, false); err != nil {
			t.Fatalf("GET %s: %v", key, err)
		}
	}
	// Without the bound every reply is loaded at once; with it, groups of
	// budget-sized replies are loaded and their unread clients closed,
	// about 2 s per group, while others wait. The last group stays: once
	// nobody waits, holding the budget harms nobody.
	const lastGroup = 256 << 20 / stormValue
	deadline := time.Now().Add(2 * time.Minute)
	var info map[string]string
	for time.Now().Before(deadline) {
		time.Sleep(500 * time.Millisecond)
		if info, err = infoFields(ctl, "clients"); err != nil {
			t.Fatal(err)
		}
		if n, _ := strconv.Atoi(info["connected_clients"]); n <= 2+lastGroup {
			break
		}
		if rss.max.Load() > 2*stormBound {
			break // far over already: no need to wait for the rest
		}
	}
	peak := rss.peak(t)
	p99, worst := ping.result(t)
	stats, err := infoFields(ctl, "stats")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("unread GET storm: %d clients x %d MiB disk-only: peak RSS %d MiB (%d MiB before the storm, bound %d MiB), connected_clients %s, evicted_clients %s, PING p99 %v max %v",
		conns, stormValue>>20, peak>>20, base>>10, stormBound>>20, info["connected_clients"], stats["evicted_clients"], p99, worst)
	if peak > stormBound {
		t.Errorf("peak RSS %d MiB above maxmemory + 1 GiB = %d MiB", peak>>20, stormBound>>20)
	}
	if n, _ := strconv.Atoi(info["connected_clients"]); n > 2+lastGroup {
		t.Errorf("%s clients still connected: clients holding the budget without reading were not closed", info["connected_clients"])
	}
	if p99 > stormPingP99 {
		t.Errorf("PING p99 %v during the storm, want under %v", p99, stormPingP99)
	}
	c := dialStream(t, s.Addr)
	if err := c.send(nil, []bigArg{smallArg("GET"), smallArg("cold:7")}, false); err != nil {
		t.Fatal(err)
	}
	if n, head, err := c.readBulkLen(time.Minute); err != nil || n != stormValue || !strings.HasPrefix(head, "<cold:7>") {
		t.Errorf("GET cold:7 after the storm: %d bytes %q, %v", n, head, err)
	}
}

// overBudget is more than half of the default in-flight budget (256 MiB):
// two such values in one command exceed it.
const overBudget = 200_000_000

// TestOverBudgetMSETCompletes: MSET a <200 MB> b <200 MB> is larger than
// the whole budget; it is admitted alone instead of waiting forever for
// the bytes its own first value holds.
func TestOverBudgetMSETCompletes(t *testing.T) {
	if diffAgainstRedis() {
		t.Skip("kvserver's request budget")
	}
	s := startKVServer(t)
	shared := randomBytes(14, overBudget)
	c := dialStream(t, s.Addr)
	err := c.send(shared, []bigArg{smallArg("MSET"), smallArg("a"), valueArg("a", overBudget), smallArg("b"), valueArg("b", overBudget)}, false)
	if err != nil {
		t.Fatalf("send MSET: %v", err)
	}
	if line, err := c.readLine(time.Minute); err != nil || line != "+OK" {
		t.Fatalf("MSET a <200 MB> b <200 MB>: %q, %v", line, err)
	}
	ctl := dialRaw(t, s.Addr)
	checkReply(t, ctl, ":200000000\r\n", "STRLEN", "b")
	mem, err := infoFields(ctl, "memory")
	if err != nil {
		t.Fatal(err)
	}
	if mem["mem_clients_normal"] != "0" {
		t.Errorf("mem_clients_normal %s after the MSET, want 0 (its budget returned)", mem["mem_clients_normal"])
	}
	// A clean stop would write the 400 MB out first.
	ctl.Do("FLUSHALL")
}

// TestBudgetOfAWaitingConnectionReturnsWhenItCloses: a client that holds
// part of the budget and waits for more gives it back when it closes its
// connection or is killed with CLIENT KILL; another client can then send
// what fits beside the remaining holder. The remaining holder stalls in
// the middle of a value but has CLIENT NO-EVICT, so it is not closed and
// completes its SET afterwards.
func TestBudgetOfAWaitingConnectionReturnsWhenItCloses(t *testing.T) {
	if diffAgainstRedis() {
		t.Skip("kvserver's request budget")
	}
	s := startKVServer(t)
	shared := randomBytes(15, overBudget)
	ctl := dialRaw(t, s.Addr)

	// holder takes 200 MB of the 256 MiB budget and stalls in its value.
	holder := dialStream(t, s.Addr)
	if err := holder.send(nil, []bigArg{smallArg("CLIENT"), smallArg("NO-EVICT"), smallArg("on")}, false); err != nil {
		t.Fatal(err)
	}
	if line, err := holder.readLine(10 * time.Second); err != nil || line != "+OK" {
		t.Fatalf("CLIENT NO-EVICT on: %q, %v", line, err)
	}
	if err := holder.send(nil, []bigArg{smallArg("SET"), smallArg("held"), valueArg("held", overBudget)}, true); err != nil {
		t.Fatal(err)
	}
	waitUsed := func(want int64) {
		t.Helper()
		var got string
		for range 100 {
			mem, err := infoFields(ctl, "memory")
			if err != nil {
				t.Fatal(err)
			}
			if got = mem["mem_clients_normal"]; got == strconv.FormatInt(want, 10) {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatalf("mem_clients_normal %s, want %d", got, want)
	}
	waitUsed(overBudget)

	for _, how := range []string{"close", "CLIENT KILL"} {
		// waiter takes 50 MB, then waits for 200 MB more.
		waiter := dialStream(t, s.Addr)
		if err := waiter.send(nil, []bigArg{smallArg("CLIENT"), smallArg("ID")}, false); err != nil {
			t.Fatal(err)
		}
		idLine, err := waiter.readLine(10 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		err = waiter.send(shared, []bigArg{smallArg("MSET"), smallArg("w1"), valueArg("w1", 50_000_000), smallArg("w2"), valueArg("w2", overBudget)}, true)
		if err != nil {
			t.Fatal(err)
		}
		waitUsed(overBudget + 50_000_000)
		if how == "close" {
			waiter.conn.Close()
		} else {
			checkReply(t, ctl, ":1\r\n", "CLIENT", "KILL", "ID", strings.TrimPrefix(idLine, ":"))
		}
		// 60 MB fit beside the holder's 200 MB only once the waiter's
		// 50 MB are back.
		other := dialStream(t, s.Addr)
		if err := other.send(shared, []bigArg{smallArg("SET"), smallArg("other"), valueArg("other", 60_000_000)}, false); err != nil {
			t.Fatal(err)
		}
		if line, err := other.readLine(30 * time.Second); err != nil || line != "+OK" {
			t.Fatalf("after %s of a waiting client: SET of 60 MB beside a 200 MB holder: %q, %v", how, line, err)
		}
		other.conn.Close()
		waitUsed(overBudget)
	}

	// The holder stalled while others waited, but has NO-EVICT: it is
	// still connected and its SET completes.
	holder.conn.SetWriteDeadline(time.Now().Add(time.Minute))
	if _, err := holder.conn.Write(append([]byte("<held>"), shared[:overBudget-len("<held>")]...)); err != nil {
		t.Fatalf("holder finishing its value: %v", err)
	}
	if _, err := holder.conn.Write([]byte("\r\n")); err != nil {
		t.Fatal(err)
	}
	if line, err := holder.readLine(time.Minute); err != nil || line != "+OK" {
		t.Fatalf("holder's SET: %q, %v", line, err)
	}
	waitUsed(0)
	ctl.Do("FLUSHALL")
}

// TestIdleTimeoutCountsFromTheLastByteReceived: with --timeout 1, a client
// that takes 4 s to send a 2 MiB SET, never pausing 1 s, is not idle and
// gets +OK; once it sends nothing for the timeout it is closed.
func TestIdleTimeoutCountsFromTheLastByteReceived(t *testing.T) {
	if diffAgainstRedis() {
		t.Skip("kvserver sends a large value's bytes straight into its buffer")
	}
	s := startKVServer(t, "--timeout", "1")
	const size, piece = 2 << 20, 64 << 10
	value := randomBytes(16, size)
	c := dialStream(t, s.Addr)
	if _, err := fmt.Fprintf(c.conn, "*3\r\n$3\r\nSET\r\n$4\r\nslow\r\n$%d\r\n", size); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for off := 0; off < size; off += piece {
		time.Sleep(120 * time.Millisecond)
		if _, err := c.conn.Write(value[off : off+piece]); err != nil {
			t.Fatalf("after %v, %d of %d bytes sent: %v", time.Since(start).Round(time.Millisecond), off, size, err)
		}
	}
	if _, err := c.conn.Write([]byte("\r\n")); err != nil {
		t.Fatal(err)
	}
	line, err := c.readLine(10 * time.Second)
	if err != nil || line != "+OK" {
		t.Fatalf("SET sent over %v with --timeout 1: %q, %v", time.Since(start).Round(time.Millisecond), line, err)
	}
	// Now idle: closed after about a second.
	c.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.rd.ReadLine(); !errors.Is(err, io.EOF) && !connClosedErr(err) {
		t.Fatalf("idle client: read %v, want the connection closed", err)
	}
	checkReply(t, dialRaw(t, s.Addr), ":2097152\r\n", "STRLEN", "slow")
}
