package tests

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// peakRSS reads a process's peak resident set (VmHWM) in bytes.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc status")
	return 0
}

// TestManyLargeWritesStayWithinTheMemoryBound has 150 connections each send
// a 32 MiB SET at once (4.7 GiB in flight from the clients' side) to a
// server bounded at 256 MiB: every write succeeds, and the process never
// grows past maxmemory plus the documented margin (256 MiB of request
// values in flight, the disk tier's memtables and caches, and the Go
// runtime), because request values wait for the in-flight budget and
// stored ones move to disk.
func TestManyLargeWritesStayWithinTheMemoryBound(t *testing.T) {
	if diffAgainstRedis() {
		t.Skip("kvserver's memory bound")
	}
	if raceEnabled {
		// The server is built without -race either way; the race
		// detector's bookkeeping for the client side of 150 concurrent
		// 32 MiB writes grew this test process past 20 GB (OOM-killed).
		t.Skip("memory-bound test: its client under the race detector takes more memory than the machine has")
	}
	// Not parallel: it writes 4.7 GiB through the disk tier, which would
	// slow the crash tests' write-behind past their deadlines.
	const conns, size = 150, 32 << 20
	const maxMemory = 256 << 20
	const margin = 1 << 30 // README: in-flight values, disk tier memtables and caches, Go runtime
	s := startKVServer(t, "--maxmemory", strconv.Itoa(maxMemory))
	value := randomBytes(42, size)
	clients := make([]*rawClient, conns)
	for i := range clients {
		c, err := dialRawErr(t, s.Addr)
		if err != nil {
			t.Fatal(err)
		}
		// Back-pressure makes most clients wait for their turn: the whole
		// 4.7 GiB goes to the disk tier at disk speed.
		c.Timeout = 3 * time.Minute
		clients[i] = c
	}
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	for i, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close()
			raw, err := c.Call("SET", "big:"+strconv.Itoa(i), string(value))
			if err != nil {
				errs <- err
				return
			}
			if string(raw) != "+OK\r\n" {
				errs <- fmt.Errorf("SET big:%d = %q", i, raw)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	peak := peakRSS(t, s.Cmd.Process.Pid)
	t.Logf("peak RSS %d MiB for %d x %d MiB SETs at maxmemory %d MiB", peak>>20, conns, size>>20, maxMemory>>20)
	if peak > maxMemory+margin {
		t.Errorf("peak RSS %d MiB above maxmemory %d MiB + margin %d MiB", peak>>20, maxMemory>>20, margin>>20)
	}
	c := dialRaw(t, s.Addr)
	checkReply(t, c, fmt.Sprintf(":%d\r\n", conns), "DBSIZE")
	checkReply(t, c, bulk(string(value)), "GET", "big:0")
}
