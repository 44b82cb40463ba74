package gctune

import (
	"context"
	"math"
	"runtime/debug"
	"testing"
	"time"
)

func TestPercentKeepsSlackAboveLiveHeap(t *testing.T) {
	tu := New(Options{})
	cases := []struct {
		live int64
		want int
	}{
		{0, 6400},              // no collection yet: the runtime's 4 MiB minimum
		{1 << 20, 6400},        //
		{2 << 10, 6400},        //
		{16 << 20, 1600},       // goal 16+256 MiB
		{128 << 20, 200},       // goal 384 MiB
		{256 << 20, 100},       // goal 512 MiB
		{4 << 30, 100},         // large heap: Go's default
		{(256 << 20) / 3, 300}, // rounding down
	}
	for _, c := range cases {
		if got := tu.Percent(c.live, 256<<20); got != c.want {
			t.Errorf("Percent(%d) = %d, want %d", c.live, got, c.want)
		}
	}
}

func TestSlackIsProportionalToTheAllocationRate(t *testing.T) {
	tu := New(Options{})
	cases := []struct {
		rate float64 // bytes per second
		want int64
	}{
		{0, 32 << 20},            // idle: MinSlack
		{10 << 20, 32 << 20},     // 5 MiB in 500 ms: MinSlack
		{128 << 20, 64 << 20},    // half a second's allocations
		{300 << 20, 150 << 20},   //
		{600 << 20, 256 << 20},   // capped at Slack
		{10 << 30, 256 << 20},    //
		{math.Inf(1), 256 << 20}, //
	}
	for _, c := range cases {
		if got := tu.Slack(c.rate); got != c.want {
			t.Errorf("Slack(%v) = %d, want %d", c.rate, got, c.want)
		}
	}
}

func TestStepSizesTheSlackFromRecentAllocations(t *testing.T) {
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)
	tu := New(Options{IdleAfter: -1})
	now := time.Unix(1000, 0)
	const live = 16 << 20
	var allocs uint64
	tick := func(bytes uint64) int {
		now = now.Add(250 * time.Millisecond)
		allocs += bytes
		return tu.step(now, live, allocs)
	}
	if got := tick(0); got != 1600 { // a fresh process starts busy: 256 MiB
		t.Fatalf("first percent = %d, want 1600", got)
	}
	for range 40 {
		tick(0)
	}
	if got := tick(0); got != 200 { // 32 MiB slack over 16 MiB live
		t.Fatalf("idle percent = %d, want 200", got)
	}
	if got := tick(150 << 20); got != 1600 { // 600 MB/s: the full 256 MiB
		t.Fatalf("busy percent = %d, want 1600", got)
	}
	// A short pause keeps most of the slack (the rate decays with a
	// one-second half-life) ...
	if got := tick(0); got < 1200 {
		t.Fatalf("percent after a 250 ms pause = %d, want at least 1200", got)
	}
	// ... a long one brings it back to MinSlack.
	for range 40 {
		tick(0)
	}
	if got := tick(0); got != 200 {
		t.Fatalf("percent after 10 s idle = %d, want 200", got)
	}
}

func TestStepReturnsMemoryOncePerIdlePeriod(t *testing.T) {
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)
	tu := New(Options{})
	releases := 0
	tu.release = func() { releases++ }
	now := time.Unix(1000, 0)
	var allocs uint64
	run := func(d time.Duration, rate uint64) {
		for end := now.Add(d); now.Before(end); {
			now = now.Add(250 * time.Millisecond)
			allocs += rate / 4
			tu.step(now, 8<<20, allocs)
		}
	}
	run(5*time.Second, 100<<20)
	if releases != 0 {
		t.Fatalf("%d releases while busy, want 0", releases)
	}
	run(1750*time.Millisecond, 64<<10) // below IdleRate, not yet IdleAfter
	if releases != 0 {
		t.Fatalf("%d releases before IdleAfter, want 0", releases)
	}
	run(10*time.Second, 64<<10)
	if releases != 1 {
		t.Fatalf("%d releases after a long idle period, want 1", releases)
	}
	run(time.Second, 100<<20)
	run(3*time.Second, 0)
	if releases != 2 {
		t.Fatalf("%d releases after a second idle period, want 2", releases)
	}
}

func TestStepSetsTheRuntimePercentage(t *testing.T) {
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)
	// A slack far above this test binary's live heap: the cap applies.
	tu := New(Options{Slack: 1 << 40, MinSlack: 1 << 40, MaxPercent: 4321})
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
	tu := New(Options{Slack: 1 << 40, MinSlack: 1 << 40, MaxPercent: 999, Interval: time.Millisecond})
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
