package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// goRedisSpec is one timed phase of go-redis SETs: Conns goroutines, each
// on its own pooled connection, send SETs of Size-byte values to random
// keys of a keyspace of Keys, Pipeline at a time, for Duration.
type goRedisSpec struct {
	Size     int64
	Conns    int
	Pipeline int
	Keys     int
	Duration time.Duration
	// Buckets, when positive, also counts the SETs completed in each
	// Bucket of the phase (the storm's first second vs steady state).
	Bucket time.Duration
}

// goRedisResult is a go-redis phase's figures, and its completions per
// bucket when the spec asked for them.
type goRedisResult struct {
	phaseStats
	PerBucket []int64
}

// newGoRedis returns a go-redis client with a pool of conns connections to
// t, dialled before it returns so that the phase does not time the dials.
func newGoRedis(ctx context.Context, t *target, conns int) (*redis.Client, error) {
	rdb := redis.NewClient(&redis.Options{Addr: t.Addr, PoolSize: conns, MinIdleConns: conns,
		DialTimeout: 10 * time.Second, ReadTimeout: time.Minute, WriteTimeout: time.Minute, MaxRetries: -1})
	var wg sync.WaitGroup
	errs := make([]error, conns)
	for i := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = rdb.Ping(ctx).Err()
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			rdb.Close()
			return nil, fmt.Errorf("go-redis to %s: %w", t.Name, err)
		}
	}
	return rdb, nil
}

// runGoRedis runs one go-redis SET phase against t and measures the
// server's CPU time around it. Latency is per batch: every request of a
// pipelined batch waits for the whole batch, as redis-benchmark counts it.
func runGoRedis(ctx context.Context, t *target, s goRedisSpec) (goRedisResult, error) {
	rdb, err := newGoRedis(ctx, t, s.Conns)
	if err != nil {
		return goRedisResult{}, err
	}
	defer rdb.Close()
	value := make([]byte, s.Size)
	rand.NewChaCha8([32]byte{7}).Read(value)
	keys := make([]string, s.Keys)
	for k := range keys {
		keys[k] = redisBenchKey(k)
	}
	lat := make([][]time.Duration, s.Conns)
	ops := make([]int64, s.Conns)
	var buckets []int64
	var mu sync.Mutex // guards buckets
	errs := make([]error, s.Conns)
	var elapsed time.Duration
	use, err := serverCPU(ctx, t, func() error {
		start := time.Now()
		deadline := start.Add(s.Duration)
		var wg sync.WaitGroup
		for i := range s.Conns {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(uint64(i), 17))
				for time.Now().Before(deadline) && ctx.Err() == nil {
					began := time.Now()
					if s.Pipeline > 1 {
						pipe := rdb.Pipeline()
						for range s.Pipeline {
							pipe.Set(ctx, keys[rng.IntN(len(keys))], value, 0)
						}
						_, errs[i] = pipe.Exec(ctx)
					} else {
						errs[i] = rdb.Set(ctx, keys[rng.IntN(len(keys))], value, 0).Err()
					}
					if errs[i] != nil {
						return
					}
					done := time.Now()
					lat[i] = append(lat[i], done.Sub(began))
					ops[i] += int64(s.Pipeline)
					if s.Bucket > 0 {
						b := int(done.Sub(start) / s.Bucket)
						mu.Lock()
						for len(buckets) <= b {
							buckets = append(buckets, 0)
						}
						buckets[b] += int64(s.Pipeline)
						mu.Unlock()
					}
				}
			}()
		}
		wg.Wait()
		elapsed = time.Since(start)
		for _, err := range errs {
			if err != nil {
				return fmt.Errorf("go-redis SET of %s on %s: %w", sizeLabel(s.Size), t.Name, err)
			}
		}
		return ctx.Err()
	})
	if err != nil {
		return goRedisResult{}, err
	}
	var total int64
	for _, n := range ops {
		total += n
	}
	all := slices.Concat(lat...)
	slices.Sort(all)
	r := goRedisResult{PerBucket: buckets}
	r.OpsPerSec = float64(total) / elapsed.Seconds()
	r.GBps = r.OpsPerSec * float64(s.Size) / 1e9
	r.P50Ms, r.P99Ms = quantileMs(all, 0.50), quantileMs(all, 0.99)
	r.Stolen = use.Stolen
	if total > 0 {
		r.CPUPerOp = use.Seconds / float64(total)
		r.CPUPerGB = use.Seconds / (float64(total) * float64(s.Size) / 1e9)
	}
	return r, nil
}

// quantileMs is the q quantile of sorted latencies, in milliseconds (0
// for none).
func quantileMs(sorted []time.Duration, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := min(len(sorted)-1, int(q*float64(len(sorted))))
	return float64(sorted[i]) / float64(time.Millisecond)
}
