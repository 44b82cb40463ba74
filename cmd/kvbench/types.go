package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"text/tabwriter"
	"time"

	"github.com/redis/go-redis/v9"
)

// kvbench types: the common operations of Redis's other data types and
// of transactions, measured with redis-benchmark (and go-redis for MULTI)
// against both servers in alternating rounds, as issue 14 asks: HSET/HGET,
// LPUSH/LPOP, SADD/SPOP, ZADD/ZRANGE/ZPOPMIN, MULTI of 10 SETs.

const typesAbout = `Throughput and server CPU per operation of the data-type commands,
kvserver against redis-server, alternating rounds, medians; redis-benchmark's
own tests where it has them, its custom-command mode for HGET and ZRANGE, and
go-redis TxPipeline for MULTI/EXEC of 10 SETs.`

// typeOp is one measured operation, run in this order within a round, so
// that reads and pops find what the writes before them stored.
type typeOp struct {
	Name    string
	Test    string   // redis-benchmark -t test
	Command []string // or a custom command
}

var typeOps = []typeOp{
	{Name: "HSET", Test: "hset"},
	{Name: "HGET", Command: []string{"HGET", "myhash", "element:__rand_int__"}},
	{Name: "LPUSH", Test: "lpush"},
	{Name: "LPOP", Test: "lpop"},
	{Name: "SADD", Test: "sadd"},
	{Name: "SPOP", Test: "spop"},
	{Name: "ZADD", Test: "zadd"},
	{Name: "ZRANGE 0 9", Command: []string{"ZRANGE", "myzset", "0", "9"}},
	{Name: "ZPOPMIN", Test: "zpopmin"},
}

// typesOptions are kvbench types' flags.
type typesOptions struct {
	pairOptions
	rounds, conns, pipeline, requests, keys int
	multiTime                               time.Duration
	benchBin                                string
}

func parseTypesFlags(args []string) (typesOptions, error) {
	fs := newFlagSet("types", "[--rounds 3] [--conns 50] [--pipeline 1] [--requests 100000]", typesAbout)
	var o typesOptions
	fs.IntVar(&o.rounds, "rounds", 3, "alternating rounds per server")
	fs.IntVar(&o.conns, "conns", 50, "connections")
	fs.IntVar(&o.pipeline, "pipeline", 1, "redis-benchmark -P")
	fs.IntVar(&o.requests, "requests", 100000, "requests per operation and round")
	fs.IntVar(&o.keys, "keys", 100000, "redis-benchmark -r (distinct elements)")
	fs.DurationVar(&o.multiTime, "multi-time", 3*time.Second, "duration of each MULTI round")
	fs.StringVar(&o.benchBin, "redis-benchmark", "redis-benchmark", "redis-benchmark binary")
	o.pairOptions.define(fs)
	if err := parseNoArgs(fs, args); err != nil {
		return o, err
	}
	return o, o.parseMaxMemory()
}

// typeRow is one operation's medians on both servers.
type typeRow struct {
	Op                 string
	Redis, KV          phaseStats
	OpsRatio, CPURatio float64
}

func runTypes(ctx context.Context, args []string, out io.Writer) error {
	o, err := parseTypesFlags(args)
	if err != nil {
		return err
	}
	bench, err := exec.LookPath(o.benchBin)
	if err != nil {
		return fmt.Errorf("redis-benchmark not found (apt-get install redis-tools): %w", err)
	}
	rows, err := onPair(ctx, &o.pairOptions, func(pair *serverPair) ([]typeRow, error) {
		return o.measure(ctx, bench, pair)
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "kvbench types: %d conns, pipeline %d, %d requests, %d rounds (medians)\n", o.conns, o.pipeline, o.requests, o.rounds)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "op\tredis ops/s\tkvserver ops/s\tops/s kvserver/redis\tCPU/op kvserver/redis\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%.2fx\t%.2fx\t\n", r.Op, r.Redis.OpsPerSec, r.KV.OpsPerSec, r.OpsRatio, r.CPURatio)
	}
	return tw.Flush()
}

// measure runs every round: per server, the typeOps in order on an empty
// keyspace, then MULTI.
func (o typesOptions) measure(ctx context.Context, bench string, pair *serverPair) ([]typeRow, error) {
	samples := map[string]map[string][]phaseStats{}
	add := func(op, server string, st phaseStats) {
		if samples[op] == nil {
			samples[op] = map[string][]phaseStats{}
		}
		samples[op][server] = append(samples[op][server], st)
	}
	for round := range o.rounds {
		for _, t := range pair.order(round) {
			if err := pair.flush(ctx); err != nil {
				return nil, err
			}
			for _, op := range typeOps {
				fmt.Fprintf(os.Stderr, "kvbench types: round %d %s %s\n", round+1, t.Name, op.Name)
				spec := redisBenchSpec{Test: op.Test, Command: op.Command, Size: 3, Conns: o.conns,
					Pipeline: o.pipeline, Requests: o.requests, Keys: o.keys}
				st, err := runRedisBenchmark(ctx, bench, t, spec, false)
				if err != nil {
					return nil, err
				}
				add(op.Name, t.Name, st)
			}
			st, err := o.measureMulti(ctx, t)
			if err != nil {
				return nil, err
			}
			add("MULTI 10 SETs", t.Name, st)
		}
	}
	var rows []typeRow
	for _, name := range append(opNames(), "MULTI 10 SETs") {
		r := typeRow{Op: name, Redis: medianStats(samples[name]["redis"]), KV: medianStats(samples[name]["kvserver"])}
		r.OpsRatio = ratio(r.KV.OpsPerSec, r.Redis.OpsPerSec)
		r.CPURatio = ratio(r.KV.CPUPerOp, r.Redis.CPUPerOp)
		rows = append(rows, r)
	}
	return rows, nil
}

func opNames() []string {
	var out []string
	for _, op := range typeOps {
		out = append(out, op.Name)
	}
	return out
}

// measureMulti runs MULTI, 10 SETs, EXEC through go-redis's TxPipeline on
// o.conns connections for o.multiTime; an operation is one transaction.
func (o typesOptions) measureMulti(ctx context.Context, t *target) (phaseStats, error) {
	c, err := newGoRedis(ctx, t, o.conns)
	if err != nil {
		return phaseStats{}, err
	}
	defer c.Close()
	var done int64
	use, err := serverCPU(ctx, t, func() error {
		runCtx, cancel := context.WithTimeout(ctx, o.multiTime)
		defer cancel()
		errs := make(chan error, o.conns)
		counts := make(chan int64, o.conns)
		for w := range o.conns {
			go func() {
				var n int64
				for runCtx.Err() == nil {
					_, err := c.TxPipelined(runCtx, func(p redis.Pipeliner) error {
						for k := range 10 {
							p.Set(runCtx, fmt.Sprintf("tx:%d:%d", w, k), "v", 0)
						}
						return nil
					})
					if err != nil && runCtx.Err() == nil {
						errs <- err
						counts <- n
						return
					}
					if err == nil {
						n++
					}
				}
				errs <- nil
				counts <- n
			}()
		}
		var firstErr error
		for range o.conns {
			if err := <-errs; err != nil && !errors.Is(err, context.DeadlineExceeded) && firstErr == nil {
				firstErr = err
			}
			done += <-counts
		}
		return firstErr
	})
	if err != nil {
		return phaseStats{}, err
	}
	if done == 0 {
		return phaseStats{}, fmt.Errorf("%s: no transaction completed", t.Name)
	}
	return phaseStats{OpsPerSec: float64(done) / o.multiTime.Seconds(), CPUPerOp: use.Seconds / float64(done), Stolen: use.Stolen}, nil
}
