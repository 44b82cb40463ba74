package gctune

import (
	"context"
	"runtime/debug"
	"testing"
	"time"
)

func TestPercentKeepsSlackAboveLiveHeap(t *testing.T) {
	tu := New(Options{Slack: 256 << 20})
	cases := []struct {
		live int64
		want int
	}{
		{0, 10000},
		{1 << 20, 10000},       // 25600% capped
		{16 << 20, 1600},       // goal 16+256 MiB
		{128 << 20, 200},       // goal 384 MiB
		{256 << 20, 100},       // goal 512 MiB
		{4 << 30, 100},         // large heap: Go's default
		{(256 << 20) / 3, 300}, // rounding down
	}
	for _, c := range cases {
		if got := tu.Percent(c.live); got != c.want {
			t.Errorf("Percent(%d) = %d, want %d", c.live, got, c.want)
		}
	}
}

func TestStepSetsTheRuntimePercentage(t *testing.T) {
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)
	// A slack far above this test binary's live heap: the cap applies.
	tu := New(Options{Slack: 1 << 40, MaxPercent: 4321})
	if got := tu.Step(); got != 4321 {
		t.Fatalf("Step() = %d, want 4321", got)
	}
	if got := debug.SetGCPercent(100); got != 4321 {
		t.Fatalf("runtime GC percent = %d after Step, want 4321", got)
	}
}

func TestRunRestoresThePercentage(t *testing.T) {
	before := debug.SetGCPercent(77)
	defer debug.SetGCPercent(before)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	tu := New(Options{Slack: 1 << 40, MaxPercent: 999, Interval: time.Millisecond})
	go func() { defer close(done); tu.Run(ctx) }()
	deadline := time.Now().Add(5 * time.Second)
	for tu.currentPercent() != 999 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	cancel()
	<-done
	if got := debug.SetGCPercent(100); got != 77 {
		t.Fatalf("GC percent after Run = %d, want the 77 in force before", got)
	}
}
