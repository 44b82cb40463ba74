package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/kvserver/kvserver/config"
	"github.com/kvserver/kvserver/disktier"
	"github.com/kvserver/kvserver/gctune"
	"github.com/kvserver/kvserver/grouping"
)

// diskRound is one round of the disk comparison: the same bytes written to
// and read back from a plain file and the disk tier.
type diskRound struct {
	// TierFirst tells which side went first in this round (the disk of a
	// VM may run a burst fast and then slow down, which favours whichever
	// side goes first).
	TierFirst    bool    `json:"tier_first"`
	RawWriteMBps float64 `json:"raw_write_mbps"`
	PutMBps      float64 `json:"lsm_put_mbps"`
	RawReadMBps  float64 `json:"raw_read_mbps"`
	GetMBps      float64 `json:"lsm_get_mbps"`
	WritePct     float64 `json:"write_pct_of_raw"`
	ReadPct      float64 `json:"read_pct_of_raw"`
}

// diskResult compares the disk tier (package disktier) with plain file I/O on
// the same disk in the same run: each side's throughput over all the
// alternating rounds (bytes moved over time taken), their ratio, and the
// rounds themselves.
type diskResult struct {
	ValueBytes   int64       `json:"value_bytes"`
	TotalBytes   int64       `json:"total_bytes"`
	RawWriteMBps float64     `json:"raw_write_mbps"`
	PutMBps      float64     `json:"lsm_put_mbps"`
	WritePct     float64     `json:"write_pct_of_raw"`
	RawReadMBps  float64     `json:"raw_read_mbps"`
	GetMBps      float64     `json:"lsm_get_mbps"`
	ReadPct      float64     `json:"read_pct_of_raw"`
	ColdReads    bool        `json:"cold_reads"`
	Rounds       []diskRound `json:"rounds"`
}

// dropCaches empties the page cache so reads come from the disk; it needs
// root and reports whether it worked.
func dropCaches() bool {
	exec.Command("sync").Run()
	return os.WriteFile("/proc/sys/vm/drop_caches", []byte("3"), 0) == nil
}

func mbps(n int64, d time.Duration) float64 { return float64(n) / d.Seconds() / 1e6 }

// runDisk writes --total bytes of values of each size to a plain file
// (then fdatasync, like dd conv=fdatasync) and to the disk tier (Put, then
// Flush and sync), and reads both back after dropping the page cache, in
// --rounds rounds that alternate which side goes first.
func runDisk(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("disk", flag.ContinueOnError)
	sizes := fs.String("sizes", "1mb,32mb", "value sizes")
	total := fs.String("total", "1gb", "bytes written per size (more than the dirty page cache holds)")
	dir := fs.String("dir", os.TempDir(), "directory on the disk to measure")
	rounds := fs.Int("rounds", 4, "alternating rounds per size (even: each side goes first equally often)")
	asJSON := fs.Bool("json", false, "print JSON lines instead of a table")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *rounds < 1 {
		return fmt.Errorf("disk: --rounds must be at least 1, not %d", *rounds)
	}
	totalBytes, err := parseSize("total", *total)
	if err != nil {
		return err
	}
	sizeList, err := parseSizeList("sizes", *sizes)
	if err != nil {
		return err
	}
	// The disk tier runs in kvserver under gctune's collector pacing; run
	// it under the same here. With Go's default GOGC=100 and this
	// process's small heap, a collection ran every few values and
	// allocating each value read took about a quarter of a cold 1 MiB Get
	// (measured: 250 ms of 1.1 s for 1 GiB; 60 ms with the slack).
	if os.Getenv("GOGC") == "" {
		tunerCtx, stopTuner := context.WithCancel(ctx)
		defer stopTuner()
		go gctune.New(gctune.Options{}).Run(tunerCtx)
	}
	var results []diskResult
	for _, size := range sizeList {
		r, err := measureDisk(ctx, *dir, size, totalBytes, *rounds)
		if err != nil {
			return err
		}
		results = append(results, r)
	}
	if *asJSON {
		return writeJSONLines(out, results)
	}
	for _, r := range results {
		reads := "cold (page cache dropped)"
		if !r.ColdReads {
			reads = "warm (could not drop the page cache: not root)"
		}
		fmt.Fprintf(out, "value %s x %d, reads %s, %d alternating rounds (throughput over all rounds)\n"+
			"  write: raw+fdatasync %.0f MB/s, disktier Put+Flush+sync %.0f MB/s (%.0f%% of raw)\n"+
			"  read:  raw %.0f MB/s, disktier Get %.0f MB/s (%.0f%% of raw)\n",
			config.FormatSize(r.ValueBytes), r.TotalBytes/r.ValueBytes, reads, len(r.Rounds),
			r.RawWriteMBps, r.PutMBps, r.WritePct, r.RawReadMBps, r.GetMBps, r.ReadPct)
		for i, rd := range r.Rounds {
			first := "raw first"
			if rd.TierFirst {
				first = "disktier first"
			}
			fmt.Fprintf(out, "    round %d (%s): write %.0f / %.0f MB/s (%.0f%%), read %.0f / %.0f MB/s (%.0f%%)\n",
				i+1, first, rd.RawWriteMBps, rd.PutMBps, rd.WritePct, rd.RawReadMBps, rd.GetMBps, rd.ReadPct)
		}
	}
	return nil
}

// measureDisk runs the rounds for one value size. Each side's figure is
// its throughput over all rounds (the harmonic mean of its rounds), and
// the percentages compare those. This VM's disk gives a burst to whichever
// side writes first in a round (measured: about 1.4 GB/s first, 350 MB/s
// second, whichever side it is), so a per-round ratio swings between
// about 25% and 400% with the order; over an even number of alternating
// rounds both sides get the burst equally often.
func measureDisk(ctx context.Context, parent string, size, total int64, rounds int) (diskResult, error) {
	n := max(total/size, 1)
	res := diskResult{ValueBytes: size, TotalBytes: n * size}
	value := make([]byte, size)
	for i := range value {
		value[i] = byte(i*7 + i>>9)
	}
	var rawW, putW, rawR, getR []float64
	for r := range rounds {
		rd, cold, err := diskRoundOnce(ctx, parent, value, n, r%2 == 1)
		if err != nil {
			return res, err
		}
		res.ColdReads = cold
		res.Rounds = append(res.Rounds, rd)
		rawW, putW = append(rawW, rd.RawWriteMBps), append(putW, rd.PutMBps)
		rawR, getR = append(rawR, rd.RawReadMBps), append(getR, rd.GetMBps)
	}
	res.RawWriteMBps, res.PutMBps = harmonicMean(rawW), harmonicMean(putW)
	res.RawReadMBps, res.GetMBps = harmonicMean(rawR), harmonicMean(getR)
	res.WritePct = 100 * res.PutMBps / res.RawWriteMBps
	res.ReadPct = 100 * res.GetMBps / res.RawReadMBps
	return res, nil
}

// harmonicMean of rates that each moved the same bytes is the rate over
// all of them together.
func harmonicMean(rates []float64) float64 {
	var inv float64
	for _, r := range rates {
		if r <= 0 {
			return 0
		}
		inv += 1 / r
	}
	if inv == 0 {
		return 0
	}
	return float64(len(rates)) / inv
}

// diskRoundOnce writes n copies of value to a plain file and to a fresh
// disk tier, then reads both back with the page cache dropped before each
// read; tierFirst puts the tier first in both halves.
func diskRoundOnce(ctx context.Context, parent string, value []byte, n int64, tierFirst bool) (diskRound, bool, error) {
	rd := diskRound{TierFirst: tierFirst}
	dir, err := os.MkdirTemp(parent, "kvbench-disk-")
	if err != nil {
		return rd, false, err
	}
	defer os.RemoveAll(dir)
	raw := filepath.Join(dir, "raw")
	opts := disktier.Options{Dir: filepath.Join(dir, "pebble"), MaxDisk: -1}
	total := n * int64(len(value))

	writeRaw := func() error {
		mb, err := writeRawFile(raw, value, n)
		rd.RawWriteMBps = mb
		return err
	}
	writeTier := func() error {
		mb, err := writeTierValues(ctx, opts, value, n)
		rd.PutMBps = mb
		return err
	}
	cold := true
	readRaw := func() error {
		cold = dropCaches() && cold
		mb, err := readRawFile(raw, len(value), n)
		rd.RawReadMBps = mb
		return err
	}
	readTier := func() error {
		cold = dropCaches() && cold
		mb, err := readTierValues(ctx, opts, total, n)
		rd.GetMBps = mb
		return err
	}
	steps := []func() error{writeRaw, writeTier, readRaw, readTier}
	if tierFirst {
		steps = []func() error{writeTier, writeRaw, readTier, readRaw}
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return rd, false, err
		}
	}
	rd.WritePct = 100 * rd.PutMBps / rd.RawWriteMBps
	rd.ReadPct = 100 * rd.GetMBps / rd.RawReadMBps
	return rd, cold, nil
}

// diskKey names the i-th value like an LMCache chunk.
func diskKey(i int64) []byte {
	return []byte(fmt.Sprintf("kvbench@1@0@%08x@bfloat16", i) + grouping.DataSuffix)
}

// writeRawFile writes n copies of value to path and fdatasyncs it.
func writeRawFile(path string, value []byte, n int64) (float64, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	start := time.Now()
	for range n {
		if _, err := f.Write(value); err != nil {
			return 0, err
		}
	}
	if err := f.Sync(); err != nil {
		return 0, err
	}
	return mbps(n*int64(len(value)), time.Since(start)), nil
}

// readRawFile reads path back one value at a time into one buffer, as dd
// does.
func readRawFile(path string, size int, n int64) (float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	buf := make([]byte, size)
	start := time.Now()
	for i := range n {
		if _, err := f.ReadAt(buf, i*int64(size)); err != nil {
			return 0, err
		}
	}
	return mbps(n*int64(size), time.Since(start)), nil
}

// writeTierValues puts n values into a fresh disk tier, flushes it and
// syncs the file system, and closes it.
func writeTierValues(ctx context.Context, opts disktier.Options, value []byte, n int64) (float64, error) {
	st, err := disktier.Open(ctx, opts)
	if err != nil {
		return 0, err
	}
	start := time.Now()
	for i := range n {
		if err := st.Put(ctx, 0, diskKey(i), value, disktier.RecordMeta{}); err != nil {
			st.Close()
			return 0, err
		}
	}
	if err := st.Flush(ctx); err != nil {
		st.Close()
		return 0, err
	}
	exec.Command("sync").Run()
	mb := mbps(n*int64(len(value)), time.Since(start))
	return mb, st.Close()
}

// readTierValues reopens the disk tier and reads the n values back.
func readTierValues(ctx context.Context, opts disktier.Options, total, n int64) (float64, error) {
	st, err := disktier.Open(ctx, opts)
	if err != nil {
		return 0, err
	}
	defer st.Close()
	start := time.Now()
	for i := range n {
		if _, _, err := st.Get(ctx, 0, diskKey(i)); err != nil {
			return 0, fmt.Errorf("disk: get value %d: %w", i, err)
		}
	}
	return mbps(total, time.Since(start)), nil
}
