package engine

import (
	"context"

	"github.com/kvserver/kvserver/grouping"
	"github.com/kvserver/kvserver/notify"
)

// Events receives what happens to keys and to LMCache chunks, in the
// order it happens, with the engine lock held (Engine.SetEvents). Like
// groupcache's OnEvicted it is a callback, not a queue: an implementation
// must return quickly, never block, and never call back into the engine.
// Package server publishes these as keyspace notifications and KV-cache
// events.
type Events interface {
	// KeyEvent is one keyspace notification (Redis's
	// notifyKeyspaceEvent): a command's own (Tx.Notify) or the engine's,
	// "new" when a key is created, "expired", and "evicted" when a key
	// leaves the server for lack of room. origin is Tx.SetOrigin's value
	// for the step that caused it, nil for background work.
	KeyEvent(db int, class notify.Class, event, key string, origin any)
	// Notifies reports whether a KeyEvent of class would be published:
	// Tx.Notify asks first, so that a command's key is not copied into a
	// string for every write while notifications are off (Redis's
	// default).
	Notifies(class notify.Class) bool
	// ChunkEvent reports a chunk that became whole or stopped being
	// stored, or moved between the tiers.
	ChunkEvent(db int, ev ChunkEvent)
	// KeyChanged reports a change to key in db, Redis's
	// signalModifiedKey as client-side caching sees it: a write, an
	// expiry change, a deletion, an expiry or an eviction. origin is as
	// KeyEvent's; expired says the key expired, a change Redis reports
	// as no client's even when a client's read found it.
	KeyChanged(db int, key string, origin any, expired bool)
	// Flushed reports FLUSHDB or FLUSHALL (every cached key is stale).
	Flushed()
}

// ChunkEventKind is what happened to a chunk.
type ChunkEventKind uint8

// The chunk events. A chunk is whole when both its keys (kv_bytes and
// metadata) are stored; the other events concern whole chunks only.
const (
	// ChunkWhole: the second key of the chunk was written.
	ChunkWhole ChunkEventKind = iota
	// ChunkDemoted: the chunk's last value in memory was dropped; it is
	// on disk only.
	ChunkDemoted
	// ChunkPromoted: a value of a chunk held only on disk was read back
	// into memory.
	ChunkPromoted
	// ChunkEvicted: the chunk left the server for lack of room.
	ChunkEvicted
	// ChunkDeleted: a key of the chunk was deleted or expired (or the
	// database flushed), so the chunk is no longer whole.
	ChunkDeleted
)

var chunkEventNames = [...]string{"whole", "demoted", "promoted", "evicted", "deleted"}

// String is the event's name in KV-cache event payloads.
func (k ChunkEventKind) String() string { return chunkEventNames[k] }

// ChunkEvent is one event of a chunk.
type ChunkEvent struct {
	Kind ChunkEventKind
	// Model and Hash are the chunk key's model and chunk hash fields
	// (grouping.ChunkFields; "<hash>@<layer>" in layer-wise mode).
	Model, Hash string
	// Memory reports whether the chunk has a value in memory after the
	// event (false: disk only, or gone from the disk tier for evicted and
	// deleted chunks that were only there).
	Memory bool
	// Bytes is the length of the chunk's values, both keys.
	Bytes int64
}

// SetEvents sets the receiver of key and chunk events (nil: none). Call it
// before the engine is shared.
func (e *Engine) SetEvents(ev Events) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.events = ev
}

// SetOrigin tags the events of this step with o (the connection running
// the command), so that a subscriber can tell its own.
func (tx *Tx) SetOrigin(o any) {
	tx.origin = o
	tx.e.stepOrigin = o
}

// Notify publishes a command's keyspace event for key, Redis's
// notifyKeyspaceEvent: class and event name are the command's, as in
// Redis's source.
func (tx *Tx) Notify(class notify.Class, event string, key []byte) {
	if ev := tx.e.events; ev != nil && ev.Notifies(class) {
		ev.KeyEvent(tx.db, class, event, string(key), tx.origin)
	}
}

// created publishes the events of a key just added to the keyspace:
// Redis's dbAdd "new" (before the command's own event), and the chunk it
// completes becoming whole.
func (tx *Tx) created(it *item) {
	e := tx.e
	if e.events == nil {
		return
	}
	e.events.KeyEvent(tx.db, notify.New, "new", it.key, tx.origin)
	if wholeChunk(it.grp) {
		e.chunkEventLocked(it.grp, ChunkWhole)
	}
}

// keyEventLocked publishes an engine event of it's key.
func (e *Engine) keyEventLocked(it *item, class notify.Class, event string, origin any) {
	if e.events == nil {
		return
	}
	if db := e.dbIndexLocked(it.keyspace()); db >= 0 {
		e.events.KeyEvent(db, class, event, it.key, origin)
	}
}

// wholeChunk reports whether g is an LMCache chunk with both keys stored.
func wholeChunk(g *group) bool {
	if !g.lmcache || len(g.items) < 2 {
		return false
	}
	var data, meta bool
	for _, it := range g.items {
		data = data || grouping.IsData(it.key)
		meta = meta || grouping.IsMetadata(it.key)
	}
	return data && meta
}

// chunkEventLocked publishes kind for g, which the caller found whole.
func (e *Engine) chunkEventLocked(g *group, kind ChunkEventKind) {
	if e.events == nil {
		return
	}
	db := e.dbIndexLocked(g.ks)
	model, hash, ok := grouping.ChunkFields(g.name)
	if db < 0 || !ok {
		return
	}
	var n int64
	for _, it := range g.items {
		n += it.length
	}
	e.events.ChunkEvent(db, ChunkEvent{Kind: kind, Model: model, Hash: hash, Memory: g.resident > 0, Bytes: n})
}

// expireLocked removes an expired item, Redis's
// deleteExpiredKeyAndPropagate.
func (e *Engine) expireLocked(ctx context.Context, it *item, origin any) {
	e.expiring = true
	e.removeLocked(ctx, it)
	e.expiring = false
	e.expired.Add(1)
	e.keyEventLocked(it, notify.Expired, "expired", origin)
}

// evictGroupLocked drops every key of g for lack of room: one "evicted"
// chunk event, then each key's keyspace event, as Redis's
// performEvictions.
func (e *Engine) evictGroupLocked(ctx context.Context, g *group) {
	if e.events != nil && wholeChunk(g) {
		e.chunkEventLocked(g, ChunkEvicted)
	}
	g.evicting = true
	for len(g.items) > 0 {
		it := g.items[len(g.items)-1]
		e.removeLocked(ctx, it)
		e.keyEventLocked(it, notify.Evicted, "evicted", nil)
	}
}

// promoteLocked puts a value read from disk in memory (makeResidentLocked)
// and counts the promotion; the first value of a whole chunk back in
// memory is its promotion event. False when the value could not be
// decoded (the key is gone).
func (e *Engine) promoteLocked(ctx context.Context, it *item, value []byte) bool {
	return e.promotedLocked(it, e.makeResidentLocked(ctx, it, value))
}

// promotedLocked counts and announces the promotion of it when resident
// reports that its value is in memory now, and returns resident.
func (e *Engine) promotedLocked(it *item, resident bool) bool {
	if !resident {
		return false
	}
	e.promotions.Add(1)
	if it.grp.resident == 1 && e.events != nil && wholeChunk(it.grp) {
		e.chunkEventLocked(it.grp, ChunkPromoted)
	}
	return true
}

// chunkDeletedLocked publishes the deletion of g's chunk before it loses
// a key (not for evictions, which say so themselves).
func (e *Engine) chunkDeletedLocked(g *group) {
	if e.events != nil && !g.evicting && wholeChunk(g) {
		e.chunkEventLocked(g, ChunkDeleted)
	}
}
