package wake

import (
	"context"
	"testing"
	"time"
)

func TestNotifiesCoalesceIntoOneWakeUp(t *testing.T) {
	s := New()
	s.Notify()
	s.Notify()
	if !s.Wait(context.Background()) {
		t.Fatal("Wait after Notify reported false")
	}
	select {
	case <-s.C():
		t.Fatal("two Notify calls gave two wake-ups")
	default:
	}
}

func TestWaitEndsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if New().Wait(ctx) {
		t.Fatal("Wait on an ended context reported true")
	}
}

func TestEveryTicksUntilContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	Every(ctx, time.Millisecond, func(time.Time) {
		calls++
		if calls == 3 {
			cancel()
		}
	})
	// A tick ready together with the end of ctx may still be delivered.
	if calls < 3 || calls > 4 {
		t.Fatalf("fn called %d times, want 3 (or 4)", calls)
	}
}
