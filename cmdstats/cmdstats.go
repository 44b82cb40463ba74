// Package cmdstats keeps per-command call statistics, Redis's commandstats
// and latencystats: calls, time spent, rejected and failed calls, and a
// latency histogram with two significant digits, as Redis's per-command
// hdr_histogram. INFO commandstats and INFO latencystats print them, and
// the Prometheus per-command metrics are read from them at scrape time, so
// a command's figures have one source.
//
// A Table holds one Command per command-table row (commands.Spec.ID).
// Recording is a few atomic adds, safe from any goroutine; nothing is
// looked up by name on the command path.
package cmdstats

import (
	"math/bits"
	"sync/atomic"
	"time"
)

// Table is the statistics of every command of a command table.
type Table struct {
	cmds []Command
}

// NewTable returns statistics for n commands, indexed 0 to n-1.
func NewTable(n int) *Table { return &Table{cmds: make([]Command, n)} }

// At returns the statistics of command id, nil when id is out of range.
func (t *Table) At(id int) *Command {
	if id < 0 || id >= len(t.cmds) {
		return nil
	}
	return &t.cmds[id]
}

// Reset zeroes every command's statistics (CONFIG RESETSTAT).
func (t *Table) Reset() {
	for i := range t.cmds {
		t.cmds[i].reset()
	}
}

// Command is one command's statistics.
type Command struct {
	calls, nanos, rejected, failed atomic.Int64
	// latency is allocated by the first call: most commands are never
	// called, and a histogram is about 34 KiB.
	latency atomic.Pointer[Histogram]
	// Padding to a cache line of its own: the event loops count different
	// commands without taking each other's line.
	_ [64 - 5*8]byte
}

// Counts are a command's counters.
type Counts struct {
	// Calls counts the calls that ran, Nanos their total time.
	Calls, Nanos int64
	// Rejected counts calls refused before they ran (arity, ACL, memory,
	// a queuing error), Failed the calls that ran and answered an error.
	Rejected, Failed int64
}

// Record counts a call that ran for d and answered an error if failed.
func (c *Command) Record(d time.Duration, failed bool) {
	c.calls.Add(1)
	c.nanos.Add(int64(d))
	if failed {
		c.failed.Add(1)
	}
}

// RecordLatency adds a call's duration to the latency histogram (while
// latency-tracking is on).
func (c *Command) RecordLatency(d time.Duration) {
	h := c.latency.Load()
	if h == nil {
		h = new(Histogram)
		if !c.latency.CompareAndSwap(nil, h) {
			h = c.latency.Load()
		}
	}
	h.Record(int64(d))
}

// Reject counts a call refused before it ran.
func (c *Command) Reject() { c.rejected.Add(1) }

// Read returns the counters.
func (c *Command) Read() Counts {
	return Counts{Calls: c.calls.Load(), Nanos: c.nanos.Load(), Rejected: c.rejected.Load(), Failed: c.failed.Load()}
}

// Latency returns the call durations, nil before the first call.
func (c *Command) Latency() *Histogram { return c.latency.Load() }

func (c *Command) reset() {
	c.calls.Store(0)
	c.nanos.Store(0)
	c.rejected.Store(0)
	c.failed.Store(0)
	c.latency.Store(nil)
}

// Histogram counts nanosecond durations in the buckets of an HDR
// histogram of two significant digits from 1 ns (Redis's hdr_init(1, ...,
// 2)): values below 256 exactly, then 128 buckets per power of two, so a
// bucket's width is under 1% of its values. Durations past about 18
// minutes count as the largest bucket.
type Histogram struct {
	counts [numBuckets]atomic.Uint64
}

const (
	subBuckets     = 256 // exact values below this
	halfSubBuckets = subBuckets / 2
	maxShift       = 32 // values up to 2^40 ns
	numBuckets     = subBuckets + maxShift*halfSubBuckets
)

// bucketOf returns the bucket of v >= 0.
func bucketOf(v int64) int {
	if v < subBuckets {
		return int(max(v, 0))
	}
	shift := bits.Len64(uint64(v)) - 8 // 1 for [256, 512)
	if shift > maxShift {
		return numBuckets - 1
	}
	return subBuckets + (shift-1)*halfSubBuckets + int(v>>shift) - halfSubBuckets
}

// highestIn returns the highest value that counts in bucket i (HDR's
// highest_equivalent_value).
func highestIn(i int) int64 {
	if i < subBuckets {
		return int64(i)
	}
	shift := (i-subBuckets)/halfSubBuckets + 1
	low := int64((i-subBuckets)%halfSubBuckets+halfSubBuckets) << shift
	return low + 1<<shift - 1
}

// Record counts one duration of ns nanoseconds.
func (h *Histogram) Record(ns int64) { h.counts[bucketOf(ns)].Add(1) }

// Total is the number of durations counted.
func (h *Histogram) Total() uint64 {
	_, n := h.read()
	return n
}

// read returns the bucket counts and their total, each bucket read once,
// so that what is derived from them agrees while calls go on counting.
func (h *Histogram) read() (counts *[numBuckets]uint64, total uint64) {
	counts = new([numBuckets]uint64)
	for i := range h.counts {
		counts[i] = h.counts[i].Load()
		total += counts[i]
	}
	return counts, total
}

// ValueAtPercentile returns the duration in nanoseconds at or below which
// p percent of the durations fall, as the highest value of its bucket
// (hdr_value_at_percentile), 0 when nothing was counted.
func (h *Histogram) ValueAtPercentile(p float64) int64 {
	return h.ValuesAtPercentiles([]float64{p})[0]
}

// ValuesAtPercentiles is ValueAtPercentile of each of ps, from one
// reading of the buckets.
func (h *Histogram) ValuesAtPercentiles(ps []float64) []int64 {
	counts, total := h.read()
	out := make([]int64, len(ps))
	for j, p := range ps {
		want := max(uint64(min(p, 100)/100*float64(total)+0.5), 1)
		var seen uint64
		for i := range counts {
			if seen += counts[i]; seen >= want {
				out[j] = highestIn(i)
				break
			}
		}
	}
	return out
}

// Cumulative returns, for each bound in ascending nanoseconds, how many
// durations fell in buckets whose values are all at or below it (the
// cumulative counts of Prometheus buckets), and the total, all from one
// reading of the buckets.
func (h *Histogram) Cumulative(bounds []int64) (counts []uint64, total uint64) {
	buckets, _ := h.read()
	counts = make([]uint64, len(bounds))
	b := 0
	for i := range buckets {
		hi := highestIn(i)
		for b < len(bounds) && hi > bounds[b] {
			counts[b] = total
			b++
		}
		total += buckets[i]
	}
	for ; b < len(bounds); b++ {
		counts[b] = total
	}
	return counts, total
}

// CDFPoint is one step of a latency distribution: how many durations
// were at most about Micros microseconds.
type CDFPoint struct {
	Micros     int64
	Cumulative uint64
}

// CDF returns the distribution LATENCY HISTOGRAM replies with, as Redis's
// fillCommandCDF walks its histogram (hdr_iter_log_init from 1024 ns,
// doubling): at each step, the bucket that holds 1024·2^k ns, its highest
// value in whole microseconds and the count of durations up to it; a step
// whose count did not grow is left out, and the walk ends once every
// duration is counted.
func (h *Histogram) CDF() []CDFPoint {
	counts, total := h.read()
	var out []CDFPoint
	var cum, prev uint64
	next := 0
	for level := int64(1024); cum < total && level <= highestIn(numBuckets-1); level *= 2 {
		b := bucketOf(level)
		for ; next <= b; next++ {
			cum += counts[next]
		}
		if cum > prev {
			out = append(out, CDFPoint{Micros: highestIn(b) / 1000, Cumulative: cum})
		}
		prev = cum
	}
	if cum < total {
		// Past the last level: the largest bucket holds the rest.
		out = append(out, CDFPoint{Micros: highestIn(numBuckets-1) / 1000, Cumulative: total})
	}
	return out
}
