package tests

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// pythonLockScript drives redis-py's Lock, whose release, extend and
// reacquire are Lua scripts run with EVALSHA (and EVAL after NOSCRIPT).
const pythonLockScript = `
import sys, redis
r = redis.Redis(port=int(sys.argv[1]))
lock = r.lock("py:lock", timeout=10)
print("acquire", lock.acquire(blocking=False))
other = r.lock("py:lock", timeout=10)
print("other", other.acquire(blocking=False))
print("owned", lock.owned(), other.owned())
print("extend", lock.extend(5), 10000 < r.pttl("py:lock") <= 15000)
print("reacquire", lock.reacquire(), 9000 < r.pttl("py:lock") <= 10000)
lock.release()
print("released", r.exists("py:lock"))
stale = r.lock("py:lock", timeout=10)
stale.local.token = b"not-mine"
try:
    stale.release()
except redis.exceptions.LockNotOwnedError as e:
    print("release-not-owned", type(e).__name__)
print("other-now", other.acquire(blocking=False))
stale.local.token = b"not-mine"
try:
    stale.extend(5)
except redis.exceptions.LockError as e:
    print("extend-not-owned", type(e).__name__)
with r.lock("py:ctx", timeout=5, blocking_timeout=1):
    print("inside", r.exists("py:ctx"))
print("after", r.exists("py:ctx"))
r.script_flush()
l3 = r.lock("py:l3", timeout=5)
print("after-flush", l3.acquire(blocking=False))
l3.release()
print("released-after-flush", r.exists("py:l3"))
`

// TestPythonRedisLock runs redis-py's Lock (EVALSHA of its release,
// extend and reacquire scripts, EVAL once SCRIPT FLUSH dropped them).
func TestPythonRedisLock(t *testing.T) {
	t.Parallel()
	out := runPythonRedis(t, pythonLockScript)
	want := strings.Join([]string{
		"acquire True",
		"other False",
		"owned True False",
		"extend True True",
		"reacquire True True",
		"released 0",
		"release-not-owned LockNotOwnedError",
		"other-now True",
		"extend-not-owned LockNotOwnedError",
		"inside 1",
		"after 0",
		"after-flush True",
		"released-after-flush 0",
	}, "\n") + "\n"
	if string(out) != want {
		t.Errorf("redis-py Lock printed:\n%s\nwant:\n%s", out, want)
	}
}

// TestGoRedisScripting drives EVAL, EVALSHA, EVAL_RO, SCRIPT LOAD/EXISTS,
// redis.Script (EVALSHA, then EVAL after NOSCRIPT), FUNCTION LOAD and
// FCALL through go-redis v9, in RESP2 and RESP3.
func TestGoRedisScripting(t *testing.T) {
	t.Parallel()
	s := startKVServer(t)
	ctx := context.Background()
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprintf("RESP%d", proto), func(t *testing.T) {
			rdb := newGoRedis(t, s.Addr, proto, 2)
			key := fmt.Sprintf("gr:%d", proto)
			check := func(what string, got any, err error, want any) {
				t.Helper()
				if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("%s = %v, %v; want %v", what, got, err, want)
				}
			}
			v, err := rdb.Eval(ctx, "return redis.call('set', KEYS[1], ARGV[1])", []string{key}, "v1").Result()
			check("Eval set", v, err, "OK")
			v, err = rdb.Eval(ctx, "return {redis.call('get', KEYS[1]), 7, 2.9, false, 'x'}", []string{key}).Result()
			check("Eval table", v, err, "[v1 7 2 <nil> x]")
			v, err = rdb.EvalRO(ctx, "return redis.call('get', KEYS[1])", []string{key}).Result()
			check("EvalRO", v, err, "v1")
			_, err = rdb.EvalRO(ctx, "return redis.call('del', KEYS[1])", []string{key}).Result()
			if err == nil || !strings.Contains(err.Error(), "Write commands are not allowed from read-only scripts") {
				t.Errorf("EvalRO write: %v, want the read-only error", err)
			}
			_, err = rdb.Eval(ctx, "return redis.call('incr', KEYS[1])", []string{key}).Result()
			if err == nil || !strings.HasPrefix(err.Error(), "ERR value is not an integer or out of range script: ") {
				t.Errorf("Eval error: %v", err)
			}

			incr := redis.NewScript("return redis.call('incrby', KEYS[1], ARGV[1])")
			check("ScriptFlush", nil, rdb.ScriptFlush(ctx).Err(), nil)
			n, err := incr.Run(ctx, rdb, []string{key + ":n"}, 5).Int64()
			check("Script.Run after NOSCRIPT", n, err, 5)
			exists, err := incr.Exists(ctx, rdb).Result()
			check("Script.Exists", exists, err, []bool{true})
			n, err = incr.EvalSha(ctx, rdb, []string{key + ":n"}, 2).Int64()
			check("Script.EvalSha", n, err, 7)
			sha, err := rdb.ScriptLoad(ctx, "return ARGV[1] .. ARGV[2]").Result()
			check("ScriptLoad", sha, err, "702b19e4aa19aaa9858b9343630276d13af5822e")
			v, err = rdb.EvalSha(ctx, sha, nil, "a", "b").Result()
			check("EvalSha", v, err, "ab")

			_, err = rdb.FunctionLoadReplace(ctx, "#!lua name=grlib\nredis.register_function('grf', function(keys, args) return redis.call('get', keys[1]) end)").Result()
			check("FunctionLoad", nil, err, nil)
			v, err = rdb.FCall(ctx, "grf", []string{key}).Result()
			check("FCall", v, err, "v1")
			v, err = rdb.FCallRO(ctx, "grf", []string{key}).Result()
			if err == nil || !strings.Contains(err.Error(), "Can not execute a script with write flag using *_ro command.") {
				t.Errorf("FCallRO of a function without no-writes = %v, %v", v, err)
			}
			libs, err := rdb.FunctionList(ctx, redis.FunctionListQuery{LibraryNamePattern: "grlib"}).Result()
			if err != nil || len(libs) != 1 || libs[0].Name != "grlib" || len(libs[0].Functions) != 1 || libs[0].Functions[0].Name != "grf" {
				t.Errorf("FunctionList = %+v, %v", libs, err)
			}
		})
	}
}
