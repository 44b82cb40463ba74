package disktier

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/cespare/xxhash/v2"
	"github.com/kvserver/kvserver/grouping"
)

// The delete log. While the disk refuses writes, a delete cannot reach
// Pebble durably: without a WAL it would sit in a memtable that cannot be
// flushed, and a kill -9 would bring the record back (30 pairs deleted on a
// full disk all came back after a restart). So a delete made while the disk
// is unavailable is written to a small file preallocated when the disk had
// room, which a full file system still lets us overwrite. Once written it
// survives a kill -9 (it is in the page cache); probeLoop syncs it within
// probeTick for a machine crash, so that the caller, often under the
// engine's lock, never waits for an fsync. The record stays in Pebble, counted against MaxDisk (it still holds
// its space), but reads treat it as gone. Once the disk takes writes again
// (or at the next Open) the logged deletes are applied to Pebble, the
// memtables flushed, and the log emptied.
//
// A logged delete names the record it deletes by its header checksum, so a
// replay at Open never deletes a record written after it. (A record written
// again with the same bytes and expiry would match; it is then a miss, never
// wrong data.)
//
// File layout: a header (magic, generation, xxhash of both) and records,
// each the length of its body, the xxhash of the generation and body, and
// the body (db, header checksum, key). Emptying the log writes a new header
// with the next generation, so the records of an earlier generation left
// behind it are never read again.

const (
	deleteLogName      = "DELETES"
	deleteLogSize      = 1 << 20
	deleteLogMagic     = 0x6b764454
	deleteLogHeaderLen = 20
	deleteRecordFixed  = 4 + 8 + 4 + 8 // length, sum, db, header checksum
)

// errDeleteLogFull: the delete log has no room (or could not be created);
// the caller falls back to reporting the disk unavailable.
var errDeleteLogFull = errors.New("disktier: delete log full")

// pendingKey names a record awaiting a logged delete.
type pendingKey struct {
	db  uint32
	key string
}

// deleteLog is the delete log of one store. A nil *deleteLog (no log could
// be created) holds nothing and refuses every record.
type deleteLog struct {
	f *os.File

	mu      sync.Mutex
	gen     uint64
	off     int64
	dirty   bool                  // records written since the last sync
	pend    map[pendingKey]uint64 // record -> its header checksum
	pendLen atomic.Int64
}

// openDeleteLog opens the delete log in dir, creating and preallocating it
// if missing, and loads the deletes it holds.
func openDeleteLog(dir string) (*deleteLog, error) {
	path := filepath.Join(dir, deleteLogName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("disktier: open delete log: %w", err)
	}
	l := &deleteLog{f: f, pend: map[pendingKey]uint64{}}
	buf := make([]byte, deleteLogSize)
	n, err := f.ReadAt(buf, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		f.Close()
		return nil, fmt.Errorf("disktier: read delete log: %w", err)
	}
	if n < deleteLogSize || !l.load(buf) {
		// New, short (a crash while preallocating) or unreadable: start a
		// fresh log. Deletes it may have held are lost, as they would have
		// been without it.
		clear(buf)
		l.gen++
		putDeleteLogHeader(buf, l.gen)
		if _, err := f.WriteAt(buf, 0); err != nil {
			f.Close()
			return nil, fmt.Errorf("disktier: preallocate delete log: %w", err)
		}
		if err := f.Sync(); err != nil {
			f.Close()
			return nil, fmt.Errorf("disktier: sync delete log: %w", err)
		}
		l.off = deleteLogHeaderLen
		clear(l.pend)
	}
	l.pendLen.Store(int64(len(l.pend)))
	return l, nil
}

func putDeleteLogHeader(b []byte, gen uint64) {
	binary.LittleEndian.PutUint32(b[0:], deleteLogMagic)
	binary.LittleEndian.PutUint64(b[4:], gen)
	binary.LittleEndian.PutUint64(b[12:], xxhash.Sum64(b[:12]))
}

// load reads the header and the records of buf; it reports false when the
// header is not valid.
func (l *deleteLog) load(buf []byte) bool {
	if binary.LittleEndian.Uint32(buf[0:]) != deleteLogMagic ||
		binary.LittleEndian.Uint64(buf[12:]) != xxhash.Sum64(buf[:12]) {
		return false
	}
	l.gen = binary.LittleEndian.Uint64(buf[4:])
	off := int64(deleteLogHeaderLen)
	for off+deleteRecordFixed <= int64(len(buf)) {
		n := int64(binary.LittleEndian.Uint32(buf[off:]))
		if n < 12 || off+12+n > int64(len(buf)) {
			break
		}
		body := buf[off+12 : off+12+n]
		if binary.LittleEndian.Uint64(buf[off+4:]) != recordSum(l.gen, body) {
			break
		}
		k := pendingKey{binary.LittleEndian.Uint32(body[0:]), string(body[12:])}
		l.pend[k] = binary.LittleEndian.Uint64(body[4:])
		off += 12 + n
	}
	l.off = off
	return true
}

func recordSum(gen uint64, body []byte) uint64 {
	d := xxhash.New()
	var g [8]byte
	binary.LittleEndian.PutUint64(g[:], gen)
	_, _ = d.Write(g[:])
	_, _ = d.Write(body)
	return d.Sum64()
}

func appendDeleteRecord(b []byte, gen uint64, k pendingKey, sum uint64) []byte {
	body := make([]byte, 12, 12+len(k.key))
	binary.LittleEndian.PutUint32(body[0:], k.db)
	binary.LittleEndian.PutUint64(body[4:], sum)
	body = append(body, k.key...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(body)))
	b = binary.LittleEndian.AppendUint64(b, recordSum(gen, body))
	return append(b, body...)
}

// record writes the deletes of recs to the log and marks them pending. It
// writes only inside the preallocated file, so a full file system does not
// refuse it; sync makes it durable against a machine crash.
func (l *deleteLog) record(recs map[pendingKey]uint64) error {
	if l == nil {
		return errDeleteLogFull
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var b []byte
	for k, sum := range recs {
		b = appendDeleteRecord(b, l.gen, k, sum)
	}
	if l.off+int64(len(b)) > deleteLogSize {
		return errDeleteLogFull
	}
	if _, err := l.f.WriteAt(b, l.off); err != nil {
		// The next record overwrites what part of it was written.
		return fmt.Errorf("disktier: write delete log: %w", err)
	}
	l.dirty = true
	l.off += int64(len(b))
	for k, sum := range recs {
		l.pend[k] = sum
	}
	l.pendLen.Store(int64(len(l.pend)))
	return nil
}

// sync makes the records written so far durable.
func (l *deleteLog) sync() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.dirty {
		return nil
	}
	if err := l.f.Sync(); err != nil {
		return fmt.Errorf("disktier: sync delete log: %w", err)
	}
	l.dirty = false
	return nil
}

// pending reports whether the record under key awaits a logged delete.
func (l *deleteLog) pending(db uint32, key []byte) bool {
	if l == nil || l.pendLen.Load() == 0 {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.pend[pendingKey{db, string(key)}]
	return ok
}

// forget drops a pending delete whose record has been replaced or deleted
// in Pebble. Its log record stays until the log is emptied; a replay
// checks the header checksum, so it cannot delete the replacement.
func (l *deleteLog) forget(db uint32, key []byte) {
	if l == nil || l.pendLen.Load() == 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.pend, pendingKey{db, string(key)})
	l.pendLen.Store(int64(len(l.pend)))
}

// forgetDB drops the pending deletes of db (FlushDB); every db when all.
func (l *deleteLog) forgetDB(db uint32, all bool) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for k := range l.pend {
		if all || k.db == db {
			delete(l.pend, k)
		}
	}
	l.pendLen.Store(int64(len(l.pend)))
}

// snapshot returns the pending deletes.
func (l *deleteLog) snapshot() map[pendingKey]uint64 {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.pend)
}

// count is the number of pending deletes.
func (l *deleteLog) count() int64 {
	if l == nil {
		return 0
	}
	return l.pendLen.Load()
}

// empty starts a new generation holding only the deletes still pending;
// the caller has made every other one durable in Pebble. The new header
// goes first, so a crash in between leaves an empty log, never records of
// two generations mixed (the pending ones are then redone by the caller's
// next attempt, or lost like any delete of an unflushed memtable).
func (l *deleteLog) empty() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	b := make([]byte, deleteLogHeaderLen)
	putDeleteLogHeader(b, l.gen+1)
	for k, sum := range l.pend {
		b = appendDeleteRecord(b, l.gen+1, k, sum)
	}
	if _, err := l.f.WriteAt(b, 0); err != nil {
		return fmt.Errorf("disktier: write delete log: %w", err)
	}
	if err := l.f.Sync(); err != nil {
		return fmt.Errorf("disktier: sync delete log: %w", err)
	}
	l.gen++
	l.off = int64(len(b))
	l.dirty = false
	return nil
}

func (l *deleteLog) close() {
	if l != nil {
		_ = l.sync() // best effort: the next Open reads what reached the file
		l.f.Close()
	}
}

// deleteLogged deletes keys of group while the disk is unavailable: their
// deletes go to the delete log, durable, and reads treat the records as
// gone from then on. It returns how many records there were. When the log
// cannot take them, nothing is deleted and the error wraps ErrUnavailable.
func (s *Store) deleteLogged(d uint32, group []byte, keys [][]byte) (int, error) {
	mu := s.stripe(d, group)
	mu.Lock()
	defer mu.Unlock()
	recs := make(map[pendingKey]uint64)
	for _, key := range keys {
		if s.dlog.pending(d, key) {
			continue
		}
		h, _, err := s.readHeader(encodeKey(nil, prefixHeader, d, key))
		switch {
		case errors.Is(err, ErrNotFound):
			continue
		case errors.Is(err, errBadRecord):
			// Its checksum is unknown; applying the delete drops it as
			// corrupt whatever is there.
			recs[pendingKey{d, string(key)}] = 0
		case err != nil:
			return 0, err
		default:
			recs[pendingKey{d, string(key)}] = h.checksum
		}
	}
	if len(recs) == 0 {
		return 0, nil
	}
	if err := s.dlog.record(recs); err != nil {
		return 0, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	s.deletes.Add(int64(len(recs)))
	return len(recs), nil
}

// applyDeletes applies the logged deletes to Pebble, flushes the memtables
// so that they are durable there, and empties the log. A logged record
// replaced since (another header checksum) is left alone.
func (s *Store) applyDeletes(ctx context.Context) error {
	pend := s.dlog.snapshot()
	if len(pend) == 0 {
		return nil
	}
	for k, sum := range pend {
		if err := ctx.Err(); err != nil {
			return err
		}
		key := []byte(k.key)
		mu := s.stripe(k.db, grouping.Of(key))
		mu.Lock()
		err := s.applyDeleteLocked(k.db, key, sum)
		mu.Unlock()
		if err != nil {
			return err
		}
	}
	if err := s.flushMemtables(ctx); err != nil {
		return err
	}
	return s.dlog.empty()
}

func (s *Store) applyDeleteLocked(db uint32, key []byte, sum uint64) error {
	if !s.dlog.pending(db, key) {
		return nil // replaced or deleted meanwhile
	}
	hkey := encodeKey(nil, prefixHeader, db, key)
	h, size, err := s.readHeader(hkey)
	switch {
	case errors.Is(err, ErrNotFound):
	case errors.Is(err, errBadRecord):
		_ = s.dropCorruptLocked(db, key, err)
	case err != nil:
		return err
	case h.checksum == sum:
		if err := s.deleteLocked(db, key, &h, size); err != nil {
			return err
		}
	}
	s.dlog.forget(db, key)
	return nil
}
