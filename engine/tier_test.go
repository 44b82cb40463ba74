package engine

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/kvserver/kvserver/disktier"
)

// openTiered opens a real Pebble store in dir and an engine over it.
func openTiered(t *testing.T, dir string, maxMemory int64) (*Engine, *disktier.Store) {
	t.Helper()
	ctx := context.Background()
	store, err := disktier.Open(ctx, disktier.Options{Dir: dir, MaxDisk: -1})
	if err != nil {
		t.Fatal(err)
	}
	e, err := Open(ctx, Options{MaxMemory: maxMemory, Cold: store})
	if err != nil {
		t.Fatal(err)
	}
	return e, store
}

// runEngine runs the engine's background work until the test ends.
func runEngine(t testing.TB, e *Engine) context.CancelFunc {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { e.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return func() { cancel(); <-done }
}

func chunkValue(i, n int) []byte {
	v := make([]byte, n)
	for j := range v {
		v[j] = byte(i*31 + j*7)
	}
	return v
}

func putPair(t *testing.T, e *Engine, i int) {
	t.Helper()
	if err := e.Reserve(context.Background(), nil); err != nil {
		t.Fatalf("reserve before chunk %d: %v", i, err)
	}
	k := fmt.Sprintf("m@1@0@%04d@bfloat16", i)
	set(e, 0, k+"kv_bytes", chunkValue(i, 64<<10), 0)
	set(e, 0, k+"metadata", []byte(fmt.Sprintf("meta%04d", i)), 0)
}

func pairState(e *Engine, i int) string {
	k := fmt.Sprintf("m@1@0@%04d@bfloat16", i)
	data, okData := get(e, 0, k+"kv_bytes")
	meta, okMeta := get(e, 0, k+"metadata")
	switch {
	case !okData && !okMeta:
		return "absent"
	case okData != okMeta:
		return "half"
	case !bytes.Equal(data, chunkValue(i, 64<<10)) || string(meta) != fmt.Sprintf("meta%04d", i):
		return "corrupt"
	}
	return "whole"
}

func TestMemoryPressureDemotesWholeGroupsAndReadsPromote(t *testing.T) {
	e, store := openTiered(t, t.TempDir(), 1<<20)
	defer store.Close()
	runEngine(t, e)
	const n = 64 // 4 MiB of data into a 1 MiB memory tier
	for i := range n {
		putPair(t, e, i)
	}
	st := e.Stats()
	// Reserve keeps memory under the bound before each write; the last
	// write may overshoot by one chunk until the demoter runs.
	if st.UsedMemory > 1<<20+(64<<10)+1024 || st.Memory.Demotions == 0 || st.Keys != 2*n {
		t.Fatalf("after writes: %+v", st)
	}
	for i := range n {
		if s := pairState(e, i); s != "whole" {
			t.Fatalf("chunk %d is %s", i, s)
		}
	}
	if e.Stats().Memory.Promotions == 0 {
		t.Fatal("reads from disk promoted nothing")
	}
	// A demoted group is on disk as a whole: both keys or neither.
	e.mu.Lock()
	for _, g := range e.dbs[0].groups {
		if len(g.items) != 2 {
			t.Errorf("group %s has %d keys", g.name, len(g.items))
		}
		if g.items[0].onDisk != g.items[1].onDisk && g.resident == 0 {
			t.Errorf("group %s is half on disk", g.name)
		}
	}
	e.mu.Unlock()
}

func TestCleanCloseKeepsEverythingAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	e, store := openTiered(t, dir, 1<<20)
	stop := runEngine(t, e)
	for i := range 40 {
		putPair(t, e, i)
	}
	// A lone key with a pair suffix survives a clean restart as it is.
	set(e, 0, "lone:kv_bytes", []byte("alone"), 0)
	stop()
	if err := e.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	store.Close()

	e, store = openTiered(t, dir, 1<<20)
	defer store.Close()
	if got := e.Stats().Keys; got != 81 {
		t.Fatalf("keys after restart = %d, want 81", got)
	}
	for i := range 40 {
		if s := pairState(e, i); s != "whole" {
			t.Fatalf("chunk %d is %s after restart", i, s)
		}
	}
	if v, ok := get(e, 0, "lone:kv_bytes"); !ok || string(v) != "alone" {
		t.Fatalf("lone key after clean restart = %q %v", v, ok)
	}
}

func TestRestartAfterCrashDropsHalfChunks(t *testing.T) {
	dir := t.TempDir()
	e, store := openTiered(t, dir, 0)
	ctx := context.Background()
	// What a crash can leave: one chunk whole on disk, one with only its
	// data, one with only its metadata (LMCache's key shape, plain and
	// layer-wise); and ordinary keys that merely end like a chunk's.
	const c1, c2, c3 = "llama@1@0@a3f@bfloat16", "llama@1@0@b4e@bfloat16", "llama@2@1@c5d@half@7:"
	if err := store.PutGroup(ctx, 0, []disktier.Entry{
		{Key: []byte(c1 + "kv_bytes"), Value: []byte("d1")}, {Key: []byte(c1 + "metadata"), Value: []byte("m1")},
	}); err != nil {
		t.Fatal(err)
	}
	lone := map[string]string{c2 + "kv_bytes": "d2", c3 + "metadata": "m3", "plain": "p",
		"user:1:metadata": "u1", "blobkv_bytes": "b", "a@b@c@d@e:kv_bytes": "not a chunk: c is no number"}
	for k, v := range lone {
		if err := store.Put(ctx, 0, []byte(k), []byte(v), disktier.RecordMeta{}); err != nil {
			t.Fatal(err)
		}
	}
	_ = e
	store.Close() // no engine Close: no clean-shutdown marker

	e, store = openTiered(t, dir, 0)
	defer store.Close()
	for key, want := range map[string]bool{c1 + "kv_bytes": true, c1 + "metadata": true,
		c2 + "kv_bytes": false, c3 + "metadata": false, "plain": true,
		"user:1:metadata": true, "blobkv_bytes": true, "a@b@c@d@e:kv_bytes": true} {
		if _, ok := get(e, 0, key); ok != want {
			t.Errorf("%s present = %v, want %v", key, ok, want)
		}
	}
	if _, _, err := store.Get(ctx, 0, []byte(c2+"kv_bytes")); err == nil {
		t.Error("half chunk still on disk")
	}
}

func TestOverwriteAndDeleteOfDemotedKeysReachTheDisk(t *testing.T) {
	dir := t.TempDir()
	e, store := openTiered(t, dir, 1<<20)
	stop := runEngine(t, e)
	for i := range 40 {
		putPair(t, e, i)
	}
	// Chunk 0 is long demoted: overwrite its data, delete chunk 1.
	k0, k1 := "m@1@0@0000@bfloat16", "m@1@0@0001@bfloat16"
	set(e, 0, k0+"kv_bytes", []byte("new"), 0)
	e.Update(0, func(tx *Tx) { tx.Delete([]byte(k1 + "kv_bytes")); tx.Delete([]byte(k1 + "metadata")) })
	stop()
	if err := e.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	store.Close()
	e, store = openTiered(t, dir, 1<<20)
	defer store.Close()
	if v, ok := get(e, 0, k0+"kv_bytes"); !ok || string(v) != "new" {
		t.Errorf("overwritten key after restart = %q %v", v, ok)
	}
	if _, ok := get(e, 0, k1+"metadata"); ok {
		t.Error("deleted key came back after restart")
	}
}

func TestExpiryOfDemotedKeysSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	clock := &fakeClock{now: time.Now()}
	ctx := context.Background()
	store, err := disktier.Open(ctx, disktier.Options{Dir: dir, MaxDisk: -1, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	e, err := Open(ctx, Options{Cold: store, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	at := clock.Now().UnixMilli() + 60_000
	set(e, 0, "k", []byte("v"), at)
	if err := e.Close(ctx); err != nil {
		t.Fatal(err)
	}
	store.Close()
	store, err = disktier.Open(ctx, disktier.Options{Dir: dir, MaxDisk: -1, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	e, err = Open(ctx, Options{Cold: store, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	var ent Entry
	e.View(0, func(tx *Tx) { ent, _ = tx.Stat([]byte("k"), false) })
	if ent.ExpireAt != at {
		t.Fatalf("expiry after restart = %d, want %d", ent.ExpireAt, at)
	}
	clock.Advance(2 * time.Minute)
	if _, ok := get(e, 0, "k"); ok {
		t.Fatal("expired key readable after restart")
	}
}

// openClocked opens an engine over a fresh disk tier (closed when the test
// ends) with a fake clock, whose Run the test drives by hand.
func openClocked(t *testing.T) (*Engine, *disktier.Store, *fakeClock) {
	t.Helper()
	store, err := disktier.Open(context.Background(), disktier.Options{Dir: t.TempDir(), MaxDisk: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	e, err := Open(context.Background(), Options{Cold: store, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	return e, store, clock
}

func TestWriteBehindWritesManyGroupsInBatchesAndReplacesOldCopies(t *testing.T) {
	ctx := context.Background()
	e, store, clock := openClocked(t)
	// More than one batch (writeBehindBatchBytes) of 4 KiB values in two
	// databases, written twice: the second pass replaces every record.
	const keys = 1500
	for round := range 2 {
		for i := range keys {
			set(e, i%2, fmt.Sprintf("k%d", i), chunkValue(round*keys+i, 4096), 0)
		}
		clock.Advance(3 * time.Second)
		if !e.writeBehind(ctx, writeBehindBytes) {
			t.Fatalf("round %d: write-behind wrote nothing", round)
		}
		e.mu.Lock()
		dirty := len(e.dirty)
		e.mu.Unlock()
		if dirty != 0 {
			t.Fatalf("round %d: %d groups still dirty", round, dirty)
		}
		for i := range keys {
			v, _, err := store.Get(ctx, i%2, []byte(fmt.Sprintf("k%d", i)))
			if err != nil || !bytes.Equal(v, chunkValue(round*keys+i, 4096)) {
				t.Fatalf("round %d: disk copy of k%d: %v", round, i, err)
			}
		}
		if st := store.Stats(); st.Keys != keys || st.RawBytes != keys*4096 {
			t.Fatalf("round %d: disk tier holds %d keys, %d bytes; want %d, %d",
				round, st.Keys, st.RawBytes, keys, keys*4096)
		}
	}
}

// diskOnlyChunk is an engine over a real disk tier holding one chunk, both
// keys on disk only, each with expiry old, 1 s after the start. The engine
// and the disk tier have clocks of their own, so that a test can put the
// disk tier's moment after the step that judged a key.
type diskOnlyChunk struct {
	e                      *Engine
	store                  *disktier.Store
	engineClock, diskClock *fakeClock
	old                    int64
	data, meta             string
	dataValue, metaValue   []byte
}

func openDiskOnlyChunk(t *testing.T) *diskOnlyChunk {
	t.Helper()
	ctx := context.Background()
	c := &diskOnlyChunk{engineClock: &fakeClock{now: time.Now()}}
	c.diskClock = &fakeClock{now: c.engineClock.Now()}
	store, err := disktier.Open(ctx, disktier.Options{Dir: t.TempDir(), MaxDisk: -1, Now: c.diskClock.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	c.store = store
	e, err := Open(ctx, Options{Cold: store, Now: c.engineClock.Now})
	if err != nil {
		t.Fatal(err)
	}
	const k = "m@1@0@abcd@bfloat16"
	c.data, c.meta = k+"kv_bytes", k+"metadata"
	c.dataValue, c.metaValue = chunkValue(1, 300<<10), []byte("meta")
	c.old = c.engineClock.Now().UnixMilli() + 1000
	set(e, 0, c.data, c.dataValue, c.old)
	set(e, 0, c.meta, c.metaValue, c.old)
	// Close writes both keys; the engine opened again holds them on disk only.
	if err := e.Close(ctx); err != nil {
		t.Fatal(err)
	}
	c.reopen(t)
	return c
}

// reopen opens the engine again over the same disk tier.
func (c *diskOnlyChunk) reopen(t *testing.T) {
	t.Helper()
	e, err := Open(context.Background(), Options{Cold: c.store, Now: c.engineClock.Now})
	if err != nil {
		t.Fatal(err)
	}
	c.e = e
}

// straddle puts the engine 1 ms before the keys' old expiry and the disk
// tier 1 ms after it: a step finds the keys alive, and the disk work that
// follows the step happens once their records' expiry has passed.
func (c *diskOnlyChunk) straddle() {
	c.engineClock.Advance(999 * time.Millisecond)
	c.diskClock.Advance(1001 * time.Millisecond)
}

// wantWhole fails unless both keys read back whole with expiry want.
func (c *diskOnlyChunk) wantWhole(t *testing.T, when string, want int64) {
	t.Helper()
	for _, kv := range []struct {
		key   string
		value []byte
	}{{c.data, c.dataValue}, {c.meta, c.metaValue}} {
		var ent Entry
		var ok bool
		c.e.View(0, func(tx *Tx) { ent, ok = tx.Get([]byte(kv.key)) })
		if !ok || !bytes.Equal(ent.Value, kv.value) || ent.ExpireAt != want {
			t.Fatalf("%s: %s exists %v, value right %v, expiry %d; want the value with expiry %d",
				when, kv.key, ok, bytes.Equal(ent.Value, kv.value), ent.ExpireAt, want)
		}
	}
}

// TestANewExpiryTheStepAcceptedSurvivesItsRewrite: PEXPIRE on a key held
// only on disk is decided by the step that finds the key alive (and
// answers 1); its record gets the new expiry afterwards, without the
// lock. When the record's old expiry passes in between (by the disk tier's
// clock, a moment later), the rewrite still gives the record the new
// expiry: the disk tier judged the old one, found the record expired, and
// the key the client was told had a new expiry was lost (with its chunk).
// The new expiry must also be what a restart finds.
func TestANewExpiryTheStepAcceptedSurvivesItsRewrite(t *testing.T) {
	c := openDiskOnlyChunk(t)
	c.straddle()
	later := c.old + 600_000
	for _, key := range []string{c.data, c.meta} {
		var ok bool
		c.e.Update(0, func(tx *Tx) { ok = tx.SetExpire([]byte(key), later) })
		if !ok {
			t.Fatalf("SetExpire found no %s", key)
		}
	}
	c.e.mu.Lock()
	for _, key := range []string{c.data, c.meta} {
		if it := c.e.dbs[0].items[key]; it == nil || it.resident || it.diskOld || !it.onDisk {
			t.Fatalf("%s after the rewrite: %+v; want a disk-only key whose record is current", key, it)
		}
	}
	c.e.mu.Unlock()
	c.wantWhole(t, "after the rewrite", later)
	if err := c.e.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	c.reopen(t)
	c.wantWhole(t, "after a restart", later)
}

// TestAKeyAliveAtTheStepReadsFromDiskAfterItsExpiryPassesThere: a command
// that finds a disk-only key alive gets its value, even when, by the disk
// tier's clock, the record's expiry has passed by the time it is read
// (Redis answers by the command's time). The disk tier judged the expiry
// again, reported the record missing, and the key was dropped as lost,
// with its chunk. Both ways a value comes from disk are checked: under the
// lock, and Preload before the command.
func TestAKeyAliveAtTheStepReadsFromDiskAfterItsExpiryPassesThere(t *testing.T) {
	for _, preload := range []bool{false, true} {
		t.Run(fmt.Sprintf("preload=%v", preload), func(t *testing.T) {
			c := openDiskOnlyChunk(t)
			c.straddle()
			if preload {
				c.e.Preload(context.Background(), 0, [][]byte{[]byte(c.data)})
			}
			c.wantWhole(t, "a read 1 ms before the expiry", c.old)
		})
	}
}

// TestANewExpiryWaitingForItsRewriteCounts: while the group of a disk-only
// key is being written (a demotion or write-behind without the lock), a
// new expiry is not rewritten at once; it waits in the engine, marked
// dirty, for the next write of the group. Until then the record still
// carries the old expiry: a read after that has passed on disk, and the
// rewrite at Close, must go by the new one.
func TestANewExpiryWaitingForItsRewriteCounts(t *testing.T) {
	c := openDiskOnlyChunk(t)
	later := c.old + 600_000
	c.e.mu.Lock()
	g := c.e.dbs[0].items[c.data].grp
	c.e.beginWriteLocked(g) // the group's write in flight
	c.e.mu.Unlock()
	for _, key := range []string{c.data, c.meta} {
		c.e.Update(0, func(tx *Tx) { tx.SetExpire([]byte(key), later) })
	}
	c.e.mu.Lock()
	c.e.endWriteLocked(g)
	if it := c.e.dbs[0].items[c.data]; !it.diskOld {
		t.Fatal("the expiry was rewritten while the group was being written")
	}
	c.e.mu.Unlock()
	c.straddle()
	c.diskClock.Advance(time.Minute)
	if err := c.e.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	c.reopen(t)
	c.wantWhole(t, "after the rewrite at Close", later)
}

// TestAnExpiryRewriteThatFindsNoRecordDropsTheWholeChunk: when the record
// of a disk-only key is gone when its new expiry is written (damage, or a
// deletion behind the engine's back), the value is lost; the chunk's
// other key must go with it, as for any lost disk copy. Removing the key
// alone left half a chunk.
func TestAnExpiryRewriteThatFindsNoRecordDropsTheWholeChunk(t *testing.T) {
	c := openDiskOnlyChunk(t)
	if found, err := c.store.Delete(context.Background(), 0, []byte(c.data)); err != nil || !found {
		t.Fatalf("deleting the record behind the engine: %v %v", found, err)
	}
	var ok bool
	c.e.Update(0, func(tx *Tx) { ok = tx.SetExpire([]byte(c.data), c.old+600_000) })
	if !ok {
		t.Fatal("SetExpire found no kv_bytes key")
	}
	var data, meta bool
	c.e.View(0, func(tx *Tx) {
		_, data = tx.Stat([]byte(c.data), false)
		_, meta = tx.Stat([]byte(c.meta), false)
	})
	if data || meta {
		t.Fatalf("after the expiry rewrite found no record: kv_bytes exists %v, metadata exists %v; want the chunk gone", data, meta)
	}
}

// TestReserveCallsBeforeWaitOnlyWhenItMustWait: under the memory bound
// Reserve returns at once without calling beforeWait; over it, it calls
// beforeWait once, without the engine lock (beforeWait itself starts the
// engine's demoter here), and returns once demotion made room.
func TestReserveCallsBeforeWaitOnlyWhenItMustWait(t *testing.T) {
	e, store := openTiered(t, t.TempDir(), 1<<20)
	defer store.Close()
	calls := 0
	count := func() { calls++ }
	if err := e.Reserve(context.Background(), count); err != nil || calls != 0 {
		t.Fatalf("under the bound: %v, beforeWait called %d times", err, calls)
	}
	for i := range 32 { // 2 MiB into a 1 MiB memory tier, nothing demoted yet
		k := fmt.Sprintf("m@1@0@%04d@bfloat16", i)
		set(e, 0, k+"kv_bytes", chunkValue(i, 64<<10), 0)
		set(e, 0, k+"metadata", []byte(fmt.Sprintf("meta%04d", i)), 0)
	}
	startDemoter := func() {
		calls++
		if !e.mu.mu.TryLock() {
			t.Error("beforeWait ran under the engine lock")
		} else {
			e.mu.mu.Unlock()
		}
		runEngine(t, e)
	}
	if err := e.Reserve(context.Background(), startDemoter); err != nil {
		t.Fatalf("over the bound: %v", err)
	}
	if calls != 1 {
		t.Fatalf("beforeWait called %d times, want 1", calls)
	}
	if used, max := e.Stats().UsedMemory, int64(1<<20); used > max {
		t.Fatalf("Reserve returned with %d bytes used, bound %d", used, max)
	}
}

// TestWriteBehindTakesOnlyDueGroupsOldestFirst: a pass writes the groups
// dirty for maxDirtyAge or longer and leaves the younger ones for a later
// pass; a group persisted and then written again is due maxDirtyAge after
// its new write, not after its first, and a deleted group is skipped.
func TestWriteBehindTakesOnlyDueGroupsOldestFirst(t *testing.T) {
	ctx := context.Background()
	e, store, clock := openClocked(t)
	onDisk := func(key string) bool {
		_, _, err := store.Get(ctx, 0, []byte(key))
		return err == nil
	}
	set(e, 0, "old", []byte("v1"), 0)
	set(e, 0, "gone", []byte("v"), 0)
	clock.Advance(time.Second)
	set(e, 0, "young", []byte("v"), 0)
	e.Update(0, func(tx *Tx) { tx.Delete([]byte("gone")) })
	clock.Advance(maxDirtyAge*time.Millisecond - time.Second)
	e.writeBehind(ctx, writeBehindBytes)
	if !onDisk("old") || onDisk("young") || onDisk("gone") {
		t.Fatalf("after %d ms: old, young, gone on disk = %v %v %v; want true false false",
			maxDirtyAge, onDisk("old"), onDisk("young"), onDisk("gone"))
	}
	set(e, 0, "old", []byte("v2"), 0) // dirty anew, behind young in the queue
	clock.Advance(time.Second)
	e.writeBehind(ctx, writeBehindBytes)
	if !onDisk("young") {
		t.Fatal("young not written once due")
	}
	if v, _, _ := store.Get(ctx, 0, []byte("old")); string(v) != "v1" {
		t.Fatalf("old rewritten to %q a second after its new write", v)
	}
	clock.Advance(maxDirtyAge * time.Millisecond)
	e.writeBehind(ctx, writeBehindBytes)
	if v, _, _ := store.Get(ctx, 0, []byte("old")); string(v) != "v2" {
		t.Fatalf("old on disk = %q once its new write is due, want v2", v)
	}
	e.mu.Lock()
	dirty, queued := len(e.dirty), e.dirtyQueue.len()
	e.mu.Unlock()
	if dirty != 0 || queued != 0 {
		t.Fatalf("%d groups dirty, %d queue entries left", dirty, queued)
	}
}

// TestDirtyQueueLetsGoOfABurstsRoom: once the groups of a burst of writes
// are all persisted, the queue keeps no array of the burst's size.
func TestDirtyQueueLetsGoOfABurstsRoom(t *testing.T) {
	ctx := context.Background()
	e, _, clock := openClocked(t)
	for i := range 3 * dirtyQueueKeep {
		set(e, 0, fmt.Sprintf("k%d", i), []byte("v"), 0)
	}
	clock.Advance(maxDirtyAge * time.Millisecond)
	e.writeBehind(ctx, writeBehindBytes)
	e.mu.Lock()
	dirty, room := len(e.dirty), cap(e.dirtyQueue.entries)
	e.mu.Unlock()
	if dirty != 0 || room > dirtyQueueKeep {
		t.Fatalf("after the burst: %d groups dirty, room for %d queue entries kept", dirty, room)
	}
}

// TestFailingWriteBehindKeepsItsQueueBounded: while the disk refuses
// every write, each pass retries the dirty groups, and the queue they wait
// in stays about their number instead of growing with every failed pass.
func TestFailingWriteBehindKeepsItsQueueBounded(t *testing.T) {
	ctx := context.Background()
	e, store, clock := openClocked(t)
	const keys = 20
	for i := range keys {
		set(e, 0, fmt.Sprintf("k%d", i), []byte("v"), 0)
	}
	store.Close() // every write now fails
	for pass := range 30 {
		clock.Advance(time.Second)
		e.writeBehind(ctx, writeBehindBytes)
		e.mu.Lock()
		dirty, queued := len(e.dirty), e.dirtyQueue.len()
		e.mu.Unlock()
		if dirty != keys {
			t.Fatalf("pass %d: %d groups dirty, want all %d (none could be written)", pass, dirty, keys)
		}
		if queued > 3*keys {
			t.Fatalf("pass %d: %d queue entries for %d dirty groups", pass, queued, keys)
		}
	}
}

func TestStatsCountUnsavedGroupsUntilWritten(t *testing.T) {
	ctx := context.Background()
	e, _, clock := openClocked(t)
	unsaved := func() int64 { return e.Stats().Disk.Unsaved }
	if n := unsaved(); n != 0 {
		t.Fatalf("fresh engine: %d unsaved groups, want 0", n)
	}
	// A chunk's two keys are one group; a plain key is one of its own.
	set(e, 0, "c:kv_bytes", []byte("data"), 0)
	set(e, 0, "c:metadata", []byte("meta"), 0)
	set(e, 1, "plain", []byte("v"), 0)
	if n := unsaved(); n != 2 {
		t.Fatalf("after writes to 2 groups: %d unsaved, want 2", n)
	}
	clock.Advance(maxDirtyAge * time.Millisecond)
	e.writeBehind(ctx, writeBehindBytes)
	if n := unsaved(); n != 0 {
		t.Fatalf("after the write-behind: %d unsaved, want 0", n)
	}
	set(e, 1, "plain", []byte("v2"), 0)
	e.Update(0, func(tx *Tx) { tx.Delete([]byte("c:kv_bytes")) })
	e.Update(0, func(tx *Tx) { tx.Delete([]byte("c:metadata")) })
	if n := unsaved(); n != 1 {
		t.Fatalf("after a rewrite and a deleted group: %d unsaved, want 1", n)
	}
	if err := e.FlushDB(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if n := unsaved(); n != 0 {
		t.Fatalf("after FLUSHDB of the dirty group's database: %d unsaved, want 0", n)
	}
}

// TestWriteBehindKnowsTheFootprintItReplaces checks that the engine keeps
// the footprint of each key's disk record as writes and the index rebuild
// report it, so that a rewrite need not read the old header, and that the
// disk tier's accounting stays exact through rewrites of every size.
func TestWriteBehindKnowsTheFootprintItReplaces(t *testing.T) {
	ctx := context.Background()
	e, store, clock := openClocked(t)
	check := func(when string) {
		t.Helper()
		meta, err := store.Stat(ctx, 0, []byte("k"))
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		e.mu.Lock()
		known := e.dbs[0].items["k"].disk
		e.mu.Unlock()
		if known != meta.Footprint() {
			t.Fatalf("%s: engine knows footprint %+v, the record's is %+v", when, known, meta.Footprint())
		}
		if st := store.Stats(); st.Keys != 1 || st.Bytes != meta.StoredSize || st.RawBytes != meta.Size {
			t.Fatalf("%s: disk tier counts %d keys, %d bytes, %d raw; the record is %+v", when, st.Keys, st.Bytes, st.RawBytes, meta)
		}
	}
	for i, n := range []int{4096, 100, 300 << 10, 10, 5000} {
		set(e, 0, "k", chunkValue(i, n), 0)
		clock.Advance(maxDirtyAge * time.Millisecond)
		e.writeBehind(ctx, writeBehindBytes)
		check(fmt.Sprintf("write %d of %d bytes", i, n))
	}
	// Changed while on disk (diskOld), the key still knows its record.
	set(e, 0, "k", chunkValue(9, 7000), 0)
	check("overwritten in memory")
	if err := e.Close(ctx); err != nil {
		t.Fatal(err)
	}
	e2, err := Open(ctx, Options{Cold: store, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	e = e2
	check("after the index rebuild")
	set(e, 0, "k", chunkValue(10, 2000), 0)
	clock.Advance(maxDirtyAge * time.Millisecond)
	e.writeBehind(ctx, writeBehindBytes)
	check("rewritten after the rebuild")
}

// TestDemotedOwnedValuesGiveTheirBuffersToThePool: under memory pressure
// the demoter writes large owned values to disk and drops them from
// memory; their buffers go to the value pool and carry the next values,
// and every value reads back whole from disk afterwards.
func TestDemotedOwnedValuesGiveTheirBuffersToThePool(t *testing.T) {
	e, _ := openTiered(t, t.TempDir(), 8<<20)
	runEngine(t, e)
	pool := e.ValuePool()
	const size, n = 1 << 20, 40
	for i := range n {
		if err := e.Reserve(context.Background(), nil); err != nil {
			t.Fatalf("reserve before value %d: %v", i, err)
		}
		b := pool.Get(size)
		copy(b, chunkValue(i, size))
		pool.EndRead(b)
		e.Update(0, func(tx *Tx) { tx.SetOwned([]byte(fmt.Sprintf("v%02dkv_bytes", i)), b, 0) })
	}
	st := pool.Stats()
	if st.Kept == 0 || st.Reused == 0 {
		t.Fatalf("demoting %d MiB through an 8 MiB memory tier: pool %+v", n, st)
	}
	for i := range n {
		got, ok := get(e, 0, fmt.Sprintf("v%02dkv_bytes", i))
		if !ok || !bytes.Equal(got, chunkValue(i, size)) {
			t.Fatalf("value %d after demotion: found %v, equal %v", i, ok, bytes.Equal(got, chunkValue(i, size)))
		}
	}
	t.Logf("pool %+v", pool.Stats())
}
