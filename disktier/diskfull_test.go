package disktier

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// stopBackground stops the store's reclaimer (and, where there is one, its
// disk probe), so a test decides when segments are collected and deletes
// applied. Close still works afterwards.
func stopBackground(s *Store) {
	s.stopReclaim()
	<-s.reclaimDone
}

func TestRefusedWritesDoNotGrowTheValueLog(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, Options{MaxDisk: 4 << 20, Compression: CompressionNone})
	stopBackground(s)
	val := randomBytes(1, 1<<20)
	i := 0
	for ; ; i++ {
		err := s.Put(ctx, 0, []byte(fmt.Sprintf("k%d", i)), val, RecordMeta{})
		if errors.Is(err, ErrDiskFull) {
			break
		}
		if err != nil || i > 8 {
			t.Fatalf("put %d under a 4 MiB bound: %v", i, err)
		}
	}
	before := s.vlog.size()
	for j := range 50 {
		if err := s.Put(ctx, 0, []byte(fmt.Sprintf("refused%d", j)), val, RecordMeta{}); !errors.Is(err, ErrDiskFull) {
			t.Fatalf("put over the bound: %v, want ErrDiskFull", err)
		}
	}
	if after := s.vlog.size(); after != before {
		t.Fatalf("50 refused 1 MiB puts grew the value log from %d to %d bytes", before, after)
	}
}

func TestValueLogBytesCountAgainstMaxDisk(t *testing.T) {
	ctx := context.Background()
	const maxDisk = 8 << 20
	s := openTest(t, Options{MaxDisk: maxDisk, Compression: CompressionNone})
	stopBackground(s) // dead segments stay until collectSegments below
	val := randomBytes(2, 1<<20)
	refused := 0
	for i := range 20 {
		key := []byte(fmt.Sprintf("k%d", i))
		err := s.Put(ctx, 0, key, val, RecordMeta{})
		if errors.Is(err, ErrDiskFull) {
			refused++
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Delete(ctx, 0, key); err != nil {
			t.Fatal(err)
		}
	}
	if size := s.vlog.size(); refused == 0 || size > maxDisk+maxDisk/8 {
		t.Fatalf("20 put+delete rounds of 1 MiB under an 8 MiB bound: %d refused, value log %d bytes "+
			"(its dead segments must count against MaxDisk)", refused, size)
	}
	for range 2 {
		if err := s.collectSegments(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Put(ctx, 0, []byte("after"), val, RecordMeta{}); err != nil {
		t.Fatalf("put once the dead segments are collected: %v (value log %d bytes)", err, s.vlog.size())
	}
}

func TestSegmentWithAnUncommittedAppendIsNeverCollected(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, Options{})
	stopBackground(s)
	payload := randomBytes(3, 1<<20)
	// An append whose record has not committed yet (a slow commit): no
	// pointer to its segment exists anywhere, however long it takes.
	ptr, err := s.vlog.append(payload)
	if err != nil {
		t.Fatal(err)
	}
	for range 6 {
		if err := s.collectSegments(ctx); err != nil {
			t.Fatal(err)
		}
	}
	got, _, err := s.vlog.read(ptr, pieceHash(flagXXH3))
	if err != nil || !bytes.Equal(got, payload) {
		t.Fatalf("the segment of an append in flight was collected: %v", err)
	}
}

// mountTmpfs mounts a tmpfs of the given size on a fresh directory (root
// only), so a test can fill a real file system.
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	return dir
}

// fillUntilUnavailable writes 1 MiB values until the store reports the
// disk unavailable.
func fillUntilUnavailable(t *testing.T, s *Store) {
	t.Helper()
	val := randomBytes(4, 1<<20)
	for i := 0; !s.Unavailable(); i++ {
		if i == 100 {
			t.Fatal("the disk never filled")
		}
		_ = s.Put(context.Background(), 0, []byte(fmt.Sprintf("fill%d", i)), val, RecordMeta{})
	}
}

func TestProbeRecoversWhileWritesKeepComing(t *testing.T) {
	mnt := mountTmpfs(t, "32m")
	ballast := filepath.Join(mnt, "ballast")
	if err := os.WriteFile(ballast, make([]byte, 20<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	s := openTest(t, Options{Dir: filepath.Join(mnt, "db"), Compression: CompressionNone})
	fillUntilUnavailable(t, s)
	errsFull := s.Stats().DiskErrors

	// Small writes (a memtable commit, proving nothing about the disk)
	// keep coming the whole time.
	ctx, cancel := context.WithCancel(context.Background())
	writer := make(chan struct{})
	go func() {
		defer close(writer)
		for i := 0; ctx.Err() == nil; i++ {
			_ = s.Put(ctx, 0, []byte(fmt.Sprintf("small%d", i%100)), []byte("meta"), RecordMeta{})
			time.Sleep(5 * time.Millisecond)
		}
	}()
	defer func() { cancel(); <-writer }()

	// While full, the store retries by itself: the errors grow.
	deadline := time.Now().Add(15 * time.Second)
	for s.Stats().DiskErrors <= errsFull {
		if time.Now().After(deadline) {
			t.Fatalf("no retry in 15 s of a full disk: %d disk errors", s.Stats().DiskErrors)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !s.Unavailable() {
		t.Fatal("the disk recovered while still full")
	}
	if err := os.Remove(ballast); err != nil {
		t.Fatal(err)
	}
	freed := time.Now()
	for s.Unavailable() {
		if time.Since(freed) > 15*time.Second {
			t.Fatalf("still unavailable 15 s after space returned: %+v", s.Stats())
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("available again %v after space returned (%d disk errors)", time.Since(freed).Round(time.Millisecond), s.Stats().DiskErrors)
	if err := s.Put(context.Background(), 0, []byte("big"), randomBytes(5, 1<<20), RecordMeta{}); err != nil {
		t.Fatalf("1 MiB put after recovery: %v", err)
	}
}

func TestDeletesWhileUnavailableAreLoggedAndReplayed(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openTest(t, Options{Dir: dir, Compression: CompressionNone})
	vals := map[string][]byte{}
	for i, k := range []string{"a", "b", "c", "big"} {
		n := 100
		if k == "big" {
			n = 1 << 20
		}
		vals[k] = randomBytes(uint64(10+i), n)
		if err := s.Put(ctx, 0, []byte(k), vals[k], RecordMeta{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	usage := s.DiskUsage()
	// The disk fails; the store's own probe and delete replay are stopped,
	// as a kill -9 would stop them.
	stopBackground(s)
	<-s.probeDone
	s.health.fail(syscall.ENOSPC, time.Now())
	for _, k := range []string{"a", "b", "big"} {
		if found, err := s.Delete(ctx, 0, []byte(k)); err != nil || !found {
			t.Fatalf("Delete(%s) while the disk is unavailable: %v, %v", k, found, err)
		}
	}
	if _, _, err := s.Get(ctx, 0, []byte("a")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get of a key deleted while unavailable: %v", err)
	}
	if st := s.Stats(); st.PendingDeletes != 3 || s.DiskUsage() != usage {
		t.Fatalf("pending deletes %d (want 3), usage %d (want %d: the records still hold their space)",
			st.PendingDeletes, s.DiskUsage(), usage)
	}
	// The disk takes writes again before the deletes were applied: a new
	// "fresh" record of b must replace the old one, accounted as such.
	s.health.ok(time.Now())
	nb := randomBytes(99, 100)
	if err := s.PutGroup(ctx, 0, []Entry{{Key: []byte("b"), Value: nb, Fresh: true}}); err != nil {
		t.Fatal(err)
	}
	if d := s.DiskUsage(); d != usage {
		t.Fatalf("usage %d after replacing a record awaiting its delete, want %d", d, usage)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	// Crash-like stop: the deletes of a and big are only in the log.
	if err := s.db.Close(); err != nil {
		t.Fatal(err)
	}
	s.vlog.close()
	s.dlog.close()
	s.closed = true

	s2 := openTest(t, Options{Dir: dir, Compression: CompressionNone})
	for k, want := range map[string][]byte{"a": nil, "big": nil, "b": nb, "c": vals["c"]} {
		got, _, err := s2.Get(ctx, 0, []byte(k))
		switch {
		case want == nil && !errors.Is(err, ErrNotFound):
			t.Errorf("%s, deleted while the disk was unavailable, is back after a restart: %v", k, err)
		case want != nil && (err != nil || !bytes.Equal(got, want)):
			t.Errorf("%s after the restart: %v (bytes equal %v)", k, err, bytes.Equal(got, want))
		}
	}
	if st := s2.Stats(); st.PendingDeletes != 0 || st.Keys != 2 {
		t.Fatalf("after the replay: %d pending deletes, %d keys (want 0, 2)", st.PendingDeletes, st.Keys)
	}
}

func TestDeleteLogKeepsOnlyItsGenerationAndRefusesWhenFull(t *testing.T) {
	dir := t.TempDir()
	l, err := openDeleteLog(dir)
	if err != nil {
		t.Fatal(err)
	}
	long := string(bytes.Repeat([]byte("k"), 100))
	for i := range 5 {
		if err := l.record(map[pendingKey]uint64{{0, fmt.Sprintf("%s%d", long, i)}: uint64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	// Two applied, three still pending: emptying keeps the three, and the
	// records of the older generation behind them are never read again.
	l.forget(0, []byte(long+"0"))
	l.forget(0, []byte(long+"1"))
	if err := l.empty(); err != nil {
		t.Fatal(err)
	}
	l.forget(0, []byte(long+"2"))
	if err := l.empty(); err != nil {
		t.Fatal(err)
	}
	l.close()
	l, err = openDeleteLog(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.close()
	if got := l.snapshot(); len(got) != 2 || got[pendingKey{0, long + "3"}] != 3 || got[pendingKey{0, long + "4"}] != 4 {
		t.Fatalf("reopened log holds %v, want keys 3 and 4", got)
	}
	// Filling the preallocated space refuses further records.
	var full error
	for i := 0; full == nil && i < deleteLogSize; i++ {
		full = l.record(map[pendingKey]uint64{{1, fmt.Sprintf("%s-%d", long, i)}: 1})
	}
	if !errors.Is(full, errDeleteLogFull) {
		t.Fatalf("recording past the log's size: %v, want errDeleteLogFull", full)
	}
	if st, err := os.Stat(filepath.Join(dir, deleteLogName)); err != nil || st.Size() != deleteLogSize {
		t.Fatalf("the log grew past its preallocated size: %v %v", st.Size(), err)
	}
}
