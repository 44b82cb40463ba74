package resp

import (
	"context"
	"sync"
)

// bulkBudget bounds the bytes of large request values that are being read
// or handled at once, over all connections. A value's buffer is allocated
// at its final size before its bytes arrive, so without a bound 150 clients
// announcing 32 MiB SETs (or a hostile client announcing many 512 MiB bulks)
// would make the server allocate all of it at once. A reader that would
// exceed the budget waits, which back-pressures its client through TCP; a
// value larger than the whole budget is admitted alone.
type bulkBudget struct {
	mu    sync.Mutex
	cond  *sync.Cond
	limit int64
	used  int64
}

func newBulkBudget(limit int64) *bulkBudget {
	b := &bulkBudget{limit: limit}
	b.cond = sync.NewCond(&b.mu)
	return b
}

// acquire takes n bytes, waiting while they do not fit, until ctx ends.
func (b *bulkBudget) acquire(ctx context.Context, n int64) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n <= b.limit || b.used == 0 {
		b.used += n
		return nil
	}
	stop := context.AfterFunc(ctx, func() {
		b.mu.Lock()
		b.cond.Broadcast()
		b.mu.Unlock()
	})
	defer stop()
	for b.used+n > b.limit && b.used > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		b.cond.Wait()
	}
	b.used += n
	return nil
}

// release returns n bytes.
func (b *bulkBudget) release(n int64) {
	if n == 0 {
		return
	}
	b.mu.Lock()
	b.used -= n
	b.mu.Unlock()
	b.cond.Broadcast()
}

// inUse is the number of bytes taken now.
func (b *bulkBudget) inUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}
