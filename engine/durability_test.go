package engine

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kvserver/kvserver/lsm"
)

// diskValue reads key's record straight from the disk tier.
func diskValue(t *testing.T, store *lsm.Store, key string) ([]byte, bool) {
	t.Helper()
	v, _, err := store.Get(context.Background(), 0, []byte(key))
	if err != nil {
		return nil, false
	}
	return v, true
}

// waitFor polls cond for up to d.
func waitFor(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return cond()
}

func TestOverwriteKeepsTheDiskCopyUntilItsSuccessorIsWritten(t *testing.T) {
	for _, tc := range []struct {
		name     string
		diskOnly bool // the value was freed from memory after the write
		change   func(e *Engine, key string)
	}{
		{"SET", false, func(e *Engine, key string) { set(e, 0, key, []byte("new"), 0) }},
		{"SET of a disk-only key", true, func(e *Engine, key string) { set(e, 0, key, []byte("new"), 0) }},
		{"EXPIRE", false, func(e *Engine, key string) {
			e.Update(0, func(tx *Tx) { tx.SetExpire([]byte(key), time.Now().Add(time.Hour).UnixMilli()) })
		}},
		{"EXPIRE of a disk-only key", true, func(e *Engine, key string) {
			e.Update(0, func(tx *Tx) { tx.SetExpire([]byte(key), time.Now().Add(time.Hour).UnixMilli()) })
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, store := openTiered(t, t.TempDir(), 0)
			defer store.Close()
			ctx := context.Background()
			set(e, 0, "user:1", []byte("old"), 0)
			e.mu.Lock()
			if _, err := e.persistLocked(ctx, e.dbs[0].items["user:1"].grp, tc.diskOnly); err != nil {
				e.mu.Unlock()
				t.Fatal(err)
			}
			e.mu.Unlock()
			tc.change(e, "user:1")
			// Until the write-back replaces it, a crash must find the old
			// record, not nothing.
			if v, ok := diskValue(t, store, "user:1"); !ok || string(v) != "old" {
				t.Fatalf("disk copy right after %s = %q, %v; want the old value kept", tc.name, v, ok)
			}
			e.mu.Lock()
			_, err := e.persistLocked(ctx, e.dbs[0].items["user:1"].grp, false)
			it := e.dbs[0].items["user:1"]
			e.mu.Unlock()
			if err != nil {
				t.Fatal(err)
			}
			want := "old"
			if strings.HasPrefix(tc.name, "SET") {
				want = "new"
			}
			v, meta, err := store.Get(ctx, 0, []byte("user:1"))
			if err != nil || string(v) != want || meta.ExpireAt != it.expireAt || !it.onDisk {
				t.Fatalf("after the write-back: disk %q %+v %v, item onDisk %v expire %d",
					v, meta, err, it.onDisk, it.expireAt)
			}
		})
	}
}

func TestHotGroupIsWrittenBackWhileStillBeingWritten(t *testing.T) {
	e, store := openTiered(t, t.TempDir(), 0)
	defer store.Close()
	runEngine(t, e)
	// Rewritten every 50 ms: the group is never idle for writeBehindDelay,
	// yet the disk must get a recent value.
	start := time.Now()
	seq := 0
	for time.Since(start) < 4*time.Second {
		set(e, 0, "hot", []byte(fmt.Sprintf("v%06d", seq)), 0)
		seq++
		time.Sleep(50 * time.Millisecond)
	}
	v, ok := diskValue(t, store, "hot")
	if !ok {
		t.Fatalf("after %d rewrites over %v the disk has no copy of a hot key", seq, time.Since(start))
	}
	var got int
	fmt.Sscanf(string(v), "v%06d", &got)
	// ~20 writes a second: the copy must be at most about 3 s old.
	if seq-got > 3*20+20 {
		t.Fatalf("disk copy is write %d of %d: more than ~3 s stale", got, seq)
	}
}

func TestCloseStopsRunAndWritesTheMarkerOnlyWhenAllIsOnDisk(t *testing.T) {
	dir := t.TempDir()
	e, store := openTiered(t, dir, 4<<20)
	runDone := make(chan struct{})
	go func() { e.Run(context.Background()); close(runDone) }() // never cancelled
	const n = 48
	for i := range n {
		set(e, 0, fmt.Sprintf("k%02d", i), chunkValue(i, 128<<10), 0)
	}
	// A client keeps writing while Close runs.
	type ack struct {
		key string
		val []byte
		at  time.Time
	}
	var mu sync.Mutex
	var acks []ack
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for r := 1; ; r++ {
			for i := range n {
				select {
				case <-stop:
					return
				default:
				}
				k, v := fmt.Sprintf("k%02d", i), chunkValue(i+r, 128<<10)
				set(e, 0, k, v, 0)
				mu.Lock()
				acks = append(acks, ack{k, v, time.Now()})
				mu.Unlock()
			}
		}
	}()
	time.Sleep(300 * time.Millisecond)
	closeErr := e.Close(context.Background())
	closedAt := time.Now()
	close(stop)
	wg.Wait()
	select {
	case <-runDone:
	case <-time.After(10 * time.Second):
		t.Fatal("Run still running 10 s after Close returned")
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	store, err := lsm.Open(context.Background(), lsm.Options{Dir: dir, MaxDisk: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	_, _, merr := store.Get(context.Background(), metaDB, cleanKey)
	clean := merr == nil
	t.Logf("Close: %v; clean-shutdown marker written: %v", closeErr, clean)
	if !clean {
		return // the next start checks for a crash: nothing is promised
	}
	latest := map[string][]byte{}
	for i := range n {
		latest[fmt.Sprintf("k%02d", i)] = chunkValue(i, 128<<10)
	}
	for _, a := range acks {
		if a.at.Before(closedAt) {
			latest[a.key] = a.val
		}
	}
	for k, want := range latest {
		v, ok := diskValue(t, store, k)
		if !ok || !bytes.Equal(v, want) {
			t.Errorf("marker written, but %s on disk is not its last value acknowledged before Close returned (present %v)", k, ok)
		}
	}
}
