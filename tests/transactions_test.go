package tests

// End-to-end tests of transactions with real clients: go-redis's
// TxPipeline and Watch, redis-py's transactional pipeline(), transaction()
// and Lock, EXEC's atomicity against concurrent writers, and the one-slot
// rule in cluster mode.

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestGoRedisTransactions runs go-redis's TxPipeline and its Watch-based
// optimistic locking in RESP2 and RESP3.
func TestGoRedisTransactions(t *testing.T) {
	t.Parallel()
	s := startKVServer(t)
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprintf("RESP%d", proto), func(t *testing.T) {
			ctx := context.Background()
			rdb := newGoRedis(t, s.Addr, proto, 16)
			prefix := fmt.Sprintf("tx%d:", proto)

			t.Run("TxPipeline", func(t *testing.T) {
				var get *redis.StringCmd
				var incr *redis.IntCmd
				cmds, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
					p.Set(ctx, prefix+"a", "1", 0)
					incr = p.Incr(ctx, prefix+"a")
					get = p.Get(ctx, prefix+"a")
					return nil
				})
				if err != nil || len(cmds) != 3 {
					t.Fatalf("TxPipelined: %d commands, %v", len(cmds), err)
				}
				if incr.Val() != 2 || get.Val() != "2" {
					t.Errorf("INCR %d, GET %q; want 2, \"2\"", incr.Val(), get.Val())
				}
				// A command failing inside EXEC fails alone.
				_, err = rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
					p.Set(ctx, prefix+"s", "x", 0)
					p.Incr(ctx, prefix+"s")
					p.Set(ctx, prefix+"after", "y", 0)
					return nil
				})
				if err == nil || !strings.Contains(err.Error(), "not an integer") {
					t.Errorf("INCR of a string inside EXEC: %v", err)
				}
				if v, _ := rdb.Get(ctx, prefix+"after").Result(); v != "y" {
					t.Errorf("command after the failing one: GET = %q, want y", v)
				}
				// A queuing error discards the whole transaction.
				_, err = rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
					p.Set(ctx, prefix+"never", "x", 0)
					p.Do(ctx, "NOSUCHCOMMAND")
					return nil
				})
				if err == nil {
					t.Error("a transaction with an unknown command succeeded")
				}
				if n, _ := rdb.Exists(ctx, prefix+"never").Result(); n != 0 {
					t.Error("a discarded transaction's SET ran")
				}
			})

			t.Run("Watch", func(t *testing.T) {
				key := prefix + "counter"
				const workers, each = 8, 25
				incr := func() error {
					for {
						err := rdb.Watch(ctx, func(tx *redis.Tx) error {
							n, err := tx.Get(ctx, key).Int()
							if err != nil && !errors.Is(err, redis.Nil) {
								return err
							}
							_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
								p.Set(ctx, key, n+1, 0)
								return nil
							})
							return err
						}, key)
						if !errors.Is(err, redis.TxFailedErr) {
							return err
						}
					}
				}
				var wg sync.WaitGroup
				errs := make(chan error, workers)
				for w := 0; w < workers; w++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := 0; i < each; i++ {
							if err := incr(); err != nil {
								errs <- err
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
				if n, _ := rdb.Get(ctx, key).Int(); n != workers*each {
					t.Errorf("counter = %d after %d optimistic increments", n, workers*each)
				}
				// A write between WATCH and EXEC fails the transaction.
				err := rdb.Watch(ctx, func(tx *redis.Tx) error {
					if err := rdb.Set(ctx, key, "changed", 0).Err(); err != nil {
						return err
					}
					_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
						p.Set(ctx, key, "mine", 0)
						return nil
					})
					return err
				}, key)
				if !errors.Is(err, redis.TxFailedErr) {
					t.Errorf("EXEC after another client's write: %v, want TxFailedErr", err)
				}
				if v, _ := rdb.Get(ctx, key).Result(); v != "changed" {
					t.Errorf("GET = %q, want the other client's value", v)
				}
			})
		})
	}
}

// TestExecIsAtomic checks that no other client's command runs between the
// commands of an EXEC: writers hammer a key while transactions set it and
// read it back, and every read inside a transaction sees the transaction's
// own write.
func TestExecIsAtomic(t *testing.T) {
	t.Parallel()
	s := startKVServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	rdb := newGoRedis(t, s.Addr, 2, 16)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel() // before the wait: the writers stop on it
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				rdb.Set(ctx, "atomic", "other", 0)
				rdb.Incr(ctx, "atomic:n")
			}
		}()
	}
	for i := 0; i < 300; i++ {
		mine := "tx" + strconv.Itoa(i)
		var gets []*redis.StringCmd
		_, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
			for j := 0; j < 5; j++ {
				p.Set(ctx, "atomic", mine, 0)
				p.Del(ctx, "atomic:n")
				gets = append(gets, p.Get(ctx, "atomic"))
				gets = append(gets, p.Get(ctx, "atomic:n"))
			}
			return nil
		})
		if err != nil && !errors.Is(err, redis.Nil) {
			t.Fatalf("transaction %d: %v", i, err)
		}
		for j, g := range gets {
			want := mine
			if j%2 == 1 {
				want = ""
			}
			if g.Val() != want {
				t.Fatalf("transaction %d read %d: %q, want %q: another client's command ran inside EXEC", i, j, g.Val(), want)
			}
		}
	}
}

// pythonTransactionsScript exercises redis-py's transactions and prints one
// line per check; TestPythonRedisTransactions compares the output.
const pythonTransactionsScript = `
import sys
import redis

r = redis.Redis(host="127.0.0.1", port=int(sys.argv[1]), socket_timeout=5)
other = redis.Redis(host="127.0.0.1", port=int(sys.argv[1]), socket_timeout=5)

p = r.pipeline()
p.set("py:tx", 1)
p.incr("py:tx")
p.get("py:tx")
print("pipeline", p.execute())

p = r.pipeline()
p.set("py:s", "x")
p.incr("py:s")
p.set("py:after", "y")
try:
    p.execute()
except redis.ResponseError as e:
    print("exec error", str(e).split(":")[0], r.get("py:after"))

def incr(pipe):
    n = int(pipe.get("py:counter") or 0)
    pipe.multi()
    pipe.set("py:counter", n + 1)
print("transaction", r.transaction(incr, "py:counter"), r.get("py:counter"))

with r.pipeline() as pipe:
    pipe.watch("py:counter")
    other.set("py:counter", 100)
    pipe.multi()
    pipe.set("py:counter", 5)
    try:
        pipe.execute()
        print("watch", "not broken")
    except redis.WatchError:
        print("watch", "broken", r.get("py:counter"))

lock = r.lock("py:lock", timeout=0.2)
print("lock", lock.acquire(blocking=False), r.lock("py:lock").acquire(blocking=False), lock.locked())
print("lock owned", lock.owned())
import time
time.sleep(0.4)
print("lock expired", r.lock("py:lock", timeout=5).acquire(blocking=False))
`

// TestPythonRedisTransactions runs Debian's redis-py pipeline() (a
// MULTI/EXEC transaction by default), transaction() with WATCH, and Lock's
// acquisition (its release is a Lua script, and kvserver has no scripting).
func TestPythonRedisTransactions(t *testing.T) {
	t.Parallel()
	out := runPythonRedis(t, pythonTransactionsScript)
	want := strings.Join([]string{
		"pipeline [True, 2, b'2']",
		"exec error Command # 2 (INCRBY py b'y'",
		"transaction [True] b'1'",
		"watch broken b'100'",
		"lock True False True",
		"lock owned True",
		"lock expired True",
	}, "\n") + "\n"
	if string(out) != want {
		t.Errorf("python redis printed:\n%s\nwant:\n%s", out, want)
	}
}

// TestClusterTransactions checks the one-slot rule: a queued command whose
// key another node serves is answered MOVED and flags the transaction; an
// EXEC whose queued keys span slots is refused with CROSSSLOT and
// discards the transaction, as in Redis.
func TestClusterTransactions(t *testing.T) {
	tc := startCluster(t, standardSlots...)
	c0 := dialRaw(t, tc.nodes[0].Addr)
	// user1000 is slot 3443, on node 0; foo is slot 12182, on node 2.
	checkReply(t, c0, "+OK\r\n", "MULTI")
	checkReply(t, c0, "+QUEUED\r\n", "SET", "{user1000}.a", "1")
	checkReply(t, c0, "+QUEUED\r\n", "INCR", "{user1000}.b")
	checkReply(t, c0, "*2\r\n+OK\r\n:1\r\n", "EXEC")

	checkReply(t, c0, "+OK\r\n", "MULTI")
	checkReply(t, c0, "+QUEUED\r\n", "SET", "{user1000}.a", "2")
	checkReply(t, c0, fmt.Sprintf("-MOVED 12182 127.0.0.1:%d\r\n", tc.ports[2]), "SET", "foo", "1")
	checkReply(t, c0, "-EXECABORT Transaction discarded because of previous errors.\r\n", "EXEC")

	keys := keysOn(0, 2, "k")
	checkReply(t, c0, "+OK\r\n", "MULTI")
	checkReply(t, c0, "+QUEUED\r\n", "SET", keys[0], "1")
	checkReply(t, c0, "+QUEUED\r\n", "SET", keys[1], "1")
	checkReply(t, c0, "-CROSSSLOT Keys in request don't hash to the same slot\r\n", "EXEC")
	checkReply(t, c0, "-ERR EXEC without MULTI\r\n", "EXEC")
	checkReply(t, c0, "$1\r\n1\r\n", "GET", "{user1000}.a")
	checkReply(t, c0, "$-1\r\n", "GET", keys[0])
}

// TestExecReadsValuesOnDisk runs transactions over keys whose values the
// memory bound pushed to disk: EXEC reads them whole, and a watched key
// demoted meanwhile is no change (demotion is not a write).
func TestExecReadsValuesOnDisk(t *testing.T) {
	if diffAgainstRedis() {
		t.Skip("kvserver's disk tier has no Redis counterpart")
	}
	t.Parallel()
	s := startKVServer(t, "--maxmemory", "4mb")
	c := dialRaw(t, s.Addr)
	value := string(randomBytes(7, 256<<10))
	expectReply(t, c, "+OK\r\n", "SET", "cold:a", value)
	expectReply(t, c, "+OK\r\n", "SET", "cold:b", value+"b")
	expectReply(t, c, "+OK\r\n", "WATCH", "cold:a")
	for i := range 40 { // push them to disk
		expectReply(t, c, "+OK\r\n", "SET", fmt.Sprintf("filler:%d", i), value)
	}
	deadline := time.Now().Add(10 * time.Second)
	for infoInt(t, c, "tiers", "tier_memory_keys") > 30 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	promoted := infoInt(t, c, "tiers", "tier_memory_promotions")
	checkReply(t, c, "+OK\r\n", "MULTI")
	checkReply(t, c, "+QUEUED\r\n", "GET", "cold:a")
	checkReply(t, c, "+QUEUED\r\n", "STRLEN", "cold:b")
	checkReply(t, c, "+QUEUED\r\n", "GET", "cold:b")
	checkReply(t, c, "*3\r\n"+bulk(value)+fmt.Sprintf(":%d\r\n", len(value)+1)+bulk(value+"b"), "EXEC")
	if infoInt(t, c, "tiers", "tier_memory_promotions") == promoted {
		t.Error("EXEC read no value from disk: the test did not push its keys there")
	}
}

// TestWaitDoesNotHoldUpExec checks that a client blocked in WAIT (which
// waits out its timeout, here forever, since kvserver has no replicas)
// holds up neither an EXEC nor, through it, anybody else: WAIT touches no
// data, so it takes no part in the lock that keeps EXEC atomic.
func TestWaitDoesNotHoldUpExec(t *testing.T) {
	t.Parallel()
	s := startKVServer(t)
	ctx := context.Background()
	waiter := newGoRedis(t, s.Addr, 2, 1)
	waitDone := make(chan error, 1)
	go func() { waitDone <- waiter.Do(ctx, "WAIT", "1", "0").Err() }()
	time.Sleep(200 * time.Millisecond) // WAIT is blocking now
	rdb := newGoRedis(t, s.Addr, 2, 2)
	tctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := rdb.TxPipelined(tctx, func(p redis.Pipeliner) error {
		p.Set(tctx, "wait:k", "v", 0)
		return nil
	}); err != nil {
		t.Fatalf("EXEC beside a blocked WAIT: %v", err)
	}
	if v, err := rdb.Get(tctx, "wait:k").Result(); err != nil || v != "v" {
		t.Fatalf("GET after the EXEC: %q, %v", v, err)
	}
	select {
	case err := <-waitDone:
		t.Fatalf("WAIT 1 0 returned (%v) while it should still wait", err)
	default:
	}
	waiter.Close()
}

// TestQueuedTransactionsAreBounded checks that MULTI cannot grow the
// process without bound: queued values stay in memory until EXEC, so all
// open transactions together may hold at most the budget of request values
// in flight (256 MiB). Past it a command is refused with Redis's OOM error,
// EXEC aborts, and the bytes come back for the next transaction.
func TestQueuedTransactionsAreBounded(t *testing.T) {
	t.Parallel()
	skipInRedisMode(t)
	s := startKVServer(t)
	ctx := context.Background()
	rdb := newGoRedis(t, s.Addr, 2, 1) // one connection: MULTI's state is per connection
	conn := rdb
	value := make([]byte, 32<<20)
	if err := conn.Do(ctx, "MULTI").Err(); err != nil {
		t.Fatal(err)
	}
	refused := -1
	for i := 0; i < 9; i++ {
		err := conn.Do(ctx, "SET", fmt.Sprintf("big%d", i), value).Err()
		switch {
		case err == nil:
		case strings.HasPrefix(err.Error(), "OOM "):
			if refused < 0 {
				refused = i
			}
		default:
			t.Fatalf("SET %d in MULTI: %v", i, err)
		}
	}
	if refused < 7 {
		t.Fatalf("first OOM at SET %d of 32 MiB: want the 8th or later (256 MiB bound)", refused)
	}
	if err := conn.Do(ctx, "EXEC").Err(); err == nil || !strings.HasPrefix(err.Error(), "EXECABORT") {
		t.Fatalf("EXEC after a refused command: %v, want EXECABORT", err)
	}
	// The aborted transaction's bytes are free again.
	if err := conn.Do(ctx, "MULTI").Err(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 4; i++ {
		if err := conn.Do(ctx, "SET", fmt.Sprintf("big%d", i), value).Err(); err != nil {
			t.Fatalf("SET %d in the next MULTI: %v", i, err)
		}
	}
	if err := conn.Do(ctx, "EXEC").Err(); err != nil {
		t.Fatalf("EXEC: %v", err)
	}
	if n, err := rdb.StrLen(ctx, "big3").Result(); err != nil || n != 32<<20 {
		t.Fatalf("STRLEN big3 = %d, %v", n, err)
	}
}
