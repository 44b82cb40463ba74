package engine

import "math/rand/v2"

// Tx is one atomic step against a database, valid only inside the function
// given to Engine.Update or Engine.View.
type Tx struct {
	e       *Engine
	db      int
	ks      *keyspace
	now     int64
	protect *item
	noTouch bool
}

// Entry is what a key holds.
type Entry struct {
	// Value is the stored bytes. It is never modified in place and may be
	// kept after the transaction.
	Value []byte
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
	return &Tx{e: tx.e, db: db, ks: tx.e.dbs[db], now: tx.now, noTouch: tx.noTouch}
}

// find returns the live item for key, deleting it first if it has expired.
func (tx *Tx) find(key string) *item {
	it := tx.ks.items[key]
	if it == nil {
		return nil
	}
	if it.expireAt != 0 && it.expireAt <= tx.now {
		tx.e.removeLocked(it)
		tx.e.expired.Add(1)
		return nil
	}
	return it
}

func (tx *Tx) touch(it *item) {
	if tx.noTouch {
		return
	}
	it.lastUsed = tx.now
	tx.e.lru.moveToFront(it)
}

// Get looks a key up for reading: it counts a keyspace hit or miss and
// refreshes the key's LRU position.
func (tx *Tx) Get(key []byte) (Entry, bool) {
	it := tx.find(string(key))
	if it == nil {
		tx.e.misses.Add(1)
		return Entry{}, false
	}
	tx.e.hits.Add(1)
	tx.touch(it)
	return Entry{Value: it.value, ExpireAt: it.expireAt}, true
}

// Peek looks a key up for writing: no hit or miss is counted.
func (tx *Tx) Peek(key []byte) (Entry, bool) {
	it := tx.find(string(key))
	if it == nil {
		return Entry{}, false
	}
	tx.touch(it)
	return Entry{Value: it.value, ExpireAt: it.expireAt}, true
}

// Exists reports whether key exists, counting a hit or miss.
func (tx *Tx) Exists(key []byte) bool {
	_, ok := tx.Get(key)
	return ok
}

// Set stores value under key with the given expiry (0 = none), replacing any
// previous value. The engine owns value from now on.
func (tx *Tx) Set(key []byte, value []byte, expireAt int64) {
	tx.setString(string(key), value, expireAt)
}

func (tx *Tx) setString(k string, value []byte, expireAt int64) {
	if it := tx.ks.items[k]; it != nil {
		tx.e.used -= it.size()
		it.value = value
		tx.e.used += it.size()
		tx.setExpireItem(it, expireAt)
		tx.e.lru.moveToFront(it)
		it.lastUsed = tx.now
		tx.protect = it
		return
	}
	it := &item{key: k, value: value, expireAt: expireAt, lastUsed: tx.now}
	tx.e.insertLocked(tx.ks, it)
	tx.protect = it
}

func (tx *Tx) setExpireItem(it *item, expireAt int64) {
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
		tx.e.removeLocked(it)
		return true
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
	tx.e.removeLocked(it)
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

// Flush deletes every key of the database.
func (tx *Tx) Flush() { tx.e.flushLocked(tx.db); tx.ks = tx.e.dbs[tx.db] }

// FlushAll deletes every key of every database.
func (tx *Tx) FlushAll() {
	for i := range tx.e.dbs {
		tx.e.flushLocked(i)
	}
	tx.ks = tx.e.dbs[tx.db]
}

// SwapDB swaps databases a and b within the step.
func (tx *Tx) SwapDB(a, b int) {
	tx.e.dbs[a], tx.e.dbs[b] = tx.e.dbs[b], tx.e.dbs[a]
	tx.ks = tx.e.dbs[tx.db]
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
	for _, it := range expired {
		tx.e.removeLocked(it)
		tx.e.expired.Add(1)
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
	for _, it := range expired {
		tx.e.removeLocked(it)
		tx.e.expired.Add(1)
	}
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
			tx.e.removeLocked(found)
			tx.e.expired.Add(1)
			continue
		}
		return found.key, true
	}
	return "", false
}
