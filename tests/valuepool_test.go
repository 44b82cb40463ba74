package tests

import (
	"context"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// poolSeqs bounds the writes of one writer of
// TestReusedValueBuffersNeverShowThroughReads, so that a sequence number
// says which writer made it.
const poolSeqs = 1_000_000

// TestReusedValueBuffersNeverShowThroughReads attacks the value pool: 12
// connections overwrite and delete 6 keys with large values (the buffers
// of the old ones are reused for the new ones) while 6 others read them
// back, and clients that send half a large value and hang up come and go.
// Every value read must be one a writer wrote under its key, whole
// (crashValue: writer w's write n is sequence number w*poolSeqs+n); the
// pool must have been used, and no connection's read may stay registered
// with it after the connections are gone.
func TestReusedValueBuffersNeverShowThroughReads(t *testing.T) {
	if diffAgainstRedis() {
		t.Skip("the value pool is kvserver's")
	}
	t.Parallel()
	s := startKVServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	keys := []string{"p0", "p1", "p2", "p3", "p4", "p5"}
	sizes := []int{256 << 10, 512<<10 + 100, 1 << 20}
	var wg sync.WaitGroup
	var bad atomic.Value
	var writes, reads atomic.Int64
	fail := func(msg string) { bad.CompareAndSwap(nil, msg) }
	for w := range 12 {
		wg.Add(1)
		c := newGoRedis(t, s.Addr, 3, 1)
		go func() {
			defer wg.Done()
			for seq := 0; ctx.Err() == nil && seq < poolSeqs; seq++ {
				key := keys[(w+seq)%len(keys)]
				var err error
				if seq%17 == 16 {
					err = c.Del(ctx, key).Err()
				} else {
					err = c.Set(ctx, key, crashValue(key, w*poolSeqs+seq, sizes[(w*7+seq)%len(sizes)]), 0).Err()
				}
				if err != nil && ctx.Err() == nil {
					fail("write: " + err.Error())
					return
				}
				writes.Add(1)
			}
		}()
	}
	for r := range 6 {
		wg.Add(1)
		c := newGoRedis(t, s.Addr, 3, 1)
		go func() {
			defer wg.Done()
			for i := 0; ctx.Err() == nil; i++ {
				key := keys[(r+i)%len(keys)]
				v, err := c.Get(ctx, key).Bytes()
				if err == redis.Nil {
					continue
				}
				if err != nil {
					if ctx.Err() == nil {
						fail("read: " + err.Error())
					}
					return
				}
				if seq, ok := crashSeq(key, v); !ok {
					fail(fmt.Sprintf("GET %s: %d bytes that no writer wrote under it, whole (%.40q)", key, len(v), v))
					return
				} else if seq/poolSeqs >= 12 {
					fail(fmt.Sprintf("GET %s: write %d of writer %d, who does not exist", key, seq%poolSeqs, seq/poolSeqs))
					return
				}
				reads.Add(1)
			}
		}()
	}
	wg.Add(1)
	go func() { // half a large value, then hang up
		defer wg.Done()
		for i := 0; ctx.Err() == nil; i++ {
			conn, err := net.Dial("tcp", s.Addr)
			if err != nil {
				fail("dial: " + err.Error())
				return
			}
			size := 1 << 20
			fmt.Fprintf(conn, "*3\r\n$3\r\nSET\r\n$2\r\nh%d\r\n$%d\r\n", i%4, size)
			conn.Write(make([]byte, size/2))
			time.Sleep(5 * time.Millisecond)
			conn.Close()
		}
	}()
	wg.Wait()
	if msg := bad.Load(); msg != nil {
		t.Fatal(msg)
	}
	if writes.Load() < 100 || reads.Load() < 50 {
		t.Fatalf("only %d writes and %d reads in 3 s", writes.Load(), reads.Load())
	}
	c := dialRaw(t, s.Addr)
	if reused := infoInt(t, c, "tiers", "value_pool_reused"); reused == 0 {
		t.Fatalf("no buffer was reused in %d writes", writes.Load())
	}
	// The connections above are closed; the server notices each within
	// moments.
	deadline := time.Now().Add(10 * time.Second)
	for {
		n := infoInt(t, c, "tiers", "value_pool_reading")
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d reads still registered with the value pool after every writer left", n)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("%d writes, %d reads, %d buffers reused", writes.Load(), reads.Load(), infoInt(t, c, "tiers", "value_pool_reused"))
}
