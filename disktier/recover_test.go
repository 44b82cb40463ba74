package disktier

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// fillForDamage writes n values of 1 MiB (1 MiB segments, so one value a
// segment) and n small ones, and closes the store.
func fillForDamage(t *testing.T, dir string, n int) Options {
	t.Helper()
	ctx := context.Background()
	opts := Options{Dir: dir, MaxDisk: 32 << 20, MoveAsideDamaged: true}
	s, err := Open(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := s.Put(ctx, 0, []byte(fmt.Sprintf("big%d", i)), randomBytes(uint64(i), 1<<20), RecordMeta{}); err != nil {
			t.Fatal(err)
		}
		if err := s.Put(ctx, 0, []byte(fmt.Sprintf("small%d", i)), []byte("small"), RecordMeta{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return opts
}

// nonEmptySegments lists dir's non-empty value-log segments.
func nonEmptySegments(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(dir, "vlog"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		p := filepath.Join(dir, "vlog", e.Name())
		if info, err := os.Stat(p); err == nil && info.Size() > 0 {
			out = append(out, p)
		}
	}
	return out
}

// TestOpenDropsRecordsWhoseSegmentIsMissingOrTruncated deletes one segment
// and truncates another behind the store's back: Open deletes exactly the
// records that point into them (counted as corrupt), before the accounting
// scan, and everything else reads back.
func TestOpenDropsRecordsWhoseSegmentIsMissingOrTruncated(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	const n = 6
	opts := fillForDamage(t, dir, n)
	segs := nonEmptySegments(t, dir)
	if len(segs) != n {
		t.Fatalf("%d non-empty segments for %d values of the segment size", len(segs), n)
	}
	if err := os.Remove(segs[1]); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(segs[3], 1000); err != nil {
		t.Fatal(err)
	}
	s, err := Open(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	st := s.Stats()
	if st.Corrupt != 2 || st.Keys != 2*n-2 || st.RecoveredFrom != "" {
		t.Fatalf("after Open: corrupt %d, keys %d, recovered from %q; want 2, %d, \"\"", st.Corrupt, st.Keys, st.RecoveredFrom, 2*n-2)
	}
	lost := 0
	for i := range n {
		got, _, err := s.Get(ctx, 0, []byte(fmt.Sprintf("big%d", i)))
		switch {
		case errors.Is(err, ErrNotFound):
			lost++
		case err != nil || !bytes.Equal(got, randomBytes(uint64(i), 1<<20)):
			t.Fatalf("big%d: %d bytes, %v", i, len(got), err)
		}
		if got, _, err := s.Get(ctx, 0, []byte(fmt.Sprintf("small%d", i))); err != nil || string(got) != "small" {
			t.Fatalf("small%d: %q, %v", i, got, err)
		}
	}
	if lost != 2 {
		t.Fatalf("%d large values gone, want the 2 in the damaged segments", lost)
	}
	if s.Stats().Corrupt != 2 {
		t.Fatalf("corrupt %d after reading, want 2: the records were dropped at Open", s.Stats().Corrupt)
	}
}

// TestDamagedStoreIsMovedAsideAndAnEmptyOneOpened damages the store in
// ways Pebble cannot open (or reads as an empty store): with
// MoveAsideDamaged, Open moves it to Dir.damaged-<time>, keeps it, and
// opens an empty, working store; without, Open fails and moves nothing.
func TestDamagedStoreIsMovedAsideAndAnEmptyOneOpened(t *testing.T) {
	pebbleFiles := func(t *testing.T, dir, suffix string) []string {
		m, err := filepath.Glob(filepath.Join(dir, suffix))
		if err != nil || len(m) == 0 {
			t.Fatalf("no %s in %s: %v", suffix, dir, err)
		}
		return m
	}
	cases := []struct {
		name   string
		damage func(t *testing.T, dir string)
	}{
		{"MANIFEST deleted", func(t *testing.T, dir string) {
			for _, p := range pebbleFiles(t, dir, "MANIFEST-*") {
				os.Remove(p)
			}
		}},
		{"MANIFEST flipped", func(t *testing.T, dir string) {
			for _, p := range pebbleFiles(t, dir, "MANIFEST-*") {
				flipEvery(t, p, 32, 64)
			}
		}},
		{"sstables flipped", func(t *testing.T, dir string) {
			for _, p := range pebbleFiles(t, dir, "*.sst") {
				flipEvery(t, p, 64, 512)
			}
		}},
		{"sstables truncated", func(t *testing.T, dir string) {
			for _, p := range pebbleFiles(t, dir, "*.sst") {
				info, _ := os.Stat(p)
				os.Truncate(p, info.Size()/2)
			}
		}},
		{"sstables deleted", func(t *testing.T, dir string) {
			for _, p := range pebbleFiles(t, dir, "*.sst") {
				os.Remove(p)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			dir := filepath.Join(t.TempDir(), "pebble")
			opts := fillForDamage(t, dir, 3)
			tc.damage(t, dir)

			strict := opts
			strict.MoveAsideDamaged = false
			if s, err := Open(ctx, strict); err == nil {
				// Without the option a store that lost its state may
				// open; it must not be moved.
				s.Close()
			}
			if m, _ := filepath.Glob(dir + ".damaged-*"); len(m) != 0 {
				t.Fatalf("moved without MoveAsideDamaged: %v", m)
			}

			s, err := Open(ctx, opts)
			if err != nil {
				t.Fatalf("Open with MoveAsideDamaged: %v", err)
			}
			defer s.Close()
			st := s.Stats()
			if !strings.HasPrefix(st.RecoveredFrom, dir+".damaged-") || st.Keys != 0 {
				t.Fatalf("recovered from %q with %d keys; want %s.damaged-<time> and an empty store", st.RecoveredFrom, st.Keys, dir)
			}
			if _, err := os.Stat(filepath.Join(st.RecoveredFrom, "vlog")); err != nil {
				t.Fatalf("the damaged store is not kept: %v", err)
			}
			if err := s.Put(ctx, 0, []byte("k"), []byte("v"), RecordMeta{}); err != nil {
				t.Fatal(err)
			}
			if got, _, err := s.Get(ctx, 0, []byte("k")); err != nil || string(got) != "v" {
				t.Fatalf("new store: %q, %v", got, err)
			}
		})
	}
}

// flipEvery inverts the byte at every step bytes of the file at p, from
// start on.
func flipEvery(t *testing.T, p string, start, step int) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	for i := start; i < len(b); i += step {
		b[i] ^= 0xff
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestOpenOnALockedStoreMovesNothing opens a store a second time while it
// is open: the lock is held, a system condition and not damage, so Open
// fails and the live store stays where it is, whole.
func TestOpenOnALockedStoreMovesNothing(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "pebble")
	opts := Options{Dir: dir, MaxDisk: -1, MoveAsideDamaged: true}
	live := openTest(t, opts)
	if err := live.Put(ctx, 0, []byte("k"), randomBytes(1, 1<<20), RecordMeta{}); err != nil {
		t.Fatal(err)
	}
	if s, err := Open(ctx, opts); err == nil {
		s.Close()
		t.Fatal("a second Open of a live store succeeded")
	}
	if m, _ := filepath.Glob(dir + ".damaged-*"); len(m) != 0 {
		t.Fatalf("a second Open moved the live store aside: %v", m)
	}
	if got, _, err := live.Get(ctx, 0, []byte("k")); err != nil || !bytes.Equal(got, randomBytes(1, 1<<20)) {
		t.Fatalf("live store after the second Open: %d bytes, %v", len(got), err)
	}
}

// TestIsDamageNeverMatchesSystemErrors pins down the classification that
// decides a move: damage only, and a system error wins over anything else
// in the same chain.
func TestIsDamageNeverMatchesSystemErrors(t *testing.T) {
	pathErr := func(errno syscall.Errno) error {
		return &fs.PathError{Op: "open", Path: "/d/MANIFEST-000001", Err: errno}
	}
	cases := []struct {
		err  error
		want bool
	}{
		{nil, false},
		{fmt.Errorf("%w: format key holds 02, want 1", ErrFormat), false},
		{fmt.Errorf("open: %w", pathErr(syscall.EACCES)), false},
		{fmt.Errorf("open: %w", pathErr(syscall.EPERM)), false},
		{fmt.Errorf("read: %w", pathErr(syscall.EIO)), false},
		{fmt.Errorf("lock: %w", pathErr(syscall.EAGAIN)), false},
		{fmt.Errorf("write: %w", pathErr(syscall.ENOSPC)), false},
		{fmt.Errorf("open: %w", pathErr(syscall.EROFS)), false},
		{fmt.Errorf("open: %w", pathErr(syscall.EMFILE)), false},
		{context.Canceled, false},
		{errors.Join(pebble.ErrCorruption, pathErr(syscall.EIO)), false},
		{fmt.Errorf("disktier: iterate: %w", pebble.ErrCorruption), true},
		{fmt.Errorf("open: %w", pathErr(syscall.ENOENT)), true},
		{fmt.Errorf("%w: pebble gave up", errDamaged), true},
		{errors.New("L0: 000004: object size mismatch (x.sst): 1 (disk) != 2 (MANIFEST)"), true},
		{badRecord("checksum"), true},
	}
	for _, tc := range cases {
		if got := isDamage(tc.err); got != tc.want {
			t.Errorf("isDamage(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// TestCorruptRecordLogIsRateLimited lets a burst of lines through per
// window and reports how many it held back.
func TestCorruptRecordLogIsRateLimited(t *testing.T) {
	var l logLimiter
	now := time.Unix(1000, 0)
	allowed := 0
	for range 100 {
		if ok, _ := l.allow(now); ok {
			allowed++
		}
	}
	if allowed != corruptLogBurst {
		t.Fatalf("%d lines allowed in one window, want %d", allowed, corruptLogBurst)
	}
	ok, suppressed := l.allow(now.Add(corruptLogWindow))
	if !ok || suppressed != 100-corruptLogBurst {
		t.Fatalf("next window: allowed %v, suppressed %d; want true, %d", ok, suppressed, 100-corruptLogBurst)
	}
}

// TestDamagedStoreBeingOpenedElsewhereIsNotMoved: while another opener
// holds the lock beside the store (deciding whether to move it), a damaged
// store is not moved by a second one, which fails instead.
func TestDamagedStoreBeingOpenedElsewhereIsNotMoved(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pebble")
	opts := fillForDamage(t, dir, 1)
	manifests, _ := filepath.Glob(filepath.Join(dir, "MANIFEST-*"))
	for _, p := range manifests {
		os.Remove(p)
	}
	unlock, err := lockBeside(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	if s, err := Open(context.Background(), opts); err == nil {
		s.Close()
		t.Fatal("Open succeeded while another opener held the lock")
	}
	if m, _ := filepath.Glob(dir + ".damaged-*"); len(m) != 0 {
		t.Fatalf("moved while another opener held the lock: %v", m)
	}
}
