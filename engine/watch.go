package engine

import "github.com/kvserver/kvserver/datatype"

// Watches: what WATCH needs of the keyspace, after Redis's watched_keys. A
// watched key has a watchState while at least one mark holds it; every
// change to the key (a write, an expiry change, a deletion, a flush or a
// swap that touches it) bumps its counters, so a mark taken at WATCH time
// tells at EXEC time whether the key changed since, by any client. Keys no
// one watches cost one map lookup per change, and nothing while no key is
// watched at all.

// watchKey names a watched key: its logical database (SWAPDB moves the
// data, not the watches, as in Redis) and its name.
type watchKey struct {
	db  int
	key string
}

// watchState counts the changes to one watched key.
type watchState struct {
	// refs is the number of marks that hold the key.
	refs int
	// mods counts the changes.
	mods uint64
	// expiredDels counts deletions of the key after its expiry: no
	// change for a mark taken when the key had already expired, a change
	// for any other.
	expiredDels uint64
}

// WatchMark is what WATCH remembers of one key: where its change counters
// stood. It holds the key's watch until Engine.Unwatch releases it.
type WatchMark struct {
	k           watchKey
	mods        uint64
	expiredDels uint64
	// expired: the key existed but had expired when it was watched.
	expired bool
}

// Watch starts watching key in the transaction's database and returns the
// mark to check it with (Engine.WatchChanged) and release it with
// (Engine.Unwatch).
func (tx *Tx) Watch(key []byte) WatchMark {
	e := tx.e
	k := watchKey{tx.db, string(key)}
	if e.watches == nil {
		e.watches = make(map[watchKey]*watchState)
	}
	st := e.watches[k]
	if st == nil {
		st = &watchState{}
		e.watches[k] = st
	}
	st.refs++
	m := WatchMark{k: k, mods: st.mods, expiredDels: st.expiredDels}
	if it := tx.ks.items[k.key]; it != nil && it.expireAt != 0 && it.expireAt <= tx.now {
		m.expired = true
	}
	return m
}

// WatchChanged reports whether any of the keys of marks changed since it
// was watched, Redis's way: written, deleted, flushed or swapped, or
// expired (unless it had already expired when it was watched).
func (e *Engine) WatchChanged(marks []WatchMark) bool {
	if len(marks) == 0 {
		return false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.opts.Now().UnixMilli()
	for _, m := range marks {
		st := e.watches[m.k]
		if st == nil || st.mods != m.mods {
			return true
		}
		if m.expired {
			continue
		}
		if st.expiredDels != m.expiredDels {
			return true
		}
		if it := e.dbs[m.k.db].items[m.k.key]; it != nil && it.expireAt != 0 && it.expireAt <= now {
			return true
		}
	}
	return false
}

// Unwatch releases the keys of marks.
func (e *Engine) Unwatch(marks []WatchMark) {
	if len(marks) == 0 {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, m := range marks {
		st := e.watches[m.k]
		if st == nil {
			continue
		}
		if st.refs--; st.refs <= 0 {
			delete(e.watches, m.k)
		}
	}
}

// touchLocked counts a change to key in logical database db when it is
// watched, and signals it to clients blocked on it (ready.go).
func (e *Engine) touchLocked(db int, key string) {
	e.signalReadyLocked(db, key)
	if e.events != nil {
		e.events.KeyChanged(db, key, e.stepOrigin, false)
	}
	if len(e.watches) == 0 {
		return
	}
	if st := e.watches[watchKey{db, key}]; st != nil {
		st.mods++
	}
}

// touchItemLocked counts a change to it, whose database the caller does not
// know; deleting says the change is its deletion.
func (e *Engine) touchItemLocked(it *item, deleting bool) {
	if deleting && it.kind == datatype.KindStream && len(e.waited) > 0 {
		// Redis's signalDeletedKeyAsReady: XREADGROUP blocked on a
		// deleted stream is answered with an error.
		if db := e.dbIndexLocked(it.keyspace()); db >= 0 {
			e.signalReadyLocked(db, it.key)
		}
	}
	if e.events == nil && len(e.watches) == 0 {
		return
	}
	db := e.dbIndexLocked(it.keyspace())
	if db < 0 {
		return
	}
	if e.events != nil {
		e.events.KeyChanged(db, it.key, e.stepOrigin, e.expiring)
	}
	if len(e.watches) == 0 {
		return
	}
	st := e.watches[watchKey{db, it.key}]
	if st == nil {
		return
	}
	if deleting && it.expireAt != 0 && it.expireAt <= e.opts.Now().UnixMilli() {
		st.expiredDels++
		return
	}
	st.mods++
}

// touchKeyspaceLocked counts a flush or a swap of database db, whose
// contents were old and are now cur: a watched key changes when it existed
// in either (Redis's touchAllWatchedKeysInDb).
func (e *Engine) touchKeyspaceLocked(db int, old, cur *keyspace) {
	if len(e.watches) == 0 {
		return
	}
	for k, st := range e.watches {
		if k.db != db {
			continue
		}
		_, inOld := old.items[k.key]
		_, inCur := cur.items[k.key]
		if inOld || inCur {
			st.mods++
		}
	}
}
