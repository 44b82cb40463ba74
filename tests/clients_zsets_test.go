package tests

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestGoRedisSortedSets drives the sorted-set family through go-redis v9,
// in RESP3 (scores as doubles, pairs as nested arrays) and RESP2 (scores
// as bulk strings, flat arrays), as an application (a leaderboard, llm-d's
// KV-block index) would use it.
func TestGoRedisSortedSets(t *testing.T) {
	t.Parallel()
	goRedisEachProto(t, 4, func(t *testing.T, ctx context.Context, rdb *redis.Client, proto int, must func(error)) {
		k := fmt.Sprintf("board%d", proto)
		var members []redis.Z
		for i := 0; i < 500; i++ { // past 128: a skiplist
			members = append(members, redis.Z{Score: float64(i%50) + 0.5, Member: fmt.Sprintf("player%03d", i)})
		}
		n, err := rdb.ZAdd(ctx, k, members...).Result()
		must(err)
		if n != 500 {
			t.Fatalf("ZADD added %d", n)
		}
		inc, err := rdb.ZIncrBy(ctx, k, 100, "player007").Result()
		must(err)
		if inc != 107.5 {
			t.Errorf("ZINCRBY = %v", inc)
		}
		if sc, err := rdb.ZScore(ctx, k, "player007").Result(); err != nil || sc != 107.5 {
			t.Errorf("ZSCORE = %v, %v", sc, err)
		}
		if r, err := rdb.ZRevRank(ctx, k, "player007").Result(); err != nil || r != 0 {
			t.Errorf("ZREVRANK = %v, %v", r, err)
		}
		top, err := rdb.ZRangeArgsWithScores(ctx, redis.ZRangeArgs{Key: k, Start: "(49", Stop: "+inf", ByScore: true, Rev: true, Count: 3}).Result()
		must(err)
		want := []redis.Z{{Score: 107.5, Member: "player007"}, {Score: 49.5, Member: "player499"}, {Score: 49.5, Member: "player449"}}
		if !slices.Equal(top, want) {
			t.Errorf("ZRANGE BYSCORE REV LIMIT = %v, want %v", top, want)
		}
		if c, err := rdb.ZCount(ctx, k, "(10", "20").Result(); err != nil || c != 100 {
			t.Errorf("ZCOUNT = %v, %v", c, err)
		}
		ms, err := rdb.ZMScore(ctx, k, "player001", "nobody").Result()
		must(err)
		if ms[0] != 1.5 || ms[1] != 0 {
			t.Errorf("ZMSCORE = %v", ms)
		}
		popped, err := rdb.ZPopMin(ctx, k, 2).Result()
		must(err)
		if len(popped) != 2 || popped[0].Member != "player000" || popped[1].Member != "player050" {
			t.Errorf("ZPOPMIN 2 = %v", popped)
		}
		key, mp, err := rdb.ZMPop(ctx, "max", 1, "nosuch", k).Result()
		must(err)
		if key != k || len(mp) != 1 || mp[0].Member != "player007" {
			t.Errorf("ZMPOP = %v %v", key, mp)
		}
		must(rdb.ZAdd(ctx, k+"b", redis.Z{Score: 1, Member: "player001"}, redis.Z{Score: 2, Member: "x"}).Err())
		inter, err := rdb.ZInterWithScores(ctx, &redis.ZStore{Keys: []string{k, k + "b"}, Weights: []float64{2, 10}}).Result()
		must(err)
		if !slices.Equal(inter, []redis.Z{{Score: 13, Member: "player001"}}) {
			t.Errorf("ZINTER WEIGHTS = %v", inter)
		}
		if n, err := rdb.ZUnionStore(ctx, k+"u", &redis.ZStore{Keys: []string{k, k + "b"}, Aggregate: "MAX"}).Result(); err != nil || n != 498 {
			t.Errorf("ZUNIONSTORE = %v, %v", n, err)
		}
		if n, err := rdb.ZInterCard(ctx, 0, k, k+"u").Result(); err != nil || n != 497 {
			t.Errorf("ZINTERCARD = %v, %v", n, err)
		}
		rnd, err := rdb.ZRandMemberWithScores(ctx, k+"b", -5).Result()
		must(err)
		if len(rnd) != 5 {
			t.Errorf("ZRANDMEMBER -5 WITHSCORES = %v", rnd)
		}
		seen := map[string]bool{}
		iter := rdb.ZScan(ctx, k, 0, "player1*", 20).Iterator()
		for i := 0; iter.Next(ctx); i++ {
			if i%2 == 0 {
				seen[iter.Val()] = true
			}
		}
		must(iter.Err())
		if len(seen) != 100 {
			t.Errorf("ZSCAN MATCH player1* saw %d members, want 100", len(seen))
		}
		if n, err := rdb.ZRemRangeByScore(ctx, k, "-inf", "(25").Result(); err != nil || n != 247 {
			t.Errorf("ZREMRANGEBYSCORE = %v, %v", n, err)
		}
		if c, err := rdb.ZCard(ctx, k).Result(); err != nil || c != 250 {
			t.Errorf("ZCARD = %v, %v", c, err)
		}
		if err := rdb.ZAdd(ctx, k, redis.Z{Score: 1, Member: "a"}).Err(); err != nil {
			t.Error(err)
		}
		must(rdb.Set(ctx, k+"s", "x", 0).Err())
		if err := rdb.ZAdd(ctx, k+"s", redis.Z{Score: 1, Member: "a"}).Err(); err == nil || err.Error() != "WRONGTYPE Operation against a key holding the wrong kind of value" {
			t.Errorf("ZADD on a string: %v", err)
		}
	})
}

// pythonZSetScript uses redis-py's sorted-set helpers; TestPythonRedisSortedSets
// compares what it prints on kvserver and on redis-server.
const pythonZSetScript = `
import sys
import redis

r = redis.Redis(host="127.0.0.1", port=int(sys.argv[1]), socket_timeout=5)
r.flushall()
print("zadd", r.zadd("py:z", {"a": 1, "b": 2.5, "c": -1, "d": 1e17}))
print("zadd-gt", r.zadd("py:z", {"a": 0, "b": 3}, gt=True, ch=True))
print("zincrby", r.zincrby("py:z", 0.1, "a"))
print("zrange", r.zrange("py:z", 0, -1, withscores=True))
print("zrevrange", r.zrevrange("py:z", 0, 1))
print("zrangebyscore", r.zrangebyscore("py:z", "(1", "+inf", withscores=True, start=0, num=2))
print("zrangebylex", r.zrangebylex("py:z", "-", "+"))
print("zrank", r.zrank("py:z", "b"), r.zrank("py:z", "nobody"))
print("zscore", r.zscore("py:z", "d"), r.zscore("py:z", "nobody"))
print("zmscore", r.zmscore("py:z", ["a", "nobody"]))
print("zcount", r.zcount("py:z", 0, 5), r.zlexcount("py:z", "[a", "[c"))
p = r.pipeline()
p.zadd("py:w", {"x": 1, "b": 10})
p.zunionstore("py:u", {"py:z": 1, "py:w": 2}, aggregate="SUM")
p.zrange("py:u", 0, -1, withscores=True)
p.zinter(["py:z", "py:w"], withscores=True)
p.zdiff(["py:z", "py:w"])
p.zrangestore("py:s", "py:z", 0, 1)
print("pipeline", p.execute())
print("zpopmax", r.zpopmax("py:z"), r.zpopmin("py:z", 2))
print("zrandmember", sorted(r.zrandmember("py:w", 5)), len(r.zrandmember("py:w", -3)))
print("zscan", sorted(r.zscan_iter("py:u")))
print("zremrangebyrank", r.zremrangebyrank("py:u", 0, 1), r.zcard("py:u"))
r.set("py:str", "x")
try:
    r.zadd("py:str", {"a": 1})
except redis.ResponseError as e:
    print("wrongtype", e)
try:
    r.zadd("py:z", {"a": "nan"})
except redis.ResponseError as e:
    print("nan", e)
`

// TestPythonRedisSortedSets runs redis-py's sorted-set helpers (RESP2,
// pipelined MULTI/EXEC included) on kvserver and on redis-server and
// requires the same output.
func TestPythonRedisSortedSets(t *testing.T) {
	t.Parallel()
	got := runPythonRedis(t, pythonZSetScript)
	ref := startRedis(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	want, err := exec.CommandContext(ctx, systemPython, "-c", pythonZSetScript, strconv.Itoa(ref.Port)).CombinedOutput()
	if err != nil {
		t.Fatalf("against redis-server: %v\n%s", err, want)
	}
	if string(got) != string(want) {
		t.Errorf("redis-py printed on kvserver:\n%s\non redis-server:\n%s", got, want)
	}
	if len(want) < 200 {
		t.Errorf("the script printed too little:\n%s", want)
	}
}

// TestGoRedisBlockingZSetPops drives BZPOPMIN, BZPOPMAX and BZMPOP through
// go-redis v9 as a priority work queue would, in RESP3 and RESP2: an empty
// queue times out with redis.Nil, workers blocked on the queue each take
// one job, the lowest scores first and none twice, and the rest is taken
// without blocking.
func TestGoRedisBlockingZSetPops(t *testing.T) {
	t.Parallel()
	forEachProto(t, func(t *testing.T, ctx context.Context, addr string, proto int) {
		const workers = 4
		rdb := newGoRedis(t, addr, proto, workers+2)
		q := fmt.Sprintf("jobs%d", proto)
		if _, err := rdb.BZPopMin(ctx, time.Second, q).Result(); err != redis.Nil {
			t.Fatalf("BZPOPMIN of an empty queue: %v, want redis.Nil", err)
		}
		got := make(chan redis.ZWithKey, workers)
		errs := make(chan error, workers)
		for i := 0; i < workers; i++ {
			go func() {
				z, err := rdb.BZPopMin(ctx, 0, "other", q).Result()
				if err != nil {
					errs <- err
					return
				}
				got <- *z
			}()
		}
		waitBlockedClients(ctx, t, rdb, workers)
		var jobs []redis.Z
		for i := 9; i >= 0; i-- {
			jobs = append(jobs, redis.Z{Score: float64(i), Member: fmt.Sprintf("job%d", i)})
		}
		if err := rdb.ZAdd(ctx, q, jobs...).Err(); err != nil {
			t.Fatal(err)
		}
		var scores []float64
		for i := 0; i < workers; i++ {
			select {
			case z := <-got:
				if z.Key != q || z.Member != fmt.Sprintf("job%d", int(z.Score)) {
					t.Errorf("BZPOPMIN served %+v", z)
				}
				scores = append(scores, z.Score)
			case err := <-errs:
				t.Fatal(err)
			case <-ctx.Done():
				t.Fatal("a blocked BZPOPMIN was not served")
			}
		}
		slices.Sort(scores)
		if !slices.Equal(scores, []float64{0, 1, 2, 3}) {
			t.Errorf("the blocked workers took %v, want the four lowest", scores)
		}
		top, err := rdb.BZPopMax(ctx, time.Second, q).Result()
		if err != nil || top.Member != "job9" || top.Score != 9 {
			t.Errorf("BZPOPMAX = %+v, %v", top, err)
		}
		key, rest, err := rdb.BZMPop(ctx, time.Second, "min", 10, "other", q).Result()
		want := []redis.Z{{Score: 4, Member: "job4"}, {Score: 5, Member: "job5"}, {Score: 6, Member: "job6"},
			{Score: 7, Member: "job7"}, {Score: 8, Member: "job8"}}
		if err != nil || key != q || !slices.Equal(rest, want) {
			t.Errorf("BZMPOP = %q %v, %v", key, rest, err)
		}
		if n, err := rdb.Exists(ctx, q).Result(); err != nil || n != 0 {
			t.Errorf("EXISTS of the emptied queue = %d, %v", n, err)
		}
	})
}

// waitBlockedClients waits until INFO reports n blocked clients.
func waitBlockedClients(ctx context.Context, t *testing.T, rdb *redis.Client, n int) {
	t.Helper()
	want := fmt.Sprintf("blocked_clients:%d\r\n", n)
	for {
		info, err := rdb.Info(ctx, "clients").Result()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(info, want) {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("INFO clients never reported %d blocked clients: %s", n, info)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// forEachProto runs fn against one kvserver in RESP3, then in RESP2, each
// with 30 s to finish.
func forEachProto(t *testing.T, fn func(t *testing.T, ctx context.Context, addr string, proto int)) {
	s := startKVServer(t)
	for _, proto := range []int{3, 2} {
		t.Run(fmt.Sprintf("RESP%d", proto), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			fn(t, ctx, s.Addr, proto)
		})
	}
}
