package engine

import (
	"testing"
	"time"
)

// TestLockClockFollowsTheWallClock checks the engine lock's clock: the
// wall time a holder sees is the real one (from the zero value on, and
// after the once-a-second wall clock read), and a long hold is recorded.
func TestLockClockFollowsTheWallClock(t *testing.T) {
	var m holdMutex
	check := func(what string) {
		t.Helper()
		m.Lock()
		got, want := m.now(), time.Now()
		m.Unlock()
		if d := want.Sub(got); d < 0 || d > 50*time.Millisecond {
			t.Errorf("%s: lock clock %v, wall clock %v", what, got, want)
		}
	}
	check("first lock")
	time.Sleep(20 * time.Millisecond)
	check("between wall clock reads")
	m.Lock()
	time.Sleep(30 * time.Millisecond)
	m.Unlock()
	if got := m.maxHold(); got < 30*time.Millisecond || got > 10*time.Second {
		t.Errorf("maxHold = %v after a 30ms hold", got)
	}
	m.Lock()
	m.anchor = m.anchor.Add(-2 * reanchorAfter) // as if a second had passed
	m.mu.Unlock()
	check("after a wall clock read")
}
