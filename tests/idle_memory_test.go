package tests

import (
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"
)

// TestIdleServerGivesMemoryBack has 50 connections send 1 MiB SETs to ten
// keys (500 MiB written, 10 MiB kept) and then leaves the server idle: its
// resident memory falls under 150 MB within a few seconds (issue 17;
// redis-server holds about 72 MB). The garbage the busy server was allowed
// to hold (gctune's slack, up to 256 MiB) is returned to the operating
// system once it goes idle; before that, it held about 320 MB for good.
func TestIdleServerGivesMemoryBack(t *testing.T) {
	const (
		conns, setsPerConn, keys, size = 50, 10, 10, 1 << 20
		idleLimit                      = 150 << 20
		within                         = 10 * time.Second
	)
	s := startKVServer(t)
	pid := s.Cmd.Process.Pid
	value := string(randomBytes(17, size))
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	for i := range conns {
		c := dialRaw(t, s.Addr)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close()
			for j := range setsPerConn {
				key := "v:" + strconv.Itoa((i*setsPerConn+j)%keys)
				raw, err := c.Call("SET", key, value)
				if err != nil {
					errs <- err
					return
				}
				if string(raw) != "+OK\r\n" {
					errs <- fmt.Errorf("SET %s = %q", key, raw)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	busy, err := procStatusKB(pid, "VmRSS:")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for {
		rss, err := procStatusKB(pid, "VmRSS:")
		if err != nil {
			t.Fatal(err)
		}
		if rss<<10 < idleLimit {
			t.Logf("RSS %d MiB after the SETs, %d MiB after %v idle", busy>>10, rss>>10,
				time.Since(start).Round(100*time.Millisecond))
			return
		}
		if time.Since(start) > within {
			t.Fatalf("RSS %d MiB after %v idle (%d MiB after the SETs), want under %d MiB",
				rss>>10, within, busy>>10, idleLimit>>20)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
