package engine

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/kvserver/kvserver/bufpool"
	"github.com/kvserver/kvserver/codec"
	"github.com/kvserver/kvserver/datatype"
	"github.com/kvserver/kvserver/disktier"
	"github.com/kvserver/kvserver/grouping"
	"github.com/kvserver/kvserver/wake"
)

// ErrOOM is returned when memory is above the bound and nothing can be
// evicted or demoted to make room.
var ErrOOM = errors.New("OOM command not allowed when used memory > 'maxmemory'.")

// Options configures an Engine. The zero value gives 16 databases, no
// memory bound, no cold tier, the wall clock and the default logger.
type Options struct {
	// Databases is the number of numbered databases (default 16).
	Databases int
	// MaxMemory bounds the accounted memory of all keys in bytes; 0 means
	// unbounded.
	MaxMemory int64
	// Cold is the disk tier under memory. With it, memory pressure demotes
	// the coldest groups to disk instead of dropping them; without it they
	// are evicted.
	Cold *disktier.Store
	// HighWatermark and LowWatermark are fractions of MaxMemory: the
	// demoter starts above the high one and stops below the low one.
	// Defaults 0.90 and 0.75.
	HighWatermark, LowWatermark float64
	// BackpressureTimeout bounds how long a write waits for the demoter to
	// bring memory under MaxMemory before it gets ErrOOM (default 30 s).
	BackpressureTimeout time.Duration
	// ValuePoolBytes bounds the free buffers the engine keeps for large
	// request values (package bufpool): 0 means bufpool.DefaultMax, a
	// negative value no pool.
	ValuePoolBytes int64
	// Now returns the current time; tests replace it.
	Now func() time.Time
	// Logger receives the engine's logs.
	Logger *slog.Logger
	// KVQuant, when not codec.Off, stores fp16/bf16 KV chunks quantized
	// (lossy, opt-in); see quant.go.
	KVQuant codec.Mode
}

// TierStats are the counters of one tier.
type TierStats struct {
	Keys       int64
	Bytes      int64
	Hits       int64
	Evictions  int64
	Corrupt    int64
	Demotions  int64 // groups moved from memory to disk
	Promotions int64 // keys loaded from disk into memory
	Capacity   int64 // maximum bytes (disk: MaxDisk; memory: MaxMemory)

	// Disk tier only: Errors counts the writes and background jobs the
	// disk refused; Unavailable is set while writes fail fast after such
	// an error (the memory tier then evicts instead of demoting), since
	// UnavailableSince; LastError is the last error's message.
	Errors           int64
	Unavailable      bool
	UnavailableSince time.Time
	LastError        string
	// DeferredDeletes counts disk records waiting for the disk to take
	// writes again to be deleted.
	DeferredDeletes int64
	// Unsaved counts the groups whose newest values or expiries the disk
	// does not hold yet: dirty, waiting for the write-behind, or being
	// written. Zero means everything acknowledged so far is on disk (in the
	// page cache; see the durability promise in README.md).
	Unsaved int64
	// RecoveredFrom is where a damaged disk tier was moved at start before
	// an empty one was opened (disktier.Stats.RecoveredFrom); "" if it was not.
	RecoveredFrom string
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
	// QuantizedChunks counts chunks the quantizer has encoded.
	QuantizedChunks int64
	// IndexBytes is the memory held by the index entries of keys whose
	// value is only on disk; it is not part of UsedMemory.
	IndexBytes int64
	// LockMaxHold is the longest the engine lock was held at once since
	// start or ResetStats.
	LockMaxHold time.Duration
	Memory      TierStats
	Disk        TierStats
	HasDisk     bool
}

// Engine is the keyspace over a memory tier and an optional disk tier. It is
// safe for concurrent use.
type Engine struct {
	// pool receives the buffers of large private values the engine lets
	// go of (releaseBufferLocked); nil without one.
	pool    *bufpool.Pool
	mu      holdMutex
	memCond *sync.Cond // signalled when memory use drops
	dbs     []*keyspace
	memLRU  lruList // groups with at least one resident value
	diskLRU lruList // groups held only on disk
	used    int64
	seed    maphash.Seed
	opts    Options
	// policy is maxmemory-policy with its LFU parameters (lfu.go).
	policy  Policy
	cold    *disktier.Store
	nextVer uint64
	// watches are the watched keys (watch.go); nil until the first WATCH.
	watches map[watchKey]*watchState
	// waited are the keys clients are blocked on, ready those of them
	// written since the server last took them, readyPending whether ready
	// is non-empty (ready.go).
	waited       map[ReadyKey]*waitState
	ready        []ReadyKey
	readyPending atomic.Bool
	// events receives key and chunk events (events.go); nil for none.
	events Events
	// stepOrigin is the running step's Tx.SetOrigin value while its fn
	// runs, for the key changes reported without a Tx (Events.KeyChanged).
	stepOrigin any
	// expiring is set while expireLocked removes a key.
	expiring bool
	// stepTx and stepPost are the running step's transaction and disk
	// work (step), reused from one step to the next under the lock.
	stepTx   Tx
	stepPost postWork
	// realClock is set when Options.Now is time.Now: a step then takes
	// its time from the engine lock's own clock reads (holdMutex.now).
	realClock bool

	// dirty holds the groups with resident values the disk does not have
	// yet; the write-behind pass persists them without freeing memory,
	// taking them from dirtyQueue in the order they became dirty.
	dirty      map[*group]struct{}
	dirtyQueue dirtyQueue
	// snapshots holds the objects being encoded without the lock
	// (snapshot.go), and snapshotsPub its length for AwaitEncoded's fast
	// path; snapshotWaits counts the write steps that waited for one
	// under the lock.
	snapshots     map[datatype.Object]*objectSnapshot
	snapshotsPub  atomic.Int64
	snapshotWaits atomic.Int64
	// coldUnflushed is set when the disk tier changed outside the
	// write-behind since the demoter's last flush: records deleted, or
	// written by a header rewrite or SaveMeta. The tier has no
	// write-ahead log: a delete left in memtables is undone by a crash,
	// and such a write lost, so either is flushed like the write-behind's.
	coldUnflushed bool
	// protect holds the groups that carry a lease or a pin (lease.go).
	protect map[*group]struct{}
	// chunks counts the stored LMCache chunks by class (chunks.go).
	chunks map[ChunkClass]ChunkCount
	// quantQueue holds groups that may be quantizable (quant.go).
	quantQueue map[*group]struct{}
	quantWake  wake.Signal
	quantized  atomic.Int64
	// decoded holds quantized values predecode decoded for the commands
	// about to read them (quant.go).
	decoded map[*item]*decodedValue

	// deferredDeletes are disk records that must go but could not be
	// deleted while the disk was unavailable (faults.go).
	deferredDeletes map[coldKey]struct{}

	demoteWake wake.Signal
	closing    bool
	// writeGen counts the write steps, flushes and swaps; Close compares
	// it before and after writing the clean-shutdown marker.
	writeGen uint64
	// writing counts the group writes and expiry rewrites in flight
	// without the lock (their groups have demoting set); idle is
	// signalled when it drops to zero, for Close.
	writing int
	idle    *sync.Cond
	// flushing counts, per physical database, the disk flushes (FLUSHDB,
	// FLUSHALL) in flight without the lock: nothing is written to such a
	// database until its range deletion has committed, or the deletion
	// would take the new keys with it.
	flushing map[int]int
	// runStop cancels Run and runDone is closed when it has returned,
	// so that Close can stop it before writing the memory tier out.
	runStop context.CancelFunc
	runDone chan struct{}
	// bulkLoading defers the SCAN order index during rebuild, which then
	// loads it sorted in one pass.
	bulkLoading bool
	// attempts counts the demotions started; blockedAt is the attempt
	// that last found the disk full of pinned or leased groups. A write
	// that waits for room fails only if an attempt started after it began
	// was blocked, never on the outcome of an older one.
	attempts, blockedAt uint64
	wg                  sync.WaitGroup
	stop                context.CancelFunc

	maxMem    atomic.Int64
	hits      atomic.Int64
	diskHits  atomic.Int64
	misses    atomic.Int64
	expired   atomic.Int64
	evicted   atomic.Int64
	diskEvict atomic.Int64
	// deferredPub is len(deferredDeletes), for Stats.
	deferredPub atomic.Int64
	// unsavedPub is len(dirty) plus writing, for Stats (publishUnsavedLocked).
	unsavedPub atomic.Int64
	demotions  atomic.Int64
	promotions atomic.Int64
	keys       atomic.Int64
	memKeys    atomic.Int64
	memBytes   atomic.Int64

	indexBytes    int64 // index entries of keys held only on disk
	residentKeys  int64 // items whose value is in memory
	residentBytes int64 // their value bytes
	nexp          atomic.Int64
	usedPub       atomic.Int64
	indexPub      atomic.Int64
	diskOnlyPub   atomic.Int64 // keys whose value is only on disk
}

// New returns a memory-only Engine, or one over opts.Cold without reading
// what the cold tier already holds (use Open for that).
func New(opts Options) *Engine {
	if opts.Databases <= 0 {
		opts.Databases = 16
	}
	realClock := opts.Now == nil
	if realClock {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.HighWatermark <= 0 || opts.HighWatermark > 1 {
		opts.HighWatermark = 0.90
	}
	if opts.LowWatermark <= 0 || opts.LowWatermark >= opts.HighWatermark {
		opts.LowWatermark = opts.HighWatermark * 0.83
	}
	if opts.BackpressureTimeout <= 0 {
		opts.BackpressureTimeout = 30 * time.Second
	}
	e := &Engine{opts: opts, seed: maphash.MakeSeed(), cold: opts.Cold, demoteWake: wake.New(), policy: DefaultPolicy(),
		dirty: make(map[*group]struct{}), protect: make(map[*group]struct{}),
		chunks: make(map[ChunkClass]ChunkCount), quantQueue: make(map[*group]struct{}),
		deferredDeletes: make(map[coldKey]struct{}), flushing: make(map[int]int),
		decoded: make(map[*item]*decodedValue), snapshots: make(map[datatype.Object]*objectSnapshot),
		quantWake: wake.New(), realClock: realClock}
	switch {
	case opts.ValuePoolBytes == 0:
		e.pool = bufpool.New(bufpool.DefaultMax)
	case opts.ValuePoolBytes > 0:
		e.pool = bufpool.New(opts.ValuePoolBytes)
	}
	e.memCond = sync.NewCond(&e.mu)
	e.idle = sync.NewCond(&e.mu)
	e.dbs = make([]*keyspace, opts.Databases)
	for i := range e.dbs {
		e.dbs[i] = newKeyspace(i)
	}
	e.maxMem.Store(opts.MaxMemory)
	return e
}

// Open returns an Engine over opts.Cold with its index rebuilt from the
// records the cold tier holds (a restart), all of them on disk only.
func Open(ctx context.Context, opts Options) (*Engine, error) {
	e := New(opts)
	if e.cold == nil {
		return e, nil
	}
	if err := e.loadDBMap(ctx); err != nil {
		return nil, err
	}
	if err := e.rebuild(ctx); err != nil {
		return nil, err
	}
	return e, nil
}

// Databases is the number of databases.
func (e *Engine) Databases() int { return len(e.dbs) }

// MaxMemory is the current memory bound (0 = none).
func (e *Engine) MaxMemory() int64 { return e.maxMem.Load() }

// SetMaxMemory changes the memory bound and makes room down to it.
func (e *Engine) SetMaxMemory(n int64) {
	e.maxMem.Store(n)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.makeRoomLocked(nil)
	e.publishLocked()
}

// Stats returns the current counters.
func (e *Engine) Stats() Stats {
	st := Stats{
		Keys:            e.keys.Load(),
		Expires:         e.nexp.Load(),
		UsedMemory:      e.usedPub.Load(),
		IndexBytes:      e.indexPub.Load(),
		QuantizedChunks: e.quantized.Load(),
		LockMaxHold:     e.mu.maxHold(),
		MaxMemory:       e.maxMem.Load(),
		Hits:            e.hits.Load() + e.diskHits.Load(),
		Misses:          e.misses.Load(),
		ExpiredKeys:     e.expired.Load(),
		EvictedKeys:     e.evicted.Load() + e.diskEvict.Load(),
		Memory: TierStats{
			Keys:       e.memKeys.Load(),
			Bytes:      e.memBytes.Load(),
			Hits:       e.hits.Load(),
			Evictions:  e.evicted.Load(),
			Demotions:  e.demotions.Load(),
			Promotions: e.promotions.Load(),
			Capacity:   e.maxMem.Load(),
		},
		HasDisk: e.cold != nil,
	}
	if e.cold != nil {
		cs := e.cold.Stats()
		st.Disk = TierStats{
			Keys:       cs.Keys,
			Bytes:      cs.Bytes,
			Hits:       e.diskHits.Load(),
			Evictions:  e.diskEvict.Load(),
			Corrupt:    cs.Corrupt,
			Demotions:  e.demotions.Load(),
			Promotions: e.promotions.Load(),
			Capacity:   e.cold.MaxDisk(),

			Errors:           cs.DiskErrors,
			Unavailable:      cs.Unavailable,
			UnavailableSince: cs.UnavailableSince,
			LastError:        cs.LastDiskError,
			DeferredDeletes:  e.deferredPub.Load() + cs.PendingDeletes,
			Unsaved:          e.unsavedPub.Load(),
			RecoveredFrom:    cs.RecoveredFrom,
		}
	}
	return st
}

// ResetStats zeroes the hit, miss, expiry and eviction counters
// (CONFIG RESETSTAT).
func (e *Engine) ResetStats() {
	for _, c := range []*atomic.Int64{&e.hits, &e.diskHits, &e.misses, &e.expired, &e.evicted, &e.diskEvict, &e.demotions, &e.promotions} {
		c.Store(0)
	}
	e.mu.maxDur.Store(0)
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

// Update runs fn as one atomic step against database db, then makes room
// if the memory bound is exceeded.
func (e *Engine) Update(db int, fn func(tx *Tx)) { e.step(db, fn, true) }

// View runs fn as one atomic read step against database db. Reads still
// update LRU order, may lazily delete expired keys and may load values from
// disk.
func (e *Engine) View(db int, fn func(tx *Tx)) { e.step(db, fn, false) }

// step runs fn as one atomic step under the lock, then the disk work it
// left for after the lock (postWork).
//
// The step's Tx and its postWork are the engine's own (stepTx, stepPost),
// reused under the lock, so that a step allocates nothing of its own; the
// postWork is copied out before the lock is released.
func (e *Engine) step(db int, fn func(tx *Tx), write bool) {
	post := func() postWork {
		e.mu.Lock()
		defer e.mu.Unlock()
		if write {
			e.writeGen++
		}
		tx := &e.stepTx
		now := e.mu.now() // the clock the lock read, when it is the real one
		if !e.realClock {
			now = e.opts.Now()
		}
		*tx = Tx{e: e, db: db, ks: e.dbs[db], now: now.UnixMilli(), post: &e.stepPost, write: write}
		defer func() {
			*tx = Tx{}
			e.stepPost = postWork{}
		}()
		fn(tx)
		e.stepOrigin = nil
		var protect *item
		if write {
			protect = tx.protect
		}
		e.makeRoomLocked(protect)
		e.publishLocked()
		return e.stepPost
	}()
	if len(post.expiry) > 0 || len(post.flush) > 0 {
		e.runPost(context.Background(), &post)
	}
}

// Reserve makes room before a command that may grow memory. Without a cold
// tier it evicts down to the bound and returns ErrOOM when that is
// impossible. With one it waits (back-pressure) while the demoter moves
// groups to disk, and returns ErrOOM only when nothing can be moved: no
// group is left to demote, the disk refused room for one, or the demoter
// completed no demotion or eviction for Options.BackpressureTimeout. A
// storm of writers faster than the disk therefore waits at disk speed
// however long it lasts, instead of failing once a fixed time has passed.
// It also returns ErrOOM when ctx ends (the client is gone). beforeWait,
// if set, runs (without the engine lock) before it waits for the demoter:
// a connection leaves its event loop there.
func (e *Engine) Reserve(ctx context.Context, beforeWait func()) error {
	max := e.maxMem.Load()
	if max <= 0 || e.usedPub.Load() <= max {
		// Fast path without the lock: usedPub is published after every
		// step, and a step that overshoots makes room itself.
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.cold == nil {
		e.evictLocked(nil, max)
		e.publishLocked()
		if e.used > max {
			return ErrOOM
		}
		return nil
	}
	if e.used <= max {
		return nil
	}
	if beforeWait != nil {
		e.mu.Unlock()
		beforeWait()
		e.mu.Lock()
		if e.used <= e.maxMem.Load() {
			return nil
		}
	}
	deadline := time.Now().Add(e.opts.BackpressureTimeout)
	timer := time.AfterFunc(e.opts.BackpressureTimeout, func() {
		e.mu.Lock()
		e.memCond.Broadcast()
		e.mu.Unlock()
	})
	defer timer.Stop()
	progress := func() int64 { return e.demotions.Load() + e.evicted.Load() }
	seen := progress()
	stopCtx := context.AfterFunc(ctx, func() {
		e.mu.Lock()
		e.memCond.Broadcast()
		e.mu.Unlock()
	})
	defer stopCtx()
	start := e.attempts
	for e.used > e.maxMem.Load() && !e.closing {
		if !e.demotableLocked() || e.blockedAt > start {
			return ErrOOM
		}
		e.kickDemoter()
		if p := progress(); p != seen {
			seen = p
			deadline = time.Now().Add(e.opts.BackpressureTimeout)
			timer.Reset(e.opts.BackpressureTimeout)
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return ErrOOM
		}
		e.memCond.Wait()
	}
	return nil
}

// SwapDB swaps two databases atomically.
func (e *Engine) SwapDB(ctx context.Context, a, b int) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.writeGen++
	e.touchKeyspaceLocked(a, e.dbs[a], e.dbs[b])
	e.touchKeyspaceLocked(b, e.dbs[b], e.dbs[a])
	e.dbs[a], e.dbs[b] = e.dbs[b], e.dbs[a]
	e.signalKeyspaceReadyLocked(a, e.dbs[a])
	e.signalKeyspaceReadyLocked(b, e.dbs[b])
	return e.saveDBMapLocked(ctx)
}

// FlushAll deletes every key of every database, on every tier. The disk
// tier's range deletions run without the engine lock.
func (e *Engine) FlushAll(ctx context.Context) error {
	e.mu.Lock()
	e.writeGen++
	var phys []int
	for i := range e.dbs {
		phys = append(phys, e.flushLocked(i))
	}
	if e.events != nil {
		e.events.Flushed()
	}
	e.publishLocked()
	e.mu.Unlock()
	return e.flushCold(ctx, phys)
}

// FlushDB deletes every key of database db, on every tier. The disk tier's
// range deletion runs without the engine lock (it waits for the disk
// writes in flight).
func (e *Engine) FlushDB(ctx context.Context, db int) error {
	e.mu.Lock()
	e.writeGen++
	phys := e.flushLocked(db)
	if e.events != nil {
		e.events.Flushed()
	}
	e.publishLocked()
	e.mu.Unlock()
	return e.flushCold(ctx, []int{phys})
}

// flushCold deletes the disk records of the physical databases that
// flushLocked emptied in memory, without the lock, and then lets writes to
// them go on.
func (e *Engine) flushCold(ctx context.Context, phys []int) error {
	if e.cold == nil {
		return nil
	}
	var errs []error
	for _, p := range phys {
		if err := e.cold.FlushDB(ctx, p); err != nil {
			errs = append(errs, fmt.Errorf("flush database %d on disk: %w", p, err))
		}
	}
	e.mu.Lock()
	for _, p := range phys {
		if e.flushing[p]--; e.flushing[p] <= 0 {
			delete(e.flushing, p)
		}
	}
	e.coldUnflushed = true
	e.writeGen++
	e.mu.Unlock()
	return errors.Join(errs...)
}

// flushLocked empties database db in memory and returns its physical
// number. With a cold tier, the caller must then call flushCold with it:
// until then nothing is written to that database on disk.
func (e *Engine) flushLocked(db int) int {
	ks := e.dbs[db]
	for _, g := range ks.groups {
		e.chunkDeletedLocked(g)
		if g.list != nil {
			g.list.remove(g)
		}
		delete(e.dirty, g)
		delete(e.protect, g)
		delete(e.quantQueue, g)
	}
	e.publishUnsavedLocked()
	for _, it := range ks.items {
		e.forgetChunkLocked(it)
		e.uncharge(it)
		if it.resident {
			e.residentKeys--
			e.residentBytes -= it.valueBytes()
		}
	}
	clear(e.decoded)
	e.dbs[db] = newKeyspace(ks.phys)
	e.touchKeyspaceLocked(db, ks, e.dbs[db])
	if e.cold != nil {
		e.flushing[ks.phys]++
	}
	return ks.phys
}

// publishLocked copies the counters read without the lock. A counter is
// stored only when it changed: most steps change none, and an atomic store
// is a full barrier where a load is a plain read.
func (e *Engine) publishLocked() {
	var keys, exp int64
	for _, ks := range e.dbs {
		keys += int64(len(ks.items))
		exp += int64(len(ks.expires))
	}
	publish(&e.keys, keys)
	publish(&e.nexp, exp)
	publish(&e.memKeys, e.residentKeys)
	publish(&e.diskOnlyPub, keys-e.residentKeys)
	publish(&e.indexPub, e.indexBytes)
	publish(&e.memBytes, e.residentBytes)
	publish(&e.usedPub, e.used)
	if e.used < e.maxMem.Load() {
		e.memCond.Broadcast()
	}
}

// publish stores v in a unless it holds v already. Only the engine lock's
// holder stores, so no store is lost between the load and the store.
func publish(a *atomic.Int64, v int64) {
	if a.Load() != v {
		a.Store(v)
	}
}

// makeRoomLocked keeps memory bounded after a step: it evicts (no cold
// tier) or wakes the demoter (cold tier) when above the bound.
func (e *Engine) makeRoomLocked(protect *item) {
	max := e.maxMem.Load()
	if max <= 0 {
		return
	}
	if e.cold == nil {
		e.evictLocked(protect, max)
		return
	}
	if float64(e.used) > float64(max)*e.opts.HighWatermark {
		e.kickDemoter()
	}
}

// evictLocked drops least recently used groups until memory is within
// limit, never the group of protect (the key just written) unless it is
// alone. It is the memory-only policy; with a cold tier groups are demoted.
func (e *Engine) evictLocked(protect *item, limit int64) {
	now := e.opts.Now().UnixMilli()
	skip := func(g *group) bool { return (protect != nil && g == protect.grp) || g.protected(now) }
	for e.used > limit {
		victim := e.victimLocked(&e.memLRU, now, true, skip)
		if victim == nil {
			return
		}
		e.evictGroupLocked(context.Background(), victim)
		e.evicted.Add(int64(1))
	}
}

// dropGroupLocked removes every key of g from the server.
func (e *Engine) dropGroupLocked(ctx context.Context, g *group) {
	for len(g.items) > 0 {
		e.removeLocked(ctx, g.items[len(g.items)-1])
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

// insertLocked adds a new resident item to ks.
func (e *Engine) insertLocked(ks *keyspace, it *item) {
	it.hash = hashKey(e.seed, it.key)
	ks.items[it.key] = it
	if !e.bulkLoading {
		ks.order.Set(it)
	}
	if it.expireAt != 0 {
		ks.expires[it] = struct{}{}
	}
	name := groupName(it.key)
	g := ks.groups[name]
	if g == nil {
		g = &group{name: name, ks: ks, lmcache: grouping.IsChunk(name)}
		ks.groups[name] = g
	}
	g.items = append(g.items, it)
	it.grp = g
	if it.resident {
		g.resident++
		e.residentKeys++
		e.residentBytes += it.valueBytes()
		e.memLRU.touch(g)
	} else if g.list == nil {
		e.diskLRU.pushFront(g)
	}
	e.charge(it)
}

// removeLocked deletes an item from the server, its disk copy included.
func (e *Engine) removeLocked(ctx context.Context, it *item) {
	e.touchItemLocked(it, true)
	e.chunkDeletedLocked(it.grp)
	ks := it.keyspace()
	e.forgetChunkLocked(it)
	delete(ks.items, it.key)
	delete(ks.expires, it)
	delete(e.decoded, it)
	ks.order.Delete(it)
	e.uncharge(it)
	e.releaseBufferLocked(it, nil)
	g := it.grp
	g.remove(it)
	if it.resident {
		g.resident--
		e.residentKeys--
		e.residentBytes -= it.valueBytes()
	}
	if len(g.items) == 0 {
		if g.list != nil {
			g.list.remove(g)
		}
		delete(ks.groups, g.name)
		delete(e.dirty, g)
		e.publishUnsavedLocked()
		delete(e.protect, g)
		delete(e.quantQueue, g)
	} else if g.resident == 0 && g.list == &e.memLRU {
		e.diskLRU.moveToFront(g)
	}
	if it.hasRecord() {
		e.deleteColdLocked(ctx, ks.phys, it.key)
	}
	it.version = e.bumpVersion()
}

func (e *Engine) deleteColdLocked(ctx context.Context, phys int, key string) {
	e.coldUnflushed = true
	_, err := e.cold.Delete(ctx, phys, []byte(key))
	if err == nil || errors.Is(err, disktier.ErrNotFound) {
		return
	}
	if !errors.Is(err, disktier.ErrUnavailable) {
		e.opts.Logger.Error("delete from disk tier", "db", phys, "key", key, "err", err)
	}
	// The record must not come back (at the next start, or by a read of
	// the index): retry once the disk takes writes again.
	e.deferColdDeleteLocked(phys, key)
}

// charge adds an item's cost: a resident item counts against maxmemory; the
// index entry of a key held only on disk is counted apart (indexBytes), so
// that a large disk tier does not crowd values out of the memory tier.
func (e *Engine) charge(it *item) {
	if it.resident {
		e.used += it.memSize()
	} else {
		e.indexBytes += it.memSize()
	}
}

// uncharge removes an item's cost, before it changes or goes.
func (e *Engine) uncharge(it *item) {
	if it.resident {
		e.used -= it.memSize()
	} else {
		e.indexBytes -= it.memSize()
	}
}

func (e *Engine) bumpVersion() uint64 {
	e.nextVer++
	return e.nextVer
}

// ValuePool is the pool the engine gives the buffers of large values
// back to, for the connections to read large request values into (nil
// without one).
func (e *Engine) ValuePool() *bufpool.Pool { return e.pool }

// releaseBufferLocked gives it's value buffer to the pool, unless
// something else may hold it: it must be private (the engine's alone,
// never handed out), not being written to disk (its group demoting: a
// demotion drops its values once the write is over), and not be next,
// which is to replace it (a copy into the same buffer).
func (e *Engine) releaseBufferLocked(it *item, next []byte) {
	old := it.value
	if e.pool == nil || !it.private || !it.resident || it.obj != nil || it.grp.demoting ||
		cap(old) < bufpool.MinSize || (len(next) > 0 && unsafe.SliceData(next) == unsafe.SliceData(old)) {
		return
	}
	it.private = false
	e.pool.Put(old)
}

// setResidentLocked puts value in memory for it (a write or a load).
func (e *Engine) setResidentLocked(it *item, value []byte) {
	e.releaseBufferLocked(it, value)
	e.releaseValueLocked(it)
	e.residentBytes += int64(len(value))
	it.value, it.obj, it.objSize, it.private = value, nil, 0, false
	if !it.quantized {
		it.length = int64(len(value))
	}
	it.resident = true
	e.charge(it)
	e.memLRU.touch(it.grp)
}

// reuseSmallCap is the buffer size up to which any smaller value may
// reuse a buffer.
const reuseSmallCap = 64

// reuseValueLocked returns a copy of value for it's next value: in it's
// current buffer when that is private (the engine's own, never handed out
// since), not being written to disk (its group demoting), and of a size
// that fits value without wasting more than half of it (or than
// reuseSmallCap for a small value, whose buffer the allocator rounds up
// anyway: a 1-byte value's is 8); otherwise a new buffer.
func (e *Engine) reuseValueLocked(it *item, value []byte) []byte {
	if old := it.value; it.private && it.resident && !it.grp.demoting && len(value) > 0 &&
		cap(old) >= len(value) && cap(old) <= max(2*len(value), reuseSmallCap) {
		return append(old[:0], value...)
	}
	return append([]byte(nil), value...)
}

// releaseValueLocked uncharges it and its resident value before a new
// value replaces it, counting it resident from now on.
func (e *Engine) releaseValueLocked(it *item) {
	e.uncharge(it)
	if !it.resident {
		it.grp.resident++
		e.residentKeys++
	} else {
		e.residentBytes -= it.valueBytes()
	}
}

// dropResidentLocked frees the memory copy of an item whose value is safe on
// disk.
func (e *Engine) dropResidentLocked(it *item) {
	if !it.resident {
		return
	}
	e.releaseBufferLocked(it, nil)
	e.uncharge(it)
	e.residentKeys--
	e.residentBytes -= it.valueBytes()
	it.value, it.obj, it.objSize, it.private = nil, nil, 0, false
	it.resident = false
	e.charge(it)
	g := it.grp
	g.resident--
	if g.resident == 0 {
		e.diskLRU.moveToFront(g)
		if e.events != nil && wholeChunk(g) {
			e.chunkEventLocked(g, ChunkDemoted)
		}
	}
}

// Run expires keys in the background and, with a cold tier, demotes cold
// groups, until ctx is cancelled. Expiry samples like Redis's active expire
// cycle: every 100 ms, 20 keys with a TTL per database, repeated while more
// than a quarter of a sample had expired.
func (e *Engine) Run(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	defer close(done)
	e.mu.Lock()
	if e.closing {
		e.mu.Unlock()
		return
	}
	e.runStop, e.runDone = cancel, done
	e.mu.Unlock()
	if e.cold != nil {
		e.wg.Add(1)
		go func() {
			defer e.wg.Done()
			e.runDemoter(ctx)
		}()
	}
	if e.opts.KVQuant != codec.Off {
		e.wg.Add(1)
		go func() {
			defer e.wg.Done()
			e.runQuantizer(ctx)
		}()
	}
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	sweep := time.NewTicker(protectSweepInterval)
	defer sweep.Stop()
	for {
		select {
		case <-ctx.Done():
			e.wg.Wait()
			return
		case <-t.C:
			e.activeExpireCycle(ctx, 25*time.Millisecond)
		case <-sweep.C:
			e.mu.Lock()
			e.sweepProtectLocked(e.opts.Now().UnixMilli())
			e.mu.Unlock()
		}
	}
}

func (e *Engine) activeExpireCycle(ctx context.Context, budget time.Duration) {
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
					e.expireLocked(ctx, it, nil)
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
