package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// redisBenchKey is the key redis-benchmark's -r N uses for random number
// k: "key:" and k as 12 zero-padded digits (its __rand_int__ placeholder).
func redisBenchKey(k int) string { return fmt.Sprintf("key:%012d", k) }

// redisBenchSpec is one run of redis-benchmark: one test (set or get),
// Requests requests of Size-byte values over Conns connections, Pipeline
// deep, on random keys of a keyspace of Keys (-r).
type redisBenchSpec struct {
	Test string // "set" or "get", or another of redis-benchmark's -t tests
	// Command, when set, is run instead of Test: a command line with
	// redis-benchmark's __rand_int__ placeholders (HGET myhash
	// element:__rand_int__).
	Command  []string
	Size     int64
	Conns    int
	Pipeline int
	Requests int
	Keys     int
}

// args is redis-benchmark's command line for the spec against a server at
// addr (host:port), or at socket when that is set.
func (s redisBenchSpec) args(addr, socket string) ([]string, error) {
	var to []string
	if socket != "" {
		to = []string{"-s", socket}
	} else {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, fmt.Errorf("redis-benchmark address %q: %w", addr, err)
		}
		to = []string{"-h", host, "-p", port}
	}
	args := append(to, "-c", strconv.Itoa(s.Conns), "-n", strconv.Itoa(s.Requests),
		"-d", strconv.FormatInt(s.Size, 10), "-P", strconv.Itoa(s.Pipeline),
		"-r", strconv.Itoa(s.Keys), "--csv")
	if len(s.Command) > 0 {
		return append(args, s.Command...), nil
	}
	return append(args, "-t", s.Test), nil
}

// redisBenchRow is one test's line of redis-benchmark --csv: requests per
// second and latencies in milliseconds.
type redisBenchRow struct {
	Test  string
	RPS   float64
	AvgMs float64
	P50Ms float64
	P99Ms float64
}

// parseRedisBenchCSV reads redis-benchmark --csv output (Redis 7: a
// header "test","rps","avg_latency_ms",...,"p99_latency_ms",... and one
// line per test). Columns are found by the header's names, so that a
// version that adds or reorders columns still parses.
func parseRedisBenchCSV(out []byte) ([]redisBenchRow, error) {
	r := csv.NewReader(bytes.NewReader(out))
	r.FieldsPerRecord = -1
	recs, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("redis-benchmark --csv output: %w", err)
	}
	if len(recs) < 2 {
		return nil, fmt.Errorf("redis-benchmark --csv output has no result line: %q", out)
	}
	col := map[string]int{}
	for i, name := range recs[0] {
		col[name] = i
	}
	for _, name := range []string{"test", "rps", "avg_latency_ms", "p50_latency_ms", "p99_latency_ms"} {
		if _, ok := col[name]; !ok {
			return nil, fmt.Errorf("redis-benchmark --csv header %q lacks %q", recs[0], name)
		}
	}
	var rows []redisBenchRow
	for _, rec := range recs[1:] {
		if len(rec) != len(recs[0]) {
			return nil, fmt.Errorf("redis-benchmark --csv line %q does not match its header", rec)
		}
		num := func(name string) (float64, error) {
			v, err := strconv.ParseFloat(rec[col[name]], 64)
			if err != nil {
				return 0, fmt.Errorf("redis-benchmark %s %s: %w", rec[col["test"]], name, err)
			}
			return v, nil
		}
		row := redisBenchRow{Test: rec[col["test"]]}
		for _, f := range []struct {
			name string
			dst  *float64
		}{{"rps", &row.RPS}, {"avg_latency_ms", &row.AvgMs}, {"p50_latency_ms", &row.P50Ms}, {"p99_latency_ms", &row.P99Ms}} {
			if *f.dst, err = num(f.name); err != nil {
				return nil, err
			}
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// runRedisBenchmark runs redis-benchmark (bin) for spec against t, over
// its Unix socket when unix is set, and measures the server's CPU time
// around it.
func runRedisBenchmark(ctx context.Context, bin string, t *target, spec redisBenchSpec, unix bool) (phaseStats, error) {
	socket := ""
	if unix {
		socket = t.Socket
	}
	args, err := spec.args(t.Addr, socket)
	if err != nil {
		return phaseStats{}, err
	}
	var out []byte
	use, err := serverCPU(ctx, t, func() error {
		var stderr bytes.Buffer
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Stderr = &stderr
		var err error
		if out, err = cmd.Output(); err != nil {
			return fmt.Errorf("redis-benchmark %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
		}
		return nil
	})
	if err != nil {
		return phaseStats{}, err
	}
	rows, err := parseRedisBenchCSV(out)
	if err != nil {
		return phaseStats{}, err
	}
	row := rows[0]
	if (len(spec.Command) == 0 && !strings.EqualFold(row.Test, spec.Test)) || row.RPS <= 0 {
		return phaseStats{}, fmt.Errorf("redis-benchmark reported %+v for test %s", row, spec.Test)
	}
	return phaseStats{
		OpsPerSec: row.RPS, GBps: row.RPS * float64(spec.Size) / 1e9,
		P50Ms: row.P50Ms, P99Ms: row.P99Ms,
		CPUPerOp: use.Seconds / float64(spec.Requests),
		CPUPerGB: use.Seconds / (float64(spec.Requests) * float64(spec.Size) / 1e9),
		Stolen:   use.Stolen,
	}, nil
}

// cpuUse is what a measurement window cost: the server's CPU seconds, and
// the share of the machine's CPU time the hypervisor stole meanwhile
// (stolenShare).
type cpuUse struct {
	Seconds float64
	Stolen  float64
}

// serverCPU runs work and returns the CPU seconds t's process used
// meanwhile (user plus system, from /proc), and how much of the machine's
// time was stolen in that window. The window opens once t has put on disk
// what was written before it and closes once t has put there what work
// wrote (a kvserver's write-behind, settleDisk), so that a run is charged
// its own disk writes, which come 1.5 s or more after the writes
// themselves, and none of those of the run or the preload before it.
func serverCPU(ctx context.Context, t *target, work func() error) (cpuUse, error) {
	if err := settleDisk(ctx, t); err != nil {
		return cpuUse{}, err
	}
	pid := t.cmd.Process.Pid
	before, err := processCPU(pid)
	if err != nil {
		return cpuUse{}, err
	}
	hostBefore, err := readHostTimes()
	if err != nil {
		return cpuUse{}, err
	}
	if err := work(); err != nil {
		return cpuUse{}, err
	}
	if err := settleDisk(ctx, t); err != nil {
		return cpuUse{}, err
	}
	after, err := processCPU(pid)
	if err != nil {
		return cpuUse{}, err
	}
	hostAfter, err := readHostTimes()
	if err != nil {
		return cpuUse{}, err
	}
	return cpuUse{Seconds: after - before, Stolen: stolenShare(hostBefore, hostAfter)}, nil
}

// settleDiskTimeout bounds settleDisk: a write-behind pass takes a group
// 1.5 s after it became dirty, once a second.
const settleDiskTimeout = time.Minute

// settleDisk waits until t has no writes left to put on disk: INFO's
// tier_disk_unsaved_groups at 0. A server without that field
// (redis-server, which the benchmarks run without persistence) has
// nothing to wait for.
func settleDisk(ctx context.Context, t *target) error {
	c, err := dialBench(ctx, t.Addr)
	if err != nil {
		return err
	}
	defer c.Close()
	deadline := time.Now().Add(settleDiskTimeout)
	for {
		info, err := c.DoBulk("INFO", "tiers")
		if err != nil {
			return fmt.Errorf("%s: %w", t.Name, err)
		}
		unsaved, ok := infoField(info, "tier_disk_unsaved_groups")
		if !ok || unsaved == "0" {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: %s groups still unsaved after %v", t.Name, unsaved, settleDiskTimeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// infoField returns the value of field in an INFO reply.
func infoField(info, field string) (string, bool) {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimRight(line, "\r"), field+":"); ok {
			return v, true
		}
	}
	return "", false
}
