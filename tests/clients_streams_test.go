package tests

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestGoRedisStreams drives the stream family through go-redis v9 in
// RESP3 and RESP2 as a job queue would: producers XADD, a consumer group
// reads with XREADGROUP, acknowledges, and a second consumer claims what
// the first left pending; XREAD tails the stream.
func TestGoRedisStreams(t *testing.T) {
	t.Parallel()
	goRedisEachProto(t, 4, func(t *testing.T, ctx context.Context, rdb *redis.Client, proto int, must func(error)) {
		k := fmt.Sprintf("jobs%d", proto)
		var ids []string
		for i := 0; i < 250; i++ {
			id, err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: k, Values: []string{"job", fmt.Sprint(i), "payload", "x"}}).Result()
			must(err)
			ids = append(ids, id)
		}
		if n, err := rdb.XLen(ctx, k).Result(); err != nil || n != 250 {
			t.Fatalf("XLEN = %d, %v", n, err)
		}
		read, err := rdb.XRead(ctx, &redis.XReadArgs{Streams: []string{k, ids[247]}, Count: 10, Block: -1}).Result()
		must(err)
		if len(read) != 1 || read[0].Stream != k || len(read[0].Messages) != 2 || read[0].Messages[1].ID != ids[249] ||
			read[0].Messages[1].Values["job"] != "249" {
			t.Fatalf("XREAD = %+v", read)
		}
		must(rdb.XGroupCreate(ctx, k, "workers", "0").Err())
		got, err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "workers", Consumer: "w1", Streams: []string{k, ">"}, Count: 100, Block: -1}).Result()
		must(err)
		if len(got) != 1 || len(got[0].Messages) != 100 || got[0].Messages[0].ID != ids[0] {
			t.Fatalf("XREADGROUP delivered %+v", got)
		}
		var acks []string
		for _, m := range got[0].Messages[:60] {
			acks = append(acks, m.ID)
		}
		if n, err := rdb.XAck(ctx, k, "workers", acks...).Result(); err != nil || n != 60 {
			t.Fatalf("XACK = %d, %v", n, err)
		}
		p, err := rdb.XPending(ctx, k, "workers").Result()
		must(err)
		if p.Count != 40 || p.Lower != ids[60] || p.Higher != ids[99] || p.Consumers["w1"] != 40 {
			t.Fatalf("XPENDING = %+v", p)
		}
		claimed, err := rdb.XClaimJustID(ctx, &redis.XClaimArgs{Stream: k, Group: "workers", Consumer: "w2", Messages: ids[60:70]}).Result()
		must(err)
		if len(claimed) != 10 || claimed[0] != ids[60] {
			t.Fatalf("XCLAIM JUSTID = %v", claimed)
		}
		auto, next, err := rdb.XAutoClaim(ctx, &redis.XAutoClaimArgs{Stream: k, Group: "workers", Consumer: "w3", Start: "0", Count: 5}).Result()
		must(err)
		if len(auto) != 5 || auto[0].ID != ids[60] || next != ids[65] {
			t.Fatalf("XAUTOCLAIM = %v, next %s", auto, next)
		}
		ext, err := rdb.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: k, Group: "workers", Start: "-", End: "+", Count: 3, Consumer: "w3"}).Result()
		must(err)
		if len(ext) != 3 || ext[0].ID != ids[60] || ext[0].Consumer != "w3" || ext[0].RetryCount != 2 {
			t.Fatalf("XPENDING extended = %+v", ext)
		}
		groups, err := rdb.XInfoGroups(ctx, k).Result()
		must(err)
		if len(groups) != 1 || groups[0].Name != "workers" || groups[0].Pending != 40 || groups[0].LastDeliveredID != ids[99] ||
			groups[0].EntriesRead != 100 || groups[0].Lag != 150 || groups[0].Consumers != 3 {
			t.Fatalf("XINFO GROUPS = %+v", groups)
		}
		info, err := rdb.XInfoStream(ctx, k).Result()
		must(err)
		if info.Length != 250 || info.LastGeneratedID != ids[249] || info.FirstEntry.ID != ids[0] || info.EntriesAdded != 250 {
			t.Fatalf("XINFO STREAM = %+v", info)
		}
		if n, err := rdb.XTrimMaxLenApprox(ctx, k, 120, 0).Result(); err != nil || n != 100 {
			t.Fatalf("XTRIM MAXLEN ~ 120 = %d, %v (Redis removes whole nodes of 100)", n, err)
		}
		backlog, err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "workers", Consumer: "w4", Streams: []string{k, ">"}, Count: 1000, Block: -1}).Result()
		must(err)
		if len(backlog) != 1 || len(backlog[0].Messages) != 150 {
			t.Fatalf("XREADGROUP > got %+v", backlog)
		}
		// A blocked XREADGROUP > woken by another client's XADD.
		go func() {
			time.Sleep(100 * time.Millisecond)
			rdb.XAdd(ctx, &redis.XAddArgs{Stream: k, ID: "*", Values: []string{"job", "late"}})
		}()
		woke, err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "workers", Consumer: "w4", Streams: []string{k, ">"}, Count: 1000, Block: 10 * time.Second}).Result()
		must(err)
		if len(woke) != 1 || len(woke[0].Messages) != 1 || woke[0].Messages[0].Values["job"] != "late" {
			t.Fatalf("XREADGROUP BLOCK > = %+v", woke)
		}
		go func() {
			time.Sleep(100 * time.Millisecond)
			rdb.XAdd(ctx, &redis.XAddArgs{Stream: k, ID: "*", Values: []string{"job", "later"}})
		}()
		tail, err := rdb.XRead(ctx, &redis.XReadArgs{Streams: []string{k, "$"}, Block: 10 * time.Second}).Result()
		must(err)
		if len(tail) != 1 || len(tail[0].Messages) != 1 || tail[0].Messages[0].Values["job"] != "later" {
			t.Fatalf("XREAD BLOCK $ = %+v", tail)
		}
		msgs, err := rdb.XRevRangeN(ctx, k, "+", "-", 3).Result()
		must(err)
		if len(msgs) != 3 || msgs[0].ID != tail[0].Messages[0].ID || msgs[2].ID != ids[249] {
			t.Fatalf("XREVRANGE = %v", msgs)
		}
	})
}
