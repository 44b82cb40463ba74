package engine

import (
	"reflect"
	"testing"

	"github.com/kvserver/kvserver/datatype"
)

func TestWritesToWaitedKeysAreQueuedOnceInOrder(t *testing.T) {
	e, _ := newTestEngine(0)
	if e.HasReady() || e.TakeReady() != nil {
		t.Fatal("ready keys before any wait")
	}
	set(e, 0, "a", []byte("x"), 0) // nobody waits: not queued
	e.WaitFor(0, "a")
	e.WaitFor(0, "b")
	e.WaitFor(0, "b")
	e.Update(0, func(tx *Tx) {
		l := datatype.NewList()
		l.Push([]byte("v"), false, datatype.DefaultListLimits)
		tx.SetObject([]byte("b"), l, 0)
		tx.Set([]byte("a"), []byte("y"), 0)
		obj, _ := tx.Object([]byte("b"), datatype.KindList, false)
		obj.(*datatype.List).Push([]byte("w"), true, datatype.DefaultListLimits)
		tx.Modified([]byte("b"))
		tx.Set([]byte("c"), []byte("z"), 0)
	})
	set(e, 1, "a", []byte("other db"), 0)
	if !e.HasReady() {
		t.Fatal("HasReady false after writes to waited keys")
	}
	want := []ReadyKey{{0, "b"}, {0, "a"}}
	if got := e.TakeReady(); !reflect.DeepEqual(got, want) {
		t.Fatalf("TakeReady = %v, want %v", got, want)
	}
	if e.HasReady() || e.TakeReady() != nil {
		t.Fatal("queue not emptied")
	}
	e.StopWaiting(0, "b")
	set(e, 0, "b", []byte("x"), 0)
	if got := e.TakeReady(); !reflect.DeepEqual(got, []ReadyKey{{0, "b"}}) {
		t.Fatalf("b waited twice, released once: %v", got)
	}
	e.StopWaiting(0, "b")
	e.StopWaiting(0, "a")
	set(e, 0, "a", []byte("x"), 0)
	set(e, 0, "b", []byte("x"), 0)
	if e.HasReady() {
		t.Fatalf("keys no longer waited on were queued: %v", e.TakeReady())
	}
}

func TestSwapDBMakesWaitedKeysOfTheNewContentsReady(t *testing.T) {
	e, _ := newTestEngine(0)
	set(e, 1, "k", []byte("x"), 0)
	e.WaitFor(0, "k")
	e.WaitFor(0, "missing")
	if err := e.SwapDB(t.Context(), 0, 1); err != nil {
		t.Fatal(err)
	}
	if got := e.TakeReady(); !reflect.DeepEqual(got, []ReadyKey{{0, "k"}}) {
		t.Fatalf("TakeReady after SWAPDB = %v", got)
	}
}
