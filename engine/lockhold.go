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
type holdMutex struct {
	mu     sync.Mutex
	since  time.Time // when the current holder took it
	maxDur atomic.Int64
}

// Lock takes the lock.
func (m *holdMutex) Lock() {
	m.mu.Lock()
	m.since = time.Now()
}

// Unlock records how long the lock was held and releases it.
func (m *holdMutex) Unlock() {
	if d := int64(time.Since(m.since)); d > m.maxDur.Load() {
		m.maxDur.Store(d) // only the holder stores: no lost update
	}
	m.mu.Unlock()
}

// maxHold returns the longest hold since the last reset.
func (m *holdMutex) maxHold() time.Duration { return time.Duration(m.maxDur.Load()) }
