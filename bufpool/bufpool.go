// Package bufpool keeps the buffers of large request values that the store
// has let go of, so that the next large value is read into memory the
// process already has instead of pages fresh from the operating system.
//
// A large value (a SET of 1 MiB or more) is read into a buffer of its own,
// which the store keeps as the value. Allocating it from the Go heap each
// time costs twice on a small VM: the heap grows by its garbage before a
// collection frees the old values, and every page of that growth is a page
// fault (the kernel zeroes the page, and on a VM the host backs it): at 1
// MiB SETs the faults took a quarter of the server's CPU. Redis's allocator
// hands a SET the chunk the last one freed; this pool does the same for
// large values: when the store overwrites or deletes a value whose buffer
// nothing else holds (engine: a private value), the buffer comes here, and
// the next Get of that size takes it.
//
// A buffer is reused only once nothing can read it any more. The store
// gives back only buffers it holds alone (never one a reply or a disk
// write holds), and the command that read the value into it may still
// read its arguments after the store took them (MONITOR, the slow log):
// a buffer given back before that command ended waits for EndRead, which
// the connection calls when the command is done.
//
// Buffers are kept by capacity, a multiple of the runtime's 8 KiB page
// (what a large allocation takes anyway), so a Get finds one of the exact
// size it would allocate. The pool holds at most Max bytes of free
// buffers; beyond that, a buffer given back is left to the garbage
// collector.
package bufpool

import (
	"strings"
	"sync"
	"unsafe"
)

// MinSize is the smallest value whose buffer is pooled: smaller ones are
// cheap to allocate (they come from the heap's size classes) and are
// copied under the engine lock instead (engine.MaxCopiedValue).
const MinSize = 256 << 10

// DefaultMax is the free-buffer bound of the server's pool: a burst of
// overwrites reuses buffers as fast as it frees them, so the free ones
// are what deletes and the gaps between reads and writes leave; and it is
// resident memory an idle server keeps.
const DefaultMax = 64 << 20

// pageSize is the granule of the runtime's large allocations.
const pageSize = 8 << 10

// Pool is a pool of large value buffers. The zero value is not usable; use
// New. Its methods are safe for concurrent use.
type Pool struct {
	max int64

	mu    sync.Mutex
	free  map[int][][]byte // by capacity
	bytes int64            // of the free buffers
	// reading holds the buffers handed out by Get whose command has not
	// ended (EndRead), with whether the store gave the buffer back
	// meanwhile.
	reading map[*byte]bool

	stats Stats
}

// Stats counts a pool's work.
type Stats struct {
	// Reused counts the Gets that took a free buffer, Allocated those that
	// allocated one.
	Reused, Allocated int64
	// Kept counts the buffers given back that were kept; Dropped those
	// left to the garbage collector (the pool full, or not a pooled size).
	Kept, Dropped int64
	// FreeBytes is the bytes of the free buffers; Reading the buffers
	// whose command has not ended.
	FreeBytes int64
	Reading   int
}

// New returns a pool that keeps at most max bytes of free buffers.
func New(max int64) *Pool {
	return &Pool{max: max, free: map[int][][]byte{}, reading: map[*byte]bool{}}
}

// classOf is the capacity of the buffer a value of n bytes gets.
func classOf(n int) int { return (n + pageSize - 1) &^ (pageSize - 1) }

// Get returns a buffer of n bytes (n >= MinSize) whose contents are
// undefined: the caller writes every byte before reading any. The caller
// calls EndRead with it once the command that reads the value into it has
// ended, whatever became of the buffer.
func (p *Pool) Get(n int) []byte {
	class := classOf(n)
	p.mu.Lock()
	defer p.mu.Unlock()
	var b []byte
	if list := p.free[class]; len(list) > 0 {
		b = list[len(list)-1][:n:class]
		list[len(list)-1] = nil
		p.free[class] = list[:len(list)-1]
		p.bytes -= int64(class)
		p.stats.Reused++
	} else {
		// Allocated without the lock: a large allocation may do garbage
		// collection work first, and other connections' Gets need not wait.
		p.mu.Unlock()
		b = uninitialized(class)[:n:class]
		p.mu.Lock()
		p.stats.Allocated++
	}
	p.reading[unsafe.SliceData(b)] = false
	return b
}

// EndRead ends the read of b, a buffer from Get: the command that read a
// value into it has ended. A buffer the store gave back meanwhile becomes
// free.
func (p *Pool) EndRead(b []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	key := unsafe.SliceData(b)
	returned, ok := p.reading[key]
	if !ok {
		return
	}
	delete(p.reading, key)
	if returned {
		p.keepLocked(b)
	}
}

// Put gives b back: the store held it alone and has let go of it. Only
// buffers of a pooled capacity (as Get makes them) are kept.
func (p *Pool) Put(b []byte) {
	if cap(b) < MinSize || cap(b)%pageSize != 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	key := unsafe.SliceData(b)
	if _, ok := p.reading[key]; ok {
		p.reading[key] = true // kept at EndRead
		return
	}
	p.keepLocked(b)
}

// keepLocked adds b to the free buffers if there is room.
func (p *Pool) keepLocked(b []byte) {
	class := cap(b)
	if p.bytes+int64(class) > p.max {
		p.stats.Dropped++
		return
	}
	for _, f := range p.free[class] {
		if unsafe.SliceData(f) == unsafe.SliceData(b) {
			return // given back twice: kept once, or two Gets would share it
		}
	}
	p.free[class] = append(p.free[class], b[:0])
	p.bytes += int64(class)
	p.stats.Kept++
}

// Stats returns the pool's counters.
func (p *Pool) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.stats
	s.FreeBytes, s.Reading = p.bytes, len(p.reading)
	return s
}

// uninitialized returns n bytes of new memory that the runtime did not
// clear (strings.Builder.Grow allocates through the runtime's MakeNoZero):
// clearing would write every byte the read then writes again. Package resp
// has the same function for the bulks it allocates itself; it may import
// no kvserver package (TestRespIsWireFormatOnly).
func uninitialized(n int) []byte {
	var b strings.Builder
	b.Grow(n)
	b.WriteByte(0) // gives String a data pointer; cap stays >= n
	return unsafe.Slice(unsafe.StringData(b.String()), n)[:n:n]
}
