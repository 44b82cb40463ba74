package engine

import (
	"context"
	"errors"

	"github.com/kvserver/kvserver/disktier"
	"github.com/kvserver/kvserver/grouping"
)

// A damaged disk record (disktier.ErrCorrupt, or a record the index holds that
// the disk no longer has) is a miss. When it belongs to an LMCache chunk,
// the chunk's other keys go with it, so that no client sees half a chunk:
// reading any key of a chunk held on disk verifies every key of it. Group
// rules apply to chunk keys only (grouping.IsChunk); an ordinary key whose
// name happens to end in a chunk suffix is never dropped for its
// neighbours' sake.

// isChunk reports whether g holds an LMCache chunk: a key of the chunk
// shape, or metadata that parses as LMCache's.
func (g *group) isChunk() bool {
	return grouping.IsChunk(g.name) || g.hasChunkMetadata()
}

// lostOnDisk reports whether err from the disk tier means the record is
// gone for good (damaged and deleted, or missing), as opposed to an error
// that says nothing about it (a cancelled context, a failing disk).
func lostOnDisk(err error) bool {
	return errors.Is(err, disktier.ErrCorrupt) || errors.Is(err, disktier.ErrNotFound)
}

// dropLostLocked removes an item whose disk copy is lost: the whole group
// when it is a chunk, the item alone otherwise.
func (e *Engine) dropLostLocked(ctx context.Context, it *item) {
	if g := it.grp; g != nil && g.isChunk() {
		// The disk tier has logged the record (rate-limited); this is
		// one line per chunk, hence debug.
		e.opts.Logger.Debug("dropping a chunk whose disk copy is damaged", "group", g.name, "key", it.key)
		e.dropGroupLocked(ctx, g)
		return
	}
	it.onDisk, it.diskOld = false, false // nothing to delete
	e.removeLocked(ctx, it)
}

// verifyPartnersLocked reads, after it was read from disk, the other keys
// of its chunk that are held only on disk, so that a damaged one takes the
// chunk with it before the client gets any of it. With promote they are
// promoted (a client reading one key of a chunk reads the other next). It
// reports false when the chunk was dropped.
func (e *Engine) verifyPartnersLocked(ctx context.Context, it *item, promote bool) bool {
	g := it.grp
	if g == nil || len(g.items) < 2 || !g.isChunk() {
		return true
	}
	for _, m := range append([]*item(nil), g.items...) {
		if m == it || m.resident || !m.hasRecord() {
			continue
		}
		value, meta, err := e.cold.GetAlive(ctx, m.keyspace().phys, []byte(m.key))
		if lostOnDisk(err) {
			e.dropLostLocked(ctx, m)
			return false
		}
		if err != nil {
			continue // says nothing about the record; its own read decides
		}
		if promote {
			m.quantized = meta.Quantized
			if !e.promoteLocked(ctx, m, value) {
				return false
			}
		}
	}
	return true
}

// chunkPartners returns the keys of it's chunk other than it that are held
// only on disk, for Preload to read with it.
func chunkPartners(it *item) []string {
	g := it.grp
	if g == nil || len(g.items) < 2 || !g.isChunk() {
		return nil
	}
	var out []string
	for _, m := range g.items {
		if m != it && !m.resident && m.hasRecord() {
			out = append(out, m.key)
		}
	}
	return out
}

// dropHalfChunksLocked drops, at start, every chunk that has only one of
// its two keys; it returns how many. Ordinary keys are left alone.
func (e *Engine) dropHalfChunksLocked(ctx context.Context) int {
	dropped := 0
	for _, ks := range e.dbs {
		var half []*group
		for _, g := range ks.groups {
			if g.incompletePair() && g.isChunk() {
				half = append(half, g)
			}
		}
		for _, g := range half {
			e.dropGroupLocked(ctx, g)
			dropped++
		}
	}
	return dropped
}
