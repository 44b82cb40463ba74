package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/kvserver/kvserver/config"
)

// pipelineMaxValue is the largest value that is pipelined: beyond it one
// request already keeps the connection busy, and --pipeline 16 of 32 MiB
// values would hold half a gigabyte per connection in flight.
const pipelineMaxValue = 64 << 10

// compareOptions are the flags of `kvbench compare`.
type compareOptions struct {
	sizes     []int64
	conns     []int
	pipeline  int
	rounds    int
	bytesPer  int64
	phaseTime time.Duration
	keysPer   int
	pairOptions
	loopbackTime time.Duration
	jsonOutput   bool
}

// compareConfig is one cell of the comparison matrix.
type compareConfig struct {
	Size     int64
	Conns    int
	Pipeline int
}

// measurement is one median figure of the comparison.
type measurement struct {
	Op         string  `json:"op"`
	ValueBytes int64   `json:"value_bytes"`
	Conns      int     `json:"conns"`
	Pipeline   int     `json:"pipeline"`
	Rounds     int     `json:"rounds"`
	RedisGBps  float64 `json:"redis_gbps"`
	KVGBps     float64 `json:"kvserver_gbps"`
	RedisOps   float64 `json:"redis_ops_per_sec"`
	KVOps      float64 `json:"kvserver_ops_per_sec"`
	Ratio      float64 `json:"ratio"`
	// LoopbackGBps is the single-stream loopback TCP limit measured at the
	// start of the run; KVOfLoopback is kvserver's GB/s as a fraction of it.
	LoopbackGBps float64 `json:"loopback_gbps,omitempty"`
	KVOfLoopback float64 `json:"kvserver_of_loopback,omitempty"`
}

const compareAbout = `
Starts Debian's redis-server and kvserver side by side (building ./cmd/kvserver
unless --kvserver names a binary) and measures SET and GET throughput for every
value size and connection count. Each round runs both servers, alternating
which goes first; medians over the rounds and the kvserver/redis ratio are
reported, in GB/s (10^9 bytes/s) and ops/s. A phase (SET or GET of one
server) stops after --bytes or --phase-seconds, whichever comes first.
Values up to 64kb are pipelined --pipeline deep. The loopback TCP limit of one
stream is measured once at the start and kvserver's GB/s is shown as a
percentage of it. Absolute figures on a shared machine are noise; the ratio is
the result. The default matrix takes about four minutes.`

func parseCompareFlags(args []string) (compareOptions, error) {
	fs := newFlagSet("compare", "[--sizes 4kb,1mb] [--conns 1,8] [--pipeline 16] [--rounds 3] [--json]", compareAbout)
	sizes := fs.String("sizes", "4kb,64kb,1mb,4mb,16mb,32mb", "comma-separated value sizes (Redis size syntax)")
	conns := fs.String("conns", "1,8,64", "comma-separated connection counts")
	o := compareOptions{}
	fs.IntVar(&o.pipeline, "pipeline", 1, "requests in flight per connection for values up to 64kb (write N, then read N replies)")
	fs.IntVar(&o.rounds, "rounds", 3, "alternating rounds per configuration; medians are reported")
	bytesPer := fs.String("bytes", "512mb", "stop a phase (SET or GET) after moving this many bytes")
	phaseSeconds := fs.Float64("phase-seconds", 2, "stop a phase after this many seconds")
	fs.IntVar(&o.keysPer, "keys", 4, "distinct keys per connection, capped so all keys of one size fit in a quarter of maxmemory")
	loopSeconds := fs.Float64("loopback-seconds", 2, "duration of the loopback TCP measurement at the start (0 skips it)")
	o.pairOptions.define(fs)
	fs.BoolVar(&o.jsonOutput, "json", false, "print JSON lines instead of a table")
	if err := parseNoArgs(fs, args); err != nil {
		return o, err
	}
	var err error
	if o.sizes, err = parseSizeList("sizes", *sizes); err != nil {
		return o, err
	}
	if o.conns, err = parseCountList("conns", *conns); err != nil {
		return o, err
	}
	if o.bytesPer, err = parseSize("bytes", *bytesPer); err != nil {
		return o, err
	}
	if err = o.parseMaxMemory(); err != nil {
		return o, err
	}
	switch {
	case o.rounds < 1:
		return o, fmt.Errorf("--rounds must be at least 1")
	case o.pipeline < 1:
		return o, fmt.Errorf("--pipeline must be at least 1")
	case o.keysPer < 1:
		return o, fmt.Errorf("--keys must be at least 1")
	case *phaseSeconds <= 0:
		return o, fmt.Errorf("--phase-seconds must be positive")
	case *loopSeconds < 0:
		return o, fmt.Errorf("--loopback-seconds must not be negative")
	}
	o.phaseTime = time.Duration(*phaseSeconds * float64(time.Second))
	o.loopbackTime = time.Duration(*loopSeconds * float64(time.Second))
	return o, nil
}

// matrix lists the configurations compare runs: every size with every
// connection count, pipelined where the value is small enough.
func (o compareOptions) matrix() []compareConfig {
	var out []compareConfig
	for _, size := range o.sizes {
		for _, conns := range o.conns {
			out = append(out, compareConfig{Size: size, Conns: conns, Pipeline: effectivePipeline(size, o.pipeline)})
		}
	}
	return out
}

// effectivePipeline is the depth a value of this size is pipelined with.
func effectivePipeline(size int64, pipeline int) int {
	if size > pipelineMaxValue {
		return 1
	}
	return pipeline
}

// runCompare starts redis-server and kvserver side by side and measures SET
// and GET throughput for each configuration, alternating which server goes
// first in each round, and prints medians and ratios.
func runCompare(ctx context.Context, args []string, out io.Writer) error {
	o, err := parseCompareFlags(args)
	if err != nil {
		return err
	}
	var loopback float64
	if o.loopbackTime > 0 {
		// Before the servers start, so that nothing else runs beside it.
		if loopback, err = measureLoopback(ctx, 1, loopbackWrite, o.loopbackTime); err != nil {
			return err
		}
	}
	pair, err := o.start(ctx)
	if err != nil {
		return err
	}
	defer pair.Close()
	results, err := compareMatrix(ctx, o, pair, o.matrix(), loopback)
	if err != nil {
		return err
	}
	if !o.jsonOutput && loopback > 0 {
		fmt.Fprintf(out, "loopback TCP limit (1 stream, 1 MiB writes): %.2f GB/s\n\n", loopback)
	}
	return printMeasurements(out, results, o.jsonOutput)
}

// compareMatrix measures every configuration against the pair.
func compareMatrix(ctx context.Context, o compareOptions, pair *serverPair, cfgs []compareConfig, loopback float64) ([]measurement, error) {
	var results []measurement
	for _, cfg := range cfgs {
		ms, err := compareOne(ctx, o, pair, cfg)
		if err != nil {
			return nil, err
		}
		for i := range ms {
			if loopback > 0 {
				ms[i].LoopbackGBps = loopback
				ms[i].KVOfLoopback = ms[i].KVGBps / loopback
			}
		}
		results = append(results, ms...)
	}
	return results, nil
}

// compareOne runs the alternating rounds for one configuration.
func compareOne(ctx context.Context, o compareOptions, pair *serverPair, cfg compareConfig) ([]measurement, error) {
	if err := pair.flush(ctx); err != nil {
		return nil, err
	}
	value := make([]byte, cfg.Size)
	rng := rand.New(rand.NewPCG(uint64(cfg.Size), uint64(cfg.Conns)))
	for i := range value {
		value[i] = byte(rng.Uint32())
	}
	spec := phaseSpec{value: value, conns: cfg.Conns, pipeline: cfg.Pipeline,
		keys:     workingSetKeys(cfg.Size, cfg.Conns, o.keysPer, o.maxMemBytes),
		maxBytes: o.bytesPer, maxTime: o.phaseTime}
	type key struct{ op, server string }
	samples := map[key][]phaseResult{}
	for round := 0; round < o.rounds; round++ {
		for _, t := range pair.order(round) {
			for _, op := range []string{"SET", "GET"} {
				spec.op = op
				r, err := runPhase(ctx, t.Addr, spec)
				if err != nil {
					return nil, fmt.Errorf("%s %s %d B x %d conns, pipeline %d: %w", t.Name, op, cfg.Size, cfg.Conns, cfg.Pipeline, err)
				}
				samples[key{op, t.Name}] = append(samples[key{op, t.Name}], r)
			}
		}
	}
	var out []measurement
	for _, op := range []string{"SET", "GET"} {
		r, k := samples[key{op, "redis"}], samples[key{op, "kvserver"}]
		m := measurement{Op: op, ValueBytes: cfg.Size, Conns: cfg.Conns, Pipeline: cfg.Pipeline, Rounds: o.rounds,
			RedisGBps: median(gbpsOf(r)), KVGBps: median(gbpsOf(k)),
			RedisOps: median(opsOf(r)), KVOps: median(opsOf(k))}
		m.Ratio = ratio(m.KVGBps, m.RedisGBps)
		out = append(out, m)
	}
	return out, nil
}

// workingSetKeys is how many distinct keys a configuration cycles over:
// keysPer per connection, but no more than fit in a quarter of maxmemory,
// which leaves room for the servers' query and reply buffers (64 conns of
// 32 MiB hold 2 GiB in flight) without evicting a key that GET expects.
func workingSetKeys(size int64, conns, keysPer int, maxMemory int64) int {
	return max(1, min(conns*keysPer, int(maxMemory/4/size)))
}

func ratio(kv, redis float64) float64 {
	if redis == 0 {
		return 0
	}
	return kv / redis
}

// phaseSpec describes one timed phase: every connection sends op for
// values in batches of pipeline requests until maxBytes have moved (over
// all connections) or maxTime has passed.
type phaseSpec struct {
	op       string // SET or GET
	value    []byte
	conns    int
	pipeline int
	keys     int // distinct keys, shared by all connections
	maxBytes int64
	maxTime  time.Duration
}

// phaseResult is what one phase moved and how long it took.
type phaseResult struct {
	Bytes   int64
	Ops     int64
	Seconds float64
}

// GBps is the payload throughput in GB/s (10^9 bytes per second).
func (r phaseResult) GBps() float64 { return float64(r.Bytes) / r.Seconds / 1e9 }

// OpsPerSec is the request rate.
func (r phaseResult) OpsPerSec() float64 { return float64(r.Ops) / r.Seconds }

func gbpsOf(rs []phaseResult) []float64 {
	out := make([]float64, len(rs))
	for i, r := range rs {
		out[i] = r.GBps()
	}
	return out
}

func opsOf(rs []phaseResult) []float64 {
	out := make([]float64, len(rs))
	for i, r := range rs {
		out[i] = r.OpsPerSec()
	}
	return out
}

// batchesPerConn is how many batches of pipeline requests each connection
// sends at most so that all of them together move about maxBytes; at
// least one.
func batchesPerConn(maxBytes, size int64, conns, pipeline int) int {
	perBatch := size * int64(conns) * int64(pipeline)
	return int(max(1, (maxBytes+perBatch-1)/perBatch))
}

// phaseKey is the index of the key of request j (counting all its
// batches) of connection i: connections start at different keys and step
// by the connection count, so together they cover the working set.
func phaseKey(i, j, conns, keys int) int { return (i + j*conns) % keys }

// runPhase runs one phase against addr.
func runPhase(ctx context.Context, addr string, s phaseSpec) (phaseResult, error) {
	clients := make([]*benchConn, s.conns)
	for i := range clients {
		c, err := dialBench(ctx, addr)
		if err != nil {
			return phaseResult{}, err
		}
		defer c.Close()
		clients[i] = c
	}
	if s.op == "GET" {
		if err := ensureKeys(clients[0], s.keys, s.value); err != nil {
			return phaseResult{}, err
		}
	}
	names := make([]string, s.keys) // built once: the hot loop allocates nothing
	for k := range names {
		names[k] = benchKey(k)
	}
	batches := batchesPerConn(s.maxBytes, int64(len(s.value)), s.conns, s.pipeline)
	var wg sync.WaitGroup
	errs := make(chan error, s.conns)
	moved := make([]phaseResult, s.conns)
	start := time.Now()
	deadline := start.Add(s.maxTime)
	for i, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			keys := make([]string, s.pipeline)
			r := &moved[i]
			for b := 0; b < batches; b++ {
				if b > 0 && (time.Now().After(deadline) || ctx.Err() != nil) {
					return
				}
				for p := range keys {
					keys[p] = names[phaseKey(i, b*s.pipeline+p, s.conns, s.keys)]
				}
				n, err := doBatch(c, s.op, keys, s.value)
				if err != nil {
					errs <- err
					return
				}
				r.Bytes += n
				r.Ops += int64(len(keys))
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(errs)
	if err := <-errs; err != nil {
		return phaseResult{}, err
	}
	if err := ctx.Err(); err != nil {
		return phaseResult{}, err
	}
	total := phaseResult{Seconds: elapsed.Seconds()}
	for _, r := range moved {
		total.Bytes += r.Bytes
		total.Ops += r.Ops
	}
	return total, nil
}

// doBatch sends one batch of requests, pipelined when there is more than
// one, and returns the payload bytes moved. A GET that misses is an error:
// the working set is sized to fit, so a miss means the server evicted it.
func doBatch(c *benchConn, op string, keys []string, value []byte) (int64, error) {
	if op == "SET" {
		var err error
		if len(keys) == 1 {
			err = c.Set(keys[0], value)
		} else {
			err = c.SetPipelined(keys, value)
		}
		return int64(len(keys) * len(value)), err
	}
	if len(keys) == 1 {
		n, err := c.Get(keys[0])
		if err != nil {
			return 0, err
		}
		if n != len(value) {
			return 0, fmt.Errorf("GET %s returned %d bytes, want %d (evicted? raise --maxmemory)", keys[0], n, len(value))
		}
		return int64(n), nil
	}
	n, misses, err := c.GetPipelined(keys)
	if err != nil {
		return 0, err
	}
	if misses > 0 || n != int64(len(keys)*len(value)) {
		return 0, fmt.Errorf("pipelined GET of %d keys returned %d bytes with %d misses, want %d bytes (evicted? raise --maxmemory)",
			len(keys), n, misses, len(keys)*len(value))
	}
	return n, nil
}

// ensureKeys sets every working-set key that does not exist, so that GET
// moves full values even when it runs without a SET phase before it.
func ensureKeys(c *benchConn, keys int, value []byte) error {
	for k := 0; k < keys; k++ {
		line, err := c.Do("EXISTS", benchKey(k))
		if err != nil {
			return err
		}
		if line == ":1" {
			continue
		}
		if err := c.Set(benchKey(k), value); err != nil {
			return err
		}
	}
	return nil
}

func benchKey(k int) string { return "kvbench:" + strconv.Itoa(k) }

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
		return writeJSONLines(out, ms)
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "op\tvalue\tconns\tpipeline\trounds\tredis GB/s\tkvserver GB/s\tredis ops/s\tkvserver ops/s\tkvserver/redis\tkvserver % loopback\t")
	for _, m := range ms {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%.2f\t%.2f\t%.0f\t%.0f\t%.2fx\t%s\t\n", m.Op, config.FormatSize(m.ValueBytes),
			m.Conns, m.Pipeline, m.Rounds, m.RedisGBps, m.KVGBps, m.RedisOps, m.KVOps, m.Ratio, pctOfLoopback(m))
	}
	return tw.Flush()
}

// pctOfLoopback formats kvserver's share of the loopback limit, or "-"
// when the limit was not measured.
func pctOfLoopback(m measurement) string {
	if m.LoopbackGBps <= 0 {
		return "-"
	}
	return strconv.FormatFloat(100*m.KVOfLoopback, 'f', 0, 64) + "%"
}
