package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/kvserver/kvserver/config"
)

// reportOptions are the flags of `kvbench report`.
type reportOptions struct {
	compare       compareOptions
	users         usersOptions
	withUsers     bool
	pipelineSizes []int64
	lmcache       lmcacheOptions
	memory        memoryOptions
	limitTime     time.Duration
	out           string
	chart         string
	args          []string
	asJSON        bool
}

// machineInfo describes where a report was measured.
type machineInfo struct {
	NProc    int    `json:"nproc"`
	CPU      string `json:"cpu"`
	MemTotal int64  `json:"mem_total_bytes,omitempty"`
	Redis    string `json:"redis_server"`
	Go       string `json:"go"`
	Commit   string `json:"kvserver_commit,omitempty"`
}

// reportData is everything BENCHMARKS.md is rendered from, so that the
// rendering can be tested with fixed figures.
type reportData struct {
	Generated    time.Time      `json:"generated"`
	Seconds      float64        `json:"seconds"`
	Command      string         `json:"command"`
	Machine      machineInfo    `json:"machine"`
	MaxMemory    string         `json:"maxmemory"`
	Rounds       int            `json:"rounds"`
	PhaseSeconds float64        `json:"phase_seconds"`
	PhaseBytes   int64          `json:"phase_bytes"`
	Limits       limitResult    `json:"limits"`
	Compare      []measurement  `json:"compare"`
	LMCache      lmcacheResult  `json:"lmcache"`
	Memory       []memoryResult `json:"memory"`
	Users        *usersResult   `json:"users,omitempty"`
	Chart        string         `json:"chart"` // path relative to the markdown file
	ChartConns   int            `json:"chart_conns"`
}

const reportAbout = `
Runs a reduced comparison (about seven minutes with the defaults) and
writes BENCHMARKS.md and the chart docs/throughput.png from it:
  users     third-party clients (kvbench users: redis-benchmark, go-redis,
            server CPU per operation, unix socket, storm, idle RSS), which
            BENCHMARKS.md leads with; --users=false skips it
  limit     loopback TCP (1 and 8 streams) and memcpy, before the servers start
  compare   SET/GET of --sizes with --conns connections, unpipelined, plus
            --pipeline-sizes pipelined --pipeline deep
  lmcache   the LMCache store / lookup / retrieve pattern
  memory    memory growth per stored byte for --memory-sizes values, with a
            fresh pair of servers per size
Both servers are started once, side by side, with --maxmemory each. The
generated files must not be edited by hand; rerun this command instead.`

func parseReportFlags(args []string) (reportOptions, error) {
	fs := newFlagSet("report", "[--out BENCHMARKS.md] [--chart docs/throughput.png] [--rounds 5] [--json]", reportAbout)
	o := reportOptions{args: args}
	sizes := fs.String("sizes", "4kb,1mb,4mb,32mb", "comma-separated value sizes measured unpipelined (and charted)")
	conns := fs.String("conns", "8", "comma-separated connection counts; the chart shows the first")
	pipeSizes := fs.String("pipeline-sizes", "4kb", "comma-separated value sizes also measured pipelined (empty: none)")
	fs.IntVar(&o.compare.pipeline, "pipeline", 16, "depth of the pipelined runs")
	fs.IntVar(&o.compare.rounds, "rounds", 5, "alternating rounds per configuration; medians are reported")
	bytesPer := fs.String("bytes", "512mb", "stop a compare phase after moving this many bytes")
	phaseSeconds := fs.Float64("phase-seconds", 2, "stop a compare phase after this many seconds")
	fs.IntVar(&o.compare.keysPer, "keys", 4, "distinct keys per connection in compare")
	limitSeconds := fs.Float64("limit-seconds", 2, "duration of each loopback test")
	chunk := fs.String("chunk", "16mb", "LMCache chunk size")
	fs.IntVar(&o.lmcache.chunks, "chunks", 32, "LMCache chunks in the prefix")
	fs.IntVar(&o.lmcache.conns, "lmcache-conns", 8, "LMCache connections storing and retrieving in parallel")
	fs.IntVar(&o.lmcache.walks, "walks", 50, "LMCache lookup walks per round")
	memSizes := fs.String("memory-sizes", "1mb,32mb", "value sizes of the memory measurement (empty: none)")
	memTotal := fs.String("memory-total", "512mb", "raw bytes stored per size in the memory measurement")
	fs.StringVar(&o.out, "out", "BENCHMARKS.md", "markdown file to write")
	fs.StringVar(&o.chart, "chart", "docs/throughput.png", "PNG chart to write")
	o.compare.pairOptions.define(fs)
	fs.BoolVar(&o.asJSON, "json", false, "print the report's figures as JSON on stdout (the files are written too)")
	fs.BoolVar(&o.withUsers, "users", true, "measure with third-party clients first (needs a kvserver with --unixsocket)")
	var usersSizes, usersConns string
	var stormSeconds float64
	defineUsersFlags(fs, &o.users, "users-", &usersSizes, &usersConns, &stormSeconds)
	if err := parseNoArgs(fs, args); err != nil {
		return o, err
	}
	if err := o.users.finish(usersSizes, usersConns, stormSeconds); err != nil {
		return o, err
	}
	var err error
	if o.compare.sizes, err = parseSizeList("sizes", *sizes); err != nil {
		return o, err
	}
	if strings.TrimSpace(*memSizes) != "" {
		if o.memory.sizes, err = parseSizeList("memory-sizes", *memSizes); err != nil {
			return o, err
		}
	}
	if o.memory.total, err = parseSize("memory-total", *memTotal); err != nil {
		return o, err
	}
	if o.compare.conns, err = parseCountList("conns", *conns); err != nil {
		return o, err
	}
	if strings.TrimSpace(*pipeSizes) != "" {
		if o.pipelineSizes, err = parseSizeList("pipeline-sizes", *pipeSizes); err != nil {
			return o, err
		}
	}
	if o.compare.bytesPer, err = parseSize("bytes", *bytesPer); err != nil {
		return o, err
	}
	if err = o.compare.parseMaxMemory(); err != nil {
		return o, err
	}
	if o.lmcache.chunk, err = parseSize("chunk", *chunk); err != nil {
		return o, err
	}
	switch {
	case o.compare.rounds < 1, o.compare.pipeline < 1, o.compare.keysPer < 1:
		return o, fmt.Errorf("--rounds, --pipeline and --keys must be at least 1")
	case o.lmcache.chunks < 1, o.lmcache.conns < 1, o.lmcache.walks < 1:
		return o, fmt.Errorf("--chunks, --lmcache-conns and --walks must be at least 1")
	case *phaseSeconds <= 0, *limitSeconds <= 0:
		return o, fmt.Errorf("--phase-seconds and --limit-seconds must be positive")
	case o.lmcache.chunk*int64(o.lmcache.chunks) > o.compare.maxMemBytes/2:
		return o, fmt.Errorf("%d chunks of %s need more than half of --maxmemory %s",
			o.lmcache.chunks, config.FormatSize(o.lmcache.chunk), o.compare.maxMemory)
	}
	o.compare.phaseTime = time.Duration(*phaseSeconds * float64(time.Second))
	o.limitTime = time.Duration(*limitSeconds * float64(time.Second))
	o.lmcache.rounds = o.compare.rounds
	// One pair serves every section; with users it also listens on Unix
	// sockets.
	o.compare.unixSockets = o.withUsers
	o.users.pairOptions = o.compare.pairOptions
	return o, nil
}

// matrix lists the compare configurations of the report: every size with
// every connection count unpipelined, then the pipelined sizes.
func (o reportOptions) matrix() []compareConfig {
	var out []compareConfig
	for _, size := range o.compare.sizes {
		for _, conns := range o.compare.conns {
			out = append(out, compareConfig{Size: size, Conns: conns, Pipeline: 1})
		}
	}
	for _, size := range o.pipelineSizes {
		for _, conns := range o.compare.conns {
			out = append(out, compareConfig{Size: size, Conns: conns, Pipeline: effectivePipeline(size, o.compare.pipeline)})
		}
	}
	return out
}

// runReport measures, then writes the markdown report and the chart.
func runReport(ctx context.Context, args []string, out io.Writer) error {
	o, err := parseReportFlags(args)
	if err != nil {
		return err
	}
	started := time.Now()
	progress := func(format string, a ...any) {
		fmt.Fprintf(os.Stderr, "kvbench report [%3.0fs] %s\n", time.Since(started).Seconds(), fmt.Sprintf(format, a...))
	}
	progress("measuring loopback and memcpy limits")
	limits, err := measureLimits(ctx, o.limitTime)
	if err != nil {
		return err
	}
	progress("starting redis-server and kvserver (maxmemory %s each)", o.compare.maxMemory)
	pair, err := o.compare.start(ctx)
	if err != nil {
		return err
	}
	defer pair.Close()
	var users *usersResult
	if o.withUsers {
		res, err := measureUsers(ctx, o.users, pair, progress)
		if err != nil {
			return err
		}
		users = &res
	}
	var results []measurement
	for _, cfg := range o.matrix() {
		progress("compare %s x %d conns, pipeline %d", sizeLabel(cfg.Size), cfg.Conns, cfg.Pipeline)
		ms, err := compareMatrix(ctx, o.compare, pair, []compareConfig{cfg}, limits.LoopbackGBps)
		if err != nil {
			return err
		}
		results = append(results, ms...)
	}
	progress("lmcache %d chunks of %s", o.lmcache.chunks, sizeLabel(o.lmcache.chunk))
	lm, err := lmcacheRounds(ctx, o.lmcache, pair)
	if err != nil {
		return err
	}
	var mem []memoryResult
	if len(o.memory.sizes) > 0 {
		// Fresh servers per size, beside the idle pair (whose binary and
		// directory it shares).
		progress("memory: %s of values per size", config.FormatSize(o.memory.total))
		o.memory.redisBin, o.memory.kvBin = o.compare.redisBin, pair.kvBin
		if mem, err = measureMemory(ctx, o.memory, pair.tmp); err != nil {
			return err
		}
	}
	pair.Close()
	if users != nil {
		setOwnClientRatios(users.Rows, results)
	}

	data := reportData{
		Users:        users,
		Generated:    time.Now().UTC(),
		Seconds:      time.Since(started).Seconds(),
		Command:      strings.TrimSpace("go run ./cmd/kvbench report " + shellJoin(o.args)),
		Machine:      describeMachine(ctx, o.compare.redisBin),
		MaxMemory:    o.compare.maxMemory,
		Rounds:       o.compare.rounds,
		PhaseSeconds: o.compare.phaseTime.Seconds(),
		PhaseBytes:   o.compare.bytesPer,
		Limits:       limits,
		Compare:      results,
		LMCache:      lm,
		Memory:       mem,
		Chart:        chartLink(o.out, o.chart),
		ChartConns:   o.compare.conns[0],
	}
	title := fmt.Sprintf("SET/GET throughput, %d connections (median of %d rounds, %s)",
		data.ChartConns, data.Rounds, data.Generated.Format("2006-01-02"))
	if err := writeChart(o.chart, results, data.ChartConns, limits.LoopbackGBps, title); err != nil {
		return err
	}
	var md bytes.Buffer
	if err := renderReport(&md, data); err != nil {
		return err
	}
	if err := os.WriteFile(o.out, md.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	progress("wrote %s and %s", o.out, o.chart)
	if o.asJSON {
		return json.NewEncoder(out).Encode(data)
	}
	if users != nil {
		if err := printUsers(out, *users); err != nil {
			return err
		}
		fmt.Fprintln(out)
	}
	fmt.Fprintf(out, "loopback TCP: %.2f GB/s (1 stream), %.2f GB/s (8 streams); memcpy %.2f GB/s\n\n",
		limits.LoopbackGBps, limits.Loopback8GBps, limits.MemcpyGBps)
	if err := printMeasurements(out, results, false); err != nil {
		return err
	}
	fmt.Fprintln(out)
	if err := printLMCache(out, lm); err != nil {
		return err
	}
	if len(mem) > 0 {
		fmt.Fprintln(out)
		return writeMemoryTable(out, mem)
	}
	return nil
}

// chartLink is the chart's path relative to the markdown file, with
// forward slashes, as a markdown image link needs it.
func chartLink(mdPath, chartPath string) string {
	absMD, err1 := filepath.Abs(mdPath)
	absChart, err2 := filepath.Abs(chartPath)
	if err1 == nil && err2 == nil {
		if rel, err := filepath.Rel(filepath.Dir(absMD), absChart); err == nil {
			return filepath.ToSlash(rel)
		}
	}
	return filepath.ToSlash(chartPath)
}

// shellJoin quotes arguments that a shell would split or expand.
func shellJoin(args []string) string {
	quoted := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n'\"$`\\*?[]{}()<>|&;#~!") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		quoted[i] = a
	}
	return strings.Join(quoted, " ")
}

// describeMachine collects what the report says about where it ran. Every
// field is best effort: a missing file or tool leaves it empty.
func describeMachine(ctx context.Context, redisBin string) machineInfo {
	m := machineInfo{NProc: runtime.NumCPU(), Go: runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	if n, err := config.PhysicalMemory(); err == nil {
		m.MemTotal = n
	}
	if out, err := exec.CommandContext(ctx, redisBin, "--version").Output(); err == nil {
		m.Redis = strings.TrimSpace(string(out))
	}
	if out, err := exec.CommandContext(ctx, "git", "rev-parse", "--short", "HEAD").Output(); err == nil {
		m.Commit = strings.TrimSpace(string(out))
		if st, err := exec.CommandContext(ctx, "git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(bytes.TrimSpace(st)) > 0 {
			m.Commit += " with uncommitted changes"
		}
	}
	return m
}

// renderReport writes BENCHMARKS.md.
func renderReport(w io.Writer, d reportData) error {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("# Benchmarks\n\n")
	p("<!-- Generated by `go run ./cmd/kvbench report`. Do not edit by hand: rerun the command. -->\n\n")
	p("This file and [%s](%s) were generated by `go run ./cmd/kvbench report` and must not be edited by hand; ", d.Chart, d.Chart)
	p("rerun the command to refresh them. Generated %s; the run took %.0f s.\n\n", d.Generated.Format("2006-01-02 15:04 UTC"), d.Seconds)
	if d.Users != nil {
		renderUsers(p, *d.Users)
	}

	p("## Machine\n\n| | |\n|---|---|\n")
	p("| nproc | %d |\n", d.Machine.NProc)
	p("| CPU | %s |\n", orUnknown(d.Machine.CPU))
	if d.Machine.MemTotal > 0 {
		p("| memory | %.1f GiB |\n", float64(d.Machine.MemTotal)/(1<<30))
	}
	p("| redis-server | %s |\n", orUnknown(d.Machine.Redis))
	p("| Go | %s |\n", orUnknown(d.Machine.Go))
	if d.Machine.Commit != "" {
		p("| kvserver | %s |\n", d.Machine.Commit)
	}
	p("\n## Command\n\n```\n%s\n```\n\n", d.Command)
	p("kvbench starts Debian's redis-server (persistence off) and kvserver side by side on this machine, ")
	p("each with maxmemory %s, and drives both over loopback TCP from the same process. ", d.MaxMemory)
	p("Every configuration runs %d rounds; each round measures both servers, alternating which goes first, ", d.Rounds)
	p("and the tables show medians. A phase (SET or GET of one server) stops after %s or %.0f s. ", sizeLabel(d.PhaseBytes), d.PhaseSeconds)
	p("GB/s is 10^9 bytes of values per second. Client and servers share the machine's %d cores, ", d.Machine.NProc)
	p("and the machine may be shared with other work: absolute figures are noisy, the kvserver/redis ratio is the result.\n\n")

	p("## Machine limits\n\n")
	p("No server can move values over loopback faster than one client stream can; kvserver's figures below are also given as a percentage of the single-stream limit. With several connections a server can pass that figure; the 8-stream figure is the ceiling for those rows.\n\n")
	p("| limit | GB/s |\n|---|---:|\n")
	p("| loopback TCP, 1 stream (1 MiB writes, Go reader) | %.2f |\n", d.Limits.LoopbackGBps)
	p("| loopback TCP, 8 streams | %.2f |\n", d.Limits.Loopback8GBps)
	p("| memcpy (64 MiB buffer) | %.2f |\n\n", d.Limits.MemcpyGBps)

	p("## SET and GET throughput (kvbench's own client)\n\n")
	p("![SET and GET throughput of kvserver and redis against value size, %d connections](%s)\n\n", d.ChartConns, d.Chart)
	p("| op | value | conns | pipeline | redis GB/s | kvserver GB/s | redis ops/s | kvserver ops/s | kvserver/redis | kvserver %% of loopback |\n")
	p("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, m := range d.Compare {
		p("| %s | %s | %d | %d | %.2f | %.2f | %s | %s | %.2fx | %s |\n", m.Op, sizeLabel(m.ValueBytes), m.Conns, m.Pipeline,
			m.RedisGBps, m.KVGBps, formatOps(m.RedisOps), formatOps(m.KVOps), m.Ratio, pctOfLoopback(m))
	}
	var slower []string
	for _, m := range d.Compare {
		if m.Ratio > 0 && m.Ratio < 1 {
			slower = append(slower, fmt.Sprintf("%s of %s values, %d conns, pipeline %d (%.2fx)",
				m.Op, sizeLabel(m.ValueBytes), m.Conns, m.Pipeline, m.Ratio))
		}
	}
	if len(slower) == 0 {
		p("\nkvserver was at least as fast as redis in every configuration above.\n\n")
	} else {
		p("\nkvserver was slower than redis in: %s.\n\n", strings.Join(slower, "; "))
	}

	lm := d.LMCache
	p("## LMCache pattern\n\n")
	p("%d chunks of %s over %d connections, as LMCache's Redis connector stores them: ", lm.Chunks, sizeLabel(lm.ChunkBytes), lm.Conns)
	p("store is `SET <key>kv_bytes <chunk>` then `SET <key>metadata <28 bytes>` per chunk; ")
	p("lookup is one connection walking `EXISTS <key>metadata` over the chunks until the first 0 (%d round trips, %d walks per round); ", lm.Chunks+1, lm.Walks)
	p("retrieve is `GET <key>metadata` then `GET <key>kv_bytes`. Keys look like `model@1@0@<prefix hash>@bfloat16kv_bytes`. ")
	p("Medians of %d rounds; the last column is kvserver's speed relative to redis (above 1: kvserver is faster).\n\n", lm.Rounds)
	p("| phase | unit | redis | kvserver | kvserver vs redis |\n|---|---|---:|---:|---:|\n")
	for _, r := range lm.Phases {
		p("| %s | %s | %.2f | %.2f | %.2fx |\n", r.Phase, r.Unit, r.Redis, r.KV, r.Ratio)
	}
	if len(d.Memory) > 0 {
		p("\n## Memory per stored byte\n\n")
		p("A fresh redis-server and kvserver per value size, each given distinct values of that size (maxmemory four times the total, so nothing is evicted or demoted). ")
		p("Growth of the process's resident memory (VmRSS) and of the server's own `used_memory` over the empty server, divided by the raw bytes stored. ")
		p("Redis's allocator rounds each value plus its header up to the next size class, which `used_memory` counts; pages of that rounding that are never written stay out of RSS.\n\n")
		p("| server | value | values | raw MiB | RSS growth / raw | used_memory growth / raw |\n|---|---|---:|---:|---:|---:|\n")
		for _, m := range d.Memory {
			p("| %s | %s | %d | %.0f | %.3fx | %.3fx |\n", m.Server, sizeLabel(m.ValueSize), m.Values,
				float64(m.RawBytes)/(1<<20), m.RSSRatio, m.UsedRatio)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// formatOps writes a request rate compactly: 812, 45.3k, 1.20M.
func formatOps(x float64) string {
	switch {
	case x >= 1e6:
		return fmt.Sprintf("%.2fM", x/1e6)
	case x >= 1e4:
		return fmt.Sprintf("%.1fk", x/1e3)
	default:
		return fmt.Sprintf("%.0f", x)
	}
}
