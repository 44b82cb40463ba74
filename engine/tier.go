package engine

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/kvserver/kvserver/codec"
	"github.com/kvserver/kvserver/datatype"
	"github.com/kvserver/kvserver/disktier"
	"github.com/kvserver/kvserver/grouping"
)

// metaDB is the cold-tier database that holds the engine's own state (the
// logical-to-physical database map kept by SWAPDB); no client database can
// have that number.
const metaDB = math.MaxUint32

var (
	dbMapKey = []byte("dbmap")
	// cleanKey is present in metaDB while the disk tier holds a complete
	// copy written by a clean stop; it is removed at start, so its absence
	// at the next start means the process died.
	cleanKey = []byte("clean-shutdown")
)

// maxDirtyAge is how long (ms) a group may hold values (or expiries) the
// disk lacks before the write-behind pass persists it: long enough that a
// chunk's data and metadata, written one after the other, reach the disk
// in one batch and that keys rewritten in a burst are not copied to disk
// on every rewrite, short enough that a crash loses little. With the pass
// and the flush that follows it running every second, a value acknowledged
// more than maxDirtyAge plus about two seconds before a crash (or a newer
// one) survives it; README's Durability section promises 5 s.
const maxDirtyAge = 1500

// kickDemoter wakes the demoter without blocking.
func (e *Engine) kickDemoter() { e.demoteWake.Notify() }

// demotableLocked reports whether some group could be demoted or dropped.
func (e *Engine) demotableLocked() bool {
	for g := e.memLRU.tail; g != nil; g = g.prev {
		if !g.demoting {
			return true
		}
	}
	return false
}

// runDemoter moves the coldest groups to disk while memory is above the
// high watermark, until it is below the low one, and flushes the cold tier
// once a second when something was written or deleted, so that what a
// crash loses (writes) or undoes (deletes) is about a second old at most,
// plus write-behind's delay for values held only in memory.
func (e *Engine) runDemoter(ctx context.Context) {
	flushTick := time.NewTicker(time.Second)
	defer flushTick.Stop()
	dirty := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-e.demoteWake.C():
		case <-flushTick.C:
			e.mu.Lock()
			e.applyDeferredDeletesLocked(ctx)
			e.mu.Unlock()
			if e.writeBehind(ctx, writeBehindBytes) {
				dirty = true
			}
			e.mu.Lock()
			dirty = dirty || e.coldUnflushed
			e.coldUnflushed = false
			e.mu.Unlock()
			if dirty {
				// A failed flush is tried again at the next tick: what it
				// should have made durable is still only in memtables.
				if err := e.cold.Flush(ctx); err != nil {
					if ctx.Err() == nil && !errors.Is(err, disktier.ErrUnavailable) {
						e.opts.Logger.Error("flush disk tier", "err", err)
					}
				} else {
					dirty = false
				}
			}
			continue
		}
		for ctx.Err() == nil {
			max := e.maxMem.Load()
			e.mu.Lock()
			low := int64(float64(max) * e.opts.LowWatermark)
			if max <= 0 || e.used <= low || e.closing {
				e.mu.Unlock()
				break
			}
			g := e.victimLocked(&e.memLRU, e.opts.Now().UnixMilli(), false, func(g *group) bool {
				return g.demoting || e.flushing[g.ks.phys] > 0
			})
			if g == nil {
				e.mu.Unlock()
				break
			}
			e.attempts++
			wrote, err := e.demoteLocked(ctx, g)
			shed := false
			if e.diskRefused(err) {
				// The disk does not take writes: keep the memory tier
				// serving by shedding instead (faults.go).
				shed = e.shedLocked(ctx)
			}
			e.publishLocked()
			e.mu.Unlock()
			dirty = dirty || wrote
			if shed {
				continue
			}
			if err != nil {
				if !errors.Is(err, disktier.ErrUnavailable) {
					e.opts.Logger.Error("demote group", "group", g.name, "err", err)
				}
				select {
				case <-ctx.Done():
				case <-time.After(100 * time.Millisecond):
				}
			}
		}
	}
}

// writeBehindBytes bounds what one write-behind pass writes, so demotion
// under memory pressure is not starved.
const writeBehindBytes = 256 << 20

// markDirtyLocked notes that g has values (or expiries) the disk does not
// hold.
func (e *Engine) markDirtyLocked(g *group) {
	if e.cold == nil {
		return
	}
	if _, ok := e.dirty[g]; !ok {
		e.dirty[g] = struct{}{}
		g.dirtySince = e.nowLocked()
		e.dirtyQueue.push(g, g.dirtySince)
		e.publishUnsavedLocked()
	}
}

// publishUnsavedLocked publishes the number of groups the disk lags behind
// (Stats' Disk.Unsaved): dirty ones and those being written.
func (e *Engine) publishUnsavedLocked() {
	e.unsavedPub.Store(int64(len(e.dirty) + e.writing))
}

// nowLocked is the time in unix milliseconds for the lock's holder: the
// clock the lock read when it was taken (holdMutex.now) when the engine
// runs on the real clock, so that marking a group dirty reads no clock.
func (e *Engine) nowLocked() int64 {
	if e.realClock {
		return e.mu.now().UnixMilli()
	}
	return e.opts.Now().UnixMilli()
}

// beginWriteLocked marks g as being written without the lock: the demoter,
// the write-behind pass and expiry rewrites leave it alone meanwhile.
func (e *Engine) beginWriteLocked(g *group) {
	g.demoting = true
	e.writing++
	e.publishUnsavedLocked()
}

// endWriteLocked ends what beginWriteLocked started.
func (e *Engine) endWriteLocked(g *group) {
	g.demoting = false
	if e.writing--; e.writing == 0 {
		e.idle.Broadcast()
	}
	e.publishUnsavedLocked()
}

// runPost does the disk work a step left for after the lock (postWork).
func (e *Engine) runPost(ctx context.Context, p *postWork) {
	for _, it := range p.expiry {
		e.mu.Lock()
		if !it.grp.demoting && !e.closing {
			if err := e.syncExpiryLocked(ctx, it); err != nil && !errors.Is(err, disktier.ErrUnavailable) {
				e.opts.Logger.Error("rewrite expiry on disk", "key", it.key, "err", err)
			}
		}
		e.publishLocked()
		e.mu.Unlock()
	}
	if len(p.flush) > 0 {
		if err := e.flushCold(ctx, p.flush); err != nil {
			e.opts.Logger.Error("flush database on disk", "err", err)
		}
	}
}

// syncExpiryLocked gives the disk record of a disk-only item whose expiry
// changed (diskOld, not resident) its new expiry. The record is rewritten
// without the lock and the item re-validated by version afterwards, like
// Preload; if it changed meanwhile, the write-back tries again. The group
// must not be demoting.
func (e *Engine) syncExpiryLocked(ctx context.Context, it *item) error {
	ks := it.keyspace()
	if ks.items[it.key] != it || it.resident || !it.diskOld || e.flushing[ks.phys] > 0 {
		return nil
	}
	g := it.grp
	version, expireAt, phys := it.version, it.expireAt, ks.phys
	e.beginWriteLocked(g)
	e.mu.Unlock()
	err := e.cold.SetExpire(ctx, phys, []byte(it.key), expireAt)
	e.mu.Lock()
	e.endWriteLocked(g)
	current := ks.items[it.key] == it && e.dbIndexLocked(ks) >= 0
	switch {
	case err == nil && current && it.version == version:
		it.diskOld = false
		it.onDisk = true
	case errors.Is(err, disktier.ErrNotFound) || errors.Is(err, disktier.ErrCorrupt):
		// The record is gone (damaged, or deleted behind the engine):
		// so is the value of a disk-only key, and a chunk's other key
		// goes with it (damage.go); removing the key alone left half a
		// chunk. A record whose old expiry passed after the step that
		// found the key alive is not gone: SetExpire leaves that
		// judgement to the step, which answered the client.
		if current && !it.resident {
			e.dropLostLocked(ctx, it)
		}
		return nil
	case err != nil:
		e.markDirtyLocked(g)
		return err
	default:
		e.markDirtyLocked(g)
	}
	e.coldUnflushed = true // a header rewrite is made durable by the next flush
	return nil
}

// writeBehind persists dirty groups without freeing their memory, so that
// a crash loses only what was written in the last second or so, and a later
// demotion of those groups is free. Ready groups are written many at a time
// (writeBehindBatch), each batch in one atomic disk-tier commit. It reports
// whether it wrote anything.
func (e *Engine) writeBehind(ctx context.Context, budget int64) bool {
	wrote := false
	for budget > 0 && ctx.Err() == nil {
		n, more, err := e.writeBehindBatch(ctx, min(budget, writeBehindBatchBytes))
		budget -= n
		wrote = wrote || n > 0
		if err != nil {
			if !errors.Is(err, disktier.ErrUnavailable) {
				e.opts.Logger.Error("write-behind", "err", err)
			}
			return wrote
		}
		if !more {
			break
		}
	}
	return wrote
}

// writeBehindBatchBytes bounds the values one write-behind commit carries
// (a group larger than that goes alone), well under half a memtable so the
// batch goes through the memtable like a single group's.
const writeBehindBatchBytes = 4 << 20

// writeBehindHold bounds the groups a write-behind batch prepares, or
// finishes, in one hold of the engine lock: a batch of 4 KiB values holds
// about a thousand, and commands wait for the lock meanwhile.
const writeBehindHold = 64

// writeBehindBatch persists the groups dirty for maxDirtyAge or longer,
// oldest first, up to about limit bytes of values, in one atomic disk-tier
// batch written without the lock (a group that needs room on a full disk
// is written alone, evicting). It takes the lock for at most
// writeBehindHold groups at a time. It returns the bytes written, whether
// more groups may be ready, and the first error.
func (e *Engine) writeBehindBatch(ctx context.Context, limit int64) (int64, bool, error) {
	type taken struct {
		w     groupWrite
		since int64
	}
	var batch []taken
	var size int64
	more := true
	for more && (len(batch) == 0 || size < limit) {
		e.mu.Lock()
		now := e.nowLocked()
		for held := 0; held < writeBehindHold && (len(batch) == 0 || size < limit); held++ {
			g := e.readyDirtyLocked(now)
			if g == nil || e.closing {
				more = false
				break
			}
			since := g.dirtySince
			delete(e.dirty, g)
			w := e.preparePersistLocked(g)
			e.beginWriteLocked(g)
			batch = append(batch, taken{w, since})
			size += w.size
		}
		e.mu.Unlock()
	}
	if len(batch) == 0 {
		return 0, false, nil
	}
	writes := make([]disktier.GroupWrite, 0, len(batch))
	for i := range batch {
		encodeObjects(&batch[i].w)
	}
	for _, t := range batch {
		writes = append(writes, disktier.GroupWrite{DB: t.w.phys, Entries: t.w.entries})
	}
	errs := make([]error, len(batch))
	err := e.cold.PutGroups(ctx, writes)
	if errors.Is(err, disktier.ErrDiskFull) {
		// Room must be made: group by group, evicting as a demotion does.
		for i, t := range batch {
			if len(t.w.entries) > 0 {
				errs[i] = e.putGroupEvicting(ctx, t.w.phys, t.w.entries)
			}
		}
	} else {
		for i := range errs {
			errs[i] = err
		}
	}
	var wrote int64
	var first error
	for start := 0; start < len(batch); start += writeBehindHold {
		e.mu.Lock()
		for i := start; i < min(start+writeBehindHold, len(batch)); i++ {
			t := batch[i]
			g := t.w.g
			e.endWriteLocked(g)
			n, err := e.finishPersistLocked(ctx, t.w, false, errs[i])
			if err == nil {
				err = e.syncGroupExpiriesLocked(ctx, g)
			}
			if _, again := e.dirty[g]; again && err != nil {
				// Failed: dirty again, and due as soon as before.
				g.dirtySince = min(g.dirtySince, t.since)
				e.dirtyQueue.push(g, g.dirtySince)
			}
			if err != nil && first == nil {
				first = fmt.Errorf("group %q: %w", g.name, err)
			}
			wrote += n
		}
		e.publishLocked()
		e.mu.Unlock()
	}
	return wrote, more, first
}

// readyDirtyLocked returns the group that has been dirty longest if that
// is maxDirtyAge or more at now, and nil otherwise. Groups the demoter or
// a flush is writing are left dirty for a later pass.
func (e *Engine) readyDirtyLocked(now int64) *group {
	for skipped := 0; ; {
		g, since, ok := e.dirtyQueue.front()
		if !ok || now-since < maxDirtyAge || skipped > e.dirtyQueue.len() {
			return nil
		}
		e.dirtyQueue.pop()
		if _, dirty := e.dirty[g]; !dirty || g.dirtySince != since {
			continue // stale: the group was persisted, or is due at another time
		}
		if g.demoting || e.flushing[g.ks.phys] > 0 {
			e.dirtyQueue.push(g, since)
			skipped++
			continue
		}
		return g
	}
}

// syncGroupExpiriesLocked rewrites the expiries of g's disk-only items
// whose expiry changed (syncExpiryLocked).
func (e *Engine) syncGroupExpiriesLocked(ctx context.Context, g *group) error {
	for _, it := range slices.Clone(g.items) {
		if !it.resident && it.diskOld {
			if err := e.syncExpiryLocked(ctx, it); err != nil {
				return err
			}
		}
	}
	return nil
}

// demoteLocked writes g's resident values that the disk does not hold yet
// in one atomic batch, then frees them from memory. The write runs without
// the lock; values changed meanwhile stay resident (and a stale disk copy
// is deleted). It reports whether anything was written.
func (e *Engine) demoteLocked(ctx context.Context, g *group) (bool, error) {
	n, err := e.persistLocked(ctx, g, true)
	if err == nil {
		e.demotions.Add(1)
	}
	return n > 0, err
}

// persistLocked writes g's resident values the disk lacks in one atomic
// batch (without the lock held during the write) and marks the unchanged
// ones as on disk; with free it also drops them from memory. It returns the
// bytes written.
func (e *Engine) persistLocked(ctx context.Context, g *group, free bool) (int64, error) {
	w := e.preparePersistLocked(g)
	var err error
	if len(w.entries) > 0 {
		e.beginWriteLocked(g)
		e.mu.Unlock()
		encodeObjects(&w)
		err = e.putGroupEvicting(ctx, w.phys, w.entries)
		e.mu.Lock()
		e.endWriteLocked(g)
	}
	return e.finishPersistLocked(ctx, w, free, err)
}

// groupWrite is the write of one group's resident values the disk lacks,
// prepared under the lock (preparePersistLocked), encoded and written
// without it (encodeObjects) and finished under it again
// (finishPersistLocked).
type groupWrite struct {
	g       *group
	phys    int
	entries []disktier.Entry
	todo    []pendingItem
	// objects are the entries whose values are objects, frozen until
	// encoded (snapshot.go).
	objects []pendingObject
	// size is the bytes of the values; an object counts its memory size
	// until it is encoded.
	size int64
}

// pendingItem is a resident item of a groupWrite with the version it had
// when the write was prepared.
type pendingItem struct {
	it      *item
	version uint64
	written bool // a record is being written for it
}

// preparePersistLocked collects g's resident values the disk lacks: a
// string's bytes, which are never changed in place, and a frozen object
// for any other kind, encoded without the lock (encodeObjects).
func (e *Engine) preparePersistLocked(g *group) groupWrite {
	w := groupWrite{g: g, phys: g.ks.phys}
	for _, it := range g.items {
		if !it.resident {
			continue
		}
		w.todo = append(w.todo, pendingItem{it, it.version, !it.onDisk})
		if !it.onDisk {
			// An older record (diskOld) is replaced in the same batch, so
			// the disk holds one version or the other at every moment;
			// without one, and with no delete of an earlier record still
			// deferred (faults.go), the store need not look for it.
			_, deferred := e.deferredDeletes[coldKey{g.ks.phys, it.key}]
			if it.obj != nil {
				w.objects = append(w.objects, pendingObject{entry: len(w.entries), obj: it.obj,
					snap: e.freezeLocked(it.obj), estimate: it.objSize})
				w.size += it.objSize
			} else {
				w.size += int64(len(it.value))
			}
			en := disktier.Entry{Key: []byte(it.key), Value: it.value,
				Meta:  disktier.RecordMeta{ExpireAt: it.expireAt, Quantized: it.quantized, Kind: uint8(it.kind)},
				Fresh: !it.diskOld && !deferred}
			if it.diskOld {
				en.Replaces = it.disk
			}
			w.entries = append(w.entries, en)
		}
	}
	if shuffle := g.halfPrecisionChunk(); shuffle {
		for i := range w.entries {
			if grouping.IsData(string(w.entries[i].Key)) && !w.entries[i].Meta.Quantized {
				w.entries[i].Meta.Shuffle = true
			}
		}
	}
	return w
}

// finishPersistLocked records the outcome err of writing w: on success the
// items unchanged since are on disk (and with free dropped from memory); on
// failure the group is dirty again. It returns the bytes written.
func (e *Engine) finishPersistLocked(ctx context.Context, w groupWrite, free bool, err error) (int64, error) {
	g, phys := w.g, w.phys
	e.forgetObjectsLocked(&w)
	if err != nil {
		e.markDirtyLocked(g)
		return 0, err
	}
	if e.dbIndexLocked(g.ks) < 0 {
		// The database was flushed while the group was being written: what
		// was just written must not outlive the flush.
		for _, en := range w.entries {
			e.deleteColdLocked(ctx, phys, string(en.Key))
		}
		return w.size, nil
	}
	written := 0 // w.entries holds the written items' records, in order
	for _, p := range w.todo {
		it := p.it
		var footprint disktier.Footprint
		if p.written {
			footprint = w.entries[written].Written
			written++
		}
		switch cur := g.ks.items[it.key]; {
		case cur == it && it.version == p.version:
			if p.written {
				it.disk = footprint
			}
			it.onDisk = true
			it.diskOld = false
			if free {
				e.dropResidentLocked(it)
			}
		case !p.written:
		case cur == it:
			// Changed while being written: the record just made is an
			// older version, kept until the next write-back replaces it.
			it.diskOld = it.diskOld || !it.onDisk
			if it.diskOld {
				it.disk = footprint
			}
		case cur == nil:
			// Deleted while being written: the record must go.
			e.deleteColdLocked(ctx, phys, it.key)
		case !cur.onDisk:
			// Deleted and set again: the record is an older version of
			// the new key's value.
			cur.diskOld = true
			cur.disk = footprint
		}
	}
	return w.size, nil
}

// putGroupEvicting writes a group to disk, evicting the coldest disk-only
// groups while the disk tier is full. It runs without the lock.
func (e *Engine) putGroupEvicting(ctx context.Context, phys int, entries []disktier.Entry) error {
	var need int64
	for _, en := range entries {
		need += int64(len(en.Key) + len(en.Value))
	}
	waited := time.Duration(0)
	for {
		err := e.cold.PutGroup(ctx, phys, entries)
		if !errors.Is(err, disktier.ErrDiskFull) {
			return err
		}
		if errors.Is(err, disktier.ErrReclaiming) && waited < diskReclaimWait {
			// The space of deleted records (dead value-log segments
			// among them) is coming back: evicting more would only add
			// to it.
			if err := pause(ctx, 100*time.Millisecond); err != nil {
				return err
			}
			waited += 100 * time.Millisecond
			continue
		}
		e.mu.Lock()
		now := e.opts.Now().UnixMilli()
		victim := e.victimLocked(&e.diskLRU, now, true, func(g *group) bool { return g.protected(now) })
		freed := false
		if victim != nil {
			e.evictGroupLocked(ctx, victim)
			e.diskEvict.Add(1)
			freed = true
		} else {
			// Groups read back into memory keep their disk copies; drop
			// the copy of the coldest unprotected one (its values stay in
			// memory and are written again when it is demoted).
			freed = e.dropColdCopyLocked(ctx, now, phys, entries)
		}
		e.publishLocked()
		e.mu.Unlock()
		if freed {
			continue
		}
		if e.cold.DiskUsage()+need <= e.cold.MaxDisk() && waited < diskReclaimWait {
			// The live data fits: the store is still reclaiming the space
			// of deleted records. Wait for it rather than fail writes.
			if err := pause(ctx, 100*time.Millisecond); err != nil {
				return err
			}
			waited += 100 * time.Millisecond
			continue
		}
		// Everything on disk is pinned or leased: writes must fail with
		// OOM rather than wait for the demoter.
		e.mu.Lock()
		e.blockedAt = e.attempts
		e.memCond.Broadcast()
		e.mu.Unlock()
		return err
	}
}

// pause waits d unless ctx ends first.
func pause(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// dropColdCopyLocked deletes the disk copies of the least recently used
// unprotected group in memory that has any, other than the group being
// written, and reports whether it found one.
func (e *Engine) dropColdCopyLocked(ctx context.Context, now int64, phys int, writing []disktier.Entry) bool {
	skip := ""
	if len(writing) > 0 {
		skip = groupName(string(writing[0].Key))
	}
	for g := e.memLRU.tail; g != nil; g = g.prev {
		if g.protected(now) || g.demoting || (g.ks.phys == phys && g.name == skip) {
			continue
		}
		found := false
		for _, it := range g.items {
			if it.hasRecord() && it.resident {
				e.deleteColdLocked(ctx, g.ks.phys, it.key)
				it.onDisk, it.diskOld = false, false
				found = true
			}
		}
		if found {
			e.markDirtyLocked(g)
			return true
		}
	}
	return false
}

// diskReclaimWait bounds how long a demotion waits for the disk tier to
// reclaim deleted space before reporting the disk full.
const diskReclaimWait = 20 * time.Second

// loadLocked brings a non-resident item's value from disk, under the lock
// (the slow path: Preload does this without the lock before a command).
// It reports false, after removing the key, when the disk no longer has a
// good copy.
func (e *Engine) loadLocked(ctx context.Context, it *item, promote bool) ([]byte, bool) {
	// The step found the key alive: the record's expiry (which may be
	// past by now, or older than the key's) is not judged again.
	value, meta, err := e.cold.GetAlive(ctx, it.keyspace().phys, []byte(it.key))
	if err == nil {
		it.quantized = meta.Quantized
		it.disk = meta.Footprint()
	}
	if err != nil {
		if !lostOnDisk(err) {
			e.opts.Logger.Error("read from disk tier", "key", it.key, "err", err)
		}
		// A damaged key of a chunk takes the chunk with it (damage.go).
		e.dropLostLocked(ctx, it)
		return nil, false
	}
	if !e.verifyPartnersLocked(ctx, it, promote) {
		return nil, false
	}
	e.diskHits.Add(1)
	if promote {
		if !e.promoteLocked(ctx, it, value) {
			return nil, false
		}
	}
	return value, true
}

// Preload reads from disk (and decodes, for objects), without holding the
// engine lock, the values of keys that are only on disk, and promotes
// them, so that the command that follows finds them in memory. It is an optimisation: a command still
// loads under the lock what is missing.
func (e *Engine) Preload(ctx context.Context, db int, keys [][]byte) {
	if e.opts.KVQuant != codec.Off || e.quantized.Load() > 0 {
		defer e.predecode(db, keys)
	}
	if e.cold == nil || e.diskOnlyPub.Load() == 0 {
		return
	}
	// keys grows by the partners of the given keys (never of partners); the
	// three-index slice keeps appends out of the caller's array.
	keys, given := keys[:len(keys):len(keys)], len(keys)
	for i := 0; i < len(keys); i++ {
		key := keys[i]
		e.mu.Lock()
		ks := e.dbs[db]
		it := ks.items[string(key)]
		expired := it != nil && it.expireAt != 0 && it.expireAt <= e.opts.Now().UnixMilli()
		if it == nil || it.resident || !it.hasRecord() || expired {
			// An expired key is left to the command, which expires it.
			e.mu.Unlock()
			continue
		}
		// The other keys of a chunk are read too: a damaged one drops the
		// chunk before the command sees any of it (damage.go).
		if i < given {
			for _, k := range chunkPartners(it) {
				keys = append(keys, []byte(k))
			}
		}
		version, phys, kind := it.version, ks.phys, it.kind
		e.mu.Unlock()
		// The key is alive by the engine's expiry, which is the one that
		// counts: its record's may be past by now, or older (syncExpiry).
		value, meta, err := e.cold.GetAlive(ctx, phys, key)
		// An object is decoded here too: a large one takes as long as
		// it took to encode (seconds for millions of members).
		var obj datatype.Object
		var decodeErr error
		if err == nil && kind != datatype.KindString {
			obj, decodeErr = datatype.Decode(kind, value)
		}
		e.mu.Lock()
		if lostOnDisk(err) && ks.items[string(key)] == it && it.version == version && !it.resident {
			e.dropLostLocked(ctx, it)
			e.publishLocked()
		}
		if err == nil && ks.items[string(key)] == it && it.version == version && !it.resident {
			it.quantized = meta.Quantized
			var promoted bool
			if kind == datatype.KindString {
				promoted = e.promoteLocked(ctx, it, value)
			} else {
				promoted = e.promotedLocked(it, e.residentObjectLocked(ctx, it, obj, decodeErr))
			}
			if promoted {
				e.diskHits.Add(1)
			}
			e.makeRoomLocked(it)
			e.publishLocked()
		}
		e.mu.Unlock()
	}
}

// rebuild fills the index from the cold tier's records (at start).
func (e *Engine) rebuild(ctx context.Context) error {
	start := time.Now()
	physToLogical := make(map[int]*keyspace, len(e.dbs))
	for _, ks := range e.dbs {
		physToLogical[ks.phys] = ks
	}
	for db, n := range e.cold.Stats().KeysByDB {
		if ks := physToLogical[db]; ks != nil && len(ks.items) == 0 {
			ks.items = make(map[string]*item, n)
			ks.groups = make(map[string]*group, n)
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.bulkLoading = true
	n := 0
	var metas []*item
	err := e.cold.Iterate(ctx, func(db int, key []byte, meta disktier.RecordMeta, size int64) error {
		ks := physToLogical[db]
		if ks == nil {
			return nil // the meta database, or more databases than configured now
		}
		it := &item{key: string(key), length: meta.Size, expireAt: meta.ExpireAt, onDisk: true,
			disk: meta.Footprint(), quantized: meta.Quantized, kind: datatype.Kind(meta.Kind)}
		newFreq(it, e.opts.Now().UnixMilli())
		if old := ks.items[it.key]; old != nil {
			return nil
		}
		e.insertLocked(ks, it)
		if isMetadataKey(it.key) && meta.Size <= 4096 && it.kind == datatype.KindString {
			metas = append(metas, it)
		}
		n++
		return nil
	})
	e.bulkLoading = false
	if err != nil {
		return fmt.Errorf("rebuild index from disk tier: %w", err)
	}
	for _, ks := range e.dbs {
		sorted := make([]*item, 0, len(ks.items))
		for _, it := range ks.items {
			sorted = append(sorted, it)
		}
		slices.SortFunc(sorted, func(a, b *item) int {
			switch {
			case itemLess(a, b):
				return -1
			case itemLess(b, a):
				return 1
			}
			return 0
		})
		for _, it := range sorted {
			ks.order.Load(it)
		}
	}
	for _, it := range metas {
		ks := it.keyspace()
		if ks.items[it.key] != it {
			continue // dropped with a damaged partner
		}
		// Small: the disk tier keeps such values inline with the header.
		v, _, err := e.cold.GetAlive(ctx, ks.phys, []byte(it.key))
		if lostOnDisk(err) {
			e.dropLostLocked(ctx, it)
			continue
		}
		if err == nil {
			e.noteChunkLocked(it, v)
			// A quantized data value is stored shorter than the client's
			// value: its length is the one the metadata states.
			for _, m := range it.grp.items {
				if m.quantized && it.chunk != nil {
					m.length = it.chunk.bytes
				}
			}
		}
	}
	_, _, cerr := e.cold.Get(ctx, metaDB, cleanKey)
	clean := cerr == nil
	if clean {
		if _, err := e.cold.Delete(ctx, metaDB, cleanKey); err != nil {
			return fmt.Errorf("clear clean-shutdown marker: %w", err)
		}
		e.coldUnflushed = true
	}
	dropped := 0
	if !clean {
		// After a crash, a chunk may have reached the disk without its
		// partner key; a client must never see half a chunk.
		for _, ks := range e.dbs {
			for _, g := range ks.groups {
				if g.incompletePair() {
					e.dropGroupLocked(ctx, g)
					dropped++
				}
			}
		}
	}
	if e.cold.Stats().Corrupt > 0 {
		// Records found damaged at open (a value-log segment missing or
		// truncated) or just now were dropped: their chunks go whole,
		// whether the last stop was clean or not.
		dropped += e.dropHalfChunksLocked(ctx)
	}
	e.publishLocked()
	e.opts.Logger.Info("index rebuilt from disk tier", "keys", n, "clean_shutdown", clean,
		"incomplete_chunks_dropped", dropped, "elapsed", time.Since(start).String())
	return nil
}

// SaveMeta keeps v under name in the disk tier's own database, for the
// server's state that must outlive a restart beside the keys (the function
// libraries), as durably as the keys' values: written now, it survives a
// crash once the demoter's next flush (within a second) has run. Without a
// disk tier it does nothing. It holds no engine lock while it writes: the
// caller serializes its saves of one name.
func (e *Engine) SaveMeta(ctx context.Context, name string, v []byte) error {
	if e.cold == nil {
		return nil
	}
	if err := e.cold.Put(ctx, metaDB, serverMetaKey(name), v, disktier.RecordMeta{}); err != nil {
		return fmt.Errorf("save %s: %w", name, err)
	}
	e.mu.Lock()
	e.coldUnflushed = true // flushed within a second, as the keys' writes are
	e.mu.Unlock()
	return nil
}

// LoadMeta returns what SaveMeta kept under name: nil without a disk tier
// or when nothing was kept.
func (e *Engine) LoadMeta(ctx context.Context, name string) ([]byte, error) {
	if e.cold == nil {
		return nil, nil
	}
	v, _, err := e.cold.Get(ctx, metaDB, serverMetaKey(name))
	if errors.Is(err, disktier.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	return v, nil
}

// serverMetaKey is the meta database's key of the server's state name,
// apart from the engine's own keys (dbMapKey, cleanKey).
func serverMetaKey(name string) []byte { return []byte("server:" + name) }

func (e *Engine) loadDBMap(ctx context.Context) error {
	v, _, err := e.cold.Get(ctx, metaDB, dbMapKey)
	if errors.Is(err, disktier.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read database map: %w", err)
	}
	for i := 0; i < len(e.dbs) && (i+1)*4 <= len(v); i++ {
		phys := int(binary.LittleEndian.Uint32(v[i*4:]))
		e.dbs[i].phys = phys
	}
	return nil
}

func (e *Engine) saveDBMapLocked(ctx context.Context) error {
	if e.cold == nil {
		return nil
	}
	v := make([]byte, 4*len(e.dbs))
	for i, ks := range e.dbs {
		binary.LittleEndian.PutUint32(v[i*4:], uint32(ks.phys))
	}
	if err := e.cold.Put(ctx, metaDB, dbMapKey, v, disktier.RecordMeta{}); err != nil {
		return fmt.Errorf("save database map: %w", err)
	}
	return nil
}

// Close stops background work (Run too, if it is still running) and, with a
// cold tier, writes every resident value and expiry the disk does not hold
// yet and flushes it, so that a restart has everything. Only when all of it
// is on disk does it write the clean-shutdown marker that spares the next
// start the crash checks. The caller closes the cold tier afterwards.
func (e *Engine) Close(ctx context.Context) error {
	e.mu.Lock()
	e.closing = true
	e.memCond.Broadcast()
	stop, done := e.runStop, e.runDone
	e.mu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
	if e.cold == nil {
		return nil
	}
	// A client may still write while Close runs: the marker must not
	// claim a write it was not preceded by. Close writes everything, then
	// the marker, and takes the marker back when any write came in
	// meanwhile, trying again a few times.
	for attempt := 1; ; attempt++ {
		e.mu.Lock()
		errs := e.persistAllLocked(ctx)
		gen := e.writeGen
		e.mu.Unlock()
		if len(errs) > 0 {
			return errors.Join(append(errs, e.cold.Flush(ctx))...)
		}
		if err := e.cold.Put(ctx, metaDB, cleanKey, []byte{1}, disktier.RecordMeta{}); err != nil {
			return errors.Join(err, e.cold.Flush(ctx))
		}
		if err := e.cold.Flush(ctx); err != nil {
			return err
		}
		e.mu.Lock()
		quiet := e.writeGen == gen && e.writing == 0 && len(e.flushing) == 0
		e.mu.Unlock()
		if quiet {
			return nil
		}
		if _, err := e.cold.Delete(ctx, metaDB, cleanKey); err != nil {
			return fmt.Errorf("take back the clean-shutdown marker after a write during Close: %w", err)
		}
		if err := e.cold.Flush(ctx); err != nil {
			return err
		}
		if attempt == closeAttempts {
			return errors.New("writes went on while closing: no clean-shutdown marker (the next start checks the disk tier as after a crash)")
		}
	}
}

// closeAttempts is how many times Close writes everything and the marker
// while writes keep coming before it gives up on the marker.
const closeAttempts = 3

// persistAllLocked writes every group whose disk copy lacks its current
// values or expiries, and reports what it could not write, or a key that
// is still not on disk.
func (e *Engine) persistAllLocked(ctx context.Context) []error {
	// Writes started before (expiry rewrites from clients, a demotion)
	// finish first: a group being written would otherwise be written
	// twice at once, or skipped.
	for e.writing > 0 {
		e.idle.Wait()
	}
	var errs []error
	var groups []*group
	for g := e.memLRU.head; g != nil; g = g.next {
		groups = append(groups, g)
	}
	for _, g := range groups {
		if _, err := e.demoteLocked(ctx, g); err != nil {
			errs = append(errs, fmt.Errorf("write group %q: %w", g.name, err))
		}
		if err := e.syncGroupExpiriesLocked(ctx, g); err != nil {
			errs = append(errs, fmt.Errorf("rewrite expiries of group %q: %w", g.name, err))
		}
	}
	// Disk-only groups whose expiries changed are on no memory list.
	groups = groups[:0]
	for g := range e.dirty {
		groups = append(groups, g)
	}
	for _, g := range groups {
		if err := e.syncGroupExpiriesLocked(ctx, g); err != nil {
			errs = append(errs, fmt.Errorf("rewrite expiries of group %q: %w", g.name, err))
		}
	}
	if len(errs) == 0 {
		if key := e.unwrittenLocked(); key != "" {
			errs = append(errs, fmt.Errorf("key %q is not on disk", key))
		}
	}
	return errs
}

// unwrittenLocked returns a key whose current value or expiry the disk
// lacks, or "" when the disk holds them all.
func (e *Engine) unwrittenLocked() string {
	for _, ks := range e.dbs {
		for _, it := range ks.items {
			if !it.onDisk {
				return it.key
			}
		}
	}
	return ""
}
