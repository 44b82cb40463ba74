package main

import (
	"bytes"
	"context"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestSinkAnswersLikeAServerThatKeepsOnlyLengths runs the copy floor on a
// loopback port and drives it with go-redis: SET keeps a value's length,
// GET answers with that many bytes (small ones copied into the reply,
// large ones written from the shared buffer), pipelines are answered in
// order, values larger than the input buffer are read whole, and FLUSHALL
// forgets every key.
func TestSinkAnswersLikeAServerThatKeepsOnlyLengths(t *testing.T) {
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runSink(ctx, []string{"--port", strconv.Itoa(port)}, io.Discard) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("sink: %v", err)
		}
	}()
	addr := "127.0.0.1:" + strconv.Itoa(port)
	if err := waitReady(ctx, addr, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2, MaxRetries: -1})
	defer c.Close()
	sizes := []int{0, 5, 16 << 10, sinkReadBuffer - 3, sinkReadBuffer + 7, 4 << 20}
	for _, n := range sizes {
		key := "k" + strconv.Itoa(n)
		if err := c.Set(ctx, key, bytes.Repeat([]byte{'v'}, n), 0).Err(); err != nil {
			t.Fatalf("SET %d bytes: %v", n, err)
		}
	}
	// A pipeline mixes small and large replies.
	pipe := c.Pipeline()
	var gets []*redis.StringCmd
	for _, n := range sizes {
		gets = append(gets, pipe.Get(ctx, "k"+strconv.Itoa(n)))
	}
	missing := pipe.Get(ctx, "nokey")
	if _, err := pipe.Exec(ctx); err != nil && err != redis.Nil {
		t.Fatal(err)
	}
	for i, n := range sizes {
		v, err := gets[i].Result()
		if err != nil || len(v) != n || v != string(bytes.Repeat([]byte{'x'}, n)) {
			t.Errorf("GET of a %d-byte value: %d bytes, %v", n, len(v), err)
		}
	}
	if err := missing.Err(); err != redis.Nil {
		t.Errorf("GET of a missing key: %v, want nil", err)
	}
	if err := c.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, "k5").Err(); err != redis.Nil {
		t.Errorf("GET after FLUSHALL: %v, want nil", err)
	}
	if v, err := c.ConfigGet(ctx, "save").Result(); err != nil || len(v) != 1 {
		t.Errorf("CONFIG GET save = %v, %v", v, err)
	}
	if err := c.Do(ctx, "HELLO", "3").Err(); err == nil || !strings.Contains(err.Error(), "unknown command 'HELLO'") {
		t.Errorf("HELLO 3: %v, want an unknown-command error", err)
	}
}
