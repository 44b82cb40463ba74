package tests

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestGoRedisTrackingRedirect uses go-redis v9 the way a RESP2 client-side
// cache does: a PubSub on __redis__:invalidate receives, as a message
// whose payload is the array of keys (go-redis's PayloadSlice), the
// invalidations of the keys another connection read under CLIENT
// TRACKING ON REDIRECT.
func TestGoRedisTrackingRedirect(t *testing.T) {
	t.Parallel()
	s := startKVServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	rdb := newGoRedis(t, s.Addr, 2, 4)
	ps := rdb.Subscribe(ctx, "__redis__:invalidate")
	defer ps.Close()
	if _, err := ps.Receive(ctx); err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	list, err := rdb.ClientList(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	var psID string
	for _, line := range strings.Split(list, "\n") {
		if strings.Contains(line, " sub=1 ") {
			psID = strings.TrimPrefix(strings.Fields(line)[0], "id=")
		}
	}
	if _, err := strconv.ParseInt(psID, 10, 64); err != nil {
		t.Fatalf("no subscribed connection in CLIENT LIST:\n%s", list)
	}
	tracker := rdb.Conn()
	defer tracker.Close()
	on := redis.NewStatusCmd(ctx, "CLIENT", "TRACKING", "ON", "REDIRECT", psID)
	if err := tracker.Process(ctx, on); err != nil {
		t.Fatalf("CLIENT TRACKING ON REDIRECT: %v", err)
	}
	if err := tracker.MGet(ctx, "gr:a", "gr:b").Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Set(ctx, "gr:b", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	msg, err := ps.ReceiveMessage(ctx)
	if err != nil {
		t.Fatalf("invalidation: %v", err)
	}
	if msg.Channel != "__redis__:invalidate" || !slices.Equal(msg.PayloadSlice, []string{"gr:b"}) {
		t.Fatalf("invalidation %+v, want gr:b on __redis__:invalidate", msg)
	}
	if err := rdb.Del(ctx, "gr:a").Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Set(ctx, "gr:a", "x", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if msg, err = ps.ReceiveMessage(ctx); err != nil || !slices.Equal(msg.PayloadSlice, []string{"gr:a"}) {
		t.Fatalf("second invalidation %+v (%v), want gr:a once", msg, err)
	}
}
