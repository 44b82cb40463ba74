package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// phaseStats is what one phase of a third-party client measured: the
// client's throughput and latency, and the server's CPU time (user plus
// system, from /proc) per request and per 10^9 bytes of values.
type phaseStats struct {
	OpsPerSec float64 `json:"ops_per_sec"`
	GBps      float64 `json:"gbps"`
	P50Ms     float64 `json:"p50_ms"`
	P99Ms     float64 `json:"p99_ms"`
	CPUPerOp  float64 `json:"cpu_seconds_per_op"`
	CPUPerGB  float64 `json:"cpu_seconds_per_gb"`
	// Stolen is the share of the machine's CPU time the hypervisor gave
	// other guests during the run (stolenShare); medianStats keeps the
	// largest.
	Stolen float64 `json:"host_stolen_share"`
}

// medianStats is the median of each figure over rounds, taken separately,
// and the largest share of the machine's time stolen in any of them.
func medianStats(rounds []phaseStats) phaseStats {
	values := func(get func(phaseStats) float64) []float64 {
		xs := make([]float64, len(rounds))
		for i, r := range rounds {
			xs[i] = get(r)
		}
		return xs
	}
	field := func(get func(phaseStats) float64) float64 { return median(values(get)) }
	most := func(get func(phaseStats) float64) float64 { return slices.Max(append(values(get), 0)) }
	return phaseStats{
		OpsPerSec: field(func(s phaseStats) float64 { return s.OpsPerSec }),
		GBps:      field(func(s phaseStats) float64 { return s.GBps }),
		P50Ms:     field(func(s phaseStats) float64 { return s.P50Ms }),
		P99Ms:     field(func(s phaseStats) float64 { return s.P99Ms }),
		CPUPerOp:  field(func(s phaseStats) float64 { return s.CPUPerOp }),
		CPUPerGB:  field(func(s phaseStats) float64 { return s.CPUPerGB }),
		Stolen:    most(func(s phaseStats) float64 { return s.Stolen }),
	}
}

// Clients of the users measurement.
const (
	clientRedisBenchmark = "redis-benchmark"
	clientGoRedis        = "go-redis"
)

// userWorkload is one row of the users measurement.
type userWorkload struct {
	Client   string
	Op       string // SET or GET
	Size     int64
	Conns    int
	Pipeline int
}

// hasTarget reports whether issue 17 sets the workload a target
// (userTarget); those rows are also measured on the copy floor.
func (w userWorkload) hasTarget() bool {
	_, _, ok := userTarget(userRow{Client: w.Client, ValueBytes: w.Size})
	return ok
}

// userRow is one workload's medians for both servers and their ratios
// (kvserver over redis: above 1 kvserver moves more, or burns more CPU).
type userRow struct {
	Client     string `json:"client"`
	Op         string `json:"op"`
	ValueBytes int64  `json:"value_bytes"`
	Conns      int    `json:"conns"`
	Pipeline   int    `json:"pipeline"`
	Rounds     int    `json:"rounds"`
	// Reruns is how many runs of the row were thrown away and run again
	// because the hypervisor stole more than usersOptions.maxStolen of
	// the machine's time during them (usersOptions.quietRun).
	Reruns   int        `json:"reruns_for_stolen_time"`
	Redis    phaseStats `json:"redis"`
	KV       phaseStats `json:"kvserver"`
	OpsRatio float64    `json:"ops_ratio"`
	CPURatio float64    `json:"cpu_per_op_ratio"`
	// Unix socket throughput (ops/s) of the same workload; 0 where it was
	// not measured.
	UnixRedisOps float64 `json:"unix_redis_ops_per_sec,omitempty"`
	UnixKVOps    float64 `json:"unix_kvserver_ops_per_sec,omitempty"`
	UnixRatio    float64 `json:"unix_ops_ratio,omitempty"`
	// OwnClientRatio is kvbench's own client's kvserver/redis ratio for
	// the same workload, where the report measured it; 0 otherwise.
	OwnClientRatio float64 `json:"own_client_ratio,omitempty"`
	// Durable is a SET workload's figures on a redis-server that persists
	// as kvserver does (startDurableRedis), and the ratios kvserver over
	// it; nil and 0 for GETs, which persist nothing on either.
	Durable         *phaseStats `json:"redis_aof,omitempty"`
	DurableOpsRatio float64     `json:"aof_ops_ratio,omitempty"`
	DurableCPURatio float64     `json:"aof_cpu_per_op_ratio,omitempty"`
	// Floor is the same workload on the copy floor (floor.go), a server
	// that keeps nothing, and FloorOpsRatio and FloorCPURatio its
	// throughput and CPU per operation over redis's: for large values no
	// server that reads and writes the bytes through its sockets gets much
	// below its CPU, and none serves the same client much faster. Measured
	// for the rows issue 17 sets a target.
	Floor         *phaseStats `json:"floor,omitempty"`
	FloorOpsRatio float64     `json:"floor_ops_ratio,omitempty"`
	FloorCPURatio float64     `json:"floor_cpu_per_op_ratio,omitempty"`
}

// stormResult is the SET storm on a fresh server: the first second's
// rate against the steady rate (the median of the later full seconds).
type stormResult struct {
	Server      string  `json:"server"`
	Conns       int     `json:"conns"`
	ValueBytes  int64   `json:"value_bytes"`
	PerSecond   []int64 `json:"per_second"`
	FirstSecond float64 `json:"first_second_ops"`
	Steady      float64 `json:"steady_ops_per_sec"`
	Ratio       float64 `json:"first_over_steady"`
	// Stolen is the share of the machine's time the hypervisor stole
	// during the storm kept, Reruns how many storms (each on a fresh
	// server) were thrown away for more (rerunWhileStolen).
	Stolen float64 `json:"host_stolen_share"`
	Reruns int     `json:"reruns_for_stolen_time"`
}

// idleRSS is a server's resident memory after a few large SETs and a few
// seconds idle.
type idleRSS struct {
	Server     string `json:"server"`
	Values     int    `json:"values"`
	ValueBytes int64  `json:"value_bytes"`
	RSSBytes   int64  `json:"rss_bytes"`
}

// usersResult is everything kvbench users measured.
type usersResult struct {
	Rounds         int           `json:"rounds"`
	RedisBenchmark string        `json:"redis_benchmark"`
	Rows           []userRow     `json:"rows"`
	Storm          []stormResult `json:"storm"`
	Idle           []idleRSS     `json:"idle"`
	IdleSeconds    float64       `json:"idle_seconds"`
	// MaxStolen and StolenReruns are the settings quietRun ran with.
	MaxStolen    float64 `json:"max_stolen_share"`
	StolenReruns int     `json:"stolen_reruns"`
}

// usersOptions are the flags of kvbench users (and its part of report).
type usersOptions struct {
	pairOptions
	rounds        int
	conns         []int
	smallSize     int64
	largeSizes    []int64
	pipeline      int
	smallRequests int
	largeBytes    int64
	unixMax       int64
	goRedisTime   time.Duration
	stormTime     time.Duration
	idleWait      time.Duration
	benchBin      string
	jsonOutput    bool
	// maxStolen is the share of the machine's time the hypervisor may
	// steal during a run before the run is thrown away and run again, at
	// most stolenReruns times (quietRun).
	maxStolen    float64
	stolenReruns int
	stolenPause  time.Duration // between a disturbed run and its rerun
}

const usersAbout = `
Measures both servers as their users do, with clients nobody here wrote:
Debian's redis-benchmark (--csv, random keys with -r, GET keyspaces preloaded)
at 8 and 50 connections for 4kb SET and GET unpipelined and pipelined, and
1mb, 4mb and 32mb SET and GET; go-redis v9 with 8 connections for pipelined
4kb SET and 4mb SET. Both servers run side by side and alternate which goes
first in each round. Reported: medians of ops/s, GB/s, p50/p99 latency, and
the server's CPU seconds (utime+stime from /proc/PID/stat) per request and
per GB, with kvserver/redis ratios; redis-benchmark's throughput over each
server's Unix socket for values up to 1mb (beyond, copies cost more than the
transport). The redis-benchmark rows also run on the copy floor, kvbench
sink: a server that stores nothing, whose CPU per request is what the
socket system calls alone cost and whose throughput is what the client
allows. Then, on fresh servers: a
storm of 1mb SETs over 50 go-redis connections (first second vs steady
state) and the resident memory after eight 1mb SETs and a few idle seconds.
A run during which the hypervisor stole more than --max-stolen of the
machine's time (/proc/stat steal: other guests ran) is run again, up to
--stolen-reruns times, and the least disturbed run is kept.
The default run takes about four to five minutes on two cores.`

// defineUsersFlags defines the users flags in fs; prefix names them inside
// report ("users-").
func defineUsersFlags(fs *flag.FlagSet, o *usersOptions, prefix string, sizes, conns *string, stormSeconds *float64) {
	fs.IntVar(&o.rounds, prefix+"rounds", 3, "alternating rounds per workload; medians are reported")
	fs.StringVar(conns, prefix+"conns", "8,50", "redis-benchmark connection counts")
	fs.StringVar(sizes, prefix+"sizes", "1mb,4mb,32mb", "large value sizes (SET and GET, unpipelined)")
	fs.IntVar(&o.smallRequests, prefix+"requests", 50000, "redis-benchmark requests of an unpipelined 4kb run (pipelined: 4x)")
	fs.Float64Var(stormSeconds, prefix+"storm-seconds", 5, "duration of the 1mb SET storm on a fresh server")
	fs.StringVar(&o.benchBin, "redis-benchmark", "redis-benchmark", "redis-benchmark binary (Debian's redis-tools)")
	fs.Float64Var(&o.maxStolen, prefix+"max-stolen", 0.05, "share of the machine's CPU time (/proc/stat steal) other guests may take during a run before it is run again")
	fs.IntVar(&o.stolenReruns, prefix+"stolen-reruns", 2, "how many times a run is run again when too much time was stolen; the least disturbed run is kept")
}

// finish parses the list flags and fills what no flag sets.
func (o *usersOptions) finish(sizes, conns string, stormSeconds float64) error {
	var err error
	if o.largeSizes, err = parseSizeList("sizes", sizes); err != nil {
		return err
	}
	if o.conns, err = parseCountList("conns", conns); err != nil {
		return err
	}
	if o.rounds < 1 || o.smallRequests < 1 || stormSeconds < 2 {
		return fmt.Errorf("users: --rounds and --requests must be at least 1, --storm-seconds at least 2")
	}
	if o.maxStolen < 0 || o.maxStolen > 1 || o.stolenReruns < 0 {
		return fmt.Errorf("users: --max-stolen must be a share from 0 to 1, --stolen-reruns at least 0")
	}
	o.smallSize, o.pipeline, o.largeBytes, o.unixMax = 4<<10, 16, 512<<20, 1<<20
	o.goRedisTime, o.idleWait, o.stolenPause = time.Second, 3*time.Second, time.Second
	o.stormTime = time.Duration(stormSeconds * float64(time.Second))
	o.unixSockets = true
	return nil
}

func parseUsersFlags(args []string) (usersOptions, error) {
	fs := newFlagSet("users", "[--rounds 3] [--conns 8,50] [--sizes 1mb,4mb,32mb] [--json]", usersAbout)
	var o usersOptions
	var sizes, conns string
	var stormSeconds float64
	defineUsersFlags(fs, &o, "", &sizes, &conns, &stormSeconds)
	o.pairOptions.define(fs)
	fs.BoolVar(&o.jsonOutput, "json", false, "print JSON instead of tables")
	if err := parseNoArgs(fs, args); err != nil {
		return o, err
	}
	if err := o.parseMaxMemory(); err != nil {
		return o, err
	}
	return o, o.finish(sizes, conns, stormSeconds)
}

// workloads lists the rows: redis-benchmark's matrix, then go-redis's.
func (o usersOptions) workloads() []userWorkload {
	var out []userWorkload
	for _, conns := range o.conns {
		for _, p := range []int{1, o.pipeline} {
			for _, op := range []string{"SET", "GET"} {
				out = append(out, userWorkload{clientRedisBenchmark, op, o.smallSize, conns, p})
			}
		}
		for _, size := range o.largeSizes {
			for _, op := range []string{"SET", "GET"} {
				out = append(out, userWorkload{clientRedisBenchmark, op, size, conns, 1})
			}
		}
	}
	return append(out,
		userWorkload{clientGoRedis, "SET", o.smallSize, 8, o.pipeline},
		userWorkload{clientGoRedis, "SET", 4 << 20, 8, 1})
}

// keysFor is the keyspace of a value size: 256 MiB of values at most,
// 10000 keys at most, so GETs find every key and nothing is evicted.
func (o usersOptions) keysFor(size int64) int {
	return int(max(1, min(10000, (256<<20)/size, o.maxMemBytes/4/size)))
}

// requestsFor is how many requests a redis-benchmark run sends.
func (o usersOptions) requestsFor(w userWorkload) int {
	if w.Size <= o.smallSize {
		if w.Pipeline > 1 {
			return o.smallRequests * 4
		}
		return o.smallRequests
	}
	return int(max(int64(w.Conns), o.largeBytes/w.Size))
}

// measureUsers runs every workload on pair (started with unix sockets),
// then the storm and idle memory on fresh servers of the same binaries.
func measureUsers(ctx context.Context, o usersOptions, pair *serverPair, progress func(string, ...any)) (usersResult, error) {
	bench, err := exec.LookPath(o.benchBin)
	if err != nil {
		return usersResult{}, fmt.Errorf("redis-benchmark not found (apt-get install redis-tools): %w", err)
	}
	res := usersResult{Rounds: o.rounds, IdleSeconds: o.idleWait.Seconds(), MaxStolen: o.maxStolen, StolenReruns: o.stolenReruns}
	if v, err := exec.CommandContext(ctx, bench, "--version").Output(); err == nil {
		res.RedisBenchmark = strings.TrimSpace(string(v))
	}
	dir := filepath.Join(pair.tmp, "redis-aof")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return res, err
	}
	durable, err := startDurableRedis(ctx, o.redisBin, dir, o.maxMemory)
	if err != nil {
		return res, err
	}
	defer func() {
		durable.Stop()
		os.RemoveAll(dir)
	}()
	floor, err := startFloor(ctx)
	if err != nil {
		return res, err
	}
	defer floor.Stop()
	for _, w := range o.workloads() {
		progress("%s %s %s x %d conns, pipeline %d", w.Client, w.Op, sizeLabel(w.Size), w.Conns, w.Pipeline)
		row, err := o.measureWorkload(ctx, bench, pair, durable, floor, w)
		if err != nil {
			return res, err
		}
		res.Rows = append(res.Rows, row)
	}
	durable.Stop()
	floor.Stop()
	if err := pair.flush(ctx); err != nil {
		return res, err
	}
	progress("idle RSS and the 50 x 1mb SET storm on fresh servers")
	if res.Idle, err = o.measureIdle(ctx, pair); err != nil {
		return res, err
	}
	if res.Storm, err = o.measureStorm(ctx, pair); err != nil {
		return res, err
	}
	return res, nil
}

// measureWorkload runs one workload's alternating rounds on the pair, and
// a SET workload's on durable too (which goes first, second or third in
// turn).
func (o usersOptions) measureWorkload(ctx context.Context, bench string, pair *serverPair, durable, floor *target, w userWorkload) (userRow, error) {
	if err := pair.flush(ctx); err != nil {
		return userRow{}, err
	}
	if err := flushAll(ctx, durable); err != nil {
		return userRow{}, err
	}
	keys := o.keysFor(w.Size)
	servers := []*target{pair.redis, pair.kv}
	onFloor := floor != nil && w.hasTarget()
	if onFloor {
		if err := flushAll(ctx, floor); err != nil {
			return userRow{}, err
		}
		servers = append(servers, floor)
	}
	if w.Op == "GET" {
		for _, t := range servers {
			if err := preload(ctx, t, keys, w.Size); err != nil {
				return userRow{}, err
			}
		}
	}
	spec := redisBenchSpec{Test: strings.ToLower(w.Op), Size: w.Size, Conns: w.Conns, Pipeline: w.Pipeline,
		Requests: o.requestsFor(w), Keys: keys}
	unix := w.Client == clientRedisBenchmark && w.Size <= o.unixMax
	samples := map[string][]phaseStats{}
	rerunsForStolen := 0
	for round := range o.rounds {
		order := pair.order(round)
		if w.Op == "SET" {
			order = slices.Insert(order, round%(len(order)+1), durable)
		}
		if onFloor {
			order = slices.Insert(order, round%(len(order)+1), floor)
		}
		for _, t := range order {
			for _, overUnix := range []bool{false, true} {
				if overUnix && (!unix || t == durable || t == floor) {
					continue
				}
				st, reruns, err := o.quietRun(ctx, func() (phaseStats, error) {
					if w.Client == clientGoRedis {
						r, err := runGoRedis(ctx, t, goRedisSpec{Size: w.Size, Conns: w.Conns, Pipeline: w.Pipeline, Keys: keys, Duration: o.goRedisTime})
						return r.phaseStats, err
					}
					return runRedisBenchmark(ctx, bench, t, spec, overUnix)
				})
				if err != nil {
					return userRow{}, err
				}
				rerunsForStolen += reruns
				key := t.Name
				if overUnix {
					key += "/unix"
				}
				samples[key] = append(samples[key], st)
			}
		}
	}
	row := userRow{Client: w.Client, Op: w.Op, ValueBytes: w.Size, Conns: w.Conns, Pipeline: w.Pipeline, Rounds: o.rounds,
		Reruns: rerunsForStolen, Redis: medianStats(samples["redis"]), KV: medianStats(samples["kvserver"])}
	row.OpsRatio = ratio(row.KV.OpsPerSec, row.Redis.OpsPerSec)
	row.CPURatio = ratio(row.KV.CPUPerOp, row.Redis.CPUPerOp)
	if d := samples[durable.Name]; len(d) > 0 {
		st := medianStats(d)
		row.Durable = &st
		row.DurableOpsRatio = ratio(row.KV.OpsPerSec, st.OpsPerSec)
		row.DurableCPURatio = ratio(row.KV.CPUPerOp, st.CPUPerOp)
	}
	if f := samples[floorName]; len(f) > 0 {
		st := medianStats(f)
		row.Floor = &st
		row.FloorOpsRatio = ratio(st.OpsPerSec, row.Redis.OpsPerSec)
		row.FloorCPURatio = ratio(st.CPUPerOp, row.Redis.CPUPerOp)
	}
	if unix {
		row.UnixRedisOps = medianStats(samples["redis/unix"]).OpsPerSec
		row.UnixKVOps = medianStats(samples["kvserver/unix"]).OpsPerSec
		row.UnixRatio = ratio(row.UnixKVOps, row.UnixRedisOps)
	}
	return row, nil
}

// quietRun runs one measurement, and runs it again while the hypervisor
// stole more than o.maxStolen of the machine's time during it, at most
// o.stolenReruns more times, o.stolenPause apart. It returns the least
// disturbed run and how many it threw away.
func (o usersOptions) quietRun(ctx context.Context, run func() (phaseStats, error)) (phaseStats, int, error) {
	return rerunWhileStolen(ctx, o, run, func(st phaseStats) float64 { return st.Stolen })
}

// rerunWhileStolen is quietRun for any measurement, whose stolen share
// stolen reads.
func rerunWhileStolen[T any](ctx context.Context, o usersOptions, run func() (T, error), stolen func(T) float64) (T, int, error) {
	best, err := run()
	reruns := 0
	for err == nil && stolen(best) > o.maxStolen && reruns < o.stolenReruns {
		select {
		case <-ctx.Done():
			return best, reruns, ctx.Err()
		case <-time.After(o.stolenPause):
		}
		var st T
		if st, err = run(); err == nil {
			reruns++
			if stolen(st) < stolen(best) {
				best = st
			}
		}
	}
	return best, reruns, err
}

// preload sets every key of redis-benchmark's keyspace to a value of
// size, so that its GETs all hit.
func preload(ctx context.Context, t *target, keys int, size int64) error {
	c, err := dialBench(ctx, t.Addr)
	if err != nil {
		return err
	}
	defer c.Close()
	value := make([]byte, size)
	batch := int(max(1, min(100, (1<<20)/size)))
	names := make([]string, 0, batch)
	for k := 0; k < keys; k += batch {
		names = names[:0]
		for j := k; j < min(keys, k+batch); j++ {
			names = append(names, redisBenchKey(j))
		}
		if err := c.SetPipelined(names, value); err != nil {
			return fmt.Errorf("preload %s: %w", t.Name, err)
		}
	}
	return nil
}

// freshPair starts a redis-server and a kvserver of pair's binaries in new
// directories under pair's, for a measurement that needs fresh processes;
// the caller stops both.
func (o usersOptions) freshPair(ctx context.Context, pair *serverPair, name string) (redis, kv *target, err error) {
	dir := filepath.Join(pair.tmp, name)
	if err := os.MkdirAll(filepath.Join(dir, "redis"), 0o755); err != nil {
		return nil, nil, err
	}
	if redis, err = startRedis(ctx, o.redisBin, filepath.Join(dir, "redis"), o.maxMemory); err != nil {
		return nil, nil, err
	}
	if kv, err = startKVServer(ctx, pair.kvBin, filepath.Join(dir, "kv"), o.maxMemory); err != nil {
		redis.Stop()
		return nil, nil, err
	}
	return redis, kv, nil
}

// idleValues and idleSize are the few large SETs before the idle RSS.
const (
	idleValues = 8
	idleSize   = 1 << 20
)

// measureIdle reads each fresh server's VmRSS after idleValues SETs of
// idleSize and o.idleWait idle (both servers idle at once).
func (o usersOptions) measureIdle(ctx context.Context, pair *serverPair) ([]idleRSS, error) {
	redis, kv, err := o.freshPair(ctx, pair, "idle")
	if err != nil {
		return nil, err
	}
	defer redis.Stop()
	defer kv.Stop()
	servers := []*target{redis, kv}
	for _, t := range servers {
		if err := preload(ctx, t, idleValues, idleSize); err != nil {
			return nil, err
		}
	}
	select {
	case <-time.After(o.idleWait):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	var out []idleRSS
	for _, t := range servers {
		rss, err := processRSS(t.cmd.Process.Pid)
		if err != nil {
			return nil, err
		}
		out = append(out, idleRSS{Server: t.Name, Values: idleValues, ValueBytes: idleSize, RSSBytes: rss})
	}
	return out, nil
}

// stormConns and stormSize are the storm's shape: many clients of 1 MiB
// values arriving at a server that has just started.
const (
	stormConns = 50
	stormSize  = 1 << 20
)

// measureStorm runs the SET storm on a fresh redis-server, then on a fresh
// kvserver, counting completions per second.
func (o usersOptions) measureStorm(ctx context.Context, pair *serverPair) ([]stormResult, error) {
	var out []stormResult
	tries := 0
	for i := range 2 {
		storm := func() (stormResult, error) {
			name := fmt.Sprintf("storm%d.%d", i, tries)
			tries++
			redis, kv, err := o.freshPair(ctx, pair, name)
			if err != nil {
				return stormResult{}, err
			}
			// The storm leaves gigabytes on disk: each try's go.
			defer os.RemoveAll(filepath.Join(pair.tmp, name))
			t := []*target{redis, kv}[i]
			[]*target{redis, kv}[1-i].Stop() // only the measured one runs
			r, err := runGoRedis(ctx, t, goRedisSpec{Size: stormSize, Conns: stormConns, Pipeline: 1,
				Keys: o.keysFor(stormSize), Duration: o.stormTime, Bucket: time.Second})
			t.Stop()
			if err != nil {
				return stormResult{}, err
			}
			s := stormOf(t.Name, r.PerBucket)
			s.Stolen = r.Stolen
			return s, nil
		}
		s, reruns, err := rerunWhileStolen(ctx, o, storm, func(s stormResult) float64 { return s.Stolen })
		if err != nil {
			return nil, err
		}
		s.Reruns = reruns
		out = append(out, s)
	}
	return out, nil
}

// stormOf reads a storm's per-second completions: the first second
// against the median of the full seconds after it (the last bucket is
// partial and dropped).
func stormOf(server string, perSecond []int64) stormResult {
	r := stormResult{Server: server, Conns: stormConns, ValueBytes: stormSize, PerSecond: perSecond}
	if len(perSecond) == 0 {
		return r
	}
	r.FirstSecond = float64(perSecond[0])
	var later []float64
	for _, n := range perSecond[1:max(1, len(perSecond)-1)] {
		later = append(later, float64(n))
	}
	r.Steady = median(later)
	r.Ratio = ratio(r.FirstSecond, r.Steady)
	return r
}

// userTable is one table of the users measurement: its headings and what
// a row puts under them. The text output and BENCHMARKS.md print the same
// tables.
type userTable struct {
	columns []string
	cells   func(userRow) []string
}

// userTables are the ratios (what BENCHMARKS.md leads with), then the
// absolute figures behind them.
var userTables = []userTable{
	{columns: []string{"client", "op", "value", "conns", "pipeline", "ops/s kvserver/redis", "CPU/op kvserver/redis",
		"redis p50/p99 ms", "kvserver p50/p99 ms", "unix ops/s kvserver/redis", "own client kvserver/redis", "issue 17 target (ops, CPU/op)",
		"ops/s, CPU/op kvserver/redis-aof"},
		cells: userRatioCells},
	{columns: []string{"client", "op", "value", "conns", "pipeline", "redis ops/s", "kvserver ops/s", "redis GB/s", "kvserver GB/s",
		"redis CPU µs/op", "kvserver CPU µs/op", "redis CPU s/GB", "kvserver CPU s/GB", "unix redis ops/s", "unix kvserver ops/s",
		"redis-aof ops/s", "redis-aof CPU µs/op", "host time stolen, most (reruns)"},
		cells: userFigureCells},
}

// userRowHead is the cells that name a row's workload.
func userRowHead(r userRow) []string {
	return []string{r.Client, r.Op, sizeLabel(r.ValueBytes), strconv.Itoa(r.Conns), strconv.Itoa(r.Pipeline)}
}

// orDash formats x with f, or "-" where it was not measured (0).
func orDash(x float64, f func(float64) string) string {
	if x <= 0 {
		return "-"
	}
	return f(x)
}

func timesText(x float64) string { return fmt.Sprintf("%.2fx", x) }

// userRatioCells is a row of the ratio table.
func userRatioCells(r userRow) []string {
	lat := func(s phaseStats) string { return fmt.Sprintf("%.2f / %.2f", s.P50Ms, s.P99Ms) }
	durable := "-"
	if r.Durable != nil {
		durable = timesText(r.DurableOpsRatio) + ", " + timesText(r.DurableCPURatio)
	}
	return append(userRowHead(r), timesText(r.OpsRatio), timesText(r.CPURatio), lat(r.Redis), lat(r.KV),
		orDash(r.UnixRatio, timesText), orDash(r.OwnClientRatio, timesText), targetText(r), durable)
}

// userFigureCells is a row of the absolute figures.
func userFigureCells(r userRow) []string {
	f2 := func(x float64) string { return fmt.Sprintf("%.2f", x) }
	us := func(x float64) string { return fmt.Sprintf("%.1f", x*1e6) }
	cells := append(userRowHead(r), formatOps(r.Redis.OpsPerSec), formatOps(r.KV.OpsPerSec), f2(r.Redis.GBps), f2(r.KV.GBps),
		us(r.Redis.CPUPerOp), us(r.KV.CPUPerOp), f2(r.Redis.CPUPerGB), f2(r.KV.CPUPerGB),
		orDash(r.UnixRedisOps, formatOps), orDash(r.UnixKVOps, formatOps))
	if r.Durable == nil {
		cells = append(cells, "-", "-")
	} else {
		cells = append(cells, formatOps(r.Durable.OpsPerSec), us(r.Durable.CPUPerOp))
	}
	return append(cells, fmt.Sprintf("%.1f%% (%d)", 100*rowStolen(r), r.Reruns))
}

// rowStolen is the largest share of the machine's time stolen during any
// run a row kept, on any server.
func rowStolen(r userRow) float64 {
	most := max(r.Redis.Stolen, r.KV.Stolen)
	for _, st := range []*phaseStats{r.Durable, r.Floor} {
		if st != nil {
			most = max(most, st.Stolen)
		}
	}
	return most
}

// userTarget is issue 17's acceptance bound for a redis-benchmark row:
// kvserver's throughput at least opsMin times redis's, and its CPU per
// operation at most cpuMax times redis's (0: no bound). ok is false for
// rows the issue sets no target for.
func userTarget(r userRow) (opsMin, cpuMax float64, ok bool) {
	switch {
	case r.Client != clientRedisBenchmark:
		return 0, 0, false
	case r.ValueBytes <= 4<<10:
		return 1.0, 1.0, true
	case r.ValueBytes == 4<<20:
		return 1.2, 0.7, true
	}
	return 1.2, 0, true
}

// Issue 17's targets for kvserver on a fresh server: the storm's first
// second at least stormTarget of the steady rate, and idle RSS below
// idleRSSTarget bytes.
const (
	stormTarget   = 0.8
	idleRSSTarget = 150e6
)

// kvTarget states a target of kvserver's and whether it was met; "-" for
// redis, which has none.
func kvTarget(server, target string, met bool) string {
	switch {
	case server != "kvserver":
		return "-"
	case met:
		return target + ": met"
	}
	return target + ": not met"
}

// targetText states a row's target and whether this run met it.
func targetText(r userRow) string {
	opsMin, cpuMax, ok := userTarget(r)
	if !ok {
		return "-"
	}
	text := fmt.Sprintf("≥%.1fx", opsMin)
	met := r.OpsRatio >= opsMin
	if cpuMax > 0 {
		text += fmt.Sprintf(", ≤%.1fx", cpuMax)
		met = met && r.CPURatio <= cpuMax
	}
	return kvTarget("kvserver", text, met)
}

// renderUsers writes the users section of BENCHMARKS.md through p.
func renderUsers(p func(string, ...any), res usersResult) {
	p("## As users measure it: third-party clients\n\n")
	p("Clients nobody here wrote, against both servers side by side: Debian's `redis-benchmark` (%s, `--csv`, random keys with `-r`, ", orUnknown(res.RedisBenchmark))
	p("GET keyspaces preloaded) and go-redis v9. Medians of %d rounds that alternate which server goes first. ", res.Rounds)
	p("Server CPU is user plus system time from `/proc/PID/stat` around each run, per request and per 10^9 bytes of values: ")
	p("on a machine that clients share with the server, CPU per operation is the throughput. ")
	p("Ratios are kvserver over redis: above 1 kvserver serves more (ops/s) or burns more (CPU). ")
	p("The unix columns are the same redis-benchmark run over each server's Unix socket (`redis-benchmark -s`); ")
	p("\"own client\" is kvbench's own client (below) for the same workload, where it was measured; ")
	p("the acceptance bound column is issue 17's for the row and whether this run met it. ")
	p("The redis above runs without persistence (`--save '' --appendonly no`), so every SET costs it no disk work, while kvserver writes each one ")
	p("to its disk tier within seconds (the write-behind; a run's CPU window closes once INFO's `tier_disk_unsaved_groups` is back to 0, so each ")
	p("run is charged its own disk writes). The last column compares SETs with a third server, redis-aof: redis-server with the same promise, ")
	p("`--appendonly yes --appendfsync everysec` (the CPU of its AOF rewrite children is not counted, which favours it). ")
	p("redis-benchmark's latency histogram ends at 3 s, so 3000.32 ms reads \"3 s or more\". ")
	p("These machines are virtual and share their host: while the hypervisor runs other guests (steal time in `/proc/stat`) a run's server ")
	p("spends up to twice the CPU per request of a quiet run, through colder caches and costlier wake-ups, so a run during which more than ")
	p("%.0f%% of the machine's time was stolen is thrown away and run again, up to %d times, keeping the least disturbed; ", 100*res.MaxStolen, res.StolenReruns)
	p("the last column of the figures says how much was stolen in the worst run a row kept, and how many runs it threw away.\n\n")
	for i, tab := range userTables {
		if i == 1 {
			p("\nThe figures behind the ratios: throughput, GB/s (10^9 bytes of values per second) and server CPU per request and per GB.\n\n")
		}
		renderTable(p, tab, res.Rows)
	}
	renderFloor(p, res.Rows)
	if len(res.Storm) > 0 {
		p("\n**SET storm on a fresh server**: %d go-redis connections of %s SETs, started right after the server answers PING; ", stormConns, sizeLabel(stormSize))
		p("requests completed in the first second against the steady rate (median of the later full seconds).\n\n")
		p("| server | first second (ops) | steady (ops/s) | first / steady | per second | issue 17 target | host time stolen (reruns) |\n|---|---:|---:|---:|---|---|---:|\n")
		for _, s := range res.Storm {
			p("| %s | %.0f | %.0f | %.2fx | %s | %s | %.1f%% (%d) |\n", s.Server, s.FirstSecond, s.Steady, s.Ratio, strings.Trim(fmt.Sprint(s.PerSecond), "[]"),
				kvTarget(s.Server, fmt.Sprintf("≥%.1fx", stormTarget), s.Ratio >= stormTarget), 100*s.Stolen, s.Reruns)
		}
	}
	if len(res.Idle) > 0 {
		p("\n**Idle resident memory**: VmRSS of a fresh server after %d SETs of %s and %.0f s idle.\n\n", idleValues, sizeLabel(idleSize), res.IdleSeconds)
		p("| server | VmRSS (MiB) | issue 17 target |\n|---|---:|---|\n")
		for _, m := range res.Idle {
			p("| %s | %.0f | %s |\n", m.Server, float64(m.RSSBytes)/(1<<20),
				kvTarget(m.Server, fmt.Sprintf("<%.0f MB", idleRSSTarget/1e6), m.RSSBytes < idleRSSTarget))
		}
	}
	p("\n")
}

// floorTable compares the rows measured on the copy floor (userRow.Floor)
// with both servers and the row's targets.
var floorTable = userTable{
	columns: []string{"op", "value", "conns", "pipeline", "floor ops/s", "floor/redis ops/s", "kvserver/redis ops/s", "issue 17 ops bound",
		"floor CPU µs/op", "floor/redis CPU", "kvserver/redis CPU", "issue 17 CPU bound"},
	cells: func(r userRow) []string {
		opsMin, cpuMax, _ := userTarget(r)
		cpuBound := "-"
		if cpuMax > 0 {
			cpuBound = fmt.Sprintf("≤%.1fx", cpuMax)
		}
		return []string{r.Op, sizeLabel(r.ValueBytes), strconv.Itoa(r.Conns), strconv.Itoa(r.Pipeline),
			formatOps(r.Floor.OpsPerSec), timesText(r.FloorOpsRatio), timesText(r.OpsRatio), fmt.Sprintf("≥%.1fx", opsMin),
			fmt.Sprintf("%.1f", r.Floor.CPUPerOp*1e6), timesText(r.FloorCPURatio), timesText(r.CPURatio), cpuBound}
	},
}

// flooredRows is the rows measured on the copy floor.
func flooredRows(rows []userRow) []userRow {
	var out []userRow
	for _, r := range rows {
		if r.Floor != nil {
			out = append(out, r)
		}
	}
	return out
}

// renderFloor writes the copy-floor table: the rows with a target,
// measured on a server that keeps nothing, against the bounds.
func renderFloor(p func(string, ...any), rows []userRow) {
	floored := flooredRows(rows)
	if len(floored) == 0 {
		return
	}
	p("\n**The copy floor**: the rows with a target, run in the same rounds on `kvbench sink`, a server that stores nothing (a SET's value is read into one reused buffer and dropped, a GET writes that many bytes from one shared buffer with one writev) ")
	p("and does no more than any server must: read the request from the socket and write the reply to it (with Go's poller, as kvserver does; cmd/kvbench/floor.go). ")
	p("Its CPU per request is what those system calls cost on this machine, the kernel's copies between socket and memory above all. ")
	p("For the large values, where those copies are nearly all of the work, a CPU bound below the floor's ratio asks for less than a server that stores nothing spends, ")
	p("and an ops bound above the floor's ratio for more than the same client gets from a server that does nothing (redis-benchmark's one thread reads every reply). ")
	p("For small unpipelined requests the column is no floor: a goroutine per connection parked in Go's poller costs more per request than an event loop (kvserver's evloop, Redis's ae).\n\n")
	renderTable(p, floorTable, floored)
}

// renderTable writes tab's rows as a Markdown table; its first two columns
// (a workload's name and size) read left to right, the figures right to
// left.
func renderTable(p func(string, ...any), tab userTable, rows []userRow) {
	p("| %s |\n|---|---|%s\n", strings.Join(tab.columns, " | "), strings.Repeat("---:|", len(tab.columns)-2))
	for _, r := range rows {
		p("| %s |\n", strings.Join(tab.cells(r), " | "))
	}
}

// setOwnClientRatios fills each redis-benchmark row's own-client column
// from kvbench's own measurements of the same workload.
func setOwnClientRatios(rows []userRow, own []measurement) {
	for i, r := range rows {
		if r.Client != clientRedisBenchmark {
			continue
		}
		j := slices.IndexFunc(own, func(m measurement) bool {
			return m.Op == r.Op && m.ValueBytes == r.ValueBytes && m.Conns == r.Conns && m.Pipeline == r.Pipeline
		})
		if j >= 0 {
			rows[i].OwnClientRatio = own[j].Ratio
		}
	}
}
