package tests

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// setMember is member j of test set i: sets with even i hold integers
// (intsets up to 512 members), odd ones strings (hashtables).
func setMember(i, j int) string {
	if i%2 == 0 {
		return strconv.Itoa(i*100000 + j)
	}
	return fmt.Sprintf("set%d-member%d-%060d", i, j, j)
}

// setMembersWant is the sorted members of test set i with n members,
// skipping those removed (every seventh).
func setMembersWant(i, n int) []string {
	var out []string
	for j := range n {
		if j%7 != 3 {
			out = append(out, setMember(i, j))
		}
	}
	slices.Sort(out)
	return out
}

// readSet returns a set's sorted members and its encoding.
func readSet(c *rawClient, key string) ([]string, string, error) {
	raw, err := c.Call("SMEMBERS", key)
	if err != nil {
		return nil, "", err
	}
	r, err := parseReply(raw)
	if err != nil {
		return nil, "", err
	}
	if r.IsError() {
		return nil, "", fmt.Errorf("SMEMBERS %s: %s", key, r.Str)
	}
	out := make([]string, 0, len(r.Elems))
	for _, e := range r.Elems {
		out = append(out, e.Str)
	}
	slices.Sort(out)
	raw, err = c.Call("OBJECT", "ENCODING", key)
	if err != nil {
		return nil, "", err
	}
	enc, err := parseReply(raw)
	if err != nil {
		return nil, "", err
	}
	return out, enc.Str, nil
}

// TestSetsAreDemotedReadBackAndSurviveKillNine fills a 16 MiB memory tier
// with about 25 MiB of sets (intsets and hashtables), reads every one
// back (promoting those demoted), kills the server with SIGKILL more than
// 5 s after the last write and checks every set again after the restart:
// members, removals and encodings.
func TestSetsAreDemotedReadBackAndSurviveKillNine(t *testing.T) {
	if diffAgainstRedis() {
		t.Skip("kvserver's disk tier has no Redis counterpart")
	}
	t.Parallel()
	const sets = 400
	sizes := func(i int) int {
		if i%2 == 0 {
			return 500 // an intset
		}
		return 1500 // about 120 KiB of members
	}
	s := startKVServer(t, "--maxmemory", "16mb")
	c := dialRaw(t, s.Addr)
	for i := range sets {
		key := "set:" + strconv.Itoa(i)
		args := []string{"SADD", key}
		var removed []string
		for j := range sizes(i) {
			args = append(args, setMember(i, j))
			if j%7 == 3 {
				removed = append(removed, setMember(i, j))
			}
		}
		expectReply(t, c, fmt.Sprintf(":%d\r\n", sizes(i)), args...)
		expectReply(t, c, fmt.Sprintf(":%d\r\n", len(removed)), append([]string{"SREM", key}, removed...)...)
	}
	if used := infoInt(t, c, "memory", "used_memory"); used > 16<<20 {
		t.Errorf("used_memory %d above maxmemory", used)
	}
	if d := infoInt(t, c, "tiers", "tier_disk_keys"); d < sets/4 {
		t.Errorf("tier_disk_keys = %d, want a quarter of the sets or more demoted", d)
	}
	check := func(when string) {
		t.Helper()
		bad := 0
		for i := range sets {
			key := "set:" + strconv.Itoa(i)
			got, enc, err := readSet(c, key)
			wantEnc := "hashtable"
			if i%2 == 0 {
				wantEnc = "intset"
			}
			if err != nil || enc != wantEnc || !slices.Equal(got, setMembersWant(i, sizes(i))) {
				bad++
				if bad < 5 {
					t.Errorf("%s: %s: %d members, encoding %q, err %v", when, key, len(got), enc, err)
				}
			}
		}
		if bad > 0 {
			t.Errorf("%s: %d of %d sets wrong", when, bad, sets)
		}
	}
	check("before the kill")
	if p := infoInt(t, c, "tiers", "tier_memory_promotions"); p == 0 {
		t.Errorf("reading the sets back promoted none")
	}
	time.Sleep(6 * time.Second) // past the durability promise's 5 s
	expectReply(t, c, ":1\r\n", "SADD", "late", "written just before the kill")
	c.Close()
	s.Crash()
	s.Relaunch(t)
	c = dialRaw(t, s.Addr)
	check("after kill -9")
	checkReply(t, c, ":1\r\n", "SISMEMBER", "set:1", setMember(1, 0))
	checkReply(t, c, ":0\r\n", "SISMEMBER", "set:1", setMember(1, 3))
}

// TestGoRedisSets drives the set family through go-redis v9 in RESP2 and
// RESP3 (where SMEMBERS and friends answer RESP3 sets), including SSCAN's
// iterator over a hashtable and a TxPipeline of set commands.
func TestGoRedisSets(t *testing.T) {
	t.Parallel()
	s := startKVServer(t)
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprintf("RESP%d", proto), func(t *testing.T) {
			ctx := context.Background()
			rdb := newGoRedis(t, s.Addr, proto, 2)
			k := func(name string) string { return fmt.Sprintf("go%d:%s", proto, name) }
			must := func(err error) {
				t.Helper()
				if err != nil {
					t.Fatal(err)
				}
			}
			if n, err := rdb.SAdd(ctx, k("i"), 3, 1, 2, 2).Result(); err != nil || n != 3 {
				t.Fatalf("SADD = %d, %v", n, err)
			}
			if m, err := rdb.SMembers(ctx, k("i")).Result(); err != nil || !slices.Equal(m, []string{"1", "2", "3"}) {
				t.Fatalf("SMEMBERS of an intset = %q, %v", m, err)
			}
			big := members("m", 2000)
			must(rdb.SAdd(ctx, k("h"), toAny(big)...).Err())
			var scanned []string
			iter := rdb.SScan(ctx, k("h"), 0, "m1*", 50).Iterator()
			for iter.Next(ctx) {
				scanned = append(scanned, iter.Val())
			}
			must(iter.Err())
			slices.Sort(scanned)
			scanned = slices.Compact(scanned)
			if len(scanned) != 1111 { // m1, m10-m19, m100-m199, m1000-m1999
				t.Fatalf("SSCAN MATCH m1* found %d members, want 1111", len(scanned))
			}
			if ok, err := rdb.SIsMember(ctx, k("h"), "m1999").Result(); err != nil || !ok {
				t.Fatalf("SISMEMBER = %v, %v", ok, err)
			}
			if got, err := rdb.SMIsMember(ctx, k("h"), "m0", "nope").Result(); err != nil || !slices.Equal(got, []bool{true, false}) {
				t.Fatalf("SMISMEMBER = %v, %v", got, err)
			}
			popped, err := rdb.SPopN(ctx, k("h"), 10).Result()
			if err != nil || len(popped) != 10 {
				t.Fatalf("SPOP 10 = %q, %v", popped, err)
			}
			if n, err := rdb.SCard(ctx, k("h")).Result(); err != nil || n != 1990 {
				t.Fatalf("SCARD after SPOP = %d, %v", n, err)
			}
			if r, err := rdb.SRandMemberN(ctx, k("i"), -7).Result(); err != nil || len(r) != 7 {
				t.Fatalf("SRANDMEMBER -7 = %q, %v", r, err)
			}
			must(rdb.SAdd(ctx, k("j"), 2, 3, 4).Err())
			if r, err := rdb.SInter(ctx, k("i"), k("j")).Result(); err != nil || !slices.Equal(r, []string{"2", "3"}) {
				t.Fatalf("SINTER = %q, %v", r, err)
			}
			if n, err := rdb.SInterCard(ctx, 1, k("i"), k("j")).Result(); err != nil || n != 1 {
				t.Fatalf("SINTERCARD LIMIT 1 = %d, %v", n, err)
			}
			if r, err := rdb.SUnion(ctx, k("i"), k("j")).Result(); err != nil || !slices.Equal(r, []string{"1", "2", "3", "4"}) {
				t.Fatalf("SUNION = %q, %v", r, err)
			}
			if r, err := rdb.SDiff(ctx, k("i"), k("j")).Result(); err != nil || !slices.Equal(r, []string{"1"}) {
				t.Fatalf("SDIFF = %q, %v", r, err)
			}
			if ok, err := rdb.SMove(ctx, k("i"), k("moved"), 1).Result(); err != nil || !ok {
				t.Fatalf("SMOVE = %v, %v", ok, err)
			}
			cmds, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.SInterStore(ctx, k("d"), k("i"), k("j"))
				p.SUnionStore(ctx, k("u"), k("i"), k("j"), k("moved"))
				p.SRem(ctx, k("j"), 4)
				p.SDiffStore(ctx, k("x"), k("u"), k("j"))
				return nil
			})
			must(err)
			var got []int64
			for _, c := range cmds {
				got = append(got, c.(*redis.IntCmd).Val())
			}
			if !slices.Equal(got, []int64{2, 4, 1, 2}) {
				t.Fatalf("transaction of set commands answered %v", got)
			}
			if enc, err := rdb.ObjectEncoding(ctx, k("x")).Result(); err != nil || enc != "intset" {
				t.Fatalf("OBJECT ENCODING of SDIFFSTORE's result = %q, %v", enc, err)
			}
			if err := rdb.Get(ctx, k("x")).Err(); err == nil || !strings.HasPrefix(err.Error(), "WRONGTYPE") {
				t.Fatalf("GET on a set: %v", err)
			}
		})
	}
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// TestPythonRedisSets runs Debian's redis-py (RESP2) set commands.
func TestPythonRedisSets(t *testing.T) {
	t.Parallel()
	out := runPythonRedis(t, `
import sys
import redis
r = redis.Redis(host="127.0.0.1", port=int(sys.argv[1]), socket_timeout=5)
print("sadd", r.sadd("s", *range(600)), r.object("encoding", "s"))
print("smembers", len(r.smembers("s")), b"599" in r.smembers("s"))
print("sscan_iter", len(set(r.sscan_iter("s", count=20))))
print("spop", len(r.spop("s", 100)), r.scard("s"))
print("srandmember", len(r.srandmember("s", -1000)), len(r.srandmember("s", 1000)))
print("sintercard", r.sintercard(2, ["s", "s"]), r.sintercard(2, ["s", "s"], limit=10))
r.sadd("t", "a", "b", 1)
print("sinter", sorted(r.sinter("t", "nokey")), sorted(r.sunion("t", "nokey")))
print("smismember", r.smismember("t", ["a", "z", "1"]))
p = r.pipeline()
p.sadd("u", 5, 1)
p.smove("u", "v", 5)
p.smembers("u")
p.sdiff("t", "u")
res = p.execute()
print("pipeline", res[:3], sorted(res[3]))
`)
	want := "sadd 600 b'hashtable'\n" +
		"smembers 600 True\n" +
		"sscan_iter 600\n" +
		"spop 100 500\n" +
		"srandmember 1000 500\n" +
		"sintercard 500 10\n" +
		"sinter [] [b'1', b'a', b'b']\n" +
		"smismember [1, 0, 1]\n" +
		"pipeline [2, True, {b'1'}] [b'a', b'b']\n"
	if string(out) != want {
		t.Errorf("python redis printed:\n%s\nwant:\n%s", out, want)
	}
}

// TestConcurrentSmoveKeepsEveryMember moves members between two sets from
// eight clients while two others run SINTERSTORE, SUNION and SSCAN over
// them: no member is lost or duplicated (SCARD of both adds up, their
// union is whole and their intersection empty).
func TestConcurrentSmoveKeepsEveryMember(t *testing.T) {
	t.Parallel()
	s := startKVServer(t)
	ctx := context.Background()
	rdb := newGoRedis(t, s.Addr, 3, 12)
	all := members("m", 1000)
	if err := rdb.SAdd(ctx, "a", toAny(all)...).Err(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Second)
	errs := make(chan error, 10)
	for w := range 8 {
		go func() {
			var err error
			for i := 0; err == nil && time.Now().Before(deadline); i++ {
				from, to := "a", "b"
				if (i+w)%2 == 1 {
					from, to = to, from
				}
				err = rdb.SMove(ctx, from, to, all[(i*7+w*131)%len(all)]).Err()
			}
			errs <- err
		}()
	}
	for w := range 2 {
		go func() {
			var err error
			for time.Now().Before(deadline) && err == nil {
				if w == 0 {
					err = rdb.SInterStore(ctx, "both", "a", "b").Err()
					if err == nil {
						err = rdb.SUnion(ctx, "a", "b").Err()
					}
				} else {
					iter := rdb.SScan(ctx, "a", 0, "", 20).Iterator()
					for iter.Next(ctx) {
					}
					err = iter.Err()
				}
			}
			errs <- err
		}()
	}
	for range 10 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	na, _ := rdb.SCard(ctx, "a").Result()
	nb, _ := rdb.SCard(ctx, "b").Result()
	union, err := rdb.SUnion(ctx, "a", "b").Result()
	if err != nil || na+nb != int64(len(all)) || len(union) != len(all) {
		t.Fatalf("after the moves: SCARD a %d + b %d, union %d members (%v), want %d", na, nb, len(union), err, len(all))
	}
	if n, err := rdb.SInterCard(ctx, 0, "a", "b").Result(); err != nil || n != 0 {
		t.Fatalf("a and b share %d members (%v)", n, err)
	}
}
