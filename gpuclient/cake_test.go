package gpuclient

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// randModel draws a cost model: prefixes of 0-80 chunks, prefill slopes
// from none to steep, fetch rates from far slower to far faster than
// compute, with and without per-chunk latency.
func randModel(r *rand.Rand) CakeModel {
	m := CakeModel{
		Chunks:         r.IntN(81),
		ComputeBase:    time.Duration(r.IntN(50_000)) * time.Microsecond,
		ComputeSlope:   time.Duration(r.IntN(5_000)) * time.Microsecond,
		ChunkBytes:     int64(r.IntN(64<<20) + 1),
		FetchBandwidth: math.Pow(10, 7+4*r.Float64()), // 10 MB/s to 100 GB/s
	}
	if r.IntN(3) == 0 {
		m.FetchLatency = time.Duration(r.IntN(2_000)) * time.Microsecond
	}
	if r.IntN(5) == 0 {
		m.ComputeSlope = 0
	}
	return m
}

// bruteForce tries every split and returns the best objective and every
// split that reaches it.
func bruteForce(m CakeModel) (best time.Duration, splits []int) {
	best = math.MaxInt64
	for k := 0; k <= m.Chunks; k++ {
		t := max(m.ComputeTime(k), m.FetchTime(m.Chunks-k))
		if t < best {
			best, splits = t, nil
		}
		if t == best {
			splits = append(splits, k)
		}
	}
	return best, splits
}

func TestPlanCakeMatchesBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for i := range 5000 {
		m := randModel(r)
		p, err := PlanCake(m)
		if err != nil {
			t.Fatal(err)
		}
		best, splits := bruteForce(m)
		if p.Time != best || !slices.Contains(splits, p.Compute) {
			t.Fatalf("model %d %+v: plan %+v, brute force %v at %v", i, m, p, best, splits)
		}
		if p.Compute+p.Load != m.Chunks || p.Time != max(p.ComputeTime, p.FetchTime) ||
			p.ComputeTime != m.ComputeTime(p.Compute) || p.FetchTime != m.FetchTime(p.Load) {
			t.Fatalf("model %+v: inconsistent plan %+v", m, p)
		}
	}
}

// TestCakeCostModel: the closed forms equal the sums they stand for.
func TestCakeCostModel(t *testing.T) {
	m := CakeModel{Chunks: 40, ComputeBase: 3 * time.Millisecond, ComputeSlope: 250 * time.Microsecond,
		ChunkBytes: 32 << 20, FetchBandwidth: 8e9, FetchLatency: 100 * time.Microsecond}
	var c, f time.Duration
	for k := 0; k <= m.Chunks; k++ {
		if got := m.ComputeTime(k); got.Round(time.Microsecond) != c {
			t.Fatalf("ComputeTime(%d) = %v, sum is %v", k, got, c)
		}
		if got := m.FetchTime(k); (got - f).Abs() > time.Microsecond {
			t.Fatalf("FetchTime(%d) = %v, sum is %v", k, got, f)
		}
		c += m.ComputeBase + time.Duration(k)*m.ComputeSlope
		f += time.Duration(float64(m.ChunkBytes)/m.FetchBandwidth*float64(time.Second)) + m.FetchLatency
	}
	// Where both sides cost the same per chunk and compute does not grow,
	// they split the prefix in half.
	even := CakeModel{Chunks: 10, ComputeBase: time.Millisecond, ChunkBytes: 1e6, FetchBandwidth: 1e9}
	if p, _ := PlanCake(even); p.Compute != 5 || p.Load != 5 || p.Time != 5*time.Millisecond {
		t.Errorf("even split: %+v", p)
	}
}

func TestPlanCakeRejectsBadModels(t *testing.T) {
	for _, m := range []CakeModel{
		{Chunks: -1, FetchBandwidth: 1},
		{Chunks: 4, FetchBandwidth: 0},
		{Chunks: 4, FetchBandwidth: math.NaN()},
		{Chunks: 4, FetchBandwidth: 1, ComputeSlope: -1},
	} {
		if _, err := PlanCake(m); !errors.Is(err, ErrCakeModel) {
			t.Errorf("%+v: %v", m, err)
		}
	}
}

// recorder logs which side handled which chunk, in order.
type recorder struct {
	mu               sync.Mutex
	computed, loaded []int
}

func (rc *recorder) add(list *[]int, i int) {
	rc.mu.Lock()
	*list = append(*list, i)
	rc.mu.Unlock()
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// checkCover: the compute side did 0..k-1 in order, the fetch side
// n-1..k in order, each chunk once.
func checkCover(t *testing.T, n int, res CakeResult, rc *recorder) {
	t.Helper()
	k := res.Computed
	if res.Computed+res.Loaded != n {
		t.Fatalf("computed %d + loaded %d != %d", res.Computed, res.Loaded, n)
	}
	for i, c := range rc.computed {
		if c != i {
			t.Fatalf("compute order %v", rc.computed)
		}
	}
	if len(rc.computed) != k {
		t.Fatalf("computed %v, result says %d", rc.computed, k)
	}
	for i, c := range rc.loaded {
		if c != n-1-i {
			t.Fatalf("fetch order %v", rc.loaded)
		}
	}
}

// TestRunCakeMeetsAtTheOptimum: with real per-chunk delays from a cost
// model, the two sides meet within one chunk of the brute-force optimum,
// whatever the model. "The optimum" is any split whose modelled time is
// within the timers' noise of the best (3 ms plus 5%). A machine busy with
// other work can stall one side's timers for tens of milliseconds and move
// the meeting point, so each model gets three tries; a runner that splits
// wrongly fails all three.
func TestRunCakeMeetsAtTheOptimum(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	// Fetch per chunk from much faster than compute (meeting near the
	// front) to much slower (meeting near the back).
	fetchMs := []int{3, 6, 10, 15, 25, 40, 60}
	for i := range len(fetchMs) {
		m := CakeModel{
			Chunks:         6 + r.IntN(8),
			ComputeBase:    time.Duration(8+r.IntN(12)) * time.Millisecond,
			ComputeSlope:   time.Duration(r.IntN(4000)) * time.Microsecond,
			ChunkBytes:     1 << 20,
			FetchBandwidth: float64(1<<20) / (time.Duration(fetchMs[i]) * time.Millisecond).Seconds(),
		}
		best, splits := bruteForce(m)
		plan, _ := PlanCake(m)
		noise := 3*time.Millisecond + best/20
		var tries []string
		near := false
		for try := 0; try < 3 && !near; try++ {
			rc := &recorder{}
			res, err := RunCake(context.Background(), m.Chunks,
				func(ctx context.Context, c int) error {
					rc.add(&rc.computed, c)
					return sleep(ctx, m.ComputeBase+time.Duration(c)*m.ComputeSlope)
				},
				func(ctx context.Context, c int) error {
					rc.add(&rc.loaded, c)
					return sleep(ctx, m.FetchTime(1))
				})
			if err != nil {
				t.Fatal(err)
			}
			checkCover(t, m.Chunks, res, rc)
			for k := 0; k <= m.Chunks; k++ {
				if max(m.ComputeTime(k), m.FetchTime(m.Chunks-k)) <= best+noise && abs(k-res.Computed) <= 1 {
					near = true
				}
			}
			tries = append(tries, fmt.Sprintf("met at %d in %v", res.Computed, res.Elapsed.Round(time.Millisecond)))
		}
		t.Logf("model %d: %d chunks, compute %v+%v*i, fetch %v: plan %d, brute force %v in %v; %s",
			i, m.Chunks, m.ComputeBase, m.ComputeSlope, m.FetchTime(1), plan.Compute, splits, best, strings.Join(tries, ", "))
		if !near {
			t.Errorf("model %d: %s; optimum at %v", i, strings.Join(tries, ", "), splits)
		}
	}
}

func abs(x int) int { return max(x, -x) }

// TestRunCakeFailedFetchIsComputed: a chunk whose fetch fails is computed
// instead; the fetch side stops; the run succeeds and reports the error.
func TestRunCakeFailedFetchIsComputed(t *testing.T) {
	const n = 10
	bad := errors.New("chunk evicted")
	rc := &recorder{}
	var fetchCalls []int
	res, err := RunCake(context.Background(), n,
		func(ctx context.Context, c int) error {
			rc.add(&rc.computed, c)
			return sleep(ctx, 5*time.Millisecond)
		},
		func(ctx context.Context, c int) error {
			fetchCalls = append(fetchCalls, c)
			if c == n-3 {
				return bad
			}
			rc.add(&rc.loaded, c)
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(res.FetchErr, bad) {
		t.Fatalf("FetchErr = %v", res.FetchErr)
	}
	if res.Computed != n-2 || res.Loaded != 2 {
		t.Fatalf("computed %d, loaded %d; want %d and 2", res.Computed, res.Loaded, n-2)
	}
	checkCover(t, n, res, rc)
	if !slices.Equal(fetchCalls, []int{n - 1, n - 2, n - 3}) {
		t.Fatalf("fetches %v", fetchCalls)
	}
}

// TestRunCakeWaitsForFetchInFlight: when compute reaches the chunk being
// fetched, it waits for the fetch; if that fetch fails, compute takes it.
func TestRunCakeWaitsForFetchInFlight(t *testing.T) {
	const n = 4
	bad := errors.New("corrupt")
	rc := &recorder{}
	fetching := make(chan struct{})
	res, err := RunCake(context.Background(), n,
		func(ctx context.Context, c int) error {
			if c == 0 {
				<-fetching // the fetch of chunk n-1 is under way
			}
			rc.add(&rc.computed, c)
			return nil
		},
		func(ctx context.Context, c int) error {
			if c == n-1 {
				close(fetching)
				// Slow enough that compute finishes 0..2 and waits on 3.
				if err := sleep(ctx, 30*time.Millisecond); err != nil {
					return err
				}
				return bad
			}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if res.Computed != n || res.Loaded != 0 || !errors.Is(res.FetchErr, bad) {
		t.Fatalf("%+v", res)
	}
	checkCover(t, n, res, rc)
}

func TestRunCakeComputeErrorStopsBoth(t *testing.T) {
	bad := errors.New("oom")
	var fetchCtxDone bool
	fetching := make(chan struct{})
	_, err := RunCake(context.Background(), 20,
		func(ctx context.Context, c int) error {
			if c == 0 {
				<-fetching // a fetch is in flight
			}
			if c == 2 {
				return bad
			}
			return nil
		},
		func(ctx context.Context, c int) error {
			close(fetching)
			err := sleep(ctx, time.Second)
			fetchCtxDone = err != nil
			return err
		})
	if !errors.Is(err, bad) {
		t.Fatalf("got %v", err)
	}
	if !fetchCtxDone {
		t.Fatal("the fetch in flight was not cancelled")
	}
}

// TestRunCakeCancel: cancelling the context stops both sides promptly,
// the callbacks see it, and RunCake returns after both have returned.
func TestRunCakeCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	running := 0
	side := func(ctx context.Context, c int) error {
		mu.Lock()
		running++
		mu.Unlock()
		defer func() {
			mu.Lock()
			running--
			mu.Unlock()
		}()
		return sleep(ctx, time.Hour)
	}
	time.AfterFunc(20*time.Millisecond, cancel)
	start := time.Now()
	_, err := RunCake(ctx, 100, side, side)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %v to stop", d)
	}
	mu.Lock()
	defer mu.Unlock()
	if running != 0 {
		t.Fatalf("%d callbacks still running after RunCake returned", running)
	}
}

func TestRunCakeEdges(t *testing.T) {
	called := false
	f := func(context.Context, int) error { called = true; return nil }
	if res, err := RunCake(context.Background(), 0, f, f); err != nil || res.Computed != 0 || res.Loaded != 0 || called {
		t.Fatalf("0 chunks: %+v %v called=%v", res, err, called)
	}
	res, err := RunCake(context.Background(), 1, f, f)
	if err != nil || res.Computed+res.Loaded != 1 {
		t.Fatalf("1 chunk: %+v %v", res, err)
	}
	if _, err := RunCake(context.Background(), -1, f, f); !errors.Is(err, ErrCakeModel) {
		t.Fatalf("-1 chunks: %v", err)
	}
}
