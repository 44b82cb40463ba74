package disktier

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// The value log. Pebble copies a large value several times on its way to
// disk (batch, memtable, blob file) and reads it back through its block
// machinery, which measured at about a third of the disk's cold sequential
// read speed. Payloads of at least vlogMinPayload bytes therefore go to
// append-only segment files instead: one write (direct, where the file
// system allows it: directio.go), one pread to read them back. Pebble keeps the record's header as
// before and, under the value key, a 16-byte pointer (segment, offset,
// length); the header's checksum still covers the value, so a damaged or
// missing segment is a corrupt record (a miss), never wrong bytes.
//
// Segments are never modified in place (an append whose record is refused
// or fails is truncated away when it is still the tail). The reclaimer
// deletes a segment once no pointer refers to it and no append to it is in
// flight (see Store.collectSegments); a segment that
// keeps some live values keeps its space until they go, which for a cache
// whose coldest chunks are evicted first happens in segment order.

const (
	// vlogMinPayload is the payload size from which a value goes to the
	// value log.
	vlogMinPayload = 256 << 10
	// vlogSegmentSize is the size at which a segment is closed for writes,
	// unless MaxDisk is small (see segmentSizeFor).
	vlogSegmentSize = 256 << 20
	// vlogPointerLen is the length of a pointer stored under the value key.
	vlogPointerLen = 16
	// flagVlog marks a header whose value key holds a value-log pointer.
	flagVlog = 1 << 3
	// flagXXH3 marks a value-log record whose pieces are hashed with
	// XXH3-64 (pieceHash), three to four times as fast as the xxhash64
	// that records written before it use: the hash was a tenth of the
	// server's CPU per 4 MiB SET.
	flagXXH3 = 1 << 4
)

// vlogPointer locates a payload in the value log.
type vlogPointer struct {
	seg uint32
	off int64
	n   uint32
}

func (p vlogPointer) encode() []byte {
	b := make([]byte, vlogPointerLen)
	binary.LittleEndian.PutUint32(b[0:], p.seg)
	binary.LittleEndian.PutUint64(b[4:], uint64(p.off))
	binary.LittleEndian.PutUint32(b[12:], p.n)
	return b
}

func decodeVlogPointer(b []byte) (vlogPointer, bool) {
	if len(b) != vlogPointerLen {
		return vlogPointer{}, false
	}
	return vlogPointer{
		seg: binary.LittleEndian.Uint32(b[0:]),
		off: int64(binary.LittleEndian.Uint64(b[4:])),
		n:   binary.LittleEndian.Uint32(b[12:]),
	}, true
}

// valueLog owns the segment files of one store.
type valueLog struct {
	dir string

	mu    sync.Mutex
	files map[uint32]*os.File // every segment, opened read-write
	// direct holds, for the segments appended to by this process, a
	// descriptor opened with O_DIRECT (directio.go), absent where the file
	// system refuses it.
	direct map[uint32]*os.File
	// noDirect is set once a direct write failed for another reason than
	// a full disk: new segments are not opened for direct writes either.
	noDirect bool
	dw       directWriter
	sizes    map[uint32]int64
	cur      uint32 // the segment appended to
	curOff   int64
	segMax   int64 // size at which the current segment is closed
	// busy counts, per segment, the appends whose records have not yet
	// committed or failed (see settle); touched marks the segments
	// appended to since the reclaimer's current scan began (see
	// beginScan). Together they replace judging a segment dead by time:
	// a segment with an append in flight, or one the scan may have missed,
	// is never removed.
	busy    map[uint32]int
	touched map[uint32]bool
}

// segmentSizeFor keeps segments small next to the disk bound, so that
// space comes back in steps much smaller than MaxDisk.
func segmentSizeFor(maxDisk int64) int64 {
	if maxDisk <= 0 {
		return vlogSegmentSize
	}
	return min(vlogSegmentSize, max(maxDisk/32, 1<<20))
}

func segmentName(id uint32) string { return fmt.Sprintf("%08d.vlog", id) }

// openValueLog opens the segments under dir and starts a new one for
// appends (an earlier process may have left a partly written tail).
func openValueLog(dir string) (*valueLog, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("disktier: value log dir: %w", err)
	}
	v := &valueLog{dir: dir, files: map[uint32]*os.File{}, direct: map[uint32]*os.File{}, sizes: map[uint32]int64{}, segMax: vlogSegmentSize,
		busy: map[uint32]int{}, touched: map[uint32]bool{}}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("disktier: value log dir: %w", err)
	}
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".vlog")
		if !ok {
			continue
		}
		id, err := strconv.ParseUint(name, 10, 32)
		if err != nil {
			continue
		}
		f, err := os.OpenFile(filepath.Join(dir, e.Name()), os.O_RDWR, 0)
		if err != nil {
			v.close()
			return nil, fmt.Errorf("disktier: open segment: %w", err)
		}
		info, err := f.Stat()
		if err != nil {
			f.Close()
			v.close()
			return nil, fmt.Errorf("disktier: stat segment: %w", err)
		}
		v.files[uint32(id)] = f
		v.sizes[uint32(id)] = info.Size()
		v.cur = max(v.cur, uint32(id))
	}
	if err := v.rotateLocked(); err != nil {
		v.close()
		return nil, err
	}
	return v, nil
}

// rotateLocked starts a new segment.
func (v *valueLog) rotateLocked() error {
	id := v.cur + 1
	path := filepath.Join(v.dir, segmentName(id))
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("disktier: new segment: %w", err)
	}
	v.files[id], v.sizes[id] = f, 0
	if !v.noDirect {
		if d := openDirectWriter(path); d != nil {
			v.direct[id] = d
		}
	}
	v.cur, v.curOff = id, 0
	return nil
}

// append writes p at the end of the current segment and returns where:
// at a multiple of directAlign, the room up to the next one being the
// record's. Concurrent appends write disjoint ranges. The append is registered as in
// flight until the caller calls settle (its record committed) or unappend
// (it did not); a failed write is undone here.
func (v *valueLog) append(p []byte) (vlogPointer, error) {
	room := alignUp(int64(len(p)))
	v.mu.Lock()
	if v.curOff > 0 && v.curOff+room > v.segMax {
		if err := v.rotateLocked(); err != nil {
			v.mu.Unlock()
			return vlogPointer{}, err
		}
	}
	f, direct := v.files[v.cur], v.direct[v.cur]
	ptr := vlogPointer{seg: v.cur, off: v.curOff, n: uint32(len(p))}
	v.curOff += room
	v.sizes[v.cur] = v.curOff
	v.busy[v.cur]++
	v.touched[v.cur] = true
	v.mu.Unlock()
	var err error
	if direct != nil {
		err = v.dw.writeAt(direct, p, ptr.off)
		if err != nil && !isNoSpace(err) {
			// A file system may accept O_DIRECT at open and refuse the
			// writes (an alignment it wants larger than directAlign): the
			// page cache takes this one and the log's later appends. A
			// full disk is not that, and a write through the page cache
			// would fail the same way.
			v.stopDirect()
			direct = nil
		}
	}
	if direct == nil {
		_, err = f.WriteAt(p, ptr.off)
	}
	if err != nil {
		v.unappend(ptr)
		return vlogPointer{}, fmt.Errorf("disktier: value log write: %w", err)
	}
	return ptr, nil
}

// stopDirect closes the log's direct descriptors: appends go through the
// page cache from now on.
func (v *valueLog) stopDirect() {
	v.mu.Lock()
	defer v.mu.Unlock()
	for id, f := range v.direct {
		f.Close()
		delete(v.direct, id)
	}
	v.noDirect = true
}

// settle ends the registration of an append whose record has committed.
func (v *valueLog) settle(p vlogPointer) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.settleLocked(p)
}

func (v *valueLog) settleLocked(p vlogPointer) {
	if v.busy[p.seg]--; v.busy[p.seg] <= 0 {
		delete(v.busy, p.seg)
	}
}

// unappend undoes an append whose record was refused or failed: when it is
// still the tail of the current segment the segment is truncated back (a
// refused write must not grow the log, and a partial write on a full disk
// gives its blocks back); otherwise its bytes stay as garbage. Either way
// its registration ends.
func (v *valueLog) unappend(p vlogPointer) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.settleLocked(p)
	if v.cur != p.seg || v.curOff != p.off+alignUp(int64(p.n)) {
		return
	}
	v.curOff = p.off
	v.sizes[p.seg] = p.off
	if f := v.files[p.seg]; f != nil {
		// A failed truncate leaves bytes past curOff that the next append
		// overwrites; size() already counts them out.
		_ = f.Truncate(p.off)
	}
}

// beginScan starts a reclaimer scan: from now on, a segment is touched when
// it is appended to, and the segments with appends in flight count as
// touched already (their records may commit after the scan's snapshot).
func (v *valueLog) beginScan() {
	v.mu.Lock()
	defer v.mu.Unlock()
	clear(v.touched)
	for id := range v.busy {
		v.touched[id] = true
	}
}

// idleLocked reports whether segment id has had no append since the scan
// began and has none in flight.
func (v *valueLog) idleLocked(id uint32) bool {
	return !v.touched[id] && v.busy[id] == 0
}

// idle is idleLocked for callers without the lock.
func (v *valueLog) idle(id uint32) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.idleLocked(id)
}

// read returns the payload p points to, in a new buffer, with the hashes of
// its vlogHashPiece-byte pieces (see vlogChecksum).
func (v *valueLog) read(p vlogPointer, hash func([]byte) uint64) ([]byte, []uint64, error) {
	v.mu.Lock()
	f := v.files[p.seg]
	v.mu.Unlock()
	if f == nil {
		return nil, nil, badRecord("value log segment %d is gone", p.seg)
	}
	buf := make([]byte, p.n)
	sums, err := readHashed(f, buf, p.off, hash)
	if err != nil {
		return nil, nil, badRecord("value log read of segment %d at %d: %v", p.seg, p.off, err)
	}
	return buf, sums, nil
}

// readHashed fills buf from f at off and hashes it in vlogHashPiece-byte
// pieces. The pieces are read in order by one goroutine, so the kernel sees
// one sequential reader and keeps its readahead running ahead of it, and
// each piece is hashed by its own goroutine while the next one is read.
// Measured on a cold 32 MiB value, 10 alternating rounds: concurrent reads
// of the eight pieces (with a WILLNEED hint for the whole value, the
// previous design) ran at a median 1351 MB/s, in-order pieces at 1736 MB/s
// and one plain read at 1806 MB/s: concurrent readers of one file defeat
// its readahead.
func readHashed(f *os.File, buf []byte, off int64, hash func([]byte) uint64) ([]uint64, error) {
	if len(buf) < 2*vlogHashPiece {
		if _, err := f.ReadAt(buf, off); err != nil {
			return nil, err
		}
		return pieceSums(buf, hash), nil
	}
	n := (len(buf) + vlogHashPiece - 1) / vlogHashPiece
	sums := make([]uint64, n)
	var wg sync.WaitGroup
	defer wg.Wait()
	for i := range n {
		start := i * vlogHashPiece
		end := min(start+vlogHashPiece, len(buf))
		if _, err := f.ReadAt(buf[start:end], off+int64(start)); err != nil {
			return nil, err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sums[i] = hash(buf[start:end])
		}()
	}
	wg.Wait()
	return sums, nil
}

// sync makes the segments durable (Store.Flush).
func (v *valueLog) sync() error {
	v.mu.Lock()
	files := make([]*os.File, 0, len(v.files))
	for _, f := range v.files {
		files = append(files, f)
	}
	v.mu.Unlock()
	for _, f := range files {
		// A segment removed since the list was taken (the reclaimer's
		// collectSegments) is closed: nothing of it needs to be durable,
		// and failing here would make Store.Flush skip the memtables.
		if err := f.Sync(); err != nil && !errors.Is(err, os.ErrClosed) {
			return fmt.Errorf("disktier: value log sync: %w", err)
		}
	}
	return nil
}

// size is the bytes the segments take.
func (v *valueLog) size() int64 {
	v.mu.Lock()
	defer v.mu.Unlock()
	var n int64
	for _, s := range v.sizes {
		n += s
	}
	return n
}

// segments lists the segment ids and the current one.
func (v *valueLog) segments() (ids []uint32, cur uint32) {
	v.mu.Lock()
	defer v.mu.Unlock()
	for id := range v.files {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids, v.cur
}

// sealIfIdle starts a new segment if the current one is still cur, holds
// data and is idle since the scan began, so that a current segment left all
// garbage can be collected; it reports whether it did.
func (v *valueLog) sealIfIdle(cur uint32) (bool, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.cur != cur || v.curOff == 0 || !v.idleLocked(cur) {
		return false, nil
	}
	return true, v.rotateLocked()
}

// removeIfIdle deletes a segment that is not the current one and is idle
// since the scan began; it reports whether it did.
func (v *valueLog) removeIfIdle(id uint32) (bool, error) {
	v.mu.Lock()
	if id == v.cur || !v.idleLocked(id) {
		v.mu.Unlock()
		return false, nil
	}
	f, direct := v.files[id], v.direct[id]
	delete(v.files, id)
	delete(v.direct, id)
	delete(v.sizes, id)
	v.mu.Unlock()
	if direct != nil {
		direct.Close()
	}
	if f == nil {
		return false, nil
	}
	f.Close()
	if err := os.Remove(filepath.Join(v.dir, segmentName(id))); err != nil {
		return true, fmt.Errorf("disktier: remove segment: %w", err)
	}
	return true, nil
}

func (v *valueLog) close() {
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, f := range v.files {
		f.Close()
	}
	for _, f := range v.direct {
		f.Close()
	}
	v.files, v.direct = map[uint32]*os.File{}, map[uint32]*os.File{}
}
