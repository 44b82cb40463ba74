package tests

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// zsetMember and zsetScore define the test's sorted sets: key i holds
// members 0..n-1 with these names and scores.
func zsetMember(i, j int) string {
	return fmt.Sprintf("member-%04d-%04d-%s", i, j, strings.Repeat("m", 20))
}

func zsetScore(i, j int) float64 { return float64((i*31+j*17)%997) + 0.25 }

// zsetSize is how many members key i gets: most keys are skiplists, every
// fourth a listpack.
func zsetSize(i int) int {
	if i%4 == 0 {
		return 40
	}
	return 300
}

// wantZRange is the RESP2 reply of ZRANGE zkey:i 0 -1 WITHSCORES, with
// extra members added after the fill.
func wantZRange(i int, extra int) string {
	type entry struct {
		m string
		s float64
	}
	var es []entry
	for j := 0; j < zsetSize(i)+extra; j++ {
		es = append(es, entry{zsetMember(i, j), zsetScore(i, j)})
	}
	// sort by (score, member)
	for a := 1; a < len(es); a++ {
		for b := a; b > 0 && (es[b].s < es[b-1].s || es[b].s == es[b-1].s && es[b].m < es[b-1].m); b-- {
			es[b], es[b-1] = es[b-1], es[b]
		}
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "*%d\r\n", 2*len(es))
	for _, e := range es {
		sb.WriteString(bulk(e.m))
		sb.WriteString(bulk(strconv.FormatFloat(e.s, 'g', 17, 64)))
	}
	return sb.String()
}

// zaddRange sends ZADD zkey:i with members from..to-1.
func zaddRange(t *testing.T, c *rawClient, i, from, to int) {
	t.Helper()
	args := []string{"ZADD", fmt.Sprintf("zkey:%d", i)}
	for j := from; j < to; j++ {
		args = append(args, strconv.FormatFloat(zsetScore(i, j), 'g', 17, 64), zsetMember(i, j))
	}
	expectReply(t, c, fmt.Sprintf(":%d\r\n", to-from), args...)
}

// TestZSetsAreDemotedReadBackAndSurviveKillNine fills the memory tier with
// sorted sets well past --maxmemory (so most are demoted to disk), reads
// every one back whole, changes some, waits past README's durability
// bound, kills the server with SIGKILL and checks every set again after
// the restart, in both encodings.
func TestZSetsAreDemotedReadBackAndSurviveKillNine(t *testing.T) {
	if diffAgainstRedis() {
		t.Skip("kvserver's disk tier has no Redis counterpart")
	}
	t.Parallel()
	// About 12 MiB of sorted sets against 4 MiB: two thirds or more must
	// go to disk whatever the exact per-member accounting.
	const keys, maxmemory = 400, 4 << 20
	s := startKVServer(t, "--maxmemory", strconv.Itoa(maxmemory))
	c := dialRaw(t, s.Addr)
	for i := 0; i < keys; i++ {
		zaddRange(t, c, i, 0, zsetSize(i))
	}
	if used := infoInt(t, c, "memory", "used_memory"); used > maxmemory {
		t.Errorf("used_memory %d above maxmemory %d", used, maxmemory)
	}
	d := infoInt(t, c, "tiers", "tier_disk_keys")
	t.Logf("%d of %d sorted sets demoted", d, keys)
	if d < keys/2 {
		t.Errorf("tier_disk_keys = %d, want most of the %d sorted sets demoted", d, keys)
	}
	grown := false
	extra := func(i int) int {
		if grown && i%10 == 1 {
			return 5
		}
		return 0
	}
	check := func(when string) {
		t.Helper()
		bad := 0
		for i := 0; i < keys; i++ {
			key := fmt.Sprintf("zkey:%d", i)
			if !checkReply(t, c, wantZRange(i, extra(i)), "ZRANGE", key, "0", "-1", "WITHSCORES") {
				bad++
			}
			enc := bulk("skiplist")
			if zsetSize(i)+extra(i) <= 128 {
				enc = bulk("listpack")
			}
			if !checkReply(t, c, enc, "OBJECT", "ENCODING", key) {
				bad++
			}
			if bad > 5 {
				t.Fatalf("%s: too many wrong sets", when)
			}
		}
		checkReply(t, c, fmt.Sprintf(":%d\r\n", keys), "DBSIZE")
	}
	check("after the fill")
	if p := infoInt(t, c, "tiers", "tier_memory_promotions"); p == 0 {
		t.Error("reading the sets back promoted none")
	}
	for i := 1; i < keys; i += 10 {
		zaddRange(t, c, i, zsetSize(i), zsetSize(i)+5)
	}
	grown = true
	c = crashPastDurability(t, s, c)
	check("after kill -9 and restart")
}
