package tests

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// streamEntries is how many entries stream key i gets (several Redis
// nodes each), and streamValue an entry's value.
func streamEntries(i int) int { return 150 + i%7 }

func streamValue(i, j int) string {
	return fmt.Sprintf("value-%04d-%04d-%s", i, j, strings.Repeat("v", 24))
}

// wantXRange is the RESP2 reply of XRANGE skey:i - + for entries
// from..n-1 (IDs <j+1>-<i>).
func wantXRange(i, from, n int) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "*%d\r\n", n-from)
	for j := from; j < n; j++ {
		sb.WriteString("*2\r\n" + bulk(fmt.Sprintf("%d-%d", j+1, i)) + "*4\r\n" + bulk("n") + bulk(strconv.Itoa(j)) + bulk("v") + bulk(streamValue(i, j)))
	}
	return sb.String()
}

// TestStreamsAreDemotedReadBackAndSurviveKillNine fills the memory tier
// with streams that have consumer groups and pending entries well past
// --maxmemory, reads every one back (entries, group, PEL), changes some,
// waits past README's durability bound, kills the server with SIGKILL
// and checks every stream again after the restart.
func TestStreamsAreDemotedReadBackAndSurviveKillNine(t *testing.T) {
	if diffAgainstRedis() {
		t.Skip("kvserver's disk tier has no Redis counterpart")
	}
	t.Parallel()
	const keys, maxmemory = 300, 1 << 20 // streams of about 2.3 MB: Redis's listpacks
	s := startKVServer(t, "--maxmemory", strconv.Itoa(maxmemory))
	c := dialRaw(t, s.Addr)
	for i := 0; i < keys; i++ {
		key := fmt.Sprintf("skey:%d", i)
		for j := 0; j < streamEntries(i); j++ {
			expectReply(t, c, bulk(fmt.Sprintf("%d-%d", j+1, i)), "XADD", key, fmt.Sprintf("%d-%d", j+1, i), "n", strconv.Itoa(j), "v", streamValue(i, j))
		}
		expectReply(t, c, "+OK\r\n", "XGROUP", "CREATE", key, "g", "0")
		if i%50 == 0 { // an empty stream with a group is a value too
			expectReply(t, c, "+OK\r\n", "XGROUP", "CREATE", fmt.Sprintf("empty:%d", i), "g", "$", "MKSTREAM")
		}
		c.Call("XREADGROUP", "GROUP", "g", "alice", "COUNT", "3", "STREAMS", key, ">")
	}
	if used := infoInt(t, c, "memory", "used_memory"); used > maxmemory {
		t.Errorf("used_memory %d above maxmemory %d", used, maxmemory)
	}
	if d := infoInt(t, c, "tiers", "tier_disk_keys"); d < keys/2 {
		t.Errorf("tier_disk_keys = %d, want most of the %d streams demoted", d, keys)
	}
	trimmed := false
	first := func(i int) int {
		if trimmed && i%10 == 1 {
			return streamEntries(i) - 20
		}
		return 0
	}
	check := func(when string) {
		t.Helper()
		bad := 0
		for i := 0; i < keys; i++ {
			key := fmt.Sprintf("skey:%d", i)
			if !checkReply(t, c, wantXRange(i, first(i), streamEntries(i)), "XRANGE", key, "-", "+") {
				bad++
			}
			pel := fmt.Sprintf("*4\r\n:3\r\n%s%s*1\r\n*2\r\n%s%s", bulk(fmt.Sprintf("1-%d", i)), bulk(fmt.Sprintf("3-%d", i)), bulk("alice"), bulk("3"))
			if !checkReply(t, c, pel, "XPENDING", key, "g") {
				bad++
			}
			if !checkReply(t, c, bulk("stream"), "OBJECT", "ENCODING", key) {
				bad++
			}
			if i%50 == 0 && !checkReply(t, c, "*1\r\n*12\r\n"+bulk("name")+bulk("g")+bulk("consumers")+":0\r\n"+bulk("pending")+":0\r\n"+
				bulk("last-delivered-id")+bulk("0-0")+bulk("entries-read")+"$-1\r\n"+bulk("lag")+":0\r\n", "XINFO", "GROUPS", fmt.Sprintf("empty:%d", i)) {
				bad++
			}
			if bad > 5 {
				t.Fatalf("%s: too many wrong streams", when)
			}
		}
		checkReply(t, c, fmt.Sprintf(":%d\r\n", keys+keys/50), "DBSIZE")
	}
	check("after the fill")
	if p := infoInt(t, c, "tiers", "tier_memory_promotions"); p == 0 {
		t.Error("reading the streams back promoted none")
	}
	for i := 1; i < keys; i += 10 {
		expectReply(t, c, fmt.Sprintf(":%d\r\n", streamEntries(i)-20), "XTRIM", fmt.Sprintf("skey:%d", i), "MAXLEN", "20")
	}
	trimmed = true
	c = crashPastDurability(t, s, c)
	check("after kill -9 and restart")
}

// crashPastDurability waits past README's durability bound, closes c,
// kills s with SIGKILL, restarts it and returns a new connection.
func crashPastDurability(t *testing.T, s *server, c *rawClient) *rawClient {
	t.Helper()
	time.Sleep(durabilityBound + time.Second)
	c.Close()
	s.Crash()
	s.Relaunch(t)
	return dialRaw(t, s.Addr)
}
