package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// chunkKey is an LMCache key prefix for chunk i: model@world@worker@hash@dtype.
func chunkKey(i int) string {
	return fmt.Sprintf("llama@1@0@%064x@bfloat16", i*7919+1)
}

// chunkMetadata is LMCache's 28-byte metadata for a bf16 KV_2LTD chunk of
// n bytes (32 layers, hidden size 1024).
func chunkMetadata(n int) string {
	return kvMetadata(n, 32, n/(2*32*1024*2), 1024)
}

// putChunk stores one chunk the way LMCache does: data, then metadata.
func putChunk(c *rawClient, i, size int) error {
	k := chunkKey(i)
	for _, kv := range [][2]string{{k + "kv_bytes", string(randomBytes(uint64(i), size))}, {k + "metadata", chunkMetadata(size)}} {
		raw, err := c.Call("SET", kv[0], kv[1])
		if err != nil {
			return err
		}
		if string(raw) != "+OK\r\n" {
			return fmt.Errorf("SET %s: %q", kv[0], raw)
		}
	}
	return nil
}

// chunkState reads chunk i back: "whole" (both keys, exact bytes),
// "absent" (neither key), or a description of what is wrong. It reads both
// keys with one MGET, as a client that needs the chunk whole must: between
// two GETs the background eviction may take the whole chunk, and the
// second GET would find nothing although no half chunk ever existed.
func chunkState(c *rawClient, i, size int) string {
	k := chunkKey(i)
	raw, err := c.Call("MGET", k+"metadata", k+"kv_bytes")
	if err != nil {
		return "error: " + err.Error()
	}
	r, err := parseReply(raw)
	if err != nil || r.Type != '*' || len(r.Elems) != 2 {
		return fmt.Sprintf("error: MGET answered %q (%v)", raw, err)
	}
	meta, data := r.Elems[0], r.Elems[1]
	switch {
	case meta.Null && data.Null:
		return "absent"
	case meta.Null || data.Null:
		return fmt.Sprintf("half (metadata null %v, kv_bytes null %v)", meta.Null, data.Null)
	case meta.Str != chunkMetadata(size):
		return "corrupt metadata"
	case data.Str != string(randomBytes(uint64(i), size)):
		return "corrupt kv_bytes"
	}
	return "whole"
}

func infoInt(t *testing.T, c *rawClient, section, field string) int64 {
	t.Helper()
	f, err := infoFields(c, section)
	if err != nil {
		t.Fatalf("INFO %s: %v", section, err)
	}
	n, err := strconv.ParseInt(f[field], 10, 64)
	if err != nil {
		t.Fatalf("INFO %s %s = %q: %v", section, field, f[field], err)
	}
	return n
}

// TestChunkPairsSurviveMemoryPressureAndRestart is issue 3's first
// acceptance point: with --maxmemory 64mb, 300 MiB of LMCache chunk pairs
// (1 MiB each) are all readable, memory stays bounded, and all of them
// survive a SIGTERM restart.
func TestChunkPairsSurviveMemoryPressureAndRestart(t *testing.T) {
	if diffAgainstRedis() {
		t.Skip("kvserver's disk tier has no Redis counterpart")
	}
	t.Parallel()
	const chunks, size = 300, 1 << 20
	s := startKVServer(t, "--maxmemory", "64mb")
	c := dialRaw(t, s.Addr)
	for i := range chunks {
		if err := putChunk(c, i, size); err != nil {
			t.Fatalf("chunk %d: %v", i, err)
		}
	}
	if used := infoInt(t, c, "memory", "used_memory"); used > 64<<20 {
		t.Errorf("used_memory %d above maxmemory", used)
	}
	if d := infoInt(t, c, "tiers", "tier_disk_keys"); d < 2*(chunks-64) {
		t.Errorf("tier_disk_keys = %d, want most chunks on disk", d)
	}
	if ev := infoInt(t, c, "tiers", "tier_memory_evictions") + infoInt(t, c, "tiers", "tier_disk_evictions"); ev != 0 {
		t.Errorf("%d evictions, want none while the disk has room", ev)
	}
	check := func(when string) {
		t.Helper()
		bad := 0
		for i := range chunks {
			if st := chunkState(c, i, size); st != "whole" {
				bad++
				if bad < 5 {
					t.Errorf("%s: chunk %d is %s", when, i, st)
				}
			}
		}
		if bad > 0 {
			t.Errorf("%s: %d of %d chunks not whole", when, bad, chunks)
		}
		checkReply(t, c, fmt.Sprintf(":%d\r\n", 2*chunks), "DBSIZE")
	}
	check("before restart")
	if p := infoInt(t, c, "tiers", "tier_memory_promotions"); p == 0 {
		t.Errorf("reading chunks back from disk promoted none")
	}
	c.Close()
	s.Restart(t)
	c = dialRaw(t, s.Addr)
	check("after SIGTERM restart")
}

// TestKillNineLeavesEveryChunkWholeOrAbsent kills the server with SIGKILL
// under a steady write load, restarts it and checks every chunk: whole or
// absent, never half or corrupt, and every chunk acknowledged well before
// the kill is whole. It repeats the cycle to catch state left by a crash.
func TestKillNineLeavesEveryChunkWholeOrAbsent(t *testing.T) {
	if diffAgainstRedis() {
		t.Skip("kvserver's disk tier has no Redis counterpart")
	}
	t.Parallel()
	const size = 1 << 20
	const settle = 5 * time.Second // "well before the crash"
	s := startKVServer(t, "--maxmemory", "16mb")
	next := 0
	ackedAt := map[int]time.Time{}
	lost := map[int]bool{} // absent after an earlier crash: must stay absent
	for round := 0; round < 3; round++ {
		c := dialRaw(t, s.Addr)
		var mu sync.Mutex
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			for {
				select {
				case <-stop:
					return
				default:
				}
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if err := putChunk(c, i, size); err != nil {
					return // the kill
				}
				mu.Lock()
				ackedAt[i] = time.Now()
				mu.Unlock()
			}
		}()
		time.Sleep(settle + 2*time.Second + time.Duration(round)*700*time.Millisecond)
		killedAt := time.Now()
		s.Crash()
		close(stop)
		<-done
		c.Close()
		s.Relaunch(t)
		c = dialRaw(t, s.Addr)
		whole, absent := 0, 0
		mu.Lock()
		for i := 0; i < next; i++ {
			st := chunkState(c, i, size)
			acked, ok := ackedAt[i]
			if lost[i] {
				if st != "absent" {
					t.Errorf("round %d: chunk %d lost in an earlier crash is now %s", round, i, st)
				}
				continue
			}
			if st == "absent" {
				lost[i] = true
			}
			switch {
			case st == "whole":
				whole++
			case st == "absent" && (!ok || killedAt.Sub(acked) < settle):
				absent++
			case st == "absent":
				t.Errorf("round %d: chunk %d acknowledged %v before the kill is absent", round, i, killedAt.Sub(acked))
			default:
				t.Errorf("round %d: chunk %d is %s", round, i, st)
			}
		}
		mu.Unlock()
		t.Logf("round %d: %d chunks written, %d whole, %d absent (written within %v of the kill)", round, next, whole, absent, settle)
		c.Close()
	}
}

// TestKillNineKeepsDeletedChunksDeleted deletes chunks that are on disk
// and kills the server with SIGKILL a few seconds later: after the restart
// every chunk is absent. The disk tier has no write-ahead log, so a delete
// must be flushed like a write. Before it was, deleted chunks came back
// after a crash, and chunks in the value log came back as metadata without
// kv_bytes once the value log had collected their segments; the value-log
// case waits for that collection.
func TestKillNineKeepsDeletedChunksDeleted(t *testing.T) {
	if diffAgainstRedis() {
		t.Skip("kvserver's disk tier has no Redis counterpart")
	}
	t.Parallel()
	for _, tc := range []struct {
		name string
		size int
	}{
		{"value log", 512 << 10},
		{"inline", 64 << 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			const chunks = 24
			// --maxdisk 64mb: 2 MiB value-log segments, collected soon
			// after their values are deleted.
			s := startKVServer(t, "--maxmemory", "4mb", "--maxdisk", "64mb")
			c := dialRaw(t, s.Addr)
			for i := range chunks {
				if err := putChunk(c, i, tc.size); err != nil {
					t.Fatalf("chunk %d: %v", i, err)
				}
			}
			// A clean stop writes everything to disk: the chunks are durable.
			c.Close()
			s.Restart(t)
			c = dialRaw(t, s.Addr)
			segments := func() int {
				entries, err := os.ReadDir(filepath.Join(s.Dir, "pebble", "vlog"))
				if err != nil {
					t.Fatal(err)
				}
				return len(entries)
			}
			before := segments()
			if tc.size >= 256<<10 && before <= 2 {
				t.Fatalf("%d value-log segments for %d chunks of %d bytes", before, chunks, tc.size)
			}
			for i := range chunks {
				k := chunkKey(i)
				expectReply(t, c, ":2\r\n", "DEL", k+"kv_bytes", k+"metadata")
			}
			deleted := time.Now()
			for time.Since(deleted) < 3*time.Second || segments() > 2 {
				if time.Since(deleted) > 15*time.Second {
					t.Fatalf("%d value-log segments before the deletes, %d 15 s after: want them collected", before, segments())
				}
				time.Sleep(100 * time.Millisecond)
			}
			c.Close()
			s.Crash()
			s.Relaunch(t)
			c = dialRaw(t, s.Addr)
			for i := range chunks {
				if st := chunkState(c, i, tc.size); st != "absent" {
					t.Errorf("chunk %d deleted %v before the kill is %s after it", i, time.Since(deleted).Round(time.Second), st)
				}
			}
			checkReply(t, c, ":0\r\n", "DBSIZE")
			if n := infoInt(t, c, "tiers", "tier_disk_corrupt_records"); n != 0 {
				t.Errorf("tier_disk_corrupt_records = %d", n)
			}
		})
	}
}

// TestExpiryIsKeptOnDiskAndHonouredAfterRestart demotes keys with a TTL,
// restarts, and checks the TTL survived and still expires the keys.
func TestExpiryIsKeptOnDiskAndHonouredAfterRestart(t *testing.T) {
	if diffAgainstRedis() {
		t.Skip("kvserver's disk tier has no Redis counterpart")
	}
	t.Parallel()
	s := startKVServer(t, "--maxmemory", "4mb")
	c := dialRaw(t, s.Addr)
	value := string(randomBytes(1, 256<<10))
	const short = 5 * time.Second
	setAt := time.Now()
	expectReply(t, c, "+OK\r\n", "SET", "ttl:short", value, "PX", strconv.Itoa(int(short.Milliseconds())))
	expectReply(t, c, "+OK\r\n", "SET", "ttl:long", value, "EX", "1000")
	expectReply(t, c, "+OK\r\n", "SET", "ttl:none", value)
	for i := range 40 { // push them to disk
		expectReply(t, c, "+OK\r\n", "SET", fmt.Sprintf("filler:%d", i), value)
	}
	c.Close()
	s.Restart(t)
	c = dialRaw(t, s.Addr)
	// A loaded machine (the race detector) may take longer than the short
	// TTL to get here: the key must then be gone, never back without one.
	before := time.Now()
	r, _ := parseReply(c.Do("PTTL", "ttl:short"))
	switch left := short - before.Sub(setAt); {
	case left > 500*time.Millisecond && (r.Int <= 0 || r.Int > short.Milliseconds()):
		t.Errorf("PTTL ttl:short after restart = %d, want 1..%d", r.Int, left.Milliseconds())
	case time.Since(setAt) > short && r.Int != -2:
		t.Errorf("PTTL ttl:short %v after it was set = %d, want -2", time.Since(setAt).Round(time.Millisecond), r.Int)
	}
	if r, _ := parseReply(c.Do("TTL", "ttl:long")); r.Int < 990 || r.Int > 1000 {
		t.Errorf("TTL ttl:long after restart = %d, want about 1000", r.Int)
	}
	checkReply(t, c, ":-1\r\n", "TTL", "ttl:none")
	time.Sleep(time.Until(setAt.Add(short + 100*time.Millisecond)))
	checkReply(t, c, "$-1\r\n", "GET", "ttl:short")
	checkReply(t, c, ":0\r\n", "EXISTS", "ttl:short")
	checkReply(t, c, bulk(value), "GET", "ttl:long")
}

// TestDiskBoundEvictsWholeColdestChunks writes far more than memory and
// disk together hold: every write succeeds, the oldest chunks leave the
// server whole (both keys), the newest are all whole, and evictions are
// counted on the disk tier.
func TestDiskBoundEvictsWholeColdestChunks(t *testing.T) {
	if diffAgainstRedis() {
		t.Skip("kvserver's disk tier has no Redis counterpart")
	}
	t.Parallel()
	const chunks, size = 96, 1 << 20
	s := startKVServer(t, "--maxmemory", "8mb", "--maxdisk", "32mb")
	c := dialRaw(t, s.Addr)
	for i := range chunks {
		if err := putChunk(c, i, size); err != nil {
			t.Fatalf("chunk %d: %v", i, err)
		}
	}
	// The newest first: reading the older ones promotes those on disk,
	// which makes them more recent than these (LRU), so that the demotions
	// they cause may evict these from a full disk.
	for i := chunks - 4; i < chunks; i++ {
		if st := chunkState(c, i, size); st != "whole" {
			t.Errorf("recent chunk %d is %s", i, st)
		}
	}
	whole, absent := 0, 0
	for i := range chunks {
		switch st := chunkState(c, i, size); st {
		case "whole":
			whole++
		case "absent":
			absent++
		default:
			t.Errorf("chunk %d is %s", i, st)
		}
	}
	if absent == 0 || whole < 8 {
		t.Errorf("%d whole, %d absent: want the disk bound to have evicted old chunks and kept recent ones", whole, absent)
	}
	if ev := infoInt(t, c, "tiers", "tier_disk_evictions"); ev == 0 {
		t.Error("tier_disk_evictions = 0")
	}
	if used := infoInt(t, c, "tiers", "tier_disk_bytes"); used > 32<<20 {
		t.Errorf("tier_disk_bytes = %d above maxdisk", used)
	}
	t.Logf("%d chunks written: %d whole, %d evicted whole", chunks, whole, absent)
}

// TestFreshServerCreatesItsPebbleStoreUnderDir checks where the disk tier
// lives: under --dir (./data by default).
func TestFreshServerCreatesItsPebbleStoreUnderDir(t *testing.T) {
	if diffAgainstRedis() {
		t.Skip("kvserver's disk tier has no Redis counterpart")
	}
	t.Parallel()
	s := startKVServer(t)
	entries, err := os.ReadDir(filepath.Join(s.Dir, "pebble"))
	if err != nil {
		t.Fatalf("no Pebble store under --dir: %v", err)
	}
	found := false
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "MANIFEST") {
			found = true
		}
	}
	if !found {
		t.Errorf("%s/pebble has no Pebble MANIFEST: %v", s.Dir, entries)
	}
}
