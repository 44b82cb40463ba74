package engine

import (
	"context"
	"math/rand/v2"

	"github.com/kvserver/kvserver/datatype"
	"github.com/kvserver/kvserver/notify"
)

// Tx is one atomic step against a database, valid only inside the function
// given to Engine.Update or Engine.View. Keys on disk look exactly like keys
// in memory; reading a value that is only on disk loads it.
type Tx struct {
	e       *Engine
	db      int
	ks      *keyspace
	now     int64
	protect *item
	noTouch bool
	// write is set in an Update step: only such a step may change an
	// object in place.
	write bool
	// post is the disk work the step leaves for after the engine lock is
	// released (shared with the transactions On returns).
	post *postWork
	// origin tags the step's events (SetOrigin).
	origin any
	// counted is the item whose access the step last counted (countAccess).
	counted *item
}

// postWork is disk work a step queues under the engine lock and Update or
// View do once it is released.
type postWork struct {
	// expiry lists disk-only items whose expiry changed: their records
	// get the new expiry (Engine.syncExpiry).
	expiry []*item
	// flush lists physical databases emptied in memory whose disk records
	// must go (Engine.flushCold).
	flush []int
}

// Entry is what a key holds.
type Entry struct {
	// Kind is the value's type. String commands answer ErrWrongType for
	// any other.
	Kind datatype.Kind
	// Value is a string's bytes. It is never modified in place and may be
	// kept after the transaction. Nil from Stat, and for other kinds.
	Value []byte
	// Object is the value of any kind but a string (nil from Stat); it
	// belongs to the key, see Tx.Object.
	Object datatype.Object
	// Len is the value's length.
	Len int64
	// ExpireAt is the expiry in unix milliseconds, 0 for none.
	ExpireAt int64
}

// Now is the transaction's clock in unix milliseconds (one value per
// command, like Redis's cached command time).
func (tx *Tx) Now() int64 { return tx.now }

// DB is the transaction's database number.
func (tx *Tx) DB() int { return tx.db }

// SetNoTouch makes reads leave the LRU order alone (CLIENT NO-TOUCH).
func (tx *Tx) SetNoTouch(on bool) { tx.noTouch = on }

// On returns a transaction on another database within the same atomic step.
func (tx *Tx) On(db int) *Tx {
	return &Tx{e: tx.e, db: db, ks: tx.e.dbs[db], now: tx.now, noTouch: tx.noTouch, write: tx.write, post: tx.post, origin: tx.origin}
}

func (tx *Tx) ctx() context.Context { return context.Background() }

// find returns the live item for key, deleting it first if it has expired.
func (tx *Tx) find(key string) *item {
	it := tx.ks.items[key]
	if it == nil {
		return nil
	}
	if it.expireAt != 0 && it.expireAt <= tx.now {
		tx.e.expireLocked(tx.ctx(), it, tx.origin)
		return nil
	}
	return it
}

// touch records an access that reads or writes the key's value: its LRU
// position and its LFU counter.
func (tx *Tx) touch(it *item) {
	if tx.noTouch {
		return
	}
	tx.countAccess(it)
	tx.touchLRU(it)
}

// countAccess counts an access to it in its LFU counter, once per step
// (Redis counts one lookup per command where kvserver's handlers may look
// a key up several times).
func (tx *Tx) countAccess(it *item) {
	if tx.noTouch || tx.counted == it {
		return
	}
	tx.counted = it
	tx.e.countAccess(it, tx.now)
}

// touchLRU moves the key's group to the front of the LRU order (see
// lruList.touch), without counting an access: EXISTS, TYPE and TTL, which
// Redis's LOOKUP_NOTOUCH keeps out of the LFU counter, still refresh a
// group's recency here (an EXISTS hit announces a GET).
func (tx *Tx) touchLRU(it *item) {
	if tx.noTouch {
		return
	}
	it.lastUsed = tx.now
	e := tx.e
	// A resident item's group is on memLRU, pushed there no earlier than
	// the item last saw (lruSeen): when that is recent enough the group's
	// memory, a likely cache miss, is not even read.
	if it.resident && e.memLRU.inFront(it.lruSeen) {
		return
	}
	if g := it.grp; g.list != nil {
		g.list.touch(g)
		if g.list == &e.memLRU {
			it.lruSeen = g.pushedAt
		}
	}
}

// value returns an item's value, loading it from disk when it is not
// resident; false means the disk copy was gone or corrupt and the key has
// been removed.
func (tx *Tx) value(it *item) ([]byte, bool) {
	if it.resident {
		it.private = false // the caller may keep it (a zero-copy reply)
		return tx.e.decodeValue(it, it.value)
	}
	stored, ok := tx.e.loadLocked(tx.ctx(), it, !tx.noTouch)
	if !ok {
		return nil, false
	}
	return tx.e.decodeValue(it, stored)
}

func entryOf(it *item, value []byte) Entry {
	return Entry{Value: value, Len: it.length, ExpireAt: it.expireAt}
}

// objectEntry is the Entry of an item that holds an object, loading it;
// false when its disk copy was lost.
func (tx *Tx) objectEntry(it *item) (Entry, bool) {
	obj := tx.objectOf(it)
	if obj == nil {
		return Entry{}, false
	}
	tx.touch(it)
	return Entry{Kind: it.kind, Object: obj, Len: it.length, ExpireAt: it.expireAt}, true
}

// Get looks a key up for reading: it counts a keyspace hit or miss,
// refreshes the key's LRU position and returns its value.
func (tx *Tx) Get(key []byte) (Entry, bool) {
	it := tx.find(string(key))
	if it == nil {
		tx.miss(key)
		return Entry{}, false
	}
	if it.resident {
		tx.e.hits.Add(1)
	}
	if it.kind != datatype.KindString {
		return tx.objectEntry(it)
	}
	v, ok := tx.value(it)
	if !ok {
		tx.miss(key)
		return Entry{}, false
	}
	tx.touch(it)
	return entryOf(it, v), true
}

// miss counts a read that found no key and publishes Redis's "keymiss"
// event (lookupKey), both where Redis's keyspace_misses counts.
func (tx *Tx) miss(key []byte) {
	tx.e.misses.Add(1)
	tx.Notify(notify.KeyMiss, "keymiss", key)
}

// Peek looks a key up for writing, value included: no hit or miss is
// counted.
func (tx *Tx) Peek(key []byte) (Entry, bool) {
	it := tx.find(string(key))
	if it == nil {
		return Entry{}, false
	}
	if it.kind != datatype.KindString {
		return tx.objectEntry(it)
	}
	v, ok := tx.value(it)
	if !ok {
		return Entry{}, false
	}
	tx.touch(it)
	return entryOf(it, v), true
}

// Stat looks a key up without its value (length and expiry only), so a key
// on disk stays there. read counts a hit or miss.
func (tx *Tx) Stat(key []byte, read bool) (Entry, bool) {
	it := tx.find(string(key))
	if it == nil {
		if read {
			tx.miss(key)
		}
		return Entry{}, false
	}
	if read {
		if it.resident {
			tx.e.hits.Add(1)
		} else {
			tx.e.diskHits.Add(1)
		}
	}
	tx.touchLRU(it)
	return Entry{Kind: it.kind, Len: it.length, ExpireAt: it.expireAt}, true
}

// Exists reports whether key exists, counting a hit or miss.
func (tx *Tx) Exists(key []byte) bool {
	_, ok := tx.Stat(key, true)
	return ok
}

// Set stores value under key with the given expiry (0 = none), replacing any
// previous value. The engine owns value from now on. The caller need not
// look the key up first: an expired key is expired (and its event
// published) as a lookup would, and an overwritten key's group moves to
// the front of the LRU order, as Redis gives an overwritten key a fresh
// object.
func (tx *Tx) Set(key []byte, value []byte, expireAt int64) {
	tx.set(key, value, false, false, expireAt)
}

// SetOwned is Set of a value whose buffer nothing else holds or will read
// once the caller's command has ended (what Session.Own returns): the
// engine may give the buffer to its value pool (bufpool) when the value is
// overwritten or deleted, unless a read has handed it out meanwhile.
func (tx *Tx) SetOwned(key []byte, value []byte, expireAt int64) {
	tx.set(key, value, false, true, expireAt)
}

// SetCopy is Set of a copy of value, which stays the caller's. The copy
// goes into the key's current value's buffer when the engine made that
// buffer itself and nothing else holds it (reuseValueLocked): the old
// value is then freed and the new one allocated without the allocator or
// the garbage collector, as Redis's allocator hands a SET the chunk the
// last one freed. Only for values of at most MaxCopiedValue bytes, which
// are copied under the engine lock.
func (tx *Tx) SetCopy(key []byte, value []byte, expireAt int64) {
	tx.set(key, value, true, false, expireAt)
}

// MaxCopiedValue bounds the values SetCopy takes: a copy under the engine
// lock costs about a microsecond per 4 KiB.
const MaxCopiedValue = 16 << 10

// set is Set, of a copy of value (SetCopy) when borrowed; owned says value
// is the engine's alone from now on (SetOwned).
func (tx *Tx) set(key []byte, value []byte, borrowed, owned bool, expireAt int64) {
	e := tx.e
	if it := tx.find(string(key)); it != nil {
		if borrowed {
			value = e.reuseValueLocked(it, value)
		}
		// The stored key rather than a string copy of key: an overwrite
		// allocates nothing.
		e.touchLocked(tx.db, it.key)
		tx.touchLRU(it)
		if it.onDisk {
			// The disk copy stays until the write-back writes the new
			// value over it: a crash meanwhile finds the older value.
			it.onDisk = false
			it.diskOld = true
		}
		it.version = e.bumpVersion()
		it.quantized = false
		it.kind = datatype.KindString
		e.setResidentLocked(it, value)
		it.private = borrowed || owned
		e.noteChunkLocked(it, value)
		e.queueQuantLocked(it.grp)
		e.markDirtyLocked(it.grp)
		tx.setExpireItem(it, expireAt)
		it.lastUsed = tx.now
		tx.countAccess(it)
		tx.protect = it
		return
	}
	k := string(key)
	e.touchLocked(tx.db, k)
	if borrowed {
		value = append([]byte(nil), value...)
	}
	it := &item{key: k, value: value, length: int64(len(value)), expireAt: expireAt,
		lastUsed: tx.now, resident: true, version: e.bumpVersion(), private: borrowed || owned}
	newFreq(it, tx.now)
	e.insertLocked(tx.ks, it)
	e.noteChunkLocked(it, value)
	e.queueQuantLocked(it.grp)
	e.markDirtyLocked(it.grp)
	tx.protect = it
	tx.created(it)
}

func (tx *Tx) setExpireItem(it *item, expireAt int64) {
	if it.expireAt != expireAt {
		it.version = tx.e.bumpVersion()
		if it.hasRecord() {
			// The disk record carries the expiry, so it becomes stale but
			// stays (its value is still right). A resident value is
			// written over it by the write-back; the record of a
			// disk-only key has its expiry rewritten once the lock is
			// released (Engine.syncExpiry), never read under it.
			it.onDisk = false
			it.diskOld = true
			if !it.resident && tx.post != nil {
				tx.post.expiry = append(tx.post.expiry, it)
			}
			tx.e.markDirtyLocked(it.grp)
		}
	}
	it.expireAt = expireAt
	if expireAt != 0 {
		tx.ks.expires[it] = struct{}{}
	} else {
		delete(tx.ks.expires, it)
	}
}

// SetExpire changes the expiry of an existing key (0 removes it). It reports
// false when the key does not exist. An expiry in the past deletes the key.
func (tx *Tx) SetExpire(key []byte, expireAt int64) bool {
	it := tx.find(string(key))
	if it == nil {
		return false
	}
	if expireAt != 0 && expireAt <= tx.now {
		tx.e.removeLocked(tx.ctx(), it)
		return true
	}
	if expireAt != 0 || it.expireAt != 0 {
		// Removing an expiry the key does not have is no change (Redis's
		// PERSIST and GETEX PERSIST do not signal it).
		tx.e.touchLocked(tx.db, it.key)
	}
	tx.setExpireItem(it, expireAt)
	return true
}

// Delete removes key and reports whether it existed.
func (tx *Tx) Delete(key []byte) bool {
	it := tx.find(string(key))
	if it == nil {
		return false
	}
	tx.e.removeLocked(tx.ctx(), it)
	return true
}

// Touch refreshes a key's LRU position and reports whether it exists.
func (tx *Tx) Touch(key []byte) bool {
	it := tx.find(string(key))
	if it == nil {
		return false
	}
	tx.touch(it)
	return true
}

// Len is the number of keys in the database, expired ones not yet
// reclaimed included (like Redis's DBSIZE).
func (tx *Tx) Len() int { return len(tx.ks.items) }

// Flush deletes every key of the database. The disk records are deleted
// after the step, without the engine lock; Engine.FlushDB reports that
// deletion's error too.
func (tx *Tx) Flush() error {
	phys := tx.e.flushLocked(tx.db)
	tx.ks = tx.e.dbs[tx.db]
	if tx.e.cold != nil {
		tx.post.flush = append(tx.post.flush, phys)
	}
	return nil
}

// Keys calls fn for every live key until fn returns false.
func (tx *Tx) Keys(fn func(key string) bool) {
	var expired []*item
	tx.ks.order.Scan(func(it *item) bool {
		if it.expireAt != 0 && it.expireAt <= tx.now {
			expired = append(expired, it)
			return true
		}
		return fn(it.key)
	})
	tx.removeExpired(expired)
}

func (tx *Tx) removeExpired(expired []*item) {
	for _, it := range expired {
		tx.e.expireLocked(tx.ctx(), it, tx.origin)
	}
}

// Scan visits keys from cursor on, at least count of them (more when keys
// share a hash), and returns the cursor to continue from; 0 means the scan
// is complete. A key present for the whole scan is visited exactly once.
func (tx *Tx) Scan(cursor uint64, count int, fn func(key string)) uint64 {
	var next uint64
	var last uint64
	visited := 0
	var expired []*item
	tx.ks.order.Ascend(&item{hash: cursor}, func(it *item) bool {
		if visited >= count && it.hash != last {
			next = it.hash
			return false
		}
		visited++
		last = it.hash
		if it.expireAt != 0 && it.expireAt <= tx.now {
			expired = append(expired, it)
			return true
		}
		fn(it.key)
		return true
	})
	tx.removeExpired(expired)
	return next
}

// RandomKey returns a random live key.
func (tx *Tx) RandomKey() (string, bool) {
	for tries := 0; tries < 100 && tx.ks.order.Len() > 0; tries++ {
		var found *item
		tx.ks.order.Ascend(&item{hash: rand.Uint64()}, func(it *item) bool {
			found = it
			return false
		})
		if found == nil {
			found, _ = tx.ks.order.Min()
		}
		if found.expireAt != 0 && found.expireAt <= tx.now {
			tx.removeExpired([]*item{found})
			continue
		}
		return found.key, true
	}
	return "", false
}

// Version identifies the key's current value: it changes with every
// change of the value and differs for a new key of the same name, so a
// later step can tell whether a value read earlier (and used without the
// lock, as MIGRATE sends it) is still the key's. false when the key does
// not exist.
func (tx *Tx) Version(key []byte) (uint64, bool) {
	it := tx.find(string(key))
	if it == nil {
		return 0, false
	}
	return it.version, true
}
