package server

import (
	"testing"
	"time"
)

// TestScriptRunIsReusedOnlyWhenNobodyHoldsIt checks the reuse of a script's
// run: a run another goroutine acquired is not handed to the next script,
// even after it ended, and a reused one starts as new (not ended, no
// waiters' channel, no write seen).
func TestScriptRunIsReusedOnlyWhenNobodyHoldsIt(t *testing.T) {
	var sp scripts
	first := sp.newRun(nil, false, time.Now())
	sp.running.Store(first)
	held := sp.acquireRunning()
	if held != first {
		t.Fatalf("acquireRunning = %p, want the running %p", held, first)
	}
	first.wrote.Store(true)
	done := first.wait()
	sp.running.Store(nil)
	first.end()
	sp.retire(first)
	second := sp.newRun(nil, true, time.Now())
	if second == first {
		t.Fatal("a run still held was reused")
	}
	select {
	case <-done:
	default:
		t.Fatal("the held run's waiters were not woken when it ended")
	}
	held.release()

	sp.running.Store(second)
	second.wrote.Store(true)
	second.wait()
	sp.running.Store(nil)
	second.end()
	sp.retire(second)
	third := sp.newRun(nil, false, time.Now())
	if third != second {
		t.Fatal("a run nobody held was not reused")
	}
	if third.wrote.Load() || third.ended || third.done != nil || third.function {
		t.Fatalf("the reused run kept its last script's state: wrote %v ended %v done %v function %v",
			third.wrote.Load(), third.ended, third.done != nil, third.function)
	}
	if sp.acquireRunning() != nil {
		t.Fatal("acquireRunning found a script where none runs")
	}
}
