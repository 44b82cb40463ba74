package disktier

import (
	"context"
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// Reclaiming space. Pebble frees the blob file of a deleted value only once
// compactions have carried the deletion down to the table that references
// it, and its heuristics do not always get there for point deletions in a
// store whose tables are tiny next to their blob files (after a FlushDB of
// 945 MB, 505 MB were still held 15 s later). reclaimLoop samples the
// physical size every reclaimInterval and, when it exceeds the live bytes by
// more than reclaimSlack plus what it did after the last reclaim, compacts the
// whole key space. That rewrites only the small tables; blob files that lose
// all references are deleted, and half-dead ones are rewritten by Pebble's
// blob rewrite (ValueSeparationPolicy.TargetGarbageRatio).
const (
	reclaimInterval = 2 * time.Second
	reclaimMinSlack = 64 << 20
)

func reclaimSlack(live int64) int64 { return max(reclaimMinSlack, live/8) }

func (s *Store) reclaimLoop(ctx context.Context) {
	defer close(s.reclaimDone)
	t := time.NewTicker(reclaimInterval)
	defer t.Stop()
	var floor int64 // garbage left by the last reclaim: Pebble's own overhead
	for {
		forced := false
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-s.reclaimWake.C():
			forced = true
		}
		if err := s.collectSegments(ctx); err != nil && ctx.Err() == nil {
			s.log.Error("disktier: value log collection", "err", err)
		}
		phys := int64(s.db.Metrics().DiskSpaceUsage())
		s.physical.Store(phys)
		live := s.DiskUsage()
		// Reclaim when the garbage passes the slack, and also whenever the
		// physical size is past the point where Put refuses writes (with a
		// small MaxDisk the slack alone would never be reached).
		overLimit := s.maxDisk > 0 && phys > s.maxDisk+s.maxDisk/8 && phys > live+floor
		if !forced && !overLimit && phys-live <= floor+reclaimSlack(live) {
			continue
		}
		start := time.Now()
		if err := s.db.Compact(ctx, []byte{prefixHeader}, []byte{prefixValue + 1}, false); err != nil {
			if ctx.Err() == nil {
				s.log.Error("disktier: reclaim compaction", "err", err)
			}
			continue
		}
		s.reclaims.Add(1)
		after := int64(s.db.Metrics().DiskSpaceUsage())
		s.physical.Store(after)
		floor = max(0, after-s.DiskUsage())
		s.log.Debug("disktier: reclaimed disk space", "before", phys, "after", after,
			"live", live, "took", time.Since(start))
	}
}

// kickReclaim asks the reclaimer to compact now (after FlushDB/FlushAll).
func (s *Store) kickReclaim() { s.reclaimWake.Notify() }

// collectSegments deletes the value-log segments no record points to any
// more. Which segments may be written to is known, not guessed: an append
// is registered from the moment it takes its place until its record has
// committed or failed, and a segment appended to while the scan ran is left
// for the next one (valueLog.beginScan), so a slow commit can never point
// into a deleted segment. The current segment is sealed first when it is
// all garbage; the memtables are flushed before a deletion, so that no
// record on disk still points to it. A scan reads only the value keys whose
// values are pointers (16 bytes; a payload kept in Pebble is longer than
// inlineMax).
func (s *Store) collectSegments(ctx context.Context) error {
	s.vlog.beginScan()
	ids, cur := s.vlog.segments()
	live := make(map[uint32]bool)
	it, err := s.db.NewIterWithContext(ctx, &pebble.IterOptions{
		LowerBound: []byte{prefixValue}, UpperBound: []byte{prefixValue + 1}})
	if err != nil {
		return err
	}
	for valid := it.First(); valid; valid = it.Next() {
		lv := it.LazyValue()
		if lv.Len() != vlogPointerLen {
			continue
		}
		v, err := it.ValueAndErr()
		if err != nil {
			it.Close()
			return err
		}
		if p, ok := decodeVlogPointer(v); ok {
			live[p.seg] = true
		}
	}
	if err := it.Close(); err != nil {
		return err
	}
	flushed := false
	for _, id := range ids {
		if live[id] || !s.vlog.idle(id) {
			continue
		}
		if id == cur {
			// All garbage: seal it, and delete it with the others.
			sealed, err := s.vlog.sealIfIdle(cur)
			if err != nil || !sealed {
				return err
			}
		}
		if !flushed {
			// Without a write-ahead log, what a crash leaves is the state
			// of the last memtable flush, whose records may still point
			// into this segment (their deletes only in memtables): the
			// restart would find them with their values gone, half
			// chunks. Flush first, so that no surviving record can.
			if err := s.flushMemtables(ctx); err != nil {
				return fmt.Errorf("disktier: flush before removing segments: %w", err)
			}
			flushed = true
		}
		if _, err := s.vlog.removeIfIdle(id); err != nil {
			return err
		}
	}
	return nil
}
