package tests

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// listElement is element j of test list i.
func listElement(i, j int) string {
	return fmt.Sprintf("list%03d-element%05d-%s", i, j, strings.Repeat("x", 24))
}

// checkLists reads every test list back whole and compares it.
func checkLists(t *testing.T, c *rawClient, lists, elems int, when string) {
	t.Helper()
	for i := 0; i < lists; i++ {
		var want strings.Builder
		want.WriteString("*" + strconv.Itoa(elems) + "\r\n")
		for j := 0; j < elems; j++ {
			want.WriteString(bulk(listElement(i, j)))
		}
		key := fmt.Sprintf("list:%03d", i)
		if got := c.Do("LRANGE", key, "0", "-1"); string(got) != want.String() {
			t.Fatalf("%s: LRANGE %s: %d bytes, want %d (%.80q)", when, key, len(got), want.Len(), got)
		}
	}
}

// Lists go to the disk tier past maxmemory like any value, come back
// whole, and survive kill -9 once older than the write-behind delay.
func TestListsAreDemotedReadBackAndSurviveKill9(t *testing.T) {
	t.Parallel()
	s := startKVServer(t, "--maxmemory", "4mb")
	c := dialRaw(t, s.Addr)
	const lists, elems = 64, 2000 // about 100 KiB each: 6.4 MiB into 4 MiB
	for i := 0; i < lists; i++ {
		args := []string{"RPUSH", fmt.Sprintf("list:%03d", i)}
		for j := 0; j < elems; j++ {
			args = append(args, listElement(i, j))
		}
		expectReply(t, c, ":"+strconv.Itoa(elems)+"\r\n", args...)
	}
	fields, err := infoFields(c, "all")
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := strconv.Atoi(fields["tier_memory_demotions"]); n == 0 {
		t.Fatalf("nothing demoted past maxmemory: %v", fields["tier_memory_demotions"])
	}
	checkLists(t, c, lists, elems, "after filling")
	expectReply(t, c, bulk(listElement(7, 0)), "LPOP", "list:007")
	expectReply(t, c, ":"+strconv.Itoa(elems)+"\r\n", "LPUSH", "list:007", listElement(7, 0))
	// The README's durability promise: writes older than 5 s survive a crash.
	time.Sleep(5500 * time.Millisecond)
	s.Crash()
	s.Relaunch(t)
	c = dialRaw(t, s.Addr)
	checkLists(t, c, lists, elems, "after kill -9")
	expectReply(t, c, bulk("quicklist"), "OBJECT", "ENCODING", "list:000")
}

// go-redis's BLPop, BRPop and BLMove against many blocked consumers and
// concurrent producers: every element is delivered exactly once, and a
// timeout is redis.Nil.
func TestGoRedisBlockingPops(t *testing.T) {
	t.Parallel()
	s := startKVServer(t)
	ctx := context.Background()
	for _, proto := range []int{2, 3} {
		rdb := newGoRedis(t, s.Addr, proto, 32)
		if _, err := rdb.BLPop(ctx, time.Second, "gr:none").Result(); !errors.Is(err, redis.Nil) {
			t.Fatalf("RESP%d BLPop timeout: %v", proto, err)
		}
		const consumers, producers, each = 8, 4, 50
		var mu sync.Mutex
		var got []string
		var wg sync.WaitGroup
		for i := 0; i < consumers; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				for {
					var v string
					if i%2 == 0 {
						kv, err := rdb.BLPop(ctx, 0, "gr:none", "gr:q").Result()
						if err != nil {
							t.Errorf("BLPop: %v", err)
							return
						}
						v = kv[1]
					} else {
						var err error
						if v, err = rdb.BLMove(ctx, "gr:q2", "gr:moved", "RIGHT", "LEFT", 0).Result(); err != nil {
							t.Errorf("BLMove: %v", err)
							return
						}
						rdb.LRem(ctx, "gr:moved", 1, v)
					}
					if v == "stop" {
						return
					}
					mu.Lock()
					got = append(got, v)
					mu.Unlock()
				}
			}(i)
		}
		time.Sleep(100 * time.Millisecond)
		var pw sync.WaitGroup
		for p := 0; p < producers; p++ {
			pw.Add(1)
			go func(p int) {
				defer pw.Done()
				for j := 0; j < each; j++ {
					key := []string{"gr:q", "gr:q2"}[j%2]
					if err := rdb.RPush(ctx, key, fmt.Sprintf("p%d-%03d", p, j)).Err(); err != nil {
						t.Errorf("RPush: %v", err)
					}
				}
			}(p)
		}
		pw.Wait()
		// Wait until everything was taken, then stop the consumers.
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			mu.Lock()
			n := len(got)
			mu.Unlock()
			if n == producers*each {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		for i := 0; i < consumers; i++ {
			rdb.RPush(ctx, []string{"gr:q", "gr:q2"}[i%2], "stop")
		}
		wg.Wait()
		sort.Strings(got)
		if len(got) != producers*each {
			t.Fatalf("RESP%d: %d elements delivered, want %d", proto, len(got), producers*each)
		}
		for i := 1; i < len(got); i++ {
			if got[i] == got[i-1] {
				t.Fatalf("RESP%d: %s delivered twice", proto, got[i])
			}
		}
		if n := rdb.Exists(ctx, "gr:q", "gr:q2", "gr:moved").Val(); n != 0 {
			t.Fatalf("RESP%d: %d lists left", proto, n)
		}
	}
}

// pythonBlpopScript uses redis-py's blpop and brpoplpush, woken by a
// push from another thread.
const pythonBlpopScript = `
import sys, threading, time
import redis

r = redis.Redis(host="127.0.0.1", port=int(sys.argv[1]), socket_timeout=10)
print("timeout", r.blpop(["py:none"], timeout=0.05))
r.rpush("py:l", "a", "b")
print("ready", r.blpop(["py:none", "py:l"], timeout=1))
def push():
    time.sleep(0.2)
    redis.Redis(host="127.0.0.1", port=int(sys.argv[1])).rpush("py:late", "x")
threading.Thread(target=push).start()
print("woken", r.blpop(["py:late"], timeout=5))
print("brpoplpush", r.brpoplpush("py:l", "py:dst", timeout=1), r.lrange("py:dst", 0, -1))
print("left", r.exists("py:l", "py:late"))
`

// redis-py's blocking pops.
func TestPythonRedisBlockingPops(t *testing.T) {
	t.Parallel()
	out := runPythonRedis(t, pythonBlpopScript)
	want := "timeout None\n" +
		"ready (b'py:l', b'a')\n" +
		"woken (b'py:late', b'x')\n" +
		"brpoplpush b'b' [b'b']\n" +
		"left 0\n"
	if string(out) != want {
		t.Errorf("python printed:\n%s\nwant:\n%s", out, want)
	}
}
