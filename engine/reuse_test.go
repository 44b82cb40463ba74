package engine

import (
	"bytes"
	"testing"
	"unsafe"
)

// TestSetCopyReusesOnlyAPrivateBuffer: SetCopy takes the key's next value
// into the current value's buffer only while nothing outside the engine
// can hold that buffer: never after a read handed it out, never while a
// write to disk holds it, never for a buffer the caller gave (Set) or one
// too large for the new value.
func TestSetCopyReusesOnlyAPrivateBuffer(t *testing.T) {
	e, _ := newTestEngine(0)
	val := func(c byte, n int) []byte { return bytes.Repeat([]byte{c}, n) }
	buf := func(key string) *byte {
		var p *byte
		e.View(0, func(tx *Tx) { p = unsafe.SliceData(tx.ks.items[key].value) })
		return p
	}
	setCopy := func(key string, v []byte) {
		e.Update(0, func(tx *Tx) { tx.SetCopy([]byte(key), v, 0) })
	}
	check := func(key string, want []byte) {
		t.Helper()
		if got, ok := get(e, 0, key); !ok || !bytes.Equal(got, want) {
			t.Fatalf("%s = %.10q (%d bytes), want %.10q (%d bytes)", key, got, len(got), want, len(want))
		}
	}

	arg := val('a', 4096)
	setCopy("k", arg)
	arg[0] = 'x' // the caller's buffer stays the caller's
	first := buf("k")
	if first == unsafe.SliceData(arg) {
		t.Fatal("SetCopy stored the caller's buffer")
	}
	setCopy("k", val('b', 4000))
	if buf("k") != first {
		t.Fatal("an overwrite of a private value did not reuse its buffer")
	}

	// A read hands the buffer out: the next value gets a new one, and
	// what the reader holds stays as it read it.
	held, _ := get(e, 0, "k")
	setCopy("k", val('c', 4096))
	if buf("k") == first {
		t.Fatal("the buffer a read handed out was reused")
	}
	if !bytes.Equal(held, val('b', 4000)) {
		t.Fatal("a value a reader holds changed")
	}
	check("k", val('c', 4096))

	// A value much smaller than the buffer does not keep it.
	second := buf("k")
	setCopy("k", val('d', 100))
	if buf("k") == second {
		t.Fatal("a 100-byte value kept a 4 KiB buffer")
	}
	check("k", val('d', 100))

	// While the group is being written to disk its values are held.
	setCopy("k", val('e', 100))
	third := buf("k")
	e.mu.Lock()
	g := e.dbs[0].items["k"].grp
	e.beginWriteLocked(g)
	e.mu.Unlock()
	setCopy("k", val('f', 100))
	if buf("k") == third {
		t.Fatal("a value being written to disk was reused")
	}
	e.mu.Lock()
	e.endWriteLocked(g)
	e.mu.Unlock()
	check("k", val('f', 100))

	// A buffer the caller gave (Set) is never reused.
	given := val('g', 4096)
	e.Update(0, func(tx *Tx) { tx.Set([]byte("k"), given, 0) })
	setCopy("k", val('h', 4096))
	if buf("k") == unsafe.SliceData(given) {
		t.Fatal("a buffer given with Set was reused")
	}
	check("k", val('h', 4096))

	// A small value keeps a small buffer (a 1-byte value's is 8 bytes,
	// more than twice its size), up to reuseSmallCap.
	setCopy("s", val('i', 1))
	small := buf("s")
	setCopy("s", val('j', 1))
	if buf("s") != small {
		t.Fatal("a 1-byte overwrite did not reuse the 1-byte value's buffer")
	}
	check("s", val('j', 1))
	setCopy("s", val('k', reuseSmallCap))
	grown := buf("s")
	setCopy("s", val('l', 3))
	if buf("s") != grown {
		t.Fatal("a 3-byte value did not reuse a 64-byte buffer")
	}
	check("s", val('l', 3))
}

// TestOwnedLargeValuesGoToTheValuePoolOnlyWhenNothingElseHoldsThem: the
// buffer of a large value stored with SetOwned goes back to the value pool
// when it is overwritten or deleted, and is taken by the next Get of its
// size; never when a read handed it out, while a disk write holds it, or
// when it was stored with Set (the caller may hold it).
func TestOwnedLargeValuesGoToTheValuePoolOnlyWhenNothingElseHoldsThem(t *testing.T) {
	e, _ := newTestEngine(0)
	pool := e.ValuePool()
	if pool == nil {
		t.Fatal("no value pool by default")
	}
	const size = 1 << 20
	read := func(c byte) []byte { // a value read as a connection reads it
		b := pool.Get(size)
		for i := range b {
			b[i] = c
		}
		pool.EndRead(b)
		return b
	}
	setOwned := func(key string, v []byte) {
		e.Update(0, func(tx *Tx) { tx.SetOwned([]byte(key), v, 0) })
	}
	kept := func() int64 { return pool.Stats().Kept }
	same := func(a, b []byte) bool { return unsafe.SliceData(a) == unsafe.SliceData(b) }

	first := read('a')
	setOwned("k", first)
	setOwned("k", read('b'))
	if kept() != 1 {
		t.Fatalf("an overwritten owned value: %d buffers kept, want 1", kept())
	}
	if again := pool.Get(size); !same(again, first) {
		t.Fatal("the next Get of the size did not take the freed buffer")
	} else {
		pool.EndRead(again)
	}
	if got, _ := get(e, 0, "k"); !bytes.Equal(got, bytes.Repeat([]byte{'b'}, size)) {
		t.Fatal("k changed")
	}

	// k's value was handed out by that read: overwriting it keeps nothing.
	setOwned("k", read('c'))
	if kept() != 1 {
		t.Fatalf("a value a read handed out went to the pool (%d kept)", kept())
	}

	// Deleted: kept.
	setOwned("d", read('d'))
	e.Update(0, func(tx *Tx) { tx.Delete([]byte("d")) })
	if kept() != 2 {
		t.Fatalf("a deleted owned value: %d kept, want 2", kept())
	}

	// Being written to disk: not kept.
	setOwned("w", read('w'))
	e.Update(0, func(tx *Tx) { tx.ks.items["w"].grp.demoting = true })
	setOwned("w", read('x'))
	e.Update(0, func(tx *Tx) { tx.ks.items["w"].grp.demoting = false })
	if kept() != 2 {
		t.Fatalf("a value a disk write held went to the pool (%d kept)", kept())
	}

	// Stored with Set: the caller may hold it.
	e.Update(0, func(tx *Tx) { tx.Set([]byte("s"), read('s'), 0) })
	setOwned("s", read('t'))
	if kept() != 2 {
		t.Fatalf("a value stored with Set went to the pool (%d kept)", kept())
	}
}
