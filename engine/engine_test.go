package engine

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
	"unsafe"
)

// fakeClock is a settable clock for expiry tests.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func newTestEngine(maxMemory int64) (*Engine, *fakeClock) {
	clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	return New(Options{MaxMemory: maxMemory, Now: clock.Now}), clock
}

func set(e *Engine, db int, key string, value []byte, expireAt int64) {
	e.Update(db, func(tx *Tx) { tx.Set([]byte(key), value, expireAt) })
}

func get(e *Engine, db int, key string) ([]byte, bool) {
	var v []byte
	var ok bool
	e.View(db, func(tx *Tx) {
		var ent Entry
		ent, ok = tx.Get([]byte(key))
		v = ent.Value
	})
	return v, ok
}

func TestSetGetDeleteAndCounters(t *testing.T) {
	e, _ := newTestEngine(0)
	set(e, 0, "a", []byte("1"), 0)
	if v, ok := get(e, 0, "a"); !ok || string(v) != "1" {
		t.Fatalf("get a = %q %v", v, ok)
	}
	if _, ok := get(e, 1, "a"); ok {
		t.Fatal("key leaked into db 1")
	}
	if _, ok := get(e, 0, "missing"); ok {
		t.Fatal("missing key found")
	}
	st := e.Stats()
	if st.Keys != 1 || st.Hits != 1 || st.Misses != 2 {
		t.Fatalf("stats %+v", st)
	}
	var deleted bool
	e.Update(0, func(tx *Tx) { deleted = tx.Delete([]byte("a")) })
	if !deleted || e.Stats().Keys != 0 || e.Stats().UsedMemory != 0 {
		t.Fatalf("after delete: %v %+v", deleted, e.Stats())
	}
}

func TestMemoryAccountingChargesKeyValueAndOverhead(t *testing.T) {
	e, _ := newTestEngine(0)
	set(e, 0, "key", make([]byte, 1000), 0)
	want := int64(itemOverhead + 3 + 1000)
	if got := e.Stats().UsedMemory; got != want {
		t.Fatalf("used %d, want %d", got, want)
	}
	set(e, 0, "key", make([]byte, 10), 0)
	if got := e.Stats().UsedMemory; got != int64(itemOverhead+3+10) {
		t.Fatalf("after overwrite used %d", got)
	}
}

func TestEvictionDropsLeastRecentlyUsedFirst(t *testing.T) {
	value := make([]byte, 1000)
	per := int64(itemOverhead + 2 + 1000)
	e, _ := newTestEngine(3 * per)
	set(e, 0, "k1", value, 0)
	set(e, 0, "k2", value, 0)
	set(e, 0, "k3", value, 0)
	get(e, 0, "k1") // k2 is now the least recently used
	set(e, 0, "k4", value, 0)
	if _, ok := get(e, 0, "k2"); ok {
		t.Fatal("k2 should have been evicted")
	}
	for _, k := range []string{"k1", "k3", "k4"} {
		if _, ok := get(e, 0, k); !ok {
			t.Fatalf("%s evicted", k)
		}
	}
	if st := e.Stats(); st.EvictedKeys != 1 || st.UsedMemory > 3*per {
		t.Fatalf("stats %+v", st)
	}
}

// TestEvictionIsLeastRecentlyUsedAcrossDatabases: one LRU order spans the
// databases, so the key evicted is the oldest in any database.
func TestEvictionIsLeastRecentlyUsedAcrossDatabases(t *testing.T) {
	per := int64(itemOverhead + 1 + 100)
	e := New(Options{MaxMemory: 2 * per})
	set(e, 3, "a", make([]byte, 100), 0)
	set(e, 0, "b", make([]byte, 100), 0)
	set(e, 0, "c", make([]byte, 100), 0)
	if _, ok := get(e, 3, "a"); ok {
		t.Fatal("3:a, the least recently used key, was not evicted")
	}
	for _, k := range []string{"b", "c"} {
		if _, ok := get(e, 0, k); !ok {
			t.Fatalf("0:%s evicted", k)
		}
	}
	if st := e.Stats(); st.EvictedKeys != 1 || st.Keys != 2 {
		t.Fatalf("stats %+v, want 1 evicted and 2 keys", st)
	}
}

func TestReserveFailsOnlyWhenNothingCanBeEvicted(t *testing.T) {
	e, _ := newTestEngine(100)
	if err := e.Reserve(context.Background(), nil); err != nil {
		t.Fatalf("empty engine: %v", err)
	}
	set(e, 0, "big", make([]byte, 1000), 0) // kept: it is the key just written
	if err := e.Reserve(context.Background(), nil); err != nil {
		t.Fatalf("reserve should evict the big key: %v", err)
	}
	if e.Stats().Keys != 0 {
		t.Fatal("big key not evicted")
	}
}

func TestLazyAndActiveExpiry(t *testing.T) {
	e, clock := newTestEngine(0)
	now := clock.Now().UnixMilli()
	set(e, 0, "lazy", []byte("v"), now+1000)
	for i := 0; i < 100; i++ {
		set(e, 0, fmt.Sprint("active", i), []byte("v"), now+1000)
	}
	set(e, 0, "forever", []byte("v"), 0)
	clock.Advance(2 * time.Second)
	if _, ok := get(e, 0, "lazy"); ok {
		t.Fatal("expired key returned")
	}
	for i := 0; i < 20 && e.Stats().Keys > 1; i++ {
		e.activeExpireCycle(context.Background(), time.Second)
	}
	if st := e.Stats(); st.Keys != 1 || st.ExpiredKeys != 101 || st.Expires != 0 {
		t.Fatalf("stats after active expiry %+v", st)
	}
}

func TestRunStopsWithContext(t *testing.T) {
	e, _ := newTestEngine(0)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { e.Run(ctx); close(done) }()
	cancel()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		t.Fatal("Run did not stop")
	}
}

func TestScanVisitsEveryStableKeyExactlyOnceUnderChurn(t *testing.T) {
	e, _ := newTestEngine(0)
	for i := 0; i < 1000; i++ {
		set(e, 0, fmt.Sprint("stable", i), []byte("v"), 0)
	}
	seen := map[string]int{}
	var cursor uint64
	round := 0
	for {
		e.Update(0, func(tx *Tx) {
			cursor = tx.Scan(cursor, 10, func(k string) { seen[k]++ })
			// Churn: add and delete other keys between calls.
			tx.Set([]byte(fmt.Sprint("churn", round)), []byte("v"), 0)
			tx.Delete([]byte(fmt.Sprint("churn", round-3)))
		})
		round++
		if cursor == 0 {
			break
		}
	}
	for i := 0; i < 1000; i++ {
		if n := seen[fmt.Sprint("stable", i)]; n != 1 {
			t.Fatalf("stable%d seen %d times", i, n)
		}
	}
}

func TestSwapDBAndFlush(t *testing.T) {
	e, _ := newTestEngine(0)
	set(e, 0, "in0", []byte("v"), 0)
	set(e, 1, "in1", []byte("v"), 0)
	e.SwapDB(context.Background(), 0, 1)
	if _, ok := get(e, 0, "in1"); !ok {
		t.Fatal("swap did not move db1 to db0")
	}
	e.Update(0, func(tx *Tx) { tx.Flush() })
	if _, ok := get(e, 1, "in0"); !ok || e.Stats().Keys != 1 {
		t.Fatal("flush of db0 touched db1")
	}
	e.FlushAll(context.Background())
	if st := e.Stats(); st.Keys != 0 || st.UsedMemory != 0 {
		t.Fatalf("after flushall %+v", st)
	}
}

func TestSetExpireInThePastDeletes(t *testing.T) {
	e, clock := newTestEngine(0)
	set(e, 0, "k", []byte("v"), 0)
	e.Update(0, func(tx *Tx) { tx.SetExpire([]byte("k"), clock.Now().UnixMilli()-1) })
	if _, ok := get(e, 0, "k"); ok {
		t.Fatal("key with past expiry still readable")
	}
}

// TestItemFitsItsOverhead keeps the index entry within what memory
// accounting charges for it.
func TestItemFitsItsOverhead(t *testing.T) {
	if size := unsafe.Sizeof(item{}); size > itemOverhead {
		t.Fatalf("item is %d bytes, more than itemOverhead (%d)", size, itemOverhead)
	}
}

// TestSetExpiresAnExpiredKeyAndRefreshesRecency: Set, with no lookup
// before it, expires a key whose time has passed as a lookup would (it
// counts, and the new key has no TTL left over), and an overwrite moves the
// key to the front of the LRU order, as Redis's fresh object does.
func TestSetExpiresAnExpiredKeyAndRefreshesRecency(t *testing.T) {
	e, clock := newTestEngine(0)
	now := clock.Now().UnixMilli()
	set(e, 0, "k", []byte("old"), now+1000)
	set(e, 0, "other", []byte("v"), 0)
	clock.Advance(2 * time.Second)
	set(e, 0, "k", []byte("new"), 0)
	if st := e.Stats(); st.ExpiredKeys != 1 || st.Expires != 0 || st.Keys != 2 {
		t.Fatalf("after SET over an expired key: %+v; want 1 expired, no expiry left, 2 keys", st)
	}
	if v, ok := get(e, 0, "k"); !ok || string(v) != "new" {
		t.Fatalf("k = %q, %v", v, ok)
	}
	set(e, 0, "other", []byte("v2"), 0) // an overwrite: other is now the most recent
	e.mu.Lock()
	head := e.memLRU.head.name
	e.mu.Unlock()
	if head != "other" {
		t.Fatalf("LRU front is %q after overwriting other, want other", head)
	}
}

// TestLRUOnALargeKeyspaceKeepsWhatIsRead: past lruExactBelow groups a read
// moves its group only from the back quarter of the order (lruList.touch).
// That must not cost what LRU promises: a key read while the others are
// written is never the one evicted, a key read once from the back quarter
// outlives every key older than it, and eviction still takes the keys
// nobody read in the order they were written.
func TestLRUOnALargeKeyspaceKeepsWhatIsRead(t *testing.T) {
	const n = 4 * lruExactBelow
	value := make([]byte, 100)
	key := func(i int) string { return fmt.Sprintf("k%05d", i) }
	per := int64(itemOverhead + len(key(0)) + len(value))
	e, _ := newTestEngine(n * per)
	for i := range n {
		set(e, 0, key(i), value, 0)
	}
	// k00000..k00009 are read all the time; k01000 once, from the back
	// quarter (it is older than three quarters of the keys).
	get(e, 0, key(1000))
	hot := func() {
		for i := range 10 {
			if _, ok := get(e, 0, key(i)); !ok {
				t.Fatalf("hot key %s was evicted", key(i))
			}
		}
	}
	// Each new key evicts one; 2n of them turn the whole keyspace over
	// twice.
	for i := n; i < 3*n; i++ {
		hot()
		set(e, 0, key(i), value, 0)
		if i == n+499 {
			// 500 evicted: the oldest unread keys, in order.
			for j := 10; j < 510; j++ {
				if _, ok := get(e, 0, key(j)); ok {
					t.Fatalf("%s, among the oldest unread keys, was kept", key(j))
				}
			}
			if _, ok := get(e, 0, key(510)); !ok {
				t.Fatalf("%s was evicted before older keys", key(510))
			}
		}
		if i == n+999 {
			// k01000 was read after every key up to n was written:
			// it outlives them all.
			if _, ok := get(e, 0, key(1000)); !ok {
				t.Fatalf("%s, read from the back quarter, was evicted before older keys", key(1000))
			}
		}
	}
	hot()
	if st := e.Stats(); st.EvictedKeys != 2*n || st.Keys != n {
		t.Fatalf("stats %+v, want %d evicted and %d keys", st, 2*n, n)
	}
}
