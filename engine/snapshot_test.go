package engine

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/kvserver/kvserver/datatype"
	"github.com/kvserver/kvserver/disktier"
)

// pausedZSet is a real sorted set whose disk encoding reports whether the
// engine lock was free when it began, then waits for release: the test
// runs other steps while the encoder is reading the object.
type pausedZSet struct {
	*datatype.ZSet
	mu       *holdMutex
	lockFree chan bool
	release  chan struct{}
}

func (p *pausedZSet) AppendBinary(dst []byte) []byte {
	free := p.mu.mu.TryLock()
	if free {
		p.mu.mu.Unlock()
	}
	p.lockFree <- free
	<-p.release
	return p.ZSet.AppendBinary(dst)
}

var testZSetLimits = datatype.ZSetLimits{MaxListpackEntries: 128, MaxListpackValue: 64}

// within runs fn and fails the test if it has not returned after 10 s.
func within(t *testing.T, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { fn(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: blocked while an object was being encoded", what)
	}
}

// diskZSet decodes key's record from the disk tier.
func diskZSet(t *testing.T, e *Engine, key string) *datatype.ZSet {
	t.Helper()
	v, _, err := e.cold.Get(context.Background(), 0, []byte(key))
	if err != nil {
		t.Fatalf("disk record of %s: %v", key, err)
	}
	obj, err := datatype.Decode(datatype.KindZSet, v)
	if err != nil {
		t.Fatal(err)
	}
	return obj.(*datatype.ZSet)
}

func TestObjectsAreEncodedOutsideTheLockAndWritesWaitForTheEncoder(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name    string
		persist func(e *Engine, g *group) error
	}{
		{"write-behind", func(e *Engine, g *group) error {
			return writeBehindNow(ctx, e, g)
		}},
		{"demotion", func(e *Engine, g *group) error {
			e.mu.Lock()
			defer e.mu.Unlock()
			_, err := e.demoteLocked(ctx, g)
			return err
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, store := openTiered(t, t.TempDir(), 0)
			defer store.Close()
			const members = 1000
			z := datatype.NewZSet()
			for i := range members {
				z.Set("m"+strconv.Itoa(i), float64(i), testZSetLimits)
			}
			p := &pausedZSet{ZSet: z, mu: &e.mu, lockFree: make(chan bool, 4), release: make(chan struct{})}
			key := []byte("z")
			e.Update(0, func(tx *Tx) { tx.SetObject(key, p, 0) })
			e.mu.Lock()
			g := e.dbs[0].items["z"].grp
			e.mu.Unlock()

			persisted := make(chan error, 1)
			go func() { persisted <- c.persist(e, g) }()
			if free := <-p.lockFree; !free {
				t.Fatal("the object was encoded under the engine lock")
			}
			// While the encoder reads the object, reads of it and steps on
			// other keys go on.
			within(t, "a read of the object", func() {
				e.View(0, func(tx *Tx) {
					obj, err := tx.Object(key, datatype.KindZSet, true)
					if err != nil || obj.Len() != members {
						t.Errorf("read during encoding: %v %v", obj, err)
					}
				})
			})
			within(t, "a write of another key", func() { set(e, 0, "other", []byte("v"), 0) })
			// A write command waits before its step, without the lock.
			short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
			e.AwaitEncoded(short, 0, [][]byte{key}, nil)
			if short.Err() == nil {
				t.Fatal("AwaitEncoded returned while the object was being encoded")
			}
			cancel()
			// A step that did not wait must wait for the encoder before it
			// changes the object in place.
			wrote := make(chan struct{})
			go func() {
				defer close(wrote)
				e.Update(0, func(tx *Tx) {
					obj, err := tx.Object(key, datatype.KindZSet, false)
					if err != nil {
						t.Error(err)
						return
					}
					obj.(*pausedZSet).Set("new", -1, testZSetLimits)
					tx.Modified(key)
				})
			}()
			for deadline := time.Now().Add(10 * time.Second); e.snapshotWaits.Load() == 0; {
				if time.Now().After(deadline) {
					t.Fatal("the write did not wait for the encoder")
				}
				time.Sleep(time.Millisecond)
			}
			close(p.release)
			if err := <-persisted; err != nil {
				t.Fatal(err)
			}
			<-wrote
			within(t, "AwaitEncoded after the encoding", func() { e.AwaitEncoded(ctx, 0, [][]byte{key}, nil) })

			// The disk has the state the object had when the write was
			// prepared; the later write keeps the value in memory, the group
			// dirty, and the next write-behind writes it.
			if d := diskZSet(t, e, "z"); d.Len() != members {
				t.Fatalf("disk record has %d members, want the %d before the write", d.Len(), members)
			}
			e.mu.Lock()
			it := e.dbs[0].items["z"]
			_, dirty := e.dirty[g]
			state := [4]bool{it.resident, it.onDisk, it.diskOld, dirty}
			left := len(e.snapshots) + int(e.snapshotsPub.Load())
			e.mu.Unlock()
			if state != [4]bool{true, false, true, true} {
				t.Fatalf("after a write during the encoding: resident, onDisk, diskOld, dirty = %v", state)
			}
			if left != 0 {
				t.Fatalf("%d snapshots left", left)
			}
			if err := writeBehindNow(ctx, e, g); err != nil {
				t.Fatal(err)
			}
			if d := diskZSet(t, e, "z"); d.Len() != members+1 {
				t.Fatalf("after the next write-behind the disk record has %d members, want %d", d.Len(), members+1)
			} else if _, ok := d.Score("new"); !ok {
				t.Fatal("the member written during the encoding never reached the disk")
			}
		})
	}
}

func TestDemotionFreesAnObjectEncodedWithoutTheLock(t *testing.T) {
	ctx := context.Background()
	e, store := openTiered(t, t.TempDir(), 0)
	defer store.Close()
	z := datatype.NewZSet()
	for i := range 500 {
		z.Set("m"+strconv.Itoa(i), float64(i), testZSetLimits)
	}
	e.Update(0, func(tx *Tx) { tx.SetObject([]byte("z"), z, 0) })
	e.mu.Lock()
	it := e.dbs[0].items["z"]
	_, err := e.demoteLocked(ctx, it.grp)
	resident, left := it.resident, len(e.snapshots)
	e.mu.Unlock()
	if err != nil || resident || left != 0 {
		t.Fatalf("demotion: err %v, resident %v, %d snapshots left", err, resident, left)
	}
	e.View(0, func(tx *Tx) {
		obj, err := tx.Object([]byte("z"), datatype.KindZSet, true)
		if err != nil || obj == nil || obj.Len() != 500 {
			t.Fatalf("read back after demotion: %v %v", obj, err)
		}
	})
}

func TestPreloadDecodesObjectsAndDropsOnesThatDoNotDecode(t *testing.T) {
	ctx := context.Background()
	e, store := openTiered(t, t.TempDir(), 0)
	defer store.Close()
	for _, key := range []string{"good", "bad"} {
		z := datatype.NewZSet()
		for i := range 300 {
			z.Set("m"+strconv.Itoa(i), float64(i), testZSetLimits)
		}
		e.Update(0, func(tx *Tx) { tx.SetObject([]byte(key), z, 0) })
		e.mu.Lock()
		_, err := e.demoteLocked(ctx, e.dbs[0].items[key].grp)
		e.mu.Unlock()
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := store.Put(ctx, 0, []byte("bad"), []byte{1, 9, 9}, disktier.RecordMeta{Kind: uint8(datatype.KindZSet)}); err != nil {
		t.Fatal(err)
	}
	before := e.Stats().Memory.Promotions
	e.Preload(ctx, 0, [][]byte{[]byte("good"), []byte("bad")})
	e.mu.Lock()
	good, bad := e.dbs[0].items["good"], e.dbs[0].items["bad"]
	e.mu.Unlock()
	if good == nil || !good.resident || good.obj == nil || good.obj.Len() != 300 {
		t.Fatalf("good sorted set after Preload: %+v", good)
	}
	if bad != nil {
		t.Fatal("a record that does not decode was kept")
	}
	if n := e.Stats().Memory.Promotions - before; n != 1 {
		t.Fatalf("%d promotions, want 1", n)
	}
}
