// Package gctune paces Go's garbage collector for a server whose live heap
// may be small while it allocates fast, and hands memory back to the
// operating system when it goes idle.
//
// With GOGC=100 the collector runs each time the heap doubles. A kvserver
// holding a few MiB of small values and taking 4 KiB SETs at 600 MB/s would
// then collect about 150 times a second, and the collections (marking,
// sweeping, span refills) took a third of its CPU: pipelined 4 KiB SETs ran
// at 0.5x Redis. The Tuner instead keeps the heap goal a slack above the
// live heap, by raising the GC percentage while the live heap is small
// (measured: 150k to 250k SETs/s on the same run).
//
// The slack is proportional to the allocation rate: what the process
// allocates in Window (500 ms) at its recent rate, between MinSlack (32 MiB)
// and Slack (256 MiB). A server allocating up to 512 MiB/s thus collects
// about twice a second while its live heap is small (a faster one as
// before, once per 256 MiB), while a quiet one holds little garbage; a
// fresh Tuner starts at the full slack, as if busy. Once the live heap passes 100*slack/MinPercent bytes the
// percentage is back to MinPercent, and the memory limit
// (debug.SetMemoryLimit, derived from maxmemory) still caps the heap
// whatever the percentage: the slack is garbage the process may hold beyond
// its live data, never more than the limit allows.
//
// A slack is only garbage the runtime may reuse; nothing returns it to the
// operating system while no collection runs, and an idle server runs none.
// So once the process has allocated less than IdleRate for IdleAfter (2 s),
// the Tuner calls debug.FreeOSMemory once: measured on kvserver after 2000
// 1 MiB SETs from 50 connections to ten keys, resident memory fell from
// 320 MB (held for good before) to 48 MB about 2.5 s after the last SET.
// The release (a full collection, then returning every free page) took
// 22 ms with 1000 values of 1 MiB and about 200 ms with 200,000 keys of
// 4 KiB, on the Tuner's goroutine; the next burst pays for it by faulting
// fresh pages (about 2 GB/s on a small VM, 0.15 s for a full 256 MiB
// slack).
package gctune

import (
	"context"
	"log/slog"
	"math"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
	"time"
)

// DefaultSlack is the Slack of a Tuner whose Options leave it zero: what
// kvserver runs with, and what kvbench runs the disk tier under to measure
// it as it runs in the server.
const DefaultSlack = 256 << 20

// Defaults of the other Options fields.
const (
	DefaultMinSlack  = 32 << 20
	DefaultWindow    = 500 * time.Millisecond
	DefaultIdleAfter = 2 * time.Second
	DefaultIdleRate  = 1 << 20
)

// rateHalfLife is how fast the remembered allocation rate decays once
// allocations slow down, so that a pause of a few hundred milliseconds in a
// busy stream does not shrink the slack the stream needs.
const rateHalfLife = time.Second

// Options configure a Tuner. Zero fields take the defaults.
type Options struct {
	// Slack is the most garbage the heap may hold above its live bytes
	// before a collection starts (default DefaultSlack, 256 MiB).
	Slack int64
	// MinSlack is the slack of a process that allocates slowly (default
	// DefaultMinSlack, 32 MiB; at most Slack).
	MinSlack int64
	// Window sizes the slack: the bytes allocated in Window at the recent
	// allocation rate, between MinSlack and Slack (default 500 ms).
	Window time.Duration
	// MinPercent is the lowest GC percentage the Tuner sets, used once
	// the live heap is large (default 100, Go's default).
	MinPercent int
	// MaxPercent bounds the percentage for a nearly empty heap
	// (default 10000).
	MaxPercent int
	// Interval is how often the live heap and the allocations are
	// sampled (default 250 ms).
	Interval time.Duration
	// IdleAfter is how long the process must allocate less than IdleRate
	// before the Tuner returns its free memory to the operating system,
	// once per idle period (default 2 s; negative never).
	IdleAfter time.Duration
	// IdleRate is the allocation rate, in bytes per second, below which
	// the process counts as idle (default 1 MiB/s).
	IdleRate int64
	// Logger receives a debug line when the percentage changes and when
	// memory is returned.
	Logger *slog.Logger
}

// Tuner adjusts the GC percentage from the live heap and the allocation
// rate, and returns memory when idle; see the package comment. Run drives
// it; Step is one sample.
type Tuner struct {
	opts    Options
	sample  []metrics.Sample
	current atomic.Int64
	// Step's state, owned by the goroutine that calls it.
	lastAt     time.Time
	lastAllocs uint64
	rate       float64 // bytes per second, a decaying peak
	idleSince  time.Time
	released   bool
	// release returns free memory to the operating system
	// (debug.FreeOSMemory; tests count calls).
	release func()
}

// New returns a Tuner with opts, defaults filled in.
func New(opts Options) *Tuner {
	if opts.Slack <= 0 {
		opts.Slack = DefaultSlack
	}
	if opts.MinSlack <= 0 {
		opts.MinSlack = DefaultMinSlack
	}
	opts.MinSlack = min(opts.MinSlack, opts.Slack)
	if opts.Window <= 0 {
		opts.Window = DefaultWindow
	}
	if opts.MinPercent <= 0 {
		opts.MinPercent = 100
	}
	if opts.MaxPercent < opts.MinPercent {
		opts.MaxPercent = max(10000, opts.MinPercent)
	}
	if opts.Interval <= 0 {
		opts.Interval = 250 * time.Millisecond
	}
	if opts.IdleAfter == 0 {
		opts.IdleAfter = DefaultIdleAfter
	}
	if opts.IdleRate <= 0 {
		opts.IdleRate = DefaultIdleRate
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Tuner{
		opts: opts,
		// A fresh process starts as if it were busy: a server's first
		// second is often a storm of writes, and the rate decays to
		// MinSlack's within a few seconds if it is not.
		rate: float64(opts.Slack) / opts.Window.Seconds(),
		sample: []metrics.Sample{
			{Name: "/gc/heap/live:bytes"},
			{Name: "/gc/heap/allocs:bytes"},
		},
		release: debug.FreeOSMemory,
	}
}

// Slack is the slack for an allocation rate of rate bytes per second: what
// is allocated in Window at that rate, within [MinSlack, Slack].
func (t *Tuner) Slack(rate float64) int64 {
	s := rate * t.opts.Window.Seconds()
	if s >= float64(t.opts.Slack) || math.IsNaN(s) {
		return t.opts.Slack
	}
	return max(int64(s), t.opts.MinSlack)
}

// minHeap is the Go runtime's smallest heap goal at GOGC=100 (4 MiB): the
// goal is never below minHeap*percent/100, so a live heap smaller than it
// (none yet, before the first collection) counts as minHeap. Counting it
// as nothing would set MaxPercent and a first goal of 400 MiB: on a fresh
// server, 400 MiB of fresh pages faulted in before any freed value could
// be reused.
const minHeap = 4 << 20

// Percent is the GC percentage that puts the heap goal slack bytes above
// a live heap of live bytes, within [MinPercent, MaxPercent].
func (t *Tuner) Percent(live, slack int64) int {
	p := slack * 100 / max(live, minHeap)
	return int(min(max(p, int64(t.opts.MinPercent)), int64(t.opts.MaxPercent)))
}

// Step samples the live heap and the bytes allocated once, sets the GC
// percentage when it is more than a tenth away from the current one, and
// returns free memory to the operating system when the process has been
// idle for IdleAfter. It returns the percentage in force.
func (t *Tuner) Step() int {
	metrics.Read(t.sample)
	return t.step(time.Now(), sampleUint(t.sample[0]), sampleUint(t.sample[1]))
}

func sampleUint(s metrics.Sample) uint64 {
	if s.Value.Kind() == metrics.KindUint64 {
		return s.Value.Uint64()
	}
	return 0
}

// step is Step on given samples: live heap bytes and cumulative bytes
// allocated at now.
func (t *Tuner) step(now time.Time, live, allocs uint64) int {
	if !t.lastAt.IsZero() && now.After(t.lastAt) {
		dt := now.Sub(t.lastAt)
		rate := float64(allocs-t.lastAllocs) / dt.Seconds()
		decayed := t.rate * math.Exp2(-dt.Seconds()/rateHalfLife.Seconds())
		t.rate = max(rate, decayed)
		t.idle(now, rate)
	}
	t.lastAt, t.lastAllocs = now, allocs
	want := t.Percent(int64(live), t.Slack(t.rate))
	cur := t.currentPercent()
	if cur == 0 || want*10 < cur*9 || want*10 > cur*11 {
		old := debug.SetGCPercent(want)
		t.opts.Logger.Debug("gc percent", "live_bytes", live, "alloc_rate", int64(t.rate),
			"percent", want, "was", old)
		t.current.Store(int64(want))
		cur = want
	}
	return cur
}

// idle tracks how long the allocation rate has stayed below IdleRate and
// returns free memory once per idle period after IdleAfter.
func (t *Tuner) idle(now time.Time, rate float64) {
	if t.opts.IdleAfter < 0 {
		return
	}
	if rate >= float64(t.opts.IdleRate) {
		t.idleSince, t.released = time.Time{}, false
		return
	}
	if t.idleSince.IsZero() {
		t.idleSince = now
	}
	if t.released || now.Sub(t.idleSince) < t.opts.IdleAfter {
		return
	}
	start := time.Now()
	t.release()
	t.released = true
	t.opts.Logger.Debug("idle: free memory returned to the operating system",
		"idle", now.Sub(t.idleSince).String(), "took", time.Since(start).String())
}

func (t *Tuner) currentPercent() int { return int(t.current.Load()) }

// Run steps every Interval until ctx ends, then restores the percentage
// that was in force when it started.
func (t *Tuner) Run(ctx context.Context) {
	initial := debug.SetGCPercent(t.opts.MinPercent)
	defer debug.SetGCPercent(initial)
	tick := time.NewTicker(t.opts.Interval)
	defer tick.Stop()
	for {
		t.Step()
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
