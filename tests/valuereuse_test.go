package tests

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestOverwritesNeverChangeAValueBeingSent: a SET or MSET of a small value
// may take the old value's buffer (engine.Tx.SetCopy), so this checks, against
// the real server, that no reply ever carries bytes of a later value. Every
// value is one byte repeated; writers overwrite a few keys as fast as they
// can while readers GET them in deep pipelines (replies referencing the
// stored values wait for the end of the loop's pass), a slow reader lets
// its replies sit unread in the socket, SET ... GET returns the value it
// replaces, and COPY shares a value with another key. A reply with two
// different bytes, or a copy that changed, is a value overwritten while
// someone still held it. The disk tier writes the same values behind
// meanwhile, and the server is then restarted to check what it wrote.
func TestOverwritesNeverChangeAValueBeingSent(t *testing.T) {
	s := startKVServer(t)
	ctx := context.Background()
	const keys, size = 8, 4096
	key := func(i int) string { return "reuse:" + strconv.Itoa(i) }
	uniform := func(v []byte) bool {
		return len(v) > 0 && bytes.Count(v, v[:1]) == len(v)
	}
	rdb := newGoRedis(t, s.Addr, 2, 16)
	for i := range keys {
		if err := rdb.Set(ctx, key(i), bytes.Repeat([]byte{'A'}, size), 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := rdb.Copy(ctx, key(0), "reuse:copy", 0, false).Err(); err != nil {
		t.Fatal(err)
	}

	deadline := time.Now().Add(3 * time.Second)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	report := func(err error) {
		select {
		case errs <- err:
		default:
		}
	}
	for w := range 4 {
		wg.Go(func() {
			for n := 0; time.Now().Before(deadline); n++ {
				p := rdb.Pipeline()
				for i := range keys {
					c := byte('B' + (w*7+n+i)%24)
					p.Set(ctx, key(i), bytes.Repeat([]byte{c}, size-(n+i)%64), 0)
				}
				p.MSet(ctx, key((n+1)%keys), bytes.Repeat([]byte{'y'}, size), key((n+2)%keys), bytes.Repeat([]byte{'x'}, size/2))
				old := p.SetArgs(ctx, key(n%keys), bytes.Repeat([]byte{'z'}, size), redis.SetArgs{Get: true})
				if _, err := p.Exec(ctx); err != nil {
					report(fmt.Errorf("writer: %w", err))
					return
				}
				if v := []byte(old.Val()); !uniform(v) {
					report(fmt.Errorf("SET ... GET returned a mixed value (%q...)", v[:min(len(v), 16)]))
					return
				}
			}
		})
	}
	for range 3 {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				p := rdb.Pipeline()
				gets := make([]*redis.StringCmd, 0, 64)
				for j := range 64 {
					gets = append(gets, p.Get(ctx, key(j%keys)))
				}
				if _, err := p.Exec(ctx); err != nil {
					report(fmt.Errorf("reader: %w", err))
					return
				}
				for _, g := range gets {
					if v := []byte(g.Val()); !uniform(v) {
						report(fmt.Errorf("GET returned a mixed value (%q...)", v[:min(len(v), 16)]))
						return
					}
				}
			}
		})
	}
	// The slow reader: 2000 GETs sent at once, their replies read at a
	// trickle, so that they wait in the server's queue and the socket.
	wg.Go(func() {
		conn, err := net.Dial("tcp", s.Addr)
		if err != nil {
			report(err)
			return
		}
		defer conn.Close()
		var req bytes.Buffer
		const n = 2000
		for j := range n {
			k := key(j % keys)
			fmt.Fprintf(&req, "*2\r\n$3\r\nGET\r\n$%d\r\n%s\r\n", len(k), k)
		}
		if _, err := conn.Write(req.Bytes()); err != nil {
			report(err)
			return
		}
		r := bufio.NewReaderSize(conn, 512)
		for j := range n {
			if j%100 == 0 {
				time.Sleep(100 * time.Millisecond)
			}
			line, err := r.ReadString('\n')
			if err != nil {
				report(fmt.Errorf("slow reader: %w", err))
				return
			}
			l, _ := strconv.Atoi(line[1 : len(line)-2])
			v := make([]byte, l+2)
			if _, err := io.ReadFull(r, v); err != nil {
				report(fmt.Errorf("slow reader: %w", err))
				return
			}
			if !uniform(v[:l]) {
				report(fmt.Errorf("slow reader: reply %d is a mixed value (%q...)", j, v[:16]))
				return
			}
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if v, err := rdb.Get(ctx, "reuse:copy").Bytes(); err != nil || !bytes.Equal(v, bytes.Repeat([]byte{'A'}, size)) {
		t.Fatalf("the COPY of the first value changed: %v (%q...)", err, v[:min(len(v), 16)])
	}

	// What the disk tier wrote behind is whole values too.
	want := make(map[string][]byte)
	for i := range keys {
		v, err := rdb.Get(ctx, key(i)).Bytes()
		if err != nil {
			t.Fatal(err)
		}
		want[key(i)] = v
	}
	s.Restart(t)
	rdb2 := newGoRedis(t, s.Addr, 2, 1)
	for k, v := range want {
		got, err := rdb2.Get(ctx, k).Bytes()
		if err != nil || !bytes.Equal(got, v) {
			t.Fatalf("after restart %s = %v (%q...), want the %d bytes of %q", k, err, got[:min(len(got), 16)], len(v), v[:1])
		}
	}
}

// TestKillNineDuringReusedOverwritesLeavesWholeValues: the write-behind
// reads values without the engine lock while SETs may overwrite buffers in
// place (SetCopy), so a buffer reused while it was being written would
// reach the disk torn. Writers overwrite 2000 small keys as fast as they
// can, each value one byte repeated, for longer than the write-behind's
// delay; the server is killed with SIGKILL in the middle and restarted.
// Every key it recovers must hold a whole value of a length the writers
// used, and no record may fail its checksum.
func TestKillNineDuringReusedOverwritesLeavesWholeValues(t *testing.T) {
	s := startKVServer(t)
	ctx := context.Background()
	const keys = 2000
	key := func(i int) string { return "kill:" + strconv.Itoa(i) }
	sizes := []int{600, 1000, 4096, 4000, 9000}
	rdb := newGoRedis(t, s.Addr, 2, 8)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := range 6 {
		wg.Go(func() {
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				p := rdb.Pipeline()
				for j := range 64 {
					i := (n*64 + j + w*331) % keys
					c := byte('a' + (n+w+j)%26)
					p.Set(ctx, key(i), bytes.Repeat([]byte{c}, sizes[(n+j)%len(sizes)]), 0)
				}
				if _, err := p.Exec(ctx); err != nil {
					return // the kill
				}
			}
		})
	}
	time.Sleep(2500 * time.Millisecond) // past the write-behind's delay: writes to disk under way
	s.Crash()
	close(stop)
	wg.Wait()
	s.Relaunch(t)
	rdb2 := newGoRedis(t, s.Addr, 2, 1)
	found := 0
	for i := range keys {
		v, err := rdb2.Get(ctx, key(i)).Bytes()
		if errors.Is(err, redis.Nil) {
			continue // never reached the disk: a crash may lose the last second
		}
		if err != nil {
			t.Fatal(err)
		}
		found++
		if !slices.Contains(sizes, len(v)) || bytes.Count(v, v[:1]) != len(v) {
			t.Fatalf("%s recovered torn: %d bytes, %q...", key(i), len(v), v[:min(len(v), 16)])
		}
	}
	if found < keys/2 {
		t.Fatalf("only %d of %d keys recovered after 2.5 s of writes", found, keys)
	}
	// A buffer changed under the write fails its checksum instead of
	// reaching a reader torn: the key is then dropped as corrupt.
	info, err := rdb2.Info(ctx, "tiers").Result()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(info, "tier_disk_corrupt_records:0\r\n") {
		t.Fatalf("corrupt records after the restart:\n%s", info)
	}
	t.Logf("%d of %d keys recovered, all whole", found, keys)
}
