package resp

import (
	"context"
	"testing"
	"time"
)

func TestBulkBudgetWaitsUntilBytesAreReleased(t *testing.T) {
	b := newBulkBudget(100)
	ctx := context.Background()
	if err := b.acquire(ctx, 60); err != nil {
		t.Fatal(err)
	}
	got := make(chan struct{})
	go func() {
		if err := b.acquire(ctx, 60); err != nil {
			t.Error(err)
		}
		close(got)
	}()
	select {
	case <-got:
		t.Fatal("acquire went past the limit")
	case <-time.After(50 * time.Millisecond):
	}
	b.release(60)
	select {
	case <-got:
	case <-time.After(2 * time.Second):
		t.Fatal("acquire did not resume after release")
	}
	if b.inUse() != 60 {
		t.Fatalf("in use %d, want 60", b.inUse())
	}
}

func TestBulkBudgetAdmitsOneOversizedValueAlone(t *testing.T) {
	b := newBulkBudget(100)
	if err := b.acquire(context.Background(), 1000); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := b.acquire(ctx, 1); err == nil {
		t.Fatal("a second value was admitted beside an oversized one")
	}
}
