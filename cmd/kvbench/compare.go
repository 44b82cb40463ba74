package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/kvserver/kvserver/config"
)

// compareOptions are the flags of `kvbench compare`.
type compareOptions struct {
	sizes      []int64
	conns      []int
	rounds     int
	bytesPer   int64
	keysPer    int
	maxMemory  string
	redisBin   string
	kvBin      string
	jsonOutput bool
}

// measurement is one median figure of the comparison.
type measurement struct {
	Op         string  `json:"op"`
	ValueBytes int64   `json:"value_bytes"`
	Conns      int     `json:"conns"`
	Rounds     int     `json:"rounds"`
	RedisGBps  float64 `json:"redis_gbps"`
	KVGBps     float64 `json:"kvserver_gbps"`
	Ratio      float64 `json:"ratio"`
}

func parseCompareFlags(args []string) (compareOptions, error) {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	sizes := fs.String("sizes", "4mb", "comma-separated value sizes (Redis size syntax)")
	conns := fs.String("conns", "8", "comma-separated connection counts")
	o := compareOptions{}
	fs.IntVar(&o.rounds, "rounds", 5, "alternating rounds per configuration; medians are reported")
	bytesPer := fs.String("bytes", "512mb", "bytes moved per phase (SET or GET) per round")
	fs.IntVar(&o.keysPer, "keys", 4, "distinct keys per connection (values are overwritten)")
	fs.StringVar(&o.maxMemory, "maxmemory", "2gb", "maxmemory for both servers")
	fs.StringVar(&o.redisBin, "redis-server", "redis-server", "redis-server binary")
	fs.StringVar(&o.kvBin, "kvserver", "", "kvserver binary (default: build ./cmd/kvserver)")
	fs.BoolVar(&o.jsonOutput, "json", false, "print JSON lines instead of a table")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	for _, s := range strings.Split(*sizes, ",") {
		n, err := config.ParseSize(strings.TrimSpace(s))
		if err != nil {
			return o, fmt.Errorf("--sizes: %w", err)
		}
		o.sizes = append(o.sizes, n)
	}
	for _, s := range strings.Split(*conns, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return o, fmt.Errorf("--conns: bad count %q", s)
		}
		o.conns = append(o.conns, n)
	}
	n, err := config.ParseSize(*bytesPer)
	if err != nil {
		return o, fmt.Errorf("--bytes: %w", err)
	}
	o.bytesPer = n
	if o.rounds < 1 {
		return o, fmt.Errorf("--rounds must be at least 1")
	}
	return o, nil
}

// runCompare starts redis-server and kvserver side by side and measures SET
// and GET throughput for each size and connection count, alternating which
// server goes first in each round, and prints medians and ratios.
func runCompare(ctx context.Context, args []string, out io.Writer) error {
	o, err := parseCompareFlags(args)
	if err != nil {
		return err
	}
	if _, err := exec.LookPath(o.redisBin); err != nil {
		return fmt.Errorf("redis-server not found (apt-get install redis-server): %w", err)
	}
	tmp, err := os.MkdirTemp("", "kvbench-")
	if err != nil {
		return fmt.Errorf("temp dir: %w", err)
	}
	defer os.RemoveAll(tmp)
	if o.kvBin == "" {
		if o.kvBin, err = buildKVServer(ctx, tmp); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(tmp+"/redis", 0o755); err != nil {
		return err
	}
	redis, err := startRedis(ctx, o.redisBin, tmp+"/redis", o.maxMemory)
	if err != nil {
		return err
	}
	defer redis.Stop()
	kv, err := startKVServer(ctx, o.kvBin, tmp+"/kv", o.maxMemory)
	if err != nil {
		return err
	}
	defer kv.Stop()

	var results []measurement
	for _, size := range o.sizes {
		for _, conns := range o.conns {
			ms, err := compareOne(ctx, o, redis, kv, size, conns)
			if err != nil {
				return err
			}
			results = append(results, ms...)
		}
	}
	return printMeasurements(out, results, o.jsonOutput)
}

// compareOne runs the alternating rounds for one size and connection count.
func compareOne(ctx context.Context, o compareOptions, redis, kv *target, size int64, conns int) ([]measurement, error) {
	value := make([]byte, size)
	rng := rand.New(rand.NewPCG(uint64(size), uint64(conns)))
	for i := range value {
		value[i] = byte(rng.Uint32())
	}
	opsPerConn := max(int(o.bytesPer/size)/conns, 1)
	samples := map[string]map[string][]float64{"SET": {}, "GET": {}}
	for round := 0; round < o.rounds; round++ {
		order := []*target{redis, kv}
		if round%2 == 1 {
			order = []*target{kv, redis}
		}
		for _, t := range order {
			for _, op := range []string{"SET", "GET"} {
				gbps, err := runPhase(ctx, t.Addr, op, value, conns, opsPerConn, o.keysPer)
				if err != nil {
					return nil, fmt.Errorf("%s %s %d B x %d conns: %w", t.Name, op, size, conns, err)
				}
				samples[op][t.Name] = append(samples[op][t.Name], gbps)
			}
		}
	}
	var out []measurement
	for _, op := range []string{"SET", "GET"} {
		r, k := median(samples[op]["redis"]), median(samples[op]["kvserver"])
		out = append(out, measurement{Op: op, ValueBytes: size, Conns: conns, Rounds: o.rounds,
			RedisGBps: r, KVGBps: k, Ratio: k / r})
	}
	return out, nil
}

// runPhase moves opsPerConn values per connection with SET or GET and
// returns the payload throughput in GB/s (10^9 bytes per second).
func runPhase(ctx context.Context, addr, op string, value []byte, conns, opsPerConn, keysPer int) (float64, error) {
	clients := make([]*benchConn, conns)
	for i := range clients {
		c, err := dialBench(ctx, addr)
		if err != nil {
			return 0, err
		}
		defer c.Close()
		clients[i] = c
	}
	if op == "GET" {
		// Make sure every key exists so GET moves full values.
		for i, c := range clients {
			for k := 0; k < keysPer; k++ {
				if err := c.Set(benchKey(i, k), value); err != nil {
					return 0, err
				}
			}
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	var moved [64]int64
	start := time.Now()
	for i, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var n int64
			for j := 0; j < opsPerConn; j++ {
				key := benchKey(i, j%keysPer)
				if op == "SET" {
					if err := c.Set(key, value); err != nil {
						errs <- err
						return
					}
					n += int64(len(value))
					continue
				}
				got, err := c.Get(key)
				if err != nil {
					errs <- err
					return
				}
				if got != len(value) {
					errs <- fmt.Errorf("GET %s returned %d bytes, want %d", key, got, len(value))
					return
				}
				n += int64(got)
			}
			moved[i%len(moved)] += n
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(errs)
	if err := <-errs; err != nil {
		return 0, err
	}
	var total int64
	for _, n := range moved {
		total += n
	}
	return float64(total) / elapsed.Seconds() / 1e9, nil
}

func benchKey(conn, k int) string { return "kvbench:" + strconv.Itoa(conn) + ":" + strconv.Itoa(k) }

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func printMeasurements(out io.Writer, ms []measurement, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(out)
		for _, m := range ms {
			if err := enc.Encode(m); err != nil {
				return err
			}
		}
		return nil
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "op\tvalue\tconns\trounds\tredis GB/s\tkvserver GB/s\tkvserver/redis\t")
	for _, m := range ms {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%.2f\t%.2f\t%.2fx\t\n", m.Op, config.FormatSize(m.ValueBytes),
			m.Conns, m.Rounds, m.RedisGBps, m.KVGBps, m.Ratio)
	}
	return tw.Flush()
}
