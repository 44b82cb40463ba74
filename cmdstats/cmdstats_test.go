package cmdstats

import (
	"math/rand/v2"
	"sort"
	"sync"
	"testing"
	"time"
	"unsafe"
)

// TestBucketsMatchHDR checks the buckets against HDR's definition for two
// significant digits: every value lands in a bucket whose highest value is
// at least it and within 1% of it, buckets are contiguous and ordered, and
// the values Redis prints come out as redis-server printed them.
func TestBucketsMatchHDR(t *testing.T) {
	prev := int64(-1)
	for i := 0; i < numBuckets; i++ {
		hi := highestIn(i)
		if hi <= prev {
			t.Fatalf("bucket %d: highest %d after %d", i, hi, prev)
		}
		if got := bucketOf(prev + 1); got != i {
			t.Fatalf("value %d in bucket %d, want %d", prev+1, got, i)
		}
		if got := bucketOf(hi); got != i {
			t.Fatalf("value %d in bucket %d, want %d", hi, got, i)
		}
		prev = hi
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 100000 {
		v := r.Int64N(1 << 40)
		hi := highestIn(bucketOf(v))
		if hi < v || float64(hi-v) > 0.01*float64(v)+1 {
			t.Fatalf("value %d: bucket's highest %d", v, hi)
		}
	}
	// redis-server 7.0.15 printed p50=11.007 for one SET of 11 us and
	// p99=532.479 for an INFO of 530 us.
	for v, want := range map[int64]int64{11000: 11007, 530000: 532479, 5000: 5023, 49000: 49151} {
		if got := highestIn(bucketOf(v)); got != want {
			t.Errorf("value %d: highest %d, want %d", v, got, want)
		}
	}
	if got := bucketOf(1 << 50); got != numBuckets-1 {
		t.Errorf("huge value in bucket %d", got)
	}
	if got := bucketOf(-5); got != 0 {
		t.Errorf("negative value in bucket %d", got)
	}
}

// TestPercentilesOfKnownDurations compares ValueAtPercentile with the
// sorted durations themselves.
func TestPercentilesOfKnownDurations(t *testing.T) {
	var h Histogram
	if got := h.ValueAtPercentile(50); got != 0 {
		t.Fatalf("empty histogram: %d", got)
	}
	r := rand.New(rand.NewPCG(3, 4))
	vals := make([]int64, 10001)
	for i := range vals {
		vals[i] = r.Int64N(5_000_000)
		h.Record(vals[i])
	}
	sort.Slice(vals, func(i, j int) bool { return vals[i] < vals[j] })
	for _, p := range []float64{0, 1, 50, 90, 99, 99.9, 100} {
		idx := int(p/100*float64(len(vals))+0.5) - 1
		want := vals[max(idx, 0)]
		got := h.ValueAtPercentile(p)
		if got < want || float64(got-want) > 0.01*float64(want)+1 {
			t.Errorf("p%v = %d, the durations say %d", p, got, want)
		}
	}
	bounds := []int64{10_000, 1_000_000, 4_999_999, 1 << 45}
	counts, total := h.Cumulative(bounds)
	if total != uint64(len(vals)) {
		t.Errorf("total %d, recorded %d", total, len(vals))
	}
	for i, b := range bounds {
		below := 0
		for _, v := range vals {
			if highestIn(bucketOf(v)) <= b {
				below++
			}
		}
		if counts[i] != uint64(below) {
			t.Errorf("at or below %d: %d, want %d", b, counts[i], below)
		}
	}
}

// TestCommandCountsConcurrentCalls records from many goroutines and
// checks every counter, then that Reset zeroes them.
func TestCommandCountsConcurrentCalls(t *testing.T) {
	tab := NewTable(3)
	if tab.At(3) != nil || tab.At(-1) != nil {
		t.Fatal("out-of-range ids must give nil")
	}
	c := tab.At(1)
	if c.Latency() != nil {
		t.Fatal("latency before any call")
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 1000 {
				c.Record(time.Microsecond, (g+i)%4 == 0)
				c.RecordLatency(time.Microsecond)
				if i%10 == 0 {
					c.Reject()
				}
			}
		}()
	}
	wg.Wait()
	want := Counts{Calls: 8000, Nanos: 8000 * 1000, Rejected: 800, Failed: 2000}
	if got := c.Read(); got != want {
		t.Fatalf("counts %+v, want %+v", got, want)
	}
	if got := c.Latency().Total(); got != 8000 {
		t.Fatalf("histogram holds %d", got)
	}
	if got := c.Latency().ValueAtPercentile(50); got != highestIn(bucketOf(1000)) {
		t.Fatalf("p50 %d", got)
	}
	if tab.At(0).Read() != (Counts{}) {
		t.Fatal("another command counted")
	}
	tab.Reset()
	if got := c.Read(); got != (Counts{}) || c.Latency() != nil {
		t.Fatalf("after Reset: %+v, latency %v", got, c.Latency() != nil)
	}
}

// TestRecordDoesNotAllocate: a command's statistics cost no allocation per
// call once its histogram exists.
func TestRecordDoesNotAllocate(t *testing.T) {
	c := NewTable(1).At(0)
	c.RecordLatency(time.Microsecond)
	if allocs := testing.AllocsPerRun(1000, func() {
		c.Record(3*time.Microsecond, true)
		c.RecordLatency(3 * time.Microsecond)
	}); allocs != 0 {
		t.Errorf("Record allocates %v times per call", allocs)
	}
}

func BenchmarkRecord(b *testing.B) {
	tab := NewTable(4)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			c := tab.At(i % 4)
			c.Record(3*time.Microsecond, false)
			c.RecordLatency(3 * time.Microsecond)
			i++
		}
	})
}

// TestCDFAsRedis: the LATENCY HISTOGRAM steps redis-server 7.0.15 replied
// with: one call of 264 us is "264 1", one of 8 us "8 1", and calls of
// about 10, 16 and 20 us step at 16 and 33.
func TestCDFAsRedis(t *testing.T) {
	one := func(ns ...int64) []CDFPoint {
		var h Histogram
		for _, v := range ns {
			h.Record(v)
		}
		return h.CDF()
	}
	check := func(got, want []CDFPoint) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("CDF %v, want %v", got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("CDF %v, want %v", got, want)
			}
		}
	}
	check(one(), nil)
	check(one(263_000), []CDFPoint{{264, 1}})
	check(one(7_000), []CDFPoint{{8, 1}})
	check(one(300, 900, 1_500), []CDFPoint{{1, 2}, {2, 3}})
	check(one(7_000, 7_500, 10_000, 12_000, 20_000), []CDFPoint{{8, 2}, {16, 4}, {33, 5}})
	check(one(1<<45), []CDFPoint{{highestIn(numBuckets-1) / 1000, 1}})
}

// TestCommandTakesOneCacheLine: neighbouring commands of the table never
// share a cache line.
func TestCommandTakesOneCacheLine(t *testing.T) {
	if size := unsafe.Sizeof(Command{}); size != 64 {
		t.Fatalf("Command is %d bytes, want 64", size)
	}
}
