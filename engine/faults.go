package engine

import (
	"context"
	"errors"

	"github.com/kvserver/kvserver/disktier"
)

// What the engine does when the disk stops taking writes (full file system,
// read-only mount, I/O errors). The disk tier then fails writes fast with
// disktier.ErrUnavailable and retries now and then by itself (disktier/health.go);
// the engine keeps the memory tier serving:
//
//   - The demoter cannot move groups to disk, so it sheds them instead: a
//     group whose values all have a disk copy (written behind earlier) just
//     drops them from memory, as a demotion would; any other group is
//     evicted whole, coldest unprotected first, the way Redis's allkeys-lru
//     makes room. Writes keep succeeding; reads of what is on disk go on.
//   - A disk record that must go (its key was deleted, overwritten or
//     evicted) but cannot be deleted is remembered and deleted once the disk
//     takes writes again, before it could be read back or resurrected by a
//     restart's index rebuild. Until then it is only absent from the index.
//   - Write-behind and flushes stop logging per attempt; the disk tier logs
//     the fault once and then at most every 30 s.

// coldKey names a disk record: physical database and key.
type coldKey struct {
	phys int
	key  string
}

// maxDeferredDeletes bounds the memory deferred deletes take (about 100 MB
// of keys); past it further ones are dropped with a log line, and those
// records may come back after a restart.
const maxDeferredDeletes = 1 << 20

// deferColdDeleteLocked remembers a record to delete once the disk is back.
func (e *Engine) deferColdDeleteLocked(phys int, key string) {
	if len(e.deferredDeletes) >= maxDeferredDeletes {
		e.opts.Logger.Error("too many deletes deferred while the disk is unavailable; this record may reappear after a restart",
			"db", phys, "key", key)
		return
	}
	e.deferredDeletes[coldKey{phys, key}] = struct{}{}
	e.deferredPub.Store(int64(len(e.deferredDeletes)))
}

// applyDeferredDeletesLocked deletes the records deferred while the disk was
// unavailable, skipping any key that now has a newer record of its own (or
// one being written). It stops at the first failure.
func (e *Engine) applyDeferredDeletesLocked(ctx context.Context) {
	if len(e.deferredDeletes) == 0 || e.cold.Unavailable() {
		return
	}
	for ck := range e.deferredDeletes {
		if ctx.Err() != nil {
			return
		}
		if ks := e.keyspaceByPhysLocked(ck.phys); ks != nil {
			if it := ks.items[ck.key]; it != nil && (it.hasRecord() || it.grp.demoting) {
				delete(e.deferredDeletes, ck)
				continue
			}
		}
		_, err := e.cold.Delete(ctx, ck.phys, []byte(ck.key))
		if err != nil && !errors.Is(err, disktier.ErrNotFound) {
			break
		}
		delete(e.deferredDeletes, ck)
		// The delete is in a memtable: the next flush tick makes it
		// durable, or a crash would bring the record back.
		e.coldUnflushed = true
	}
	e.deferredPub.Store(int64(len(e.deferredDeletes)))
}

func (e *Engine) keyspaceByPhysLocked(phys int) *keyspace {
	for _, ks := range e.dbs {
		if ks.phys == phys {
			return ks
		}
	}
	return nil
}

// diskRefused reports whether a demotion failed because the disk does not
// take writes (as opposed to the disk tier being full of pinned data).
func (e *Engine) diskRefused(err error) bool {
	return errors.Is(err, disktier.ErrUnavailable) || (err != nil && e.cold.Unavailable())
}

// shedScan bounds how far from the cold end shedLocked looks for a group
// it can free without loss.
const shedScan = 256

// shedLocked frees memory without writing to disk (see the top of this
// file) and reports whether it found a group to shed. Groups whose values
// all have a disk copy go first (nothing is lost), then the victim of
// maxmemory-policy (victimLocked) is evicted whole.
func (e *Engine) shedLocked(ctx context.Context) bool {
	now := e.opts.Now().UnixMilli()
	skip := func(g *group) bool { return g.demoting || g.protected(now) }
	scanned := 0
	for g := e.memLRU.tail; g != nil && scanned < shedScan; g = g.prev {
		if skip(g) {
			continue
		}
		scanned++
		if onDiskWhole(g) {
			for _, it := range g.items {
				e.dropResidentLocked(it)
			}
			e.demotions.Add(1)
			return true
		}
	}
	// Evicting follows maxmemory-policy (none under noeviction).
	victim := e.victimLocked(&e.memLRU, now, true, skip)
	if victim == nil {
		return false
	}
	e.evictGroupLocked(ctx, victim)
	e.evicted.Add(1)
	return true
}

// onDiskWhole reports whether every resident value of g has a disk copy.
func onDiskWhole(g *group) bool {
	for _, it := range g.items {
		if it.resident && !it.onDisk {
			return false
		}
	}
	return true
}
