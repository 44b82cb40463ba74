package server

import (
	"strings"
	"testing"
	"time"
)

// TestWallClockFollowsTimeNow checks that the derived clock never goes
// back, stays within a millisecond of time.Now, and keeps a monotonic
// reading (time.Since of it is exact).
func TestWallClockFollowsTimeNow(t *testing.T) {
	var w wallClock
	prev := w.Now()
	for i := range 20000 {
		before := time.Now()
		now := w.Now()
		after := time.Now()
		if now.Before(prev) {
			t.Fatalf("reading %d went back: %v after %v", i, now, prev)
		}
		if now.Before(before.Add(-time.Millisecond)) || now.After(after.Add(time.Millisecond)) {
			t.Fatalf("reading %d: %v, not between %v and %v", i, now, before, after)
		}
		if !strings.Contains(now.String(), " m=") {
			t.Fatalf("reading %d has no monotonic clock", i)
		}
		prev = now
	}
}
