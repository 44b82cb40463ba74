package tests

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/kvserver/kvserver/hll"
)

// TestDifferentialHyperLogLog pins PFADD, PFCOUNT, PFMERGE, PFDEBUG and
// PFSELFTEST to Redis 7's replies, and the HyperLogLog values themselves:
// every GET of an HLL key must return Redis's bytes, sparse, dense and
// across the promotion between them, with and without the cached
// cardinality, including values that redis-server wrote.
func TestDifferentialHyperLogLog(t *testing.T) {
	t.Parallel()
	runDifferential(t, hllScripts(t))
}

// redisHLL reads a value that redis-server 7.0.15 wrote, from the hll
// package's test data (see hll/hll_test.go for how each was made).
func redisHLL(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "hll", "testdata", "redis", name+".hll"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// pfaddRange is PFADD key prefix<from> ... prefix<to-1>.
func pfaddRange(key, prefix string, from, to int) step {
	cmd := []string{"PFADD", key}
	for i := from; i < to; i++ {
		cmd = append(cmd, prefix+strconv.Itoa(i))
	}
	return do(cmd...)
}

// growSteps adds n elements to key in batches of batch, checking the
// value's bytes, its encoding and its count after each batch.
func growSteps(key, prefix string, n, batch int) []step {
	var steps []step
	for i := 0; i < n; i += batch {
		steps = append(steps,
			pfaddRange(key, prefix, i, min(n, i+batch)),
			do("GET", key),
			do("PFDEBUG", "ENCODING", key),
			do("PFCOUNT", key),
			do("GET", key))
	}
	return steps
}

// hllScripts are the scripts of TestDifferentialHyperLogLog.
func hllScripts(t *testing.T) []script {
	sparse := redisHLL(t, "add-1000")
	dense := redisHLL(t, "add-50000-counted")
	hdr := "HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80"
	return []script{
		{"pfadd and pfcount", []step{
			do("PFADD", "h", "a", "b", "c"),
			do("GET", "h"),
			do("PFCOUNT", "h"),
			do("GET", "h"),
			do("PFADD", "h", "a"),
			do("PFADD", "h"),
			do("GET", "h"),
			do("PFADD", "h", "d"),
			do("GET", "h"),
			do("PFCOUNT", "h"),
			do("PFADD", "empty"),
			do("PFADD", "empty"),
			do("GET", "empty"),
			do("PFCOUNT", "empty"),
			do("GET", "empty"),
			do("PFCOUNT", "missing"),
			do("EXISTS", "missing"),
			do("TYPE", "h"),
			do("STRLEN", "h"),
			do("PFADD", "bin", "", "\x00", "\xff\xfe", "a\r\nb"),
			do("GET", "bin"),
			do("PFADD", "t", "x"),
			do("EXPIRE", "t", "100"),
			do("PFADD", "t", "y"),
			approxInt(1, "TTL", "t"),
			do("PFCOUNT", "t"),
			approxInt(1, "TTL", "t"),
			do("PFMERGE", "t", "h"),
			approxInt(1, "TTL", "t"),
		}},
		{"arity", arity(
			line("PFADD"),
			line("PFCOUNT"),
			line("PFMERGE"),
			line("PFDEBUG"),
			line("PFDEBUG", "ENCODING"),
			line("PFDEBUG", "ENCODING", "h", "x"),
			line("PFSELFTEST", "x"),
		)},
		{"sparse to dense", growSteps("g", "e", 3200, 100)},
		{"large set", growSteps("big", "x", 60000, 3000)},
		{"hll-sparse-max-bytes", seq(
			do("CONFIG", "GET", "hll-sparse-max-bytes"),
			do("CONFIG", "SET", "hll-sparse-max-bytes", "300"),
			do("CONFIG", "GET", "hll-sparse-max-bytes"),
			growSteps("small", "e", 200, 20),
			do("CONFIG", "SET", "hll-sparse-max-bytes", "0"),
			do("PFADD", "zero", "a"),
			do("PFDEBUG", "ENCODING", "zero"),
			do("GET", "zero"),
			do("CONFIG", "SET", "hll-sparse-max-bytes", "-1"),
			do("CONFIG", "SET", "hll-sparse-max-bytes", "3000"),
			do("PFADD", "after", "a"),
			do("PFDEBUG", "ENCODING", "after"),
		)},
		{"pfcount of a union", seq(
			pfaddRange("u1", "e", 0, 500),
			pfaddRange("u2", "e", 250, 5000),
			do("SET", "r1", sparse),
			do("SET", "r2", dense),
			do("PFCOUNT", "u1", "u2"),
			do("PFCOUNT", "u1", "missing"),
			do("PFCOUNT", "missing", "missing2"),
			do("PFCOUNT", "u1", "u2", "r1", "r2"),
			do("GET", "u1"),
			do("GET", "u2"),
			do("PFCOUNT", "r1"),
			do("GET", "r1"),
			do("PFCOUNT", "r2"),
		)},
		{"pfmerge", seq(
			pfaddRange("s1", "e", 0, 100),
			pfaddRange("s2", "f", 0, 300),
			pfaddRange("d1", "g", 0, 4000),
			do("PFMERGE", "m1", "s1", "s2"),
			do("GET", "m1"),
			do("PFDEBUG", "ENCODING", "m1"),
			do("PFCOUNT", "m1"),
			do("PFMERGE", "m2", "s1", "d1"),
			do("GET", "m2"),
			do("PFDEBUG", "ENCODING", "m2"),
			do("PFMERGE", "s1", "s2"),
			do("GET", "s1"),
			do("PFMERGE", "m3"),
			do("GET", "m3"),
			do("PFMERGE", "m4", "missing"),
			do("GET", "m4"),
			do("PFMERGE", "m1", "m1"),
			do("GET", "m1"),
			do("PFMERGE", "s2", "d1"),
			do("PFDEBUG", "ENCODING", "s2"),
			do("GET", "s2"),
		)},
		{"values written by redis-server", []step{
			do("SET", "r1", sparse),
			do("SET", "r2", dense),
			do("SET", "r3", redisHLL(t, "add-100")),
			do("PFCOUNT", "r1"),
			do("GET", "r1"),
			do("PFADD", "r1", "new1", "new2", "new3"),
			do("GET", "r1"),
			do("PFADD", "r2", "new1", "new2", "new3"),
			do("GET", "r2"),
			do("PFMERGE", "m", "r3", "r1"),
			do("GET", "m"),
			do("PFMERGE", "m", "r2"),
			do("GET", "m"),
			do("PFCOUNT", "m"),
			do("PFMERGE", "r3", "r3"),
			do("GET", "r3"),
			do("SET", "r4", redisHLL(t, "merge-dense")),
			do("PFCOUNT", "r4"),
			do("PFDEBUG", "DECODE", "r3"),
		}},
		{"values that are not HyperLogLogs", []step{
			do("SET", "str", "hello"),
			do("PFADD", "str", "a"),
			do("PFCOUNT", "str"),
			do("PFCOUNT", "str", "missing"),
			do("PFCOUNT", "missing", "str"),
			do("PFMERGE", "str", "missing"),
			do("PFMERGE", "dst", "str"),
			do("EXISTS", "dst"),
			do("PFDEBUG", "ENCODING", "str"),
			do("SET", "short", "HYLL\x01\x00\x00"),
			do("PFADD", "short", "a"),
			do("SET", "badenc", "HYLL\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x7f\xff"),
			do("PFCOUNT", "badenc"),
			do("SET", "shortdense", dense[:len(dense)-1]),
			do("PFCOUNT", "shortdense"),
			do("GET", "str"),
		}},
		{"corrupt sparse values", []step{
			do("SET", "few", hdr+"\x7f\xfe"),
			do("SET", "many", hdr+"\x7f\xff\x00"),
			do("SET", "valpast", hdr+"\x7f\xfe\x83"),
			do("SET", "trailing", hdr+"\x7f\xff\x80"),
			do("SET", "cut", hdr+"\x7f"),
			do("SET", "bare", hdr),
			do("PFCOUNT", "few"),
			do("PFCOUNT", "many"),
			do("PFCOUNT", "valpast"),
			do("PFCOUNT", "trailing"),
			do("PFCOUNT", "cut"),
			do("PFCOUNT", "bare"),
			do("PFCOUNT", "few", "many"),
			do("PFCOUNT", "trailing", "missing"),
			do("PFMERGE", "d", "valpast"),
			do("PFMERGE", "d", "trailing"),
			do("GET", "d"),
			do("PFADD", "few", "a", "b", "c"),
			do("GET", "few"),
			do("PFDEBUG", "DECODE", "cut"),
			do("PFADD", "cut", "a", "b"),
			do("GET", "cut"),
			do("PFADD", "bare", "a"),
			do("PFADD", "trailing", "a", "b", "c"),
			do("GET", "trailing"),
			do("PFDEBUG", "GETREG", "valpast"),
			do("PFDEBUG", "TODENSE", "few"),
			do("PFDEBUG", "TODENSE", "trailing"),
			do("GET", "trailing"),
			// After PFADD, Redis reads the cut-off XZERO's second byte from
			// memory past the string, which holds whatever was there: no
			// DECODE of "cut" here.
			do("PFDEBUG", "DECODE", "bare"),
		}},
		{"pfdebug", []step{
			do("PFADD", "h", "a", "b", "c"),
			do("PFDEBUG", "ENCODING", "h"),
			do("PFDEBUG", "DECODE", "h"),
			do("PFDEBUG", "encoding", "h"),
			do("PFDEBUG", "GETREG", "h"),
			do("PFDEBUG", "ENCODING", "h"),
			do("GET", "h"),
			do("PFDEBUG", "DECODE", "h"),
			do("PFDEBUG", "TODENSE", "h"),
			do("PFADD", "h2", "x"),
			do("PFDEBUG", "TODENSE", "h2"),
			do("GET", "h2"),
			do("PFDEBUG", "NOPE", "h"),
			do("PFDEBUG", "NO\r\nPE", "h"),
			do("PFDEBUG", "NOPE", "missing"),
			do("PFDEBUG", "ENCODING", "missing"),
		}},
		{"pfselftest", []step{
			do("PFSELFTEST"),
		}},
	}
}

// TestHyperLogLogValuesMoveBetweenServers builds HyperLogLogs of several
// sizes on redis-server alone (sparse, near the promotion, dense), copies
// each with GET and SET into kvserver and into a second key of
// redis-server, and then requires the same replies and the same bytes from
// both servers through PFADD, PFCOUNT and PFMERGE of those values.
func TestHyperLogLogValuesMoveBetweenServers(t *testing.T) {
	t.Parallel()
	ref := startRedis(t)
	kv := startKVServer(t)
	rc, kc := dialRaw(t, ref.Addr), dialRaw(t, kv.Addr)
	call := func(c *rawClient, cmd ...string) []byte {
		t.Helper()
		raw, err := c.Call(cmd...)
		if err != nil {
			t.Fatalf("%q: %v", cmd, err)
		}
		return raw
	}
	same := func(cmd ...string) {
		t.Helper()
		if a, b := call(rc, cmd...), call(kc, cmd...); !bytes.Equal(a, b) {
			t.Fatalf("%q: replies differ\n  redis:    %s\n  kvserver: %s", cmd, quoteTrunc(a), quoteTrunc(b))
		}
	}
	rng := rand.New(rand.NewPCG(14, 2026))
	element := func() string { return strconv.FormatUint(rng.Uint64(), 36) }
	for i, n := range []int{5, 200, 1500, 2500, 20000} {
		src := "src" + strconv.Itoa(i)
		for added := 0; added < n; added += 500 {
			cmd := []string{"PFADD", src}
			for range min(500, n-added) {
				cmd = append(cmd, element())
			}
			call(rc, cmd...)
		}
		r, err := parseReply(call(rc, "GET", src))
		if err != nil || r.Type != '$' {
			t.Fatalf("GET %s: %v %q", src, err, r.Type)
		}
		copyKey := "copy" + strconv.Itoa(i)
		same("SET", copyKey, r.Str)
		same("PFDEBUG", "ENCODING", copyKey)
		same("PFCOUNT", copyKey)
		same("GET", copyKey)
		same("PFADD", copyKey, element(), element(), element())
		same("GET", copyKey)
		same("PFCOUNT", copyKey)
		same("PFMERGE", "merged", copyKey)
		same("GET", "merged")
		same("PFCOUNT", "merged")
		same("PFCOUNT", "merged", copyKey, "copy0")
	}
	same("PFMERGE", "all", "copy0", "copy1", "copy2", "copy3", "copy4")
	same("GET", "all")
	same("PFCOUNT", "all")
}

// TestHyperLogLogsSurviveDemotionAndRestart keeps more dense HyperLogLogs
// than maxmemory holds, so most live only on the disk tier, and checks
// that PFADD, PFCOUNT and GET read them back (promoting them) with the
// bytes package hll computes, before and after a restart.
func TestHyperLogLogsSurviveDemotionAndRestart(t *testing.T) {
	if diffAgainstRedis() {
		t.Skip("kvserver's disk tier has no Redis counterpart")
	}
	t.Parallel()
	const keys = 1500 // 1500 dense values of 12304 bytes: 18 MB
	s := startKVServer(t, "--maxmemory", "8mb", "--hll-sparse-max-bytes", "0")
	c := dialRaw(t, s.Addr)
	want := make([][]byte, keys)
	for i := range keys {
		key := "hll:" + strconv.Itoa(i)
		v := hll.New()
		cmd := []string{"PFADD", key}
		for j := range 4 {
			ele := fmt.Sprintf("e%d-%d", i, j)
			v, _, _ = hll.Add(v, []byte(ele), 0)
			cmd = append(cmd, ele)
		}
		hll.InvalidateCache(v)
		want[i] = v
		checkReply(t, c, ":1\r\n", cmd...)
	}
	if d := infoInt(t, c, "tiers", "tier_disk_keys"); d < keys/2 {
		t.Fatalf("tier_disk_keys = %d, want most of the %d HyperLogLogs on disk", d, keys)
	}
	bulk := func(v []byte) string { return "$" + strconv.Itoa(len(v)) + "\r\n" + string(v) + "\r\n" }
	check := func(when string) {
		t.Helper()
		for i := 0; i < keys; i += 7 {
			key := "hll:" + strconv.Itoa(i)
			if i%2 == 0 {
				card, err := hll.Count(want[i])
				if err != nil {
					t.Fatal(err)
				}
				hll.SetCachedCardinality(want[i], card)
				checkReply(t, c, ":"+strconv.FormatUint(card, 10)+"\r\n", "PFCOUNT", key)
			}
			if got := c.Do("GET", key); string(got) != bulk(want[i]) {
				t.Fatalf("%s: GET %s returned %d bytes that differ from package hll's", when, key, len(got))
			}
		}
	}
	check("before restart")
	c.Close()
	s.Restart(t)
	c = dialRaw(t, s.Addr)
	check("after restart")
	checkReply(t, c, "+OK\r\n", "PFMERGE", "all", "hll:0", "hll:1", "hll:2")
	checkReply(t, c, ":12\r\n", "PFCOUNT", "all")
}
