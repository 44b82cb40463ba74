package main

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseProcStat(t *testing.T) {
	tests := []struct {
		name, stat   string
		utime, stime uint64
		wantErr      bool
	}{
		{name: "plain command", utime: 1234, stime: 567,
			stat: "4242 (redis-server) S 1 4242 4242 0 -1 4194560 3000 0 0 0 1234 567 0 0 20 0 5 0 100 200 300"},
		{name: "name with spaces and parentheses", utime: 9, stime: 10,
			stat: "7 (kv (server) x) R 1 7 7 0 -1 0 0 0 0 0 9 10 0 0 20 0 1 0 1 2 3\n"},
		{name: "truncated", stat: "7 (kv) R 1 7 7", wantErr: true},
		{name: "no name", stat: "7 kv R 1", wantErr: true},
		{name: "not a number", stat: "7 (kv) R 1 7 7 0 -1 0 0 0 0 0 x 10 0", wantErr: true},
	}
	for _, tt := range tests {
		u, s, err := parseProcStat(tt.stat)
		if (err != nil) != tt.wantErr || u != tt.utime || s != tt.stime {
			t.Errorf("%s: parseProcStat = %d, %d, %v; want %d, %d, error %v", tt.name, u, s, err, tt.utime, tt.stime, tt.wantErr)
		}
	}
}

func TestParseHostTimes(t *testing.T) {
	tests := []struct {
		name, stat   string
		total, steal uint64
		wantErr      bool
	}{
		{name: "a 2-core VM's", total: 1 + 2 + 3 + 4 + 5 + 6 + 7 + 8, steal: 8,
			stat: "cpu  1 2 3 4 5 6 7 8 9 10\ncpu0 1 1 1 1 1 1 1 1 0 0\nintr 12\n"},
		{name: "huge counters", total: 1<<40 + 83678, steal: 83678,
			stat: "cpu  1099511627776 0 0 0 0 0 0 83678 0 0\n"},
		{name: "no steal figure (old kernels)", stat: "cpu  1 2 3 4 5 6 7\n", wantErr: true},
		{name: "a CPU's line first", stat: "cpu0 1 2 3 4 5 6 7 8\n", wantErr: true},
		{name: "not a number", stat: "cpu  1 2 3 4 5 6 7 x\n", wantErr: true},
		{name: "empty", stat: "", wantErr: true},
	}
	for _, tt := range tests {
		h, err := parseHostTimes(tt.stat)
		if (err != nil) != tt.wantErr || h.total != tt.total || h.steal != tt.steal {
			t.Errorf("%s: parseHostTimes = %+v, %v; want total %d, steal %d, error %v", tt.name, h, err, tt.total, tt.steal, tt.wantErr)
		}
	}
	a := hostTimes{total: 1000, steal: 10}
	for _, tt := range []struct {
		b    hostTimes
		want float64
	}{
		{hostTimes{total: 3000, steal: 510}, 0.25},
		{hostTimes{total: 3000, steal: 10}, 0},
		{hostTimes{total: 1000, steal: 10}, 0}, // no time passed
		{hostTimes{total: 500, steal: 5}, 0},   // counters reset: no figure
	} {
		if got := stolenShare(a, tt.b); got != tt.want {
			t.Errorf("stolenShare(%+v, %+v) = %v, want %v", a, tt.b, got, tt.want)
		}
	}
}

func TestReadHostTimesOfThisMachine(t *testing.T) {
	a, err := readHostTimes()
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	b, err := readHostTimes()
	if err != nil || b.total <= a.total || b.steal < a.steal || b.steal > b.total {
		t.Fatalf("host times went from %+v to %+v (%v)", a, b, err)
	}
	if s := stolenShare(a, b); s < 0 || s > 1 {
		t.Fatalf("stolenShare = %v", s)
	}
}

// TestQuietRunRerunsDisturbedRuns runs quietRun on runs whose stolen
// shares are given: it reruns while a run is over the bound, at most
// stolenReruns times, and keeps the least disturbed.
func TestQuietRunRerunsDisturbedRuns(t *testing.T) {
	o := usersOptions{maxStolen: 0.05, stolenReruns: 2}
	for _, tt := range []struct {
		name       string
		stolen     []float64
		wantOps    float64 // the kept run's (its index)
		wantReruns int
	}{
		{"quiet at once", []float64{0.01, 0.5}, 0, 0},
		{"at the bound", []float64{0.05, 0.5}, 0, 0},
		{"quiet on the second try", []float64{0.3, 0.02, 0.5}, 1, 1},
		{"never quiet: the least stolen", []float64{0.3, 0.1, 0.2, 0.01}, 1, 2},
	} {
		i := 0
		st, reruns, err := o.quietRun(context.Background(), func() (phaseStats, error) {
			if i >= len(tt.stolen) {
				t.Fatalf("%s: run %d", tt.name, i)
			}
			i++
			return phaseStats{OpsPerSec: float64(i - 1), Stolen: tt.stolen[i-1]}, nil
		})
		if err != nil || st.OpsPerSec != tt.wantOps || reruns != tt.wantReruns || st.Stolen != tt.stolen[int(tt.wantOps)] {
			t.Errorf("%s: quietRun = %+v, %d reruns, %v; want run %v, %d reruns", tt.name, st, reruns, err, tt.wantOps, tt.wantReruns)
		}
	}
	o.stolenReruns = 5
	runs := 0
	boom := errors.New("redis-benchmark failed")
	if _, _, err := o.quietRun(context.Background(), func() (phaseStats, error) {
		runs++
		if runs == 2 {
			return phaseStats{}, boom
		}
		return phaseStats{Stolen: 0.5}, nil
	}); !errors.Is(err, boom) || runs != 2 {
		t.Errorf("a failing rerun: err %v after %d runs, want %v after 2", err, runs, boom)
	}
}

func TestProcessCPUOfThisProcess(t *testing.T) {
	before, err := processCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	x := 0
	for i := range 50_000_000 {
		x ^= i * i
	}
	after, err := processCPU(os.Getpid())
	if err != nil || after < before || x == 1 {
		t.Fatalf("processCPU went from %v to %v (%v)", before, after, err)
	}
}

// redisBenchmarkCSV is Redis 7.0.15's redis-benchmark -t set,get --csv.
const redisBenchmarkCSV = `"test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"
"SET","116959.06","0.047","0.008","0.039","0.087","0.183","3.119"
"GET","132450.34","0.039","0.008","0.039","0.063","0.111","0.991"
`

func TestParseRedisBenchCSV(t *testing.T) {
	rows, err := parseRedisBenchCSV([]byte(redisBenchmarkCSV))
	if err != nil {
		t.Fatal(err)
	}
	want := []redisBenchRow{
		{Test: "SET", RPS: 116959.06, AvgMs: 0.047, P50Ms: 0.039, P99Ms: 0.183},
		{Test: "GET", RPS: 132450.34, AvgMs: 0.039, P50Ms: 0.039, P99Ms: 0.111},
	}
	if !slices.Equal(rows, want) {
		t.Errorf("rows = %+v, want %+v", rows, want)
	}
	// Columns are found by name: a reordered header still parses.
	reordered := "\"p99_latency_ms\",\"test\",\"p50_latency_ms\",\"rps\",\"avg_latency_ms\"\n\"2.5\",\"GET\",\"1.5\",\"10.5\",\"1.75\"\n"
	if rows, err := parseRedisBenchCSV([]byte(reordered)); err != nil || rows[0] != (redisBenchRow{"GET", 10.5, 1.75, 1.5, 2.5}) {
		t.Errorf("reordered header: %+v, %v", rows, err)
	}
	for name, bad := range map[string]string{
		"empty":          "",
		"header only":    `"test","rps","avg_latency_ms","p50_latency_ms","p99_latency_ms"` + "\n",
		"missing column": "\"test\",\"rps\"\n\"SET\",\"1\"\n",
		"not a number":   `"test","rps","avg_latency_ms","p50_latency_ms","p99_latency_ms"` + "\n\"SET\",\"fast\",\"1\",\"1\",\"1\"\n",
		"short line":     `"test","rps","avg_latency_ms","p50_latency_ms","p99_latency_ms"` + "\n\"SET\",\"1\"\n",
	} {
		if _, err := parseRedisBenchCSV([]byte(bad)); err == nil {
			t.Errorf("%s: parsed %q without an error", name, bad)
		}
	}
}

func TestRedisBenchArgs(t *testing.T) {
	s := redisBenchSpec{Test: "get", Size: 4096, Conns: 50, Pipeline: 16, Requests: 200000, Keys: 10000}
	tcp, err := s.args("127.0.0.1:6400", "")
	if err != nil {
		t.Fatal(err)
	}
	want := "-h 127.0.0.1 -p 6400 -c 50 -n 200000 -d 4096 -P 16 -r 10000 --csv -t get"
	if got := strings.Join(tcp, " "); got != want {
		t.Errorf("TCP args = %s, want %s", got, want)
	}
	unix, _ := s.args("127.0.0.1:6400", "/tmp/kv.sock")
	if got := strings.Join(unix[:2], " "); got != "-s /tmp/kv.sock" || slices.Contains(unix, "-h") {
		t.Errorf("unix args = %v, want -s and no -h", unix)
	}
	custom := redisBenchSpec{Command: []string{"HGET", "myhash", "element:__rand_int__"}, Size: 3, Conns: 1, Pipeline: 1, Requests: 10, Keys: 5}
	args, _ := custom.args("127.0.0.1:6400", "")
	if got := strings.Join(args, " "); !strings.HasSuffix(got, "--csv HGET myhash element:__rand_int__") || slices.Contains(args, "-t") {
		t.Errorf("custom command args = %s", got)
	}
	if redisBenchKey(42) != "key:000000000042" {
		t.Errorf("redisBenchKey(42) = %s", redisBenchKey(42))
	}
}

func TestMedianStatsTakesEachFigureSeparately(t *testing.T) {
	got := medianStats([]phaseStats{
		{OpsPerSec: 1, P99Ms: 30, CPUPerOp: 5},
		{OpsPerSec: 3, P99Ms: 10, CPUPerOp: 4},
		{OpsPerSec: 2, P99Ms: 20, CPUPerOp: 6},
	})
	if got.OpsPerSec != 2 || got.P99Ms != 20 || got.CPUPerOp != 5 {
		t.Errorf("medianStats = %+v, want ops 2, p99 20, cpu 5", got)
	}
}

func TestStormOfComparesFirstSecondWithSteadyState(t *testing.T) {
	r := stormOf("kvserver", []int64{300, 1500, 1700, 1600, 1650, 40})
	if r.FirstSecond != 300 || r.Steady != 1625 || r.Ratio != 300.0/1625 {
		t.Errorf("stormOf = %+v, want first 300, steady 1625 (the last, partial second dropped)", r)
	}
	if r := stormOf("redis", nil); r.Ratio != 0 {
		t.Errorf("empty storm: %+v", r)
	}
}

func TestUsersWorkloadsCoverTheAcceptanceList(t *testing.T) {
	o, err := parseUsersFlags(nil)
	if err != nil {
		t.Fatal(err)
	}
	ws := o.workloads()
	has := func(w userWorkload) bool { return slices.Contains(ws, w) }
	for _, conns := range []int{8, 50} {
		for _, op := range []string{"SET", "GET"} {
			for _, p := range []int{1, 16} {
				if !has(userWorkload{clientRedisBenchmark, op, 4 << 10, conns, p}) {
					t.Errorf("no redis-benchmark %s 4kb x %d pipeline %d", op, conns, p)
				}
			}
			for _, size := range []int64{1 << 20, 4 << 20, 32 << 20} {
				if !has(userWorkload{clientRedisBenchmark, op, size, conns, 1}) {
					t.Errorf("no redis-benchmark %s %s x %d", op, sizeLabel(size), conns)
				}
			}
		}
	}
	if !has(userWorkload{clientGoRedis, "SET", 4 << 10, 8, 16}) || !has(userWorkload{clientGoRedis, "SET", 4 << 20, 8, 1}) {
		t.Errorf("go-redis workloads missing from %v", ws)
	}
	// 50 connections of 32 MiB each send at least one request.
	if n := o.requestsFor(userWorkload{clientRedisBenchmark, "SET", 32 << 20, 50, 1}); n < 50 {
		t.Errorf("requestsFor 32mb x 50 = %d, want at least 50", n)
	}
	if k := o.keysFor(32 << 20); k*(32<<20) > 256<<20 || k < 1 {
		t.Errorf("keysFor(32mb) = %d", k)
	}
}

func fixedUsers() usersResult {
	st := func(ops, size, cpu, p50, p99 float64) phaseStats {
		return phaseStats{OpsPerSec: ops, GBps: ops * size / 1e9, P50Ms: p50, P99Ms: p99, CPUPerOp: cpu, CPUPerGB: cpu / (size / 1e9)}
	}
	res := usersResult{Rounds: 3, RedisBenchmark: "redis-benchmark 7.0.15", IdleSeconds: 3, MaxStolen: 0.05, StolenReruns: 2,
		Rows: []userRow{
			{Client: clientRedisBenchmark, Op: "SET", ValueBytes: 4 << 10, Conns: 8, Pipeline: 1, Rounds: 3,
				Redis: st(100e3, 4096, 5e-6, 0.06, 0.14), KV: st(70e3, 4096, 9e-6, 0.07, 1.05), OpsRatio: 0.7, CPURatio: 1.8,
				UnixRedisOps: 140e3, UnixKVOps: 70e3, UnixRatio: 0.5,
				Floor: &phaseStats{OpsPerSec: 150e3, CPUPerOp: 4e-6}, FloorOpsRatio: 1.5, FloorCPURatio: 0.8},
			{Client: clientGoRedis, Op: "SET", ValueBytes: 4 << 20, Conns: 8, Pipeline: 1, Rounds: 3, Reruns: 2,
				Redis: st(330, 4<<20, 1e-3, 19, 89), KV: st(380, 4<<20, 1.4e-3, 17, 83), OpsRatio: 1.15, CPURatio: 1.4},
		},
		Storm: []stormResult{{Server: "kvserver", Conns: 50, ValueBytes: 1 << 20, PerSecond: []int64{300, 1500, 1700}, FirstSecond: 300, Steady: 1600, Ratio: 0.19,
			Stolen: 0.07, Reruns: 1}},
		Idle: []idleRSS{{Server: "redis", Values: 8, ValueBytes: 1 << 20, RSSBytes: 20 << 20}, {Server: "kvserver", Values: 8, ValueBytes: 1 << 20, RSSBytes: 440 << 20}},
	}
	res.Rows[1].Redis.Stolen, res.Rows[1].KV.Stolen = 0.03, 0.125
	return res
}

func TestReportLeadsWithThirdPartyClients(t *testing.T) {
	d := fixedReport()
	u := fixedUsers()
	setOwnClientRatios(u.Rows, d.Compare)
	d.Users = &u
	var b strings.Builder
	if err := renderReport(&b, d); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	users := strings.Index(md, "## As users measure it")
	if users < 0 || users > strings.Index(md, "## Machine") || users > strings.Index(md, "## SET and GET throughput") {
		t.Fatalf("the third-party section does not lead the report:\n%s", md)
	}
	expectLines(t, md,
		// own client: fixedReport's 4kb SET
		"| redis-benchmark | SET | 4 KiB | 8 | 1 | 0.70x | 1.80x | 0.06 / 0.14 | 0.07 / 1.05 | 0.50x | 0.50x | ≥1.0x, ≤1.0x: not met |",
		"| go-redis | SET | 4 MiB | 8 | 1 | 1.15x | 1.40x | 19.00 / 89.00 | 17.00 / 83.00 | - | - | - |",
		"| redis-benchmark | SET | 4 KiB | 8 | 1 | 100.0k | 70.0k | 0.41 | 0.29 | 5.0 | 9.0 | 1.22 | 2.20 | 140.0k | 70.0k |",
		"| go-redis | SET | 4 MiB | 8 | 1 | 330 | 380 | 1.38 | 1.59 |",
		"| 0.0% (0) |",  // the 4 KiB row: quiet
		"| 12.5% (2) |", // the 4 MiB row: kvserver's worst kept run
		"more than 5% of the machine's time was stolen is thrown away and run again, up to 2 times",
		// the copy floor: only the row measured on it
		"| SET | 4 KiB | 8 | 1 | 150.0k | 1.50x | 0.70x | ≥1.0x | 4.0 | 0.80x | 1.80x | ≤1.0x |",
		"| kvserver | 300 | 1600 | 0.19x | 300 1500 1700 | ≥0.8x: not met | 7.0% (1) |",
		"| redis | 20 | - |",
		"| kvserver | 440 | <150 MB: not met |",
		"redis-benchmark 7.0.15",
	)
}

func TestTargetTextFollowsIssue17(t *testing.T) {
	row := func(size int64, ops, cpu float64) userRow {
		return userRow{Client: clientRedisBenchmark, ValueBytes: size, OpsRatio: ops, CPURatio: cpu}
	}
	for _, tt := range []struct {
		r    userRow
		want string
	}{
		{row(4<<10, 1.05, 0.9), "≥1.0x, ≤1.0x: met"},
		{row(4<<10, 1.05, 1.1), "≥1.0x, ≤1.0x: not met"},
		{row(4<<20, 1.3, 0.69), "≥1.2x, ≤0.7x: met"},
		{row(4<<20, 1.3, 0.8), "≥1.2x, ≤0.7x: not met"},
		{row(32<<20, 1.25, 2), "≥1.2x: met"},
		{row(1<<20, 1.1, 0.5), "≥1.2x: not met"},
		{userRow{Client: clientGoRedis, ValueBytes: 4 << 10}, "-"},
	} {
		if got := targetText(tt.r); got != tt.want {
			t.Errorf("targetText(%s %s) = %q, want %q", tt.r.Client, sizeLabel(tt.r.ValueBytes), got, tt.want)
		}
	}
}

func TestReportWithoutUsersHasNoUsersSection(t *testing.T) {
	var b strings.Builder
	if err := renderReport(&b, fixedReport()); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "As users measure it") {
		t.Error("a report without users data renders the users section")
	}
}
