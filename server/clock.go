package server

import (
	"sync/atomic"
	"time"
)

// wallClock gives the time from one clock reading instead of time.Now's
// two (the wall clock and the monotonic one, two vDSO calls, each 15-20 ns
// on this VM): a command reads the time at its start and end, and EXEC for
// each command it runs, where the clock was 7% of a MULTI of 10 SETs. It
// reads the wall clock once a second and derives it in between from the
// monotonic clock, as the engine lock does (engine.holdMutex), so a step
// of the system clock shows within a second.
type wallClock struct {
	anchor atomic.Pointer[time.Time]
}

// wallClockReread is how long the wall clock is derived before it is read
// again.
const wallClockReread = time.Second

// Now is time.Now, with a monotonic reading.
func (w *wallClock) Now() time.Time {
	if a := w.anchor.Load(); a != nil {
		if d := time.Since(*a); d >= 0 && d < wallClockReread {
			return a.Add(d)
		}
	}
	now := time.Now()
	w.anchor.Store(&now)
	return now
}
