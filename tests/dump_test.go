package tests

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// TestDumpPayloadsMoveBetweenRedisAndKVServer restores values DUMPed by
// redis-server 7.0 into kvserver and the other way round, for strings of
// every encoding, hashes, sorted sets, lists, sets and streams (with and
// without consumer groups, after XDEL and XTRIM) small and large, and
// checks each arrives whole.
func TestDumpPayloadsMoveBetweenRedisAndKVServer(t *testing.T) {
	t.Parallel()
	ref := startRedis(t)
	kv := startKVServer(t)
	rc, kc := dialRaw(t, ref.Addr), dialRaw(t, kv.Addr)
	var big []string
	for i := 0; i < 500; i++ {
		big = append(big, fmt.Sprintf("field:%d", i), strings.Repeat("v", i%90))
	}
	var bigZ []string
	for i := 0; i < 300; i++ {
		bigZ = append(bigZ, fmt.Sprintf("%d.%d", i, i%7), fmt.Sprintf("member:%d", i))
	}
	var bigL []string
	for i := 0; i < 3000; i++ {
		bigL = append(bigL, fmt.Sprintf("element-%d", i*7))
	}
	var bigX [][]string
	for i := 1; i <= 700; i++ {
		bigX = append(bigX, []string{"XADD", "x2", fmt.Sprintf("%d-%d", 1000+i/3, i%3), "n", fmt.Sprint(i), "text", strings.Repeat("t", i%50)})
	}
	writes := [][]string{
		{"SET", "s1", "12"},
		{"SET", "s2", "-70000"},
		{"SET", "s3", strings.Repeat("compressible ", 40)},
		{"SET", "s4", "short text"},
		{"HSET", "h1", "a", "1", "b", "text", "c", strings.Repeat("long value ", 10)},
		append([]string{"HSET", "h2"}, big...),
		{"ZADD", "z1", "1", "a", "2.5", "b", "-3", "c", "inf", "d"},
		append([]string{"ZADD", "z2"}, bigZ...),
		{"RPUSH", "l1", "a", "12", "text"},
		append([]string{"RPUSH", "l2"}, bigL...),
		{"SADD", "st1", "1", "2", "300"},
		append([]string{"SADD", "st2"}, bigL...),
		{"XADD", "x1", "1-1", "a", "1"}, {"XADD", "x1", "2-0", "a", "2", "b", "text"}, {"XADD", "x1", "3-0", "c", "-5"},
	}
	writes = append(writes, bigX...)
	writes = append(writes, [][]string{
		{"XDEL", "x2", "1001-0", "1100-1", "1233-0"},
		{"XTRIM", "x2", "MAXLEN", "650"},
		{"XGROUP", "CREATE", "x2", "g", "0"},
		{"XREADGROUP", "GROUP", "g", "alice", "COUNT", "20", "STREAMS", "x2", ">"},
		{"XREADGROUP", "GROUP", "g", "bob", "COUNT", "5", "STREAMS", "x2", ">"},
		{"XACK", "x2", "g", "1020-2"},
		{"XCLAIM", "x2", "g", "bob", "0", "1022-1", "RETRYCOUNT", "9"},
		{"XGROUP", "CREATECONSUMER", "x2", "g", "carol"},
		{"XGROUP", "CREATE", "x2", "h", "$"},
		{"XGROUP", "CREATE", "x1", "g", "0", "MKSTREAM"},
		{"XGROUP", "CREATE", "x3", "g", "$", "MKSTREAM"},
	}...)
	reads := [][]string{
		{"GET", "s1"}, {"GET", "s2"}, {"GET", "s3"}, {"GET", "s4"},
		{"HGETALL", "h1"}, {"HLEN", "h2"}, {"HGET", "h2", "field:499"}, {"HGET", "h2", "field:0"},
		{"OBJECT", "ENCODING", "h1"}, {"OBJECT", "ENCODING", "h2"},
		{"ZRANGE", "z1", "0", "-1", "WITHSCORES"}, {"ZRANGE", "z2", "0", "-1", "WITHSCORES"},
		{"OBJECT", "ENCODING", "z1"}, {"OBJECT", "ENCODING", "z2"},
		{"LRANGE", "l1", "0", "-1"}, {"LRANGE", "l2", "0", "-1"},
		{"SMEMBERS", "st1"}, {"SCARD", "st2"}, {"SISMEMBER", "st2", "element-70"},
		{"OBJECT", "ENCODING", "st1"}, {"OBJECT", "ENCODING", "st2"},
		{"XINFO", "STREAM", "x1", "FULL"}, {"XINFO", "STREAM", "x2", "FULL", "COUNT", "0"}, {"XINFO", "STREAM", "x3", "FULL"},
		{"XRANGE", "x2", "-", "+"}, {"XINFO", "GROUPS", "x2"}, {"XPENDING", "x2", "g"},
		{"XADD", "x2", "5000-0", "n", "new"}, {"XINFO", "STREAM", "x2"}, {"DUMP", "x2"},
	}
	keys := []string{"s1", "s2", "s3", "s4", "h1", "h2", "z1", "z2", "l1", "l2", "st1", "st2", "x1", "x2", "x3"}
	for _, dir := range []struct {
		name     string
		from, to *rawClient
	}{{"redis to kvserver", rc, kc}, {"kvserver to redis", kc, rc}} {
		for _, c := range []*rawClient{rc, kc} {
			expectReply(t, c, "+OK\r\n", "FLUSHALL")
		}
		for _, w := range writes {
			if _, err := dir.from.Call(w...); err != nil {
				t.Fatal(err)
			}
		}
		for _, k := range keys {
			raw, err := dir.from.Call("DUMP", k)
			if err != nil {
				t.Fatal(err)
			}
			payload, ok := parseBulk(raw)
			if !ok {
				t.Fatalf("%s: DUMP %s = %q", dir.name, k, raw)
			}
			expectReply(t, dir.to, "+OK\r\n", "RESTORE", k, "0", payload)
		}
		for _, r := range reads {
			want, _ := dir.from.Call(r...)
			got, _ := dir.to.Call(r...)
			if r[0] == "XINFO" { // kvserver counts the radix tree's inner nodes from its keys
				want, got = radixTreeNodes.ReplaceAll(want, nil), radixTreeNodes.ReplaceAll(got, nil)
			}
			if string(got) != string(want) && r[0] != "HGETALL" { // h1 is a hashtable: any order
				t.Errorf("%s: %v = %q, source has %q", dir.name, r, got, want)
			}
		}
	}
}

// radixTreeNodes is XINFO STREAM's radix-tree-nodes and its value.
var radixTreeNodes = regexp.MustCompile(`radix-tree-nodes\r\n:\d+\r\n`)

// parseBulk returns the string of a RESP bulk reply.
func parseBulk(raw []byte) (string, bool) {
	s := string(raw)
	if !strings.HasPrefix(s, "$") {
		return "", false
	}
	i := strings.Index(s, "\r\n")
	var n int
	if _, err := fmt.Sscanf(s[1:i], "%d", &n); err != nil || n < 0 || len(s) != i+2+n+2 {
		return "", false
	}
	return s[i+2 : i+2+n], true
}
