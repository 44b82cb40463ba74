package server

import (
	"context"
	"testing"
	"time"
)

// acquireAsync starts a.Acquire(ctx, n) and returns a channel that gets its
// result.
func acquireAsync(ctx context.Context, a *budgetAccount, n int64) <-chan error {
	done := make(chan error, 1)
	go func() { done <- a.Acquire(ctx, n) }()
	return done
}

func mustWait(t *testing.T, done <-chan error, what string) {
	t.Helper()
	select {
	case err := <-done:
		t.Fatalf("%s went through (err %v), want it to wait", what, err)
	case <-time.After(50 * time.Millisecond):
	}
}

func mustGet(t *testing.T, done <-chan error, what string) {
	t.Helper()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("%s still waits", what)
	}
}

func TestBulkBudgetWaitsUntilBytesAreReleased(t *testing.T) {
	b := newBulkBudget(100)
	ctx := context.Background()
	a, c := b.account(), b.account()
	if err := a.Acquire(ctx, 60); err != nil {
		t.Fatal(err)
	}
	got := acquireAsync(ctx, c, 60)
	mustWait(t, got, "acquire past the limit")
	a.settle(0)
	mustGet(t, got, "acquire after release")
	if b.inUse() != 60 {
		t.Fatalf("in use %d, want 60", b.inUse())
	}
}

func TestBulkBudgetAdmitsOneOversizedValueAlone(t *testing.T) {
	b := newBulkBudget(100)
	if err := b.account().Acquire(context.Background(), 1000); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := b.account().Acquire(ctx, 1); err == nil {
		t.Fatal("a second value was admitted beside an oversized one")
	}
}

// MSET a <200 MB> b <200 MB> against a 256 MB budget: the second value
// must not wait for the first, which the same command holds.
func TestBulkBudgetAdmitsTheOnlyHolderPastTheLimit(t *testing.T) {
	b := newBulkBudget(100)
	a := b.account()
	ctx := context.Background()
	if err := a.Acquire(ctx, 80); err != nil {
		t.Fatal(err)
	}
	mustGet(t, acquireAsync(ctx, a, 80), "second value of the only holder")
	if b.inUse() != 160 {
		t.Fatalf("in use %d, want 160", b.inUse())
	}
	a.settle(0)
	if b.inUse() != 0 {
		t.Fatalf("in use %d after settle(0), want 0", b.inUse())
	}
}

// Two commands each holding part of the budget and each waiting for more
// would wait for each other forever: the first to wait goes on.
func TestBulkBudgetBreaksAWaitBetweenHolders(t *testing.T) {
	b := newBulkBudget(100)
	ctx := context.Background()
	x, y := b.account(), b.account()
	if err := x.Acquire(ctx, 60); err != nil {
		t.Fatal(err)
	}
	if err := y.Acquire(ctx, 30); err != nil {
		t.Fatal(err)
	}
	xMore := acquireAsync(ctx, x, 60)
	mustWait(t, xMore, "x's second value while y holds and runs")
	yMore := acquireAsync(ctx, y, 60)
	mustGet(t, xMore, "x, first of two waiting holders")
	mustWait(t, yMore, "y while x holds 120")
	x.settle(0)
	mustGet(t, yMore, "y after x finished")
}

// A client closed or killed while it waits gets an error, takes nothing,
// and what it held returns when its connection ends (settle(0)).
func TestBulkBudgetWaitEndsWithTheClient(t *testing.T) {
	b := newBulkBudget(100)
	other, a := b.account(), b.account()
	if err := other.Acquire(context.Background(), 70); err != nil {
		t.Fatal(err)
	}
	if err := a.Acquire(context.Background(), 20); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	got := acquireAsync(ctx, a, 50)
	mustWait(t, got, "a's second value")
	if b.waiting() != 1 {
		t.Fatalf("waiting %d, want 1", b.waiting())
	}
	cancel()
	select {
	case err := <-got:
		if err == nil {
			t.Fatal("a cancelled wait took the bytes")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a cancelled wait did not end")
	}
	a.settle(0)
	if b.inUse() != 70 || b.waiting() != 0 {
		t.Fatalf("in use %d, waiting %d; want 70, 0", b.inUse(), b.waiting())
	}
}

// Those that hold nothing are served in arrival order, so a large value is
// not passed forever by small ones.
func TestBulkBudgetServesNewcomersInOrder(t *testing.T) {
	b := newBulkBudget(100)
	ctx := context.Background()
	first, big, small := b.account(), b.account(), b.account()
	if err := first.Acquire(ctx, 50); err != nil {
		t.Fatal(err)
	}
	bigGot := acquireAsync(ctx, big, 90)
	mustWait(t, bigGot, "90 beside 50")
	smallGot := acquireAsync(ctx, small, 10)
	mustWait(t, smallGot, "10 behind a waiting 90")
	first.settle(0)
	mustGet(t, bigGot, "90 once alone")
	mustGet(t, smallGot, "10 beside 90")
}
