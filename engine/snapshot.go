package engine

import (
	"context"
	"sync/atomic"

	"github.com/kvserver/kvserver/datatype"
)

// Objects (hashes, lists, sets, sorted sets, streams) are changed in place
// by commands, so their disk encoding cannot be made from a copy taken
// under the lock without copying the whole value, which is as slow as
// encoding it (a 2-million-member sorted set took 2.4 s under the lock).
// Instead, the write-behind pass and the demoter freeze the object under
// the lock (freezeLocked, O(1)), encode it without the lock, and release
// it; a frozen object is read-only meanwhile:
//
//   - read steps (Engine.View) read it as they like: the encoder only
//     reads too, and the datatype package's reads change nothing;
//   - a write step (Engine.Update) that reaches it through Tx.objectOf,
//     the one way to an object that may be changed in place, waits for the
//     encoder first (awaitEncodedLocked). Commands wait before their step
//     instead, without the lock (AwaitEncoded, called by dispatch for write
//     commands), so the wait under the lock is only for what comes in
//     another way (EXEC, scripts, blocked clients served after a write) or
//     a freeze that started in between; it lasts at most one encoding.
//
// So the bytes written are exactly the state the key had when the write
// was prepared (version p.version), and the version check when it is
// finished (finishPersistLocked) sees any write made after the freeze:
// the group is dirty again, and a demotion keeps that value in memory.

// objectSnapshot is a frozen object: the encoders reading it without the
// lock, and done, closed when the last of them has finished.
type objectSnapshot struct {
	readers atomic.Int32
	done    chan struct{}
}

// release ends one encoder's read, without the lock.
func (s *objectSnapshot) release() {
	if s.readers.Add(-1) == 0 {
		close(s.done)
	}
}

// freezeLocked registers one more encoder of obj.
func (e *Engine) freezeLocked(obj datatype.Object) *objectSnapshot {
	for {
		s := e.snapshots[obj]
		if s == nil {
			s = &objectSnapshot{done: make(chan struct{})}
			s.readers.Store(1)
			e.snapshots[obj] = s
			e.snapshotsPub.Store(int64(len(e.snapshots)))
			return s
		}
		n := s.readers.Load()
		if n == 0 {
			// Released, not yet forgotten: done is closed for good.
			delete(e.snapshots, obj)
			continue
		}
		if s.readers.CompareAndSwap(n, n+1) {
			return s
		}
	}
}

// forgetLocked drops s, obj's snapshot, once its encoders are done.
func (e *Engine) forgetLocked(obj datatype.Object, s *objectSnapshot) {
	if e.snapshots[obj] == s && s.readers.Load() == 0 {
		delete(e.snapshots, obj)
		e.snapshotsPub.Store(int64(len(e.snapshots)))
	}
}

// awaitEncodedLocked returns once no encoder reads obj, so that the caller
// may change it. It waits holding the lock, which the encoders never take
// before releasing.
func (e *Engine) awaitEncodedLocked(obj datatype.Object) {
	s := e.snapshots[obj]
	if s == nil {
		return
	}
	e.snapshotWaits.Add(1)
	<-s.done
	delete(e.snapshots, obj)
	e.snapshotsPub.Store(int64(len(e.snapshots)))
}

// AwaitEncoded waits, without the lock, until no encoder reads the values
// of keys in database db, or ctx ends. A write command calls it before its
// step so that it does not wait for the encoder holding the lock, where
// every other client would wait with it. beforeWait, if set, runs first
// when there is anything to wait for (the connection leaves the event loop
// it shares with other clients).
func (e *Engine) AwaitEncoded(ctx context.Context, db int, keys [][]byte, beforeWait func()) {
	if e.snapshotsPub.Load() == 0 {
		// Without the lock: a freeze that comes after this load could
		// as well have come after the check under the lock.
		return
	}
	var waits []chan struct{}
	e.mu.Lock()
	ks := e.dbs[db]
	for _, key := range keys {
		if it := ks.items[string(key)]; it != nil && it.obj != nil {
			if s := e.snapshots[it.obj]; s != nil {
				waits = append(waits, s.done)
			}
		}
	}
	e.mu.Unlock()
	if len(waits) > 0 && beforeWait != nil {
		beforeWait()
	}
	for _, done := range waits {
		select {
		case <-done:
		case <-ctx.Done():
			return
		}
	}
}

// pendingObject is an entry of a groupWrite whose value is an object,
// frozen until encodeObjects has encoded it.
type pendingObject struct {
	entry int
	obj   datatype.Object
	snap  *objectSnapshot
	// estimate is what the write was counted for before the encoding.
	estimate int64
}

// encodeObjects encodes w's frozen objects into their entries and
// releases them. It runs without the lock.
func encodeObjects(w *groupWrite) {
	for _, o := range w.objects {
		v := o.obj.AppendBinary(nil)
		o.snap.release()
		w.entries[o.entry].Value = v
		w.size += int64(len(v)) - o.estimate
	}
}

// forgetObjectsLocked forgets w's snapshots once the write is over.
func (e *Engine) forgetObjectsLocked(w *groupWrite) {
	for _, o := range w.objects {
		e.forgetLocked(o.obj, o.snap)
	}
}
