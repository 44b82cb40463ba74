package tests

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// Issue 12 point 5: damaged files in the disk tier must never surface half
// an LMCache chunk, and must never stop the server from starting.

const (
	// damageChunks chunks in value-log segments, then damageBlobChunks
	// smaller ones whose data Pebble keeps in its blob files.
	damageChunks     = 60
	damageBlobChunks = 10
	damageChunkSize  = 300 << 10 // above the value log's 256 KiB threshold
	damageOrdinary   = 20
)

// damageFiles lists the files of the disk tier (dir/pebble) whose name
// matches fn, largest first.
func damageFiles(t *testing.T, dir string, fn func(rel string) bool) []string {
	t.Helper()
	root := filepath.Join(dir, "pebble")
	var out []string
	err := filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if !info.IsDir() && fn(rel) {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walk %s: %v", root, err)
	}
	sort.Slice(out, func(i, j int) bool { return fileSize(out[i]) > fileSize(out[j]) })
	return out
}

func fileSize(p string) int64 {
	st, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return st.Size()
}

func isSegment(rel string) bool { return strings.HasSuffix(rel, ".vlog") }
func isSST(rel string) bool     { return strings.HasSuffix(rel, ".sst") }

// flipBytes inverts one byte in every 4 KiB of p (from offset 64 on, so
// that small files are damaged too). Empty files stay as they are.
func flipBytes(t *testing.T, p string) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	for off := 64; off < len(b); off += 4 << 10 {
		b[off] ^= 0xff
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func truncateHalf(t *testing.T, p string) {
	t.Helper()
	if err := os.Truncate(p, fileSize(p)/2); err != nil {
		t.Fatal(err)
	}
}

func removeFile(t *testing.T, p string) {
	t.Helper()
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
}

// middle returns the median-sized file of a list, or fails when there is
// none: the damage must hit something.
func middle(t *testing.T, files []string, what string) []string {
	t.Helper()
	if len(files) == 0 {
		t.Fatalf("no %s to damage", what)
	}
	return files[len(files)/2 : len(files)/2+1]
}

// damageCase is one way of damaging the disk tier of a stopped server.
type damageCase struct {
	name string
	// damage changes the files under dir/pebble.
	damage func(t *testing.T, dir string)
	// keepsOrdinary: the damage touches no file that holds the small
	// ordinary keys (headers live in sstables), so all of them must be
	// there after the restart.
	keepsOrdinary bool
	// movedAside: the disk tier cannot be opened any more and must be
	// moved aside (INFO's tier_disk_recovered_from).
	movedAside bool
}

// onEvery applies op to every file of the disk tier that match selects.
func onEvery(match func(rel string) bool, op func(*testing.T, string)) func(*testing.T, string) {
	return func(t *testing.T, dir string) {
		for _, p := range damageFiles(t, dir, match) {
			op(t, p)
		}
	}
}

// onMiddle applies op to the median-sized file that match selects.
func onMiddle(match func(rel string) bool, op func(*testing.T, string)) func(*testing.T, string) {
	return func(t *testing.T, dir string) {
		for _, p := range middle(t, damageFiles(t, dir, match), "file") {
			op(t, p)
		}
	}
}

func isBlob(rel string) bool     { return strings.HasSuffix(rel, ".blob") }
func isManifest(rel string) bool { return strings.HasPrefix(rel, "MANIFEST-") }

// isWAL matches Pebble's write-ahead logs. Without --sync the store runs
// without one; any log file there is is damaged all the same.
func isWAL(rel string) bool { return strings.HasSuffix(rel, ".log") }

var damageCases = []damageCase{
	{name: "flip a value-log segment", keepsOrdinary: true, damage: onMiddle(isSegment, flipBytes)},
	{name: "flip every value-log segment", keepsOrdinary: true, damage: onEvery(isSegment, flipBytes)},
	{name: "truncate a value-log segment", keepsOrdinary: true, damage: onMiddle(isSegment, truncateHalf)},
	{name: "delete a value-log segment", keepsOrdinary: true, damage: onMiddle(isSegment, removeFile)},
	{name: "delete every value-log segment", keepsOrdinary: true, damage: onEvery(isSegment, removeFile)},
	{name: "flip every blob file", keepsOrdinary: true, damage: onEvery(isBlob, flipBytes)},
	{name: "flip every sstable", movedAside: true, damage: onEvery(isSST, flipBytes)},
	{name: "truncate every sstable", movedAside: true, damage: onEvery(isSST, truncateHalf)},
	{name: "delete every sstable", movedAside: true, damage: onEvery(isSST, removeFile)},
	{name: "delete the MANIFEST", movedAside: true, damage: onEvery(isManifest, removeFile)},
	{name: "flip the MANIFEST", movedAside: true, damage: onEvery(isManifest, flipBytes)},
	{name: "truncate the WAL", damage: onEvery(isWAL, truncateHalf)},
}

// TestDamagedDiskTierNeverServesHalfChunks writes LMCache chunk pairs and
// ordinary keys whose names end in metadata or kv_bytes, stops the server
// cleanly, damages the disk tier's files in one way per case, restarts it
// and checks that it starts, that every chunk is whole or absent whichever
// key is read first, that no value comes back wrong, and that ordinary keys
// outside the damage are all there.
func TestDamagedDiskTierNeverServesHalfChunks(t *testing.T) {
	if diffAgainstRedis() {
		t.Skip("kvserver's disk tier only")
	}
	for _, tc := range damageCases {
		t.Run(tc.name, func(t *testing.T) {
			// 8 MiB value-log segments: the data spans several.
			s := startKVServer(t, "--maxdisk", "256mb")
			c := dialRaw(t, s.Addr)
			for i := range damageChunks + damageBlobChunks {
				if err := putChunk(c, i, damageSize(i)); err != nil {
					t.Fatal(err)
				}
			}
			for i := range damageOrdinary {
				expectReply(t, c, "+OK\r\n", "SET", fmt.Sprintf("user:%d:metadata", i), ordinaryValue(i))
				expectReply(t, c, "+OK\r\n", "SET", fmt.Sprintf("plain:%d", i), ordinaryValue(i))
				expectReply(t, c, "+OK\r\n", "SET", fmt.Sprintf("blob:%d:kv_bytes", i), string(randomBytes(uint64(1000+i), damageChunkSize)))
				// Not an LMCache chunk: losing blob:i:kv_bytes to the damage
				// must not take blob:i:metadata with it.
				expectReply(t, c, "+OK\r\n", "SET", fmt.Sprintf("blob:%d:metadata", i), ordinaryValue(i))
			}
			c.Close()
			s.Terminate(t)

			tc.damage(t, s.Dir)

			if _, err := s.launch(s.Port); err != nil {
				t.Fatalf("FIGURE %s: server did not start after the damage: %v\n%s", tc.name, err, s.Output())
			}
			c = dialRaw(t, s.Addr)
			half, whole, absent := 0, 0, 0
			for i := range damageChunks + damageBlobChunks {
				k := chunkKey(i)
				keys := []string{k + "metadata", k + "kv_bytes"}
				want := []string{chunkMetadata(damageSize(i)), string(randomBytes(uint64(i), damageSize(i)))}
				if i%2 == 1 {
					keys[0], keys[1] = keys[1], keys[0]
					want[0], want[1] = want[1], want[0]
				}
				var got [2]bool
				for j, key := range keys {
					raw := c.Do("GET", key)
					switch string(raw) {
					case "$-1\r\n":
					case bulk(want[j]):
						got[j] = true
					default:
						t.Errorf("GET %s: wrong value (%d bytes)", key, len(raw))
					}
				}
				switch {
				case got[0] && got[1]:
					whole++
				case !got[0] && !got[1]:
					absent++
				default:
					half++
				}
			}
			lostOrdinary := 0
			for i := range damageOrdinary {
				for _, key := range []string{fmt.Sprintf("user:%d:metadata", i), fmt.Sprintf("plain:%d", i), fmt.Sprintf("blob:%d:metadata", i)} {
					switch raw := string(c.Do("GET", key)); raw {
					case bulk(ordinaryValue(i)):
					case "$-1\r\n":
						lostOrdinary++
					default:
						t.Errorf("GET %s: wrong value %q", key, raw)
					}
				}
				raw := string(c.Do("GET", fmt.Sprintf("blob:%d:kv_bytes", i)))
				if raw != "$-1\r\n" && raw != bulk(string(randomBytes(uint64(1000+i), damageChunkSize))) {
					t.Errorf("GET blob:%d:kv_bytes: wrong value (%d bytes)", i, len(raw))
				}
			}
			info, err := infoFields(c, "all")
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("FIGURE %s: started, chunks whole %d, absent %d, half %d; ordinary keys lost %d of %d; recovered_from %q",
				tc.name, whole, absent, half, lostOrdinary, 3*damageOrdinary, info["tier_disk_recovered_from"])
			if half > 0 {
				t.Errorf("%d of %d chunks are half (whole %d, absent %d)", half, damageChunks+damageBlobChunks, whole, absent)
			}
			if tc.keepsOrdinary && lostOrdinary > 0 {
				t.Errorf("%d ordinary keys outside the damaged files were lost", lostOrdinary)
			}
			recovered := info["tier_disk_recovered_from"]
			switch {
			case tc.movedAside && !strings.Contains(recovered, "pebble.damaged-"):
				t.Errorf("tier_disk_recovered_from is %q, want the path the damaged tier was moved to", recovered)
			case tc.movedAside:
				if _, err := os.Stat(recovered); err != nil {
					t.Errorf("the damaged tier is not kept: %v", err)
				}
			case !tc.movedAside && recovered != "":
				t.Errorf("tier_disk_recovered_from is %q, want empty: this damage must not move the tier", recovered)
			}
			// The server keeps working on what it started with.
			expectReply(t, c, "+OK\r\n", "SET", "after", "damage")
			expectReply(t, c, bulk("damage"), "GET", "after")
		})
	}
}

// damageSize is the data size of chunk i: the last damageBlobChunks are
// small enough for Pebble's blob files.
func damageSize(i int) int {
	if i < damageChunks {
		return damageChunkSize
	}
	// Small: Pebble looks for a single flipped bit in a block that fails
	// its checksum, which costs seconds for a 64 KiB block.
	return 8 << 10
}

func ordinaryValue(i int) string { return fmt.Sprintf("ordinary value %d", i) }

// TestSecondServerOnALiveDataDirectoryMovesNothing starts a second server
// on the data directory of a running one: the second must refuse to start
// (the disk tier's lock is held: a system condition, not damage), move
// nothing aside, and leave the first serving everything it holds.
func TestSecondServerOnALiveDataDirectoryMovesNothing(t *testing.T) {
	if diffAgainstRedis() {
		t.Skip("kvserver's disk tier only")
	}
	first := startKVServer(t, "--maxdisk", "256mb")
	c := dialRaw(t, first.Addr)
	for i := range 10 {
		if err := putChunk(c, i, damageChunkSize); err != nil {
			t.Fatal(err)
		}
	}
	// Something on disk: a flush writes the memory tier's values down.
	c.Do("SAVE")
	before := dirListing(t, first.Dir)

	_, mkCmd, _ := kvCommand(t, []string{"--maxdisk", "256mb"})
	port := freePort(t)
	cmd := mkCmd(port)
	// The same data directory as the first server.
	for i, a := range cmd.Args {
		if a == "--dir" {
			cmd.Args[i+1] = first.Dir
		}
	}
	out, err := runWithTimeout(cmd, 60*time.Second)
	if errors.Is(err, errStillRunning) {
		t.Fatalf("the second server started on a live data directory; output:\n%s", out)
	}
	if err == nil {
		t.Fatalf("the second server exited cleanly on a live data directory; output:\n%s", out)
	}
	after := dirListing(t, first.Dir)
	for _, name := range after {
		if strings.Contains(name, "damaged") {
			t.Errorf("the second server moved the live disk tier aside: %s", name)
		}
	}
	if len(before) == 0 || len(after) == 0 {
		t.Errorf("data directory listing: %v -> %v", before, after)
	}
	for i := range 10 {
		if st := chunkState(c, i, damageChunkSize); st != "whole" {
			t.Errorf("chunk %d on the first server: %s", i, st)
		}
	}
	info, err := infoFields(c, "all")
	if err != nil {
		t.Fatal(err)
	}
	if r := info["tier_disk_recovered_from"]; r != "" {
		t.Errorf("first server: tier_disk_recovered_from %q", r)
	}
}

var errStillRunning = errors.New("still running")

// runWithTimeout runs cmd to its end (killing it after d) and returns its
// combined output.
func runWithTimeout(cmd *exec.Cmd, d time.Duration) (string, error) {
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return "", err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return out.String(), err
	case <-time.After(d):
		_ = cmd.Process.Kill()
		<-done
		return out.String(), errStillRunning
	}
}

// dirListing names the entries of dir and of dir/pebble.
func dirListing(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	for _, d := range []string{dir, filepath.Join(dir, "pebble")} {
		entries, err := os.ReadDir(d)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.Name() == "LOCK" || strings.HasSuffix(e.Name(), ".log") {
				continue
			}
			out = append(out, filepath.Join(filepath.Base(d), e.Name()))
		}
	}
	sort.Strings(out)
	return out
}
