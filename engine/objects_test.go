package engine

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/kvserver/kvserver/datatype"
)

var testHashLimits = datatype.HashLimits{MaxListpackEntries: 128, MaxListpackValue: 64}

func hashField(i, j int) (string, string) {
	return fmt.Sprintf("f%03d", j), fmt.Sprintf("value-%d-%d-%0100d", i, j, j)
}

// putHash stores hash i with n fields through Object and Modified, as a
// command would.
func putHash(t *testing.T, e *Engine, i, n int) {
	t.Helper()
	if err := e.Reserve(context.Background(), nil); err != nil {
		t.Fatalf("reserve before hash %d: %v", i, err)
	}
	key := []byte(fmt.Sprintf("hash:%03d", i))
	e.Update(0, func(tx *Tx) {
		obj, err := tx.Object(key, datatype.KindHash, false)
		if err != nil {
			t.Fatal(err)
		}
		if obj == nil {
			obj = datatype.NewHash()
			for j := range n {
				f, v := hashField(i, j)
				obj.(*datatype.Hash).Set([]byte(f), []byte(v), testHashLimits)
			}
			tx.SetObject(key, obj, 0)
			return
		}
		t.Fatalf("hash %d exists", i)
	})
}

type hashCheck string

// hashState reads hash i back: "whole", "absent" or what is wrong.
func hashState(e *Engine, i, n int) hashCheck {
	key := []byte(fmt.Sprintf("hash:%03d", i))
	var state hashCheck = "whole"
	e.View(0, func(tx *Tx) {
		obj, err := tx.Object(key, datatype.KindHash, true)
		switch {
		case err != nil:
			state = hashCheck(err.Error())
			return
		case obj == nil:
			state = "absent"
			return
		case obj.Len() != n:
			state = hashCheck(fmt.Sprintf("%d fields", obj.Len()))
			return
		}
		h := obj.(*datatype.Hash)
		for j := range n {
			f, want := hashField(i, j)
			if got, ok := h.Get([]byte(f)); !ok || string(got) != want {
				state = hashCheck(fmt.Sprintf("field %s = %q", f, got))
				return
			}
		}
	})
	return state
}

func TestObjectsAreDemotedLoadedAndKeptAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	e, store := openTiered(t, dir, 1<<20)
	stop := runEngine(t, e)
	const hashes, fields = 48, 200 // about 30 KiB each: 1.4 MiB into a 1 MiB memory tier
	for i := range hashes {
		putHash(t, e, i, fields)
	}
	if st := e.Stats(); st.Memory.Demotions == 0 || st.Keys != hashes {
		t.Fatalf("after writes: %+v", st)
	}
	for i := range hashes {
		if s := hashState(e, i, fields); s != "whole" {
			t.Fatalf("hash %d: %s", i, s)
		}
	}
	if e.Stats().Memory.Promotions == 0 {
		t.Fatal("reads from disk promoted nothing")
	}
	stop()
	if err := e.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	store.Close()

	e, store = openTiered(t, dir, 1<<20)
	defer store.Close()
	runEngine(t, e)
	for i := range hashes {
		if s := hashState(e, i, fields); s != "whole" {
			t.Fatalf("after restart, hash %d: %s", i, s)
		}
	}
	e.View(0, func(tx *Tx) {
		if k, ok := tx.Kind([]byte("hash:000")); !ok || k != datatype.KindHash {
			t.Fatalf("kind after restart = %v %v", k, ok)
		}
	})
}

func TestObjectWrongTypeAccountingAndEmptyDelete(t *testing.T) {
	e, _ := newTestEngine(0)
	set(e, 0, "s", []byte("x"), 0)
	e.Update(0, func(tx *Tx) {
		if _, err := tx.Object([]byte("s"), datatype.KindHash, true); !errors.Is(err, ErrWrongType) {
			t.Fatalf("hash read of a string: %v", err)
		}
		h := datatype.NewHash()
		h.Set([]byte("a"), []byte("1"), testHashLimits)
		tx.SetObject([]byte("h"), h, 0)
		if ent, ok := tx.Get([]byte("h")); !ok || ent.Kind != datatype.KindHash || ent.Object != h {
			t.Fatalf("Get of a hash = %+v %v", ent, ok)
		}
	})
	before := e.Stats().UsedMemory
	e.Update(0, func(tx *Tx) {
		obj, _ := tx.Object([]byte("h"), datatype.KindHash, false)
		for j := range 1000 {
			obj.(*datatype.Hash).Set([]byte(fmt.Sprint(j)), []byte("some value of some length"), testHashLimits)
		}
		tx.Modified([]byte("h"))
	})
	grown := e.Stats().UsedMemory
	if grown < before+1000*40 {
		t.Fatalf("1000 fields grew used memory from %d to %d", before, grown)
	}
	e.Update(0, func(tx *Tx) {
		obj, _ := tx.Object([]byte("h"), datatype.KindHash, false)
		h := obj.(*datatype.Hash)
		h.Delete([]byte("a"))
		for j := range 1000 {
			h.Delete([]byte(fmt.Sprint(j)))
		}
		tx.Modified([]byte("h"))
		if tx.Exists([]byte("h")) {
			t.Fatal("an emptied hash still exists")
		}
	})
	if after := e.Stats().UsedMemory; after >= before {
		t.Fatalf("used memory %d after deleting the hash, %d with it", after, before)
	}
	// A string overwrites a hash and the other way round.
	e.Update(0, func(tx *Tx) {
		h := datatype.NewHash()
		h.Set([]byte("a"), []byte("1"), testHashLimits)
		tx.SetObject([]byte("s"), h, 0)
		tx.Set([]byte("s"), []byte("back to a string"), 0)
		if ent, ok := tx.Get([]byte("s")); !ok || ent.Kind != datatype.KindString || string(ent.Value) != "back to a string" {
			t.Fatalf("string over hash = %+v", ent)
		}
	})
}
