package disktier

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// Recovery from damaged files. What is promised (README "Integrity"):
//
//   - A record whose value-log segment is missing or shorter than the
//     record's pointer is found by the scan at Open and deleted, counted in
//     Stats.Corrupt. Other damage to a record (flipped bytes in a segment,
//     a blob file or an sstable block) is found when the record is read: it
//     fails its checksum, is deleted and reads as ErrCorrupt. Either way no
//     byte of a damaged value is ever returned; the engine drops the rest
//     of an LMCache chunk with it.
//   - A store that cannot be opened because its own files are damaged
//     (Pebble reports corruption, a file its manifest names is missing, the
//     scan at Open cannot read its sstables) is, with
//     Options.MoveAsideDamaged, renamed to Dir+".damaged-<time>" and kept
//     for inspection, and an empty store is opened in its place.
//   - An error of the system rather than of the files (permission, I/O
//     error, no space, the lock held by another process) never moves
//     anything: Open fails and the directory is left as it is.

// errDamaged marks an Open failure caused by the store's files.
var errDamaged = errors.New("disktier: store files damaged")

// systemErrors are the errors that say nothing about the files' content:
// the files may be fine and another attempt (or another process, or an
// operator) may succeed. An Open failing with one of them never moves the
// store aside, whatever else the error says.
var systemErrors = []error{
	os.ErrPermission, syscall.EACCES, syscall.EPERM, syscall.EIO,
	syscall.EAGAIN, syscall.EWOULDBLOCK, syscall.EBUSY, syscall.ENOSPC,
	syscall.EDQUOT, syscall.EROFS, syscall.EMFILE, syscall.ENFILE,
	syscall.ENOMEM, syscall.EINTR, context.Canceled, context.DeadlineExceeded,
}

// isDamage reports whether an Open failure is caused by damaged files, so
// that moving the store aside and starting empty is the right answer. It
// is a short list of known damage; anything else, system errors first of
// all, is not.
func isDamage(err error) bool {
	if err == nil {
		return false
	}
	for _, sys := range systemErrors {
		if errors.Is(err, sys) {
			return false
		}
	}
	// A missing file inside the store (a MANIFEST, an sstable the manifest
	// names): Open creates the directory itself, so this is never the
	// directory being absent.
	return errors.Is(err, errDamaged) || pebble.IsCorruptionError(err) ||
		errors.Is(err, errBadRecord) || errors.Is(err, fs.ErrNotExist) ||
		// Pebble's check of its files' sizes against the manifest (a
		// truncated sstable) has no sentinel error, only this text.
		strings.Contains(err.Error(), "object size mismatch")
}

// Open opens (or creates) the store in opts.Dir. It scans the record
// headers to rebuild the accounting, which is bounded by ctx; see doc.go
// for how long that takes. When the store cannot be opened because its
// files are damaged and opts.MoveAsideDamaged is set, Dir is moved aside
// and an empty store is opened in its place (Stats.RecoveredFrom).
func Open(ctx context.Context, opts Options) (*Store, error) {
	if opts.MoveAsideDamaged && opts.Dir != "" {
		// Held from the first attempt to the end of the move, so that two
		// processes starting at once cannot both judge the store damaged
		// and the second move the empty store the first just created.
		unlock, err := lockBeside(opts.Dir)
		if err != nil {
			return nil, err
		}
		defer unlock()
	}
	s, err := open(ctx, opts)
	if err == nil || !opts.MoveAsideDamaged || !isDamage(err) {
		return s, err
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	dir := filepath.Clean(opts.Dir)
	aside := dir + ".damaged-" + time.Now().UTC().Format("20060102T150405.000000000Z")
	if rerr := os.Rename(dir, aside); rerr != nil {
		return nil, fmt.Errorf("disktier: move damaged store aside: %w (it failed to open: %v)", rerr, err)
	}
	log.Error("disktier: disk tier damaged: moved aside and started empty",
		"dir", dir, "moved_to", aside, "err", firstLine(err.Error()))
	s, err = open(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("disktier: open empty store after moving the damaged one to %s: %w", aside, err)
	}
	s.recoveredFrom = aside
	return s, nil
}

// lockBeside takes an exclusive lock on the file dir+".lock", next to the
// store's directory; another process holding it is a system condition, not
// damage.
func lockBeside(dir string) (unlock func(), err error) {
	dir = filepath.Clean(dir)
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return nil, fmt.Errorf("disktier: create parent of %s: %w", dir, err)
	}
	l, err := vfs.Default.Lock(dir + ".lock")
	if err != nil {
		return nil, fmt.Errorf("disktier: lock %s.lock (is another server opening this store?): %w", dir, err)
	}
	return func() { _ = l.Close() }, nil
}

// openPebble is pebble.Open with its invariant panics (pebbleLogger.Fatalf
// on a store it cannot make sense of) turned into a damage error.
func openPebble(dir string, po *pebble.Options) (db *pebble.DB, err error) {
	defer func() {
		if r := recover(); r != nil {
			db, err = nil, fmt.Errorf("%w: pebble gave up opening %s: %v", errDamaged, dir, r)
		}
	}()
	return pebble.Open(dir, po)
}

// dropDanglingPointers deletes, before the accounting scan, every record
// whose value-log pointer names a segment that is missing or too short to
// hold the value (a segment deleted or truncated behind the store's back).
// Such a record could only ever read as corrupt; deleting it at Open lets
// the engine drop the rest of its chunk before any client sees half of it.
// It returns how many records it deleted.
func (s *Store) dropDanglingPointers(ctx context.Context) (int, error) {
	type dangling struct {
		vkey []byte
		seg  uint32
	}
	var bad []dangling
	it, err := s.db.NewIterWithContext(ctx, &pebble.IterOptions{
		LowerBound: []byte{prefixValue}, UpperBound: []byte{prefixValue + 1}})
	if err != nil {
		return 0, fmt.Errorf("disktier: scan value pointers: %w", err)
	}
	s.vlog.mu.Lock()
	sizes := make(map[uint32]int64, len(s.vlog.sizes))
	for id, n := range s.vlog.sizes {
		sizes[id] = n
	}
	s.vlog.mu.Unlock()
	n := 0
	for valid := it.First(); valid; valid = it.Next() {
		if n++; n%1024 == 0 && ctx.Err() != nil {
			it.Close()
			return 0, ctx.Err()
		}
		// Only pointers are read: a payload kept in Pebble is longer than
		// inlineMax and stays in its blob file.
		if lv := it.LazyValue(); lv.Len() != vlogPointerLen {
			continue
		}
		v, err := it.ValueAndErr()
		if err != nil {
			it.Close()
			return 0, fmt.Errorf("disktier: scan value pointers: %w", err)
		}
		p, ok := decodeVlogPointer(v)
		if !ok {
			continue
		}
		if size, ok := sizes[p.seg]; !ok || p.off < 0 || p.off+int64(p.n) > size {
			bad = append(bad, dangling{bytes.Clone(it.Key()), p.seg})
		}
	}
	if err := it.Close(); err != nil {
		return 0, fmt.Errorf("disktier: scan value pointers: %w", err)
	}
	if len(bad) == 0 {
		return 0, nil
	}
	b := s.db.NewBatch()
	defer b.Close()
	segs := map[uint32]int{}
	var examples []string
	for _, d := range bad {
		db, key, _ := decodeKey(d.vkey)
		_ = b.Delete(encodeKey(nil, prefixHeader, db, key), nil)
		_ = b.Delete(d.vkey, nil)
		segs[d.seg]++
		if len(examples) < 5 {
			examples = append(examples, printableKey(key))
		}
	}
	if err := b.Commit(s.wo); err != nil {
		return 0, fmt.Errorf("disktier: delete records of missing value-log data: %w", err)
	}
	s.corrupt.Add(int64(len(bad)))
	// One line for all of them, not one per record.
	s.log.Error("disktier: dropped records whose value-log segment is missing or truncated",
		"records", len(bad), "records_by_segment", segs, "examples", examples)
	return len(bad), nil
}

// logLimiter lets a burst of lines through per window and counts the rest,
// so that a damaged file read by many clients does not flood the log.
type logLimiter struct {
	mu         sync.Mutex
	start      time.Time
	n          int
	suppressed int
}

const (
	corruptLogBurst  = 10
	corruptLogWindow = time.Minute
)

// allow reports whether a line may be logged at now, and how many lines
// were suppressed since the last one that was.
func (l *logLimiter) allow(now time.Time) (bool, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.start) >= corruptLogWindow {
		l.start, l.n = now, 0
	}
	if l.n >= corruptLogBurst {
		l.suppressed++
		return false, 0
	}
	l.n++
	sup := l.suppressed
	l.suppressed = 0
	return true, sup
}
