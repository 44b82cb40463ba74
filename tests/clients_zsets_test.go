package tests

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
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
