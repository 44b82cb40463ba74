package engine

import (
	"context"
	"testing"
	"time"
)

// watch takes marks on keys of db.
func watch(e *Engine, db int, keys ...string) []WatchMark {
	var marks []WatchMark
	e.View(db, func(tx *Tx) {
		for _, k := range keys {
			marks = append(marks, tx.Watch([]byte(k)))
		}
	})
	return marks
}

func TestWatchSeesEveryKindOfChange(t *testing.T) {
	ctx := context.Background()
	e, clock := newTestEngine(0)
	now := func() int64 { return clock.Now().UnixMilli() }
	cases := []struct {
		name    string
		setup   func()
		change  func()
		changed bool
	}{
		{"nothing", func() { set(e, 0, "k", []byte("v"), 0) }, func() {}, false},
		{"read", func() { set(e, 0, "k", []byte("v"), 0) }, func() { get(e, 0, "k") }, false},
		{"other key", func() {}, func() { set(e, 0, "other", []byte("v"), 0) }, false},
		{"same key other db", func() {}, func() { set(e, 1, "k", []byte("v"), 0) }, false},
		{"set", func() {}, func() { set(e, 0, "k", []byte("v"), 0) }, true},
		{"set same value", func() { set(e, 0, "k", []byte("v"), 0) }, func() { set(e, 0, "k", []byte("v"), 0) }, true},
		{"delete", func() { set(e, 0, "k", []byte("v"), 0) },
			func() { e.Update(0, func(tx *Tx) { tx.Delete([]byte("k")) }) }, true},
		{"expire set", func() { set(e, 0, "k", []byte("v"), 0) },
			func() { e.Update(0, func(tx *Tx) { tx.SetExpire([]byte("k"), now()+100000) }) }, true},
		{"expiry passes", func() { set(e, 0, "k", []byte("v"), now()+1000) },
			func() { clock.Advance(2 * time.Second) }, true},
		{"expired key reclaimed", func() { set(e, 0, "k", []byte("v"), now()+1000) },
			func() { clock.Advance(2 * time.Second); get(e, 0, "k") }, true},
		{"flushdb of the key", func() { set(e, 0, "k", []byte("v"), 0) },
			func() { e.FlushDB(ctx, 0) }, true},
		{"flushdb without the key", func() { set(e, 0, "x", []byte("v"), 0) },
			func() { e.FlushDB(ctx, 0) }, false},
		{"flushall", func() { set(e, 0, "k", []byte("v"), 0) },
			func() { e.FlushAll(ctx) }, true},
		{"swapdb brings the key", func() { set(e, 1, "k", []byte("v"), 0) },
			func() { e.SwapDB(ctx, 0, 1) }, true},
		{"swapdb without the key", func() { set(e, 1, "x", []byte("v"), 0) },
			func() { e.SwapDB(ctx, 0, 1) }, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e.FlushAll(ctx)
			c.setup()
			marks := watch(e, 0, "k")
			c.change()
			if got := e.WatchChanged(marks); got != c.changed {
				t.Errorf("WatchChanged = %v, want %v", got, c.changed)
			}
			e.Unwatch(marks)
		})
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.watches) != 0 {
		t.Errorf("%d keys still watched after every mark was released", len(e.watches))
	}
}

// A key that had already expired when it was watched is no change when it
// is reclaimed, as in Redis; written again, it is.
func TestWatchOfAnExpiredKey(t *testing.T) {
	e, clock := newTestEngine(0)
	set(e, 0, "k", []byte("v"), clock.Now().UnixMilli()+1000)
	clock.Advance(2 * time.Second)
	marks := watch(e, 0, "k")
	get(e, 0, "k") // reclaims it
	if e.WatchChanged(marks) {
		t.Error("reclaiming a key expired before WATCH counted as a change")
	}
	set(e, 0, "k", []byte("v2"), 0)
	if !e.WatchChanged(marks) {
		t.Error("writing the key did not count as a change")
	}
	e.Unwatch(marks)
}
