package server

import (
	"context"
	"slices"
	"sync"
)

// bulkBudget bounds the bytes of large values the server holds for clients
// at once, over all connections: request values being read or handled,
// values loaded from disk for a reply, and replies queued for a client
// that has not read them yet. A request value's buffer is allocated at its
// final size before its bytes arrive, and a reply to a GET of a value only
// on disk is a fresh copy, so without a bound 150 clients announcing
// 32 MiB SETs, or 120 clients GETting disk-only values without reading the
// replies, would make the server hold all of it at once. A client that
// would exceed the budget waits, which back-pressures it through TCP.
//
// Bytes are held per client (budgetAccount), so that the budget never
// waits on itself:
//   - a client that holds nothing waits its turn behind earlier waiters
//     until its bytes fit, or until nobody holds anything (a value larger
//     than the whole budget is admitted alone);
//   - a client that already holds bytes for the command it is reading
//     (MSET a <200 MB> b <200 MB>) is admitted when they fit or when it is
//     the only holder; and when every holder is waiting, the one that
//     started waiting first is admitted, since none of them can release
//     anything before it gets its bytes.
//
// A waiting client's context ends when it is killed or its peer is gone
// (budgetWatch), and a client that holds bytes without making progress
// while others wait is disconnected (budgetWatch), so a dead or stalled
// connection cannot keep the budget.
type bulkBudget struct {
	mu    sync.Mutex
	cond  *sync.Cond
	limit int64
	used  int64
	// holders counts the accounts holding bytes; waiters are the accounts
	// waiting in Acquire, in arrival order.
	holders int
	waiters []*budgetAccount
}

func newBulkBudget(limit int64) *bulkBudget {
	b := &bulkBudget{limit: limit}
	b.cond = sync.NewCond(&b.mu)
	return b
}

// budgetAccount is one client's share of a bulkBudget. Its methods are
// called by the client's own goroutine; held and waiting are read by
// others under the budget's lock.
type budgetAccount struct {
	b       *bulkBudget
	held    int64
	waiting bool
	// beforeWait, if set, runs before Acquire waits: the connection
	// leaves its event loop, which must not wait for other clients.
	beforeWait func()
}

func (b *bulkBudget) account() *budgetAccount { return &budgetAccount{b: b} }

// Acquire takes n more bytes for a, waiting (see bulkBudget) until they
// may be taken or ctx ends.
func (a *budgetAccount) Acquire(ctx context.Context, n int64) error {
	if n <= 0 {
		return nil
	}
	b := a.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if a.tryAcquireLocked(n) {
		return nil
	}
	if a.beforeWait != nil {
		a.beforeWait()
	}
	stop := context.AfterFunc(ctx, func() {
		b.mu.Lock()
		b.cond.Broadcast()
		b.mu.Unlock()
	})
	defer stop()
	a.waiting = true
	b.waiters = append(b.waiters, a)
	if a.held > 0 {
		// Every holder may be waiting now: the first of them goes on.
		b.cond.Broadcast()
	}
	defer func() {
		a.waiting = false
		b.waiters = slices.DeleteFunc(b.waiters, func(w *budgetAccount) bool { return w == a })
		// Waiters behind this one may now be first in line.
		b.cond.Broadcast()
	}()
	for !b.mayTakeLocked(a, n) {
		if err := ctx.Err(); err != nil {
			return err
		}
		b.cond.Wait()
	}
	b.addLocked(a, n)
	return nil
}

// tryAcquire takes n more bytes for a if Acquire would without waiting.
func (a *budgetAccount) tryAcquire(n int64) bool {
	if n <= 0 {
		return true
	}
	a.b.mu.Lock()
	defer a.b.mu.Unlock()
	return a.tryAcquireLocked(n)
}

// tryAcquireLocked is tryAcquire under the budget's lock.
func (a *budgetAccount) tryAcquireLocked(n int64) bool {
	b := a.b
	if len(b.waiters) == 0 && b.fitsLocked(a, n) {
		b.addLocked(a, n)
		return true
	}
	return false
}

// fitsLocked reports whether n more bytes for a fit, or a is the only
// holder (nobody holds anything else).
func (b *bulkBudget) fitsLocked(a *budgetAccount, n int64) bool {
	return b.used+n <= b.limit || b.used == a.held
}

// mayTakeLocked is Acquire's rule for a waiting account (see bulkBudget).
func (b *bulkBudget) mayTakeLocked(a *budgetAccount, n int64) bool {
	if a.held == 0 {
		// In arrival order among those that hold nothing, so a large
		// value is not starved by a stream of small ones.
		for _, w := range b.waiters {
			if w == a {
				break
			}
			if w.held == 0 {
				return false
			}
		}
		return b.fitsLocked(a, n)
	}
	if b.fitsLocked(a, n) {
		return true
	}
	waitingHolders := 0
	var first *budgetAccount
	for _, w := range b.waiters {
		if w.held > 0 {
			if first == nil {
				first = w
			}
			waitingHolders++
		}
	}
	return waitingHolders == b.holders && first == a
}

func (b *bulkBudget) addLocked(a *budgetAccount, n int64) {
	if a.held == 0 && n > 0 {
		b.holders++
	}
	a.held += n
	b.used += n
}

// settle sets what a holds to n at once, without waiting: bytes already
// allocated (a reply queued for the client) count even when they exceed
// the budget, and make others wait. settle(0) returns everything.
func (a *budgetAccount) settle(n int64) {
	if a.held == n {
		// Read without the lock: only a's own goroutine changes held.
		// Most commands end here, holding nothing, without touching the
		// lock every client shares.
		return
	}
	b := a.b
	b.mu.Lock()
	if a.held == n {
		b.mu.Unlock()
		return
	}
	if n > a.held {
		b.addLocked(a, n-a.held)
		b.mu.Unlock()
		return
	}
	b.used -= a.held - n
	a.held = n
	if n == 0 {
		b.holders--
	}
	b.mu.Unlock()
	b.cond.Broadcast()
}

// holding returns what a holds and whether it is waiting for more.
func (a *budgetAccount) holding() (held int64, waiting bool) {
	a.b.mu.Lock()
	defer a.b.mu.Unlock()
	return a.held, a.waiting
}

// inUse is the number of bytes taken now.
func (b *bulkBudget) inUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// waiting is the number of clients waiting for bytes.
func (b *bulkBudget) waiting() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.waiters)
}
