package bufpool

import (
	"testing"
	"unsafe"
)

func same(a, b []byte) bool { return unsafe.SliceData(a) == unsafe.SliceData(b) }

// TestGetReusesAGivenBackBufferOfItsSize: a buffer given back after its
// read ended is the next Get of a value of its size class, and of no
// other.
func TestGetReusesAGivenBackBufferOfItsSize(t *testing.T) {
	p := New(64 << 20)
	a := p.Get(1<<20 + 100)
	if len(a) != 1<<20+100 || cap(a)%pageSize != 0 {
		t.Fatalf("Get: len %d cap %d", len(a), cap(a))
	}
	p.EndRead(a)
	p.Put(a)
	if other := p.Get(2 << 20); same(other, a) {
		t.Fatal("a 2 MiB Get took a 1 MiB buffer")
	}
	b := p.Get(1<<20 + 5) // same 8 KiB class
	if !same(a, b) || len(b) != 1<<20+5 {
		t.Fatalf("the Get of the same class did not reuse the buffer (len %d)", len(b))
	}
	if c := p.Get(1<<20 + 5); same(c, b) {
		t.Fatal("one free buffer was handed out twice")
	}
	st := p.Stats()
	if st.Reused != 1 || st.Allocated != 3 || st.FreeBytes != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// TestABufferGivenBackWhileItsCommandRunsWaitsForEndRead: the store may
// let go of a value before the command that read it has ended (another
// client overwrote the key); the buffer is not reused until EndRead.
func TestABufferGivenBackWhileItsCommandRunsWaitsForEndRead(t *testing.T) {
	p := New(64 << 20)
	a := p.Get(MinSize)
	p.Put(a) // the command that read a still runs
	if b := p.Get(MinSize); same(a, b) {
		t.Fatal("a buffer whose command had not ended was reused")
	}
	p.EndRead(a)
	if b := p.Get(MinSize); !same(a, b) {
		t.Fatal("the buffer was not reused once its command ended")
	}
	// A buffer never given back is forgotten at EndRead: no entry stays.
	c := p.Get(MinSize)
	p.EndRead(c)
	p.EndRead(c)                          // twice is harmless
	if st := p.Stats(); st.Reading != 2 { // the two Gets above not ended
		t.Fatalf("%d buffers reading, want 2", st.Reading)
	}
}

// TestPutKeepsOnlyPooledSizesUpToMax: buffers the pool would not have
// made, and those past its bound, are left to the garbage collector; one
// given back twice is kept once.
func TestPutKeepsOnlyPooledSizesUpToMax(t *testing.T) {
	p := New(2 << 20)
	p.Put(make([]byte, MinSize+1)) // not a page multiple
	p.Put(make([]byte, 64<<10))    // too small
	p.Put(make([]byte, 0, 1<<20))  // kept
	p.Put(make([]byte, 0, 1<<20))  // kept: 2 MiB
	p.Put(make([]byte, 0, 1<<20))  // past the bound
	if st := p.Stats(); st.FreeBytes != 2<<20 || st.Kept != 2 || st.Dropped != 1 {
		t.Fatalf("stats %+v", st)
	}
	q := New(64 << 20)
	b := q.Get(1 << 20)
	q.EndRead(b)
	q.Put(b)
	q.Put(b)
	if st := q.Stats(); st.FreeBytes != 1<<20 {
		t.Fatalf("a buffer given back twice counts %d free bytes", st.FreeBytes)
	}
	if x, y := q.Get(1<<20), q.Get(1<<20); same(x, y) {
		t.Fatal("a buffer given back twice was handed out twice")
	}
}
