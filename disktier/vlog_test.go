package disktier

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/cockroachdb/pebble/v2"
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

// TestValueLogRecordsOfEitherPieceHashReadBack writes value-log records of
// one, two and three hash pieces, checks that they carry flagXXH3, rewrites
// their headers as the previous version wrote them (pieces hashed with
// xxhash64, no flag) and reads them back through a reopened store; then it
// damages a byte in a later piece of each kind of record, which must be a
// corrupt record and never wrong bytes.
func TestValueLogRecordsOfEitherPieceHashReadBack(t *testing.T) {
	ctx := context.Background()
	values := map[string][]byte{
		"one":   randomBytes(1, vlogMinPayload+5),
		"two":   randomBytes(2, vlogHashPiece+3),
		"three": randomBytes(3, 2*vlogHashPiece+vlogHashPiece/2),
	}
	for _, legacy := range []bool{false, true} {
		dir := t.TempDir()
		s, err := Open(ctx, Options{Dir: dir, MaxDisk: -1})
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range values {
			if err := s.Put(ctx, 0, []byte(k), v, RecordMeta{}); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		pointers := rewriteVlogHeaders(t, dir, values, legacy)
		s, err = Open(ctx, Options{Dir: dir, MaxDisk: -1})
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range values {
			got, _, err := s.Get(ctx, 0, []byte(k))
			if err != nil || !bytes.Equal(got, v) {
				t.Fatalf("legacy %v: Get %s: %d bytes, %v; want the %d bytes put", legacy, k, len(got), err, len(v))
			}
		}
		// A byte of the last piece of "three" (read and hashed
		// concurrently) and of "one" (one piece).
		for i, k := range []string{"three", "one"} {
			p := pointers[k]
			f, err := os.OpenFile(filepath.Join(dir, "vlog", segmentName(p.seg)), os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			at := p.off + int64(p.n) - 17
			b := []byte{0}
			if _, err := f.ReadAt(b, at); err != nil {
				t.Fatal(err)
			}
			b[0] ^= 0x40
			if _, err := f.WriteAt(b, at); err != nil {
				t.Fatal(err)
			}
			f.Close()
			if got, _, err := s.Get(ctx, 0, []byte(k)); err == nil {
				t.Fatalf("legacy %v: a damaged %s came back (%d bytes)", legacy, k, len(got))
			}
			if c := s.Stats().Corrupt; c != int64(i+1) {
				t.Fatalf("legacy %v: corrupt count %d after damaging %s, want %d", legacy, c, k, i+1)
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// rewriteVlogHeaders opens the closed store in dir through Pebble, checks
// that every record of values is a value-log record hashed with XXH3, and
// when legacy is set rewrites its header as the previous format did: no
// flagXXH3, the checksum over xxhash64 piece sums. It returns each key's
// value-log pointer.
func rewriteVlogHeaders(t *testing.T, dir string, values map[string][]byte, legacy bool) map[string]vlogPointer {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	db, err := openPebble(dir, pebbleOptions(Options{Dir: dir}, log, &health{log: log}))
	if err != nil {
		t.Fatalf("open pebble: %v", err)
	}
	get := func(k []byte) []byte {
		v, closer, err := db.Get(k)
		if err != nil {
			t.Fatalf("get %q: %v", k, err)
		}
		defer closer.Close()
		return bytes.Clone(v)
	}
	pointers := map[string]vlogPointer{}
	for k, v := range values {
		hkey := encodeKey(nil, prefixHeader, 0, []byte(k))
		hval := get(hkey)
		h, err := decodeHeader(hval, 1<<40)
		if err != nil {
			t.Fatal(err)
		}
		if h.flags&(flagVlog|flagXXH3) != flagVlog|flagXXH3 {
			t.Fatalf("%s: flags %#x, want flagVlog and flagXXH3", k, h.flags)
		}
		p, ok := decodeVlogPointer(get(encodeKey(nil, prefixValue, 0, []byte(k))))
		if !ok {
			t.Fatalf("%s: no value-log pointer", k)
		}
		pointers[k] = p
		if !legacy {
			continue
		}
		h.flags &^= flagXXH3
		old := appendHeader(nil, &h)
		h.checksum = vlogChecksum(old, []byte(k), pieceSums(v, xxhash.Sum64))
		if err := db.Set(hkey, append(appendHeader(nil, &h), hval[headerLen:]...), pebble.NoSync); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Flush(); err != nil { // the store runs without a WAL
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return pointers
}
