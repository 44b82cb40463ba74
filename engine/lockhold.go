package engine

import (
	"sync"
	"sync/atomic"
	"time"
)

// holdMutex is the engine lock. It records the longest time it was held,
// so that INFO can show whether some path still does slow work under it
// (disk I/O, decoding); every such path should snapshot under the lock,
// work without it and re-validate by version.
//
// It reads the monotonic clock once when taken and once when released, and
// the wall clock only once a second: time.Now reads both clocks, and where
// a clock read is a slow system call (some virtual machines) the clock
// reads of a GET were a tenth of its cost. The wall time of a step (now)
// is the last wall clock read plus the monotonic time since, so a step of
// the system clock shows within a second.
type holdMutex struct {
	mu sync.Mutex
	// anchor is the last time.Now reading, since the monotonic time from
	// anchor to when the current holder took the lock.
	anchor time.Time
	since  time.Duration
	maxDur atomic.Int64
}

// reanchorAfter is how long the wall clock is derived from the monotonic
// one before it is read again.
const reanchorAfter = time.Second

// Lock takes the lock.
func (m *holdMutex) Lock() {
	m.mu.Lock()
	// A zero anchor gives a huge duration, hence a first reading.
	if m.since = time.Since(m.anchor); m.since >= reanchorAfter || m.since < 0 {
		m.anchor, m.since = time.Now(), 0
	}
}

// now is the wall clock when the holder took the lock.
func (m *holdMutex) now() time.Time { return m.anchor.Add(m.since) }

// Unlock records how long the lock was held and releases it.
func (m *holdMutex) Unlock() {
	if d := int64(time.Since(m.anchor) - m.since); d > m.maxDur.Load() {
		m.maxDur.Store(d) // only the holder stores: no lost update
	}
	m.mu.Unlock()
}

// maxHold returns the longest hold since the last reset.
func (m *holdMutex) maxHold() time.Duration { return time.Duration(m.maxDur.Load()) }
