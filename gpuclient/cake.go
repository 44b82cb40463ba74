package gpuclient

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"
)

// Cake ("Compute Or Load KV Cache? Why Not Both?") fills a prefix of N
// cached chunks from both ends at once: the engine computes chunks from the
// front (prefill, whose cost per chunk grows with position, since each
// chunk attends to all earlier ones) while the client loads chunks from the
// back (whose cost is set by the fetch bandwidth). The prefix is ready when
// both sides meet, so the best meeting point is where both finish together.
// PlanCake predicts it from a cost model; RunCake runs the two sides and
// lets the meeting point fall where they actually meet.

// CakeModel is the cost model for a prefix of Chunks chunks.
type CakeModel struct {
	// Chunks is the number of chunks in the prefix.
	Chunks int
	// ComputeBase and ComputeSlope give the prefill time of chunk i
	// (0-based from the front): ComputeBase + ComputeSlope*i.
	ComputeBase, ComputeSlope time.Duration
	// ChunkBytes is the size of one stored chunk.
	ChunkBytes int64
	// FetchBandwidth is the measured fetch rate, bytes per second.
	FetchBandwidth float64
	// FetchLatency is added to each chunk's fetch (a round trip that the
	// bandwidth does not cover); 0 if the fetches are pipelined.
	FetchLatency time.Duration
}

// ErrCakeModel is wrapped by PlanCake's errors.
var ErrCakeModel = errors.New("gpuclient: bad Cake model")

func (m CakeModel) validate() error {
	switch {
	case m.Chunks < 0:
		return fmt.Errorf("%w: %d chunks", ErrCakeModel, m.Chunks)
	case m.ComputeBase < 0 || m.ComputeSlope < 0 || m.FetchLatency < 0 || m.ChunkBytes < 0:
		return fmt.Errorf("%w: negative cost in %+v", ErrCakeModel, m)
	case !(m.FetchBandwidth > 0):
		return fmt.Errorf("%w: fetch bandwidth %v bytes/s", ErrCakeModel, m.FetchBandwidth)
	}
	return nil
}

// computeSeconds is the time to compute the first k chunks:
// sum over i < k of base + slope*i.
func (m CakeModel) computeSeconds(k int) float64 {
	n := float64(k)
	return n*m.ComputeBase.Seconds() + m.ComputeSlope.Seconds()*n*(n-1)/2
}

// fetchSeconds is the time to fetch n chunks one after the other.
func (m CakeModel) fetchSeconds(n int) float64 {
	return float64(n) * (float64(m.ChunkBytes)/m.FetchBandwidth + m.FetchLatency.Seconds())
}

// ComputeTime is the prefill time of chunks [0, k).
func (m CakeModel) ComputeTime(k int) time.Duration { return seconds(m.computeSeconds(k)) }

// FetchTime is the time to load n chunks.
func (m CakeModel) FetchTime(n int) time.Duration { return seconds(m.fetchSeconds(n)) }

// seconds converts to a Duration, saturating instead of overflowing.
func seconds(s float64) time.Duration {
	if d := s * float64(time.Second); d < math.MaxInt64 {
		return time.Duration(d)
	}
	return math.MaxInt64
}

// CakePlan is a split of the prefix: chunks [0, Compute) are computed,
// chunks [Compute, Compute+Load) loaded.
type CakePlan struct {
	Compute, Load int
	// ComputeTime and FetchTime are the model's times for the two sides;
	// Time, the larger, is when the prefix is ready.
	ComputeTime, FetchTime, Time time.Duration
}

func (m CakeModel) plan(k int) CakePlan {
	c, f := m.computeSeconds(k), m.fetchSeconds(m.Chunks-k)
	return CakePlan{Compute: k, Load: m.Chunks - k, ComputeTime: seconds(c), FetchTime: seconds(f), Time: seconds(math.Max(c, f))}
}

// PlanCake returns the split that minimises max(ComputeTime(k),
// FetchTime(N-k)), the time at which the prefix is ready. Compute time
// grows with k and fetch time shrinks, so the best k is at their crossing,
// found by bisection; of two equally good splits it loads more.
func PlanCake(m CakeModel) (CakePlan, error) {
	if err := m.validate(); err != nil {
		return CakePlan{}, err
	}
	n := m.Chunks
	// Smallest k in [0, n] with compute(k) >= fetch(n-k); there is one,
	// since fetch(0) is 0.
	lo, hi := 0, n
	for lo < hi {
		mid := lo + (hi-lo)/2
		if m.computeSeconds(mid) >= m.fetchSeconds(n-mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	obj := func(k int) float64 { return math.Max(m.computeSeconds(k), m.fetchSeconds(n-k)) }
	best := lo
	if lo > 0 && obj(lo-1) <= obj(lo) {
		// One chunk fewer computed: compute is now the faster side, fetch
		// the slower; it may still be as good or better.
		best = lo - 1
	}
	return m.plan(best), nil
}

// CakeResult is what RunCake did.
type CakeResult struct {
	// Computed chunks [0, Computed) were computed, the other Loaded chunks
	// [Computed, N) loaded: Computed is the actual meeting point.
	Computed, Loaded int
	// FetchErr is the error of the fetch that failed, if one did: its chunk
	// was computed instead, and the fetch side stopped.
	FetchErr error
	// ComputeTime and FetchTime are the time each side spent in its
	// callbacks; Elapsed is the wall time of the run.
	ComputeTime, FetchTime, Elapsed time.Duration
}

// RunCake fills a prefix of n chunks from both ends: compute is called for
// chunks 0, 1, 2, ... in order on the calling goroutine, fetch for chunks
// n-1, n-2, ... on another, and each side takes the next chunk from its end
// as soon as it is free, until the two meet. The meeting point thus adapts
// to how fast each side really goes; PlanCake's split is the prediction.
// Every chunk is handled once, by one side.
//
// A failing fetch does not fail the run: its chunk goes back to the
// compute side, the fetch side stops, and the error is reported in
// FetchErr (a chunk that cannot be loaded can always be computed). A
// failing compute, or ctx ending, stops both sides and returns the error,
// after both callbacks in flight have returned.
func RunCake(ctx context.Context, n int, compute, fetch func(ctx context.Context, chunk int) error) (CakeResult, error) {
	if n < 0 {
		return CakeResult{}, fmt.Errorf("%w: %d chunks", ErrCakeModel, n)
	}
	start := time.Now()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s := &cakeState{back: n}
	s.cond = sync.NewCond(&s.mu)
	stop := context.AfterFunc(ctx, func() {
		s.mu.Lock()
		s.cond.Broadcast()
		s.mu.Unlock()
	})
	defer stop()

	var res CakeResult
	fetcherDone := make(chan struct{})
	go func() {
		defer close(fetcherDone)
		res.FetchTime, res.FetchErr = s.fetchSide(ctx, fetch)
	}()
	computeTime, err := s.computeSide(ctx, compute)
	if err != nil {
		cancel()
	}
	<-fetcherDone
	res.ComputeTime = computeTime
	res.Elapsed = time.Since(start)
	s.mu.Lock()
	res.Computed, res.Loaded = s.front, n-s.back
	s.mu.Unlock()
	if err != nil {
		return res, err
	}
	// The compute side stops only when the two sides have met with no fetch
	// in flight, so every chunk is covered; checked all the same.
	if res.Computed+res.Loaded != n {
		return res, fmt.Errorf("gpuclient: Cake run left chunks [%d, %d) unfilled", res.Computed, n-res.Loaded)
	}
	return res, nil
}

// cakeState is the meeting point the two sides of RunCake share: the
// compute side owns [0, front), the fetch side [back, n).
type cakeState struct {
	mu       sync.Mutex
	cond     *sync.Cond
	front    int  // next chunk to compute
	back     int  // lowest chunk the fetch side has taken
	fetching bool // a fetch is in flight (of chunk back)
}

// computeSide takes chunks from the front until it meets the fetch side.
// When it catches up with a fetch in flight it waits for that fetch: if
// the fetch fails, the chunk comes back to it.
func (s *cakeState) computeSide(ctx context.Context, compute func(context.Context, int) error) (time.Duration, error) {
	var busy time.Duration
	for {
		s.mu.Lock()
		for s.front == s.back && s.fetching && ctx.Err() == nil {
			s.cond.Wait()
		}
		if err := ctx.Err(); err != nil {
			s.mu.Unlock()
			return busy, err
		}
		if s.front >= s.back {
			s.mu.Unlock()
			return busy, nil
		}
		i := s.front
		s.front++
		s.mu.Unlock()
		t := time.Now()
		err := compute(ctx, i)
		busy += time.Since(t)
		if err != nil {
			s.mu.Lock()
			s.front-- // not computed
			s.mu.Unlock()
			return busy, fmt.Errorf("gpuclient: computing chunk %d: %w", i, err)
		}
	}
}

// fetchSide takes chunks from the back until it meets the compute side or
// a fetch fails.
func (s *cakeState) fetchSide(ctx context.Context, fetch func(context.Context, int) error) (time.Duration, error) {
	var busy time.Duration
	for {
		s.mu.Lock()
		if ctx.Err() != nil || s.back <= s.front {
			s.mu.Unlock()
			return busy, nil
		}
		s.back--
		i := s.back
		s.fetching = true
		s.mu.Unlock()
		t := time.Now()
		err := fetch(ctx, i)
		busy += time.Since(t)
		s.mu.Lock()
		s.fetching = false
		if err != nil {
			s.back++ // chunk i goes back to the compute side
		}
		s.cond.Broadcast()
		s.mu.Unlock()
		if err != nil {
			return busy, fmt.Errorf("gpuclient: fetching chunk %d: %w", i, err)
		}
	}
}
