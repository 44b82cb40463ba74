package tests

import (
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"
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
