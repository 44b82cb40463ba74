package disktier

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestLargeValuesGoToTheValueLogAndDeadSegmentsAreDeleted stores values
// large enough for the value log, reads them back (also after a reopen),
// deletes them and waits for the reclaimer to delete their segments.
func TestLargeValuesGoToTheValueLogAndDeadSegmentsAreDeleted(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	opts := Options{Dir: dir, MaxDisk: 32 << 20} // 1 MiB segments
	s, err := Open(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	const n, size = 8, 1 << 20
	value := func(i int) []byte { return bytes.Repeat([]byte{byte(i + 1)}, size) }
	for i := range n {
		if err := s.Put(ctx, 0, []byte(fmt.Sprintf("v%dkv_bytes", i)), value(i), RecordMeta{}); err != nil {
			t.Fatal(err)
		}
	}
	if got := countSegments(t, dir); got < n {
		t.Fatalf("%d segments for %d values of the segment size", got, n)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s, err = Open(ctx, opts); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range n {
		got, _, err := s.Get(ctx, 0, []byte(fmt.Sprintf("v%dkv_bytes", i)))
		if err != nil || !bytes.Equal(got, value(i)) {
			t.Fatalf("value %d after reopen: %d bytes, %v", i, len(got), err)
		}
	}
	for i := range n {
		if _, err := s.Delete(ctx, 0, []byte(fmt.Sprintf("v%dkv_bytes", i))); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for countSegments(t, dir) > 1 && time.Now().Before(deadline) {
		s.kickReclaim()
		time.Sleep(200 * time.Millisecond)
	}
	if got := countSegments(t, dir); got > 1 {
		t.Fatalf("%d segments left after every value was deleted", got)
	}
}

// TestDamagedValueLogSegmentIsACorruptRecordNotWrongBytes flips a byte of
// a value in its segment file: the read is a corrupt-record miss.
func TestDamagedValueLogSegmentIsACorruptRecordNotWrongBytes(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(ctx, Options{Dir: dir, MaxDisk: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Put(ctx, 0, []byte("bigkv_bytes"), bytes.Repeat([]byte{7}, 1<<20), RecordMeta{}); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "vlog"))
	var damaged bool
	for _, e := range entries {
		path := filepath.Join(dir, "vlog", e.Name())
		if info, _ := os.Stat(path); info.Size() > 0 {
			f, err := os.OpenFile(path, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteAt([]byte{8}, 1000)
			f.Close()
			damaged = true
		}
	}
	if !damaged {
		t.Fatal("no value log segment holds the value")
	}
	if _, _, err := s.Get(ctx, 0, []byte("bigkv_bytes")); err == nil {
		t.Fatal("a damaged value was returned")
	}
	if s.Stats().Corrupt != 1 {
		t.Fatalf("corrupt count %d, want 1", s.Stats().Corrupt)
	}
}

// TestValueLogSyncSkipsSegmentsRemovedMeanwhile syncs the value log while
// the reclaimer removes dead segments: a segment removed between sync
// listing it and syncing it has nothing left to make durable, and must not
// fail the sync (Store.Flush would then skip flushing the memtables).
func TestValueLogSyncSkipsSegmentsRemovedMeanwhile(t *testing.T) {
	v, err := openValueLog(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer v.close()
	const segments = 400
	v.mu.Lock()
	for range segments {
		if err := v.rotateLocked(); err != nil {
			v.mu.Unlock()
			t.Fatal(err)
		}
	}
	v.mu.Unlock()
	done := make(chan error, 1)
	go func() {
		for id := uint32(1); id < segments; id++ {
			if _, err := v.removeIfIdle(id); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	for {
		if err := v.sync(); err != nil {
			t.Fatalf("sync while segments are removed: %v", err)
		}
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			if err := v.sync(); err != nil {
				t.Fatal(err)
			}
			return
		default:
		}
	}
}

// TestCrashAfterSegmentCollectionLeavesNoRecordWithoutItsValue deletes
// values held in the value log, lets the reclaimer delete their segments,
// and opens a copy of the directory as a process crash would leave it
// (no write-ahead log: the state of the last memtable flush). No record
// may survive there whose segment is gone: each key is either absent or
// whole, never a corrupt record (the engine would serve the chunk's
// metadata without its data).
func TestCrashAfterSegmentCollectionLeavesNoRecordWithoutItsValue(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	opts := Options{Dir: dir, MaxDisk: 32 << 20} // 1 MiB segments
	s := openTest(t, opts)
	const n, size = 6, 1 << 20
	key := func(i int) []byte { return []byte(fmt.Sprintf("c%dkv_bytes", i)) }
	value := func(i int) []byte { return bytes.Repeat([]byte{byte(i + 1)}, size) }
	for i := range n {
		if err := s.Put(ctx, 0, key(i), value(i), RecordMeta{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if _, err := s.Delete(ctx, 0, key(i)); err != nil {
			t.Fatal(err)
		}
	}
	// The reclaimer's own ticks, not kickReclaim: a forced reclaim
	// compacts, which flushes the memtables and would hide the crash.
	deadline := time.Now().Add(20 * time.Second)
	for countSegments(t, dir) > 2 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if got := countSegments(t, dir); got > 2 {
		t.Fatalf("%d segments left after every value was deleted", got)
	}
	crashed := filepath.Join(t.TempDir(), "crashed")
	if err := os.CopyFS(crashed, os.DirFS(dir)); err != nil {
		t.Fatalf("copy the store as a crash leaves it: %v", err)
	}
	opts.Dir = crashed
	c := openTest(t, opts)
	for i := range n {
		got, _, err := c.Get(ctx, 0, key(i))
		switch {
		case errors.Is(err, ErrNotFound):
		case err != nil:
			t.Errorf("%s after the crash: %v", key(i), err)
		case !bytes.Equal(got, value(i)):
			t.Errorf("%s after the crash: wrong bytes", key(i))
		}
	}
}

// countSegments is the number of value-log segment files under dir.
func countSegments(t *testing.T, dir string) int {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(dir, "vlog"))
	if err != nil {
		t.Fatal(err)
	}
	return len(entries)
}
