// Package wake wakes background workers: Signal, a wake-up that coalesces
// while its worker is busy, and Every, a loop on a ticker. Both end when
// their context does.
package wake

import (
	"context"
	"time"
)

// Signal wakes one worker. Any number of Notify calls made while the worker
// is busy wake it once. Make one with New; copies share the wake-up.
type Signal struct {
	ch chan struct{}
}

// New returns a Signal with no wake-up pending.
func New() Signal { return Signal{ch: make(chan struct{}, 1)} }

// Notify wakes the worker, without blocking; it does nothing when a
// wake-up is already pending.
func (s Signal) Notify() {
	select {
	case s.ch <- struct{}{}:
	default:
	}
}

// C delivers the wake-ups, for a worker that also waits on other channels.
func (s Signal) C() <-chan struct{} { return s.ch }

// Wait blocks until a wake-up, reporting true, or until ctx ends,
// reporting false.
func (s Signal) Wait(ctx context.Context) bool {
	select {
	case <-ctx.Done():
		return false
	case <-s.ch:
		return true
	}
}

// Every calls fn with the tick's time every d until ctx ends. The first
// call comes d after Every starts.
func Every(ctx context.Context, d time.Duration, fn func(now time.Time)) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			fn(now)
		}
	}
}
