package tests

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// poolValue is a value that says what it is: a header (key, writer,
// sequence) and a body every byte of which follows from the header, so a
// reader can tell a whole value from one whose buffer was reused under it.
func poolValue(key string, writer, seq, size int) []byte {
	head := fmt.Sprintf("%s|%d|%d|", key, writer, seq)
	v := make([]byte, size)
	copy(v, head)
	h := fnv.New64a()
	h.Write([]byte(head))
	x := h.Sum64() | 1
	for i := len(head); i+8 <= size; i += 8 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		binary.LittleEndian.PutUint64(v[i:], x)
	}
	return v
}

// checkPoolValue reports what is wrong with v, a value read under key, or "".
func checkPoolValue(key string, v []byte) string {
	parts := strings.SplitN(string(v[:min(len(v), 128)]), "|", 4)
	if len(parts) < 4 {
		return fmt.Sprintf("no header in %q", v[:min(len(v), 40)])
	}
	writer, err1 := strconv.Atoi(parts[1])
	seq, err2 := strconv.Atoi(parts[2])
	if err1 != nil || err2 != nil {
		return fmt.Sprintf("bad header %q", strings.Join(parts[:3], "|"))
	}
	if parts[0] != key {
		return fmt.Sprintf("the value of %s read under %s", parts[0], key)
	}
	if want := poolValue(key, writer, seq, len(v)); string(want) != string(v) {
		return fmt.Sprintf("value %s|%d|%d (%d bytes) damaged", key, writer, seq, len(v))
	}
	return ""
}

// TestReusedValueBuffersNeverShowThroughReads attacks the value pool: 12
// connections overwrite and delete 6 keys with large values (the buffers
// of the old ones are reused for the new ones) while 6 others read them
// back, and clients that send half a large value and hang up come and go.
// Every value read must be one a writer wrote, whole; the pool must have
// been used, and no connection's read may stay registered with it after
// the connections are gone.
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
		go func() {
			defer wg.Done()
			c := redis.NewClient(&redis.Options{Addr: s.Addr, PoolSize: 1})
			defer c.Close()
			for seq := 0; ctx.Err() == nil; seq++ {
				key := keys[(w+seq)%len(keys)]
				var err error
				if seq%17 == 16 {
					err = c.Del(ctx, key).Err()
				} else {
					err = c.Set(ctx, key, poolValue(key, w, seq, sizes[(w*7+seq)%len(sizes)]), 0).Err()
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
		go func() {
			defer wg.Done()
			c := redis.NewClient(&redis.Options{Addr: s.Addr, PoolSize: 1})
			defer c.Close()
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
				if msg := checkPoolValue(key, v); msg != "" {
					fail(msg)
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
