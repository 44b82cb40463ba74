package engine

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kvserver/kvserver/notify"
)

// eventRecorder is an Events that keeps one line per event, and the key
// changes (client-side caching's) apart.
type eventRecorder struct{ got, changed []string }

func (r *eventRecorder) KeyChanged(db int, key string, origin any, expired bool) {
	l := fmt.Sprintf("%d %s %v", db, key, origin)
	if expired {
		l += " expired"
	}
	r.changed = append(r.changed, l)
}

func (r *eventRecorder) Flushed() { r.changed = append(r.changed, "flushed") }

func (r *eventRecorder) KeyEvent(db int, class notify.Class, event, key string, origin any) {
	r.got = append(r.got, fmt.Sprintf("key %d %s %s %v", db, event, key, origin))
}

func (r *eventRecorder) Notifies(notify.Class) bool { return true }

func (r *eventRecorder) ChunkEvent(db int, ev ChunkEvent) {
	r.got = append(r.got, fmt.Sprintf("chunk %d %s %s %s %v %d", db, ev.Kind, ev.Model, ev.Hash, ev.Memory, ev.Bytes))
}

func (r *eventRecorder) take() []string {
	out := r.got
	r.got = nil
	return out
}

func TestEngineEventsInOrder(t *testing.T) {
	e, clock := newTestEngine(0)
	rec := &eventRecorder{}
	e.SetEvents(rec)
	chunk := "llama@1@0@abc@bfloat16"
	e.Update(0, func(tx *Tx) {
		tx.SetOrigin("client 7")
		tx.Set([]byte(chunk+"kv_bytes"), make([]byte, 100), 0)
		tx.Notify(notify.String, "set", []byte(chunk+"kv_bytes"))
		tx.Set([]byte(chunk+"metadata"), make([]byte, 28), 0)
		tx.Set([]byte(chunk+"metadata"), make([]byte, 28), 0) // overwrite: nothing new
	})
	want := []string{
		"key 0 new " + chunk + "kv_bytes client 7",
		"key 0 set " + chunk + "kv_bytes client 7",
		"key 0 new " + chunk + "metadata client 7",
		"chunk 0 whole llama abc true 128",
	}
	if got := rec.take(); !slices.Equal(got, want) {
		t.Errorf("writes:\n got %q\nwant %q", got, want)
	}
	set(e, 2, "k", []byte("v"), clock.Now().Add(time.Second).UnixMilli())
	rec.take()
	clock.Advance(2 * time.Second)
	get(e, 2, "k")
	e.Update(0, func(tx *Tx) { tx.Delete([]byte(chunk + "kv_bytes")) })
	want = []string{
		"key 2 expired k <nil>",
		"key 2 keymiss k <nil>", // the read found nothing, as in Redis
		"chunk 0 deleted llama abc true 128",
	}
	if got := rec.take(); !slices.Equal(got, want) {
		t.Errorf("expiry and delete:\n got %q\nwant %q", got, want)
	}
}

func TestEvictionPublishesEvictedKeysAndChunk(t *testing.T) {
	e, _ := newTestEngine(3000)
	rec := &eventRecorder{}
	e.SetEvents(rec)
	chunk := "llama@1@0@old@bfloat16"
	set(e, 0, chunk+"kv_bytes", make([]byte, 1000), 0)
	set(e, 0, chunk+"metadata", make([]byte, 28), 0)
	rec.take()
	set(e, 0, "big", make([]byte, 2500), 0)
	got := rec.take()
	// The new key comes first (Tx.Set), the eviction after the step.
	if len(got) < 4 || got[0] != "key 0 new big <nil>" || got[1] != "chunk 0 evicted llama old true 1028" {
		t.Fatalf("eviction events %q", got)
	}
	evicted := slices.Sorted(slices.Values(got[2:4]))
	if want := []string{"key 0 evicted " + chunk + "kv_bytes <nil>", "key 0 evicted " + chunk + "metadata <nil>"}; !slices.Equal(evicted, want) {
		t.Errorf("evicted keys %q, want %q", evicted, want)
	}
	for _, g := range got[4:] {
		t.Errorf("unexpected event %q", g)
	}
}

// TestKeyChangesReachTrackingWithTheirOrigin pins down the hook client-side
// caching hangs on: every change to a key (write, expiry change, delete,
// lazy expiry, flush) is reported once, tagged with the step's origin (an
// expiry marked as such), and background work carries none.
func TestKeyChangesReachTrackingWithTheirOrigin(t *testing.T) {
	e, clock := newTestEngine(0)
	rec := &eventRecorder{}
	e.SetEvents(rec)
	e.Update(0, func(tx *Tx) {
		tx.SetOrigin("c1")
		tx.Set([]byte("a"), []byte("1"), 0)
		tx.SetExpire([]byte("a"), clock.Now().UnixMilli()+1000)
		tx.Delete([]byte("a"))
		tx.Set([]byte("b"), []byte("2"), clock.Now().UnixMilli()+10)
	})
	clock.Advance(time.Second)
	e.View(0, func(tx *Tx) {
		tx.SetOrigin("c2")
		tx.Exists([]byte("b"))
	})
	if err := e.FlushAll(t.Context()); err != nil {
		t.Fatal(err)
	}
	want := []string{"0 a c1", "0 a c1", "0 a c1", "0 b c1", "0 b c2 expired", "flushed"}
	if !slices.Equal(rec.changed, want) {
		t.Fatalf("key changes %q, want %q", rec.changed, want)
	}
}

// TestEvictionsReachTrackingWithoutOrigin: a key evicted for room is a
// change no client made (origin nil), even when the step of a client's
// write made the room.
func TestEvictionsReachTrackingWithoutOrigin(t *testing.T) {
	e, _ := newTestEngine(4096)
	rec := &eventRecorder{}
	e.SetEvents(rec)
	for i := range 20 {
		e.Update(0, func(tx *Tx) {
			tx.SetOrigin("writer")
			tx.Set([]byte(fmt.Sprint("k", i)), make([]byte, 512), 0)
		})
	}
	evicted := 0
	for _, l := range rec.changed {
		if strings.HasSuffix(l, " <nil>") {
			evicted++
		}
	}
	if evicted == 0 || e.Stats().EvictedKeys != int64(evicted) {
		t.Fatalf("%d changes without origin, %d evictions: %q", evicted, e.Stats().EvictedKeys, rec.changed)
	}
}
