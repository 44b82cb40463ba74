package engine

import (
	"context"
	"errors"
	"hash/maphash"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// ErrOOM is returned when memory is above the bound and nothing can be
// evicted to make room.
var ErrOOM = errors.New("OOM command not allowed when used memory > 'maxmemory'.")

// Options configures an Engine. The zero value gives 16 databases, no
// memory bound, the wall clock and the default logger.
type Options struct {
	// Databases is the number of numbered databases (default 16).
	Databases int
	// MaxMemory bounds the accounted memory of all keys in bytes; 0 means
	// unbounded.
	MaxMemory int64
	// Now returns the current time; tests replace it.
	Now func() time.Time
	// Logger receives the engine's logs.
	Logger *slog.Logger
	// OnEvict, if set, is called (with the engine lock held) for each key
	// evicted to respect MaxMemory, before it is dropped. It is the hook a
	// lower storage tier uses.
	OnEvict func(db int, key string, value []byte, expireAt int64)
}

// Stats is a point-in-time copy of the engine's counters.
type Stats struct {
	Keys        int64
	Expires     int64
	UsedMemory  int64
	MaxMemory   int64
	Hits        int64
	Misses      int64
	ExpiredKeys int64
	EvictedKeys int64
}

// Engine is the in-memory keyspace. It is safe for concurrent use.
type Engine struct {
	mu      sync.Mutex
	dbs     []*keyspace
	lru     lruList
	used    int64
	seed    maphash.Seed
	opts    Options
	maxMem  atomic.Int64
	hits    atomic.Int64
	misses  atomic.Int64
	expired atomic.Int64
	evicted atomic.Int64
	keys    atomic.Int64
	nexp    atomic.Int64
	usedPub atomic.Int64
}

// New returns an Engine configured by opts.
func New(opts Options) *Engine {
	if opts.Databases <= 0 {
		opts.Databases = 16
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	e := &Engine{opts: opts, seed: maphash.MakeSeed()}
	e.dbs = make([]*keyspace, opts.Databases)
	for i := range e.dbs {
		e.dbs[i] = newKeyspace()
	}
	e.maxMem.Store(opts.MaxMemory)
	return e
}

// Databases is the number of databases.
func (e *Engine) Databases() int { return len(e.dbs) }

// MaxMemory is the current memory bound (0 = none).
func (e *Engine) MaxMemory() int64 { return e.maxMem.Load() }

// SetMaxMemory changes the memory bound and evicts down to it.
func (e *Engine) SetMaxMemory(n int64) {
	e.maxMem.Store(n)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.evictLocked(nil)
	e.publishLocked()
}

// Stats returns the current counters.
func (e *Engine) Stats() Stats {
	return Stats{
		Keys:        e.keys.Load(),
		Expires:     e.nexp.Load(),
		UsedMemory:  e.usedPub.Load(),
		MaxMemory:   e.maxMem.Load(),
		Hits:        e.hits.Load(),
		Misses:      e.misses.Load(),
		ExpiredKeys: e.expired.Load(),
		EvictedKeys: e.evicted.Load(),
	}
}

// ResetStats zeroes the hit, miss, expiry and eviction counters
// (CONFIG RESETSTAT).
func (e *Engine) ResetStats() {
	e.hits.Store(0)
	e.misses.Store(0)
	e.expired.Store(0)
	e.evicted.Store(0)
}

// DBStats is the key and expiry count of one database.
type DBStats struct {
	Keys, Expires int
}

// DBStats returns per-database counts, indexed by database number.
func (e *Engine) DBStats() []DBStats {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]DBStats, len(e.dbs))
	for i, ks := range e.dbs {
		out[i] = DBStats{Keys: len(ks.items), Expires: len(ks.expires)}
	}
	return out
}

// Update runs fn as one atomic step against database db, then evicts if the
// memory bound is exceeded.
func (e *Engine) Update(db int, fn func(tx *Tx)) {
	e.mu.Lock()
	defer e.mu.Unlock()
	tx := Tx{e: e, db: db, ks: e.dbs[db], now: e.opts.Now().UnixMilli()}
	fn(&tx)
	e.evictLocked(tx.protect)
	e.publishLocked()
}

// View runs fn as one atomic read step against database db. Reads still
// update LRU order and may lazily delete expired keys.
func (e *Engine) View(db int, fn func(tx *Tx)) {
	e.mu.Lock()
	defer e.mu.Unlock()
	tx := Tx{e: e, db: db, ks: e.dbs[db], now: e.opts.Now().UnixMilli()}
	fn(&tx)
	e.publishLocked()
}

// Reserve makes room before a command that may grow memory: it evicts down
// to the bound and returns ErrOOM when the bound is still exceeded.
func (e *Engine) Reserve() error {
	max := e.maxMem.Load()
	if max <= 0 {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.evictLocked(nil)
	e.publishLocked()
	if e.used > max {
		return ErrOOM
	}
	return nil
}

// SwapDB swaps two databases atomically.
func (e *Engine) SwapDB(a, b int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.dbs[a], e.dbs[b] = e.dbs[b], e.dbs[a]
}

// FlushAll deletes every key of every database.
func (e *Engine) FlushAll() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for i := range e.dbs {
		e.flushLocked(i)
	}
	e.publishLocked()
}

func (e *Engine) flushLocked(db int) {
	ks := e.dbs[db]
	for _, it := range ks.items {
		e.lru.remove(it)
		e.used -= it.size()
	}
	e.dbs[db] = newKeyspace()
}

// publishLocked copies the counters read without the lock.
func (e *Engine) publishLocked() {
	var keys, exp int64
	for _, ks := range e.dbs {
		keys += int64(len(ks.items))
		exp += int64(len(ks.expires))
	}
	e.keys.Store(keys)
	e.nexp.Store(exp)
	e.usedPub.Store(e.used)
}

// evictLocked drops least recently used keys until memory is within the
// bound, never the key protect (the one just written) unless it is alone.
func (e *Engine) evictLocked(protect *item) {
	max := e.maxMem.Load()
	if max <= 0 {
		return
	}
	for e.used > max {
		victim := e.lru.tail
		if victim == protect && victim != nil {
			victim = victim.prev
		}
		if victim == nil {
			return
		}
		if e.opts.OnEvict != nil {
			e.opts.OnEvict(e.dbIndexLocked(victim.ks), victim.key, victim.value, victim.expireAt)
		}
		e.removeLocked(victim)
		e.evicted.Add(1)
	}
}

func (e *Engine) dbIndexLocked(ks *keyspace) int {
	for i, k := range e.dbs {
		if k == ks {
			return i
		}
	}
	return -1
}

// insertLocked adds a new item to ks.
func (e *Engine) insertLocked(ks *keyspace, it *item) {
	it.ks = ks
	it.hash = hashKey(e.seed, it.key)
	ks.items[it.key] = it
	ks.order.Set(it)
	if it.expireAt != 0 {
		ks.expires[it] = struct{}{}
	}
	e.lru.pushFront(it)
	e.used += it.size()
}

// removeLocked deletes an item from its keyspace.
func (e *Engine) removeLocked(it *item) {
	ks := it.ks
	delete(ks.items, it.key)
	delete(ks.expires, it)
	ks.order.Delete(it)
	e.lru.remove(it)
	e.used -= it.size()
}

// Run expires keys in the background until ctx is cancelled, sampling like
// Redis's active expire cycle: every 100 ms, 20 keys with a TTL per
// database, repeated while more than a quarter of a sample had expired.
func (e *Engine) Run(ctx context.Context) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			e.activeExpireCycle(25 * time.Millisecond)
		}
	}
}

func (e *Engine) activeExpireCycle(budget time.Duration) {
	deadline := time.Now().Add(budget)
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.opts.Now().UnixMilli()
	for _, ks := range e.dbs {
		for {
			sampled, expired := 0, 0
			for it := range ks.expires {
				if sampled == 20 {
					break
				}
				sampled++
				if it.expireAt <= now {
					e.removeLocked(it)
					e.expired.Add(1)
					expired++
				}
			}
			if sampled == 0 || expired*4 <= sampled || time.Now().After(deadline) {
				break
			}
		}
	}
	e.publishLocked()
}
