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
	"github.com/kvserver/kvserver/lsm"
)

// diskResult compares the disk tier (package lsm) with plain file I/O on
// the same disk in the same run.
type diskResult struct {
	ValueBytes   int64   `json:"value_bytes"`
	TotalBytes   int64   `json:"total_bytes"`
	RawWriteMBps float64 `json:"raw_write_mbps"`
	PutMBps      float64 `json:"lsm_put_mbps"`
	WritePct     float64 `json:"write_pct_of_raw"`
	RawReadMBps  float64 `json:"raw_read_mbps"`
	GetMBps      float64 `json:"lsm_get_mbps"`
	ReadPct      float64 `json:"read_pct_of_raw"`
	ColdReads    bool    `json:"cold_reads"`
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
// Flush and sync), and reads both back after dropping the page cache.
func runDisk(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("disk", flag.ContinueOnError)
	sizes := fs.String("sizes", "1mb,32mb", "value sizes")
	total := fs.String("total", "1gb", "bytes written per size (more than the dirty page cache holds)")
	dir := fs.String("dir", os.TempDir(), "directory on the disk to measure")
	asJSON := fs.Bool("json", false, "print JSON lines instead of a table")
	if err := fs.Parse(args); err != nil {
		return err
	}
	totalBytes, err := parseSize("total", *total)
	if err != nil {
		return err
	}
	sizeList, err := parseSizeList("sizes", *sizes)
	if err != nil {
		return err
	}
	var results []diskResult
	for _, size := range sizeList {
		r, err := measureDisk(ctx, *dir, size, totalBytes)
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
		fmt.Fprintf(out, "value %s x %d, reads %s\n  write: raw+fdatasync %.0f MB/s, lsm Put+Flush+sync %.0f MB/s (%.0f%% of raw)\n  read:  raw %.0f MB/s, lsm Get %.0f MB/s (%.0f%% of raw)\n",
			config.FormatSize(r.ValueBytes), r.TotalBytes/r.ValueBytes, reads, r.RawWriteMBps, r.PutMBps, r.WritePct, r.RawReadMBps, r.GetMBps, r.ReadPct)
	}
	return nil
}

func measureDisk(ctx context.Context, parent string, size, total int64) (diskResult, error) {
	n := max(total/size, 1)
	res := diskResult{ValueBytes: size, TotalBytes: n * size}
	value := make([]byte, size)
	for i := range value {
		value[i] = byte(i*7 + i>>9)
	}
	dir, err := os.MkdirTemp(parent, "kvbench-disk-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(dir)

	raw := filepath.Join(dir, "raw")
	f, err := os.Create(raw)
	if err != nil {
		return res, err
	}
	start := time.Now()
	for i := int64(0); i < n; i++ {
		if _, err := f.Write(value); err != nil {
			f.Close()
			return res, err
		}
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return res, err
	}
	res.RawWriteMBps = mbps(res.TotalBytes, time.Since(start))
	f.Close()
	res.ColdReads = dropCaches()
	if f, err = os.Open(raw); err != nil {
		return res, err
	}
	buf := make([]byte, size)
	start = time.Now()
	for i := int64(0); i < n; i++ {
		if _, err := f.ReadAt(buf, i*size); err != nil {
			f.Close()
			return res, err
		}
	}
	res.RawReadMBps = mbps(res.TotalBytes, time.Since(start))
	f.Close()
	os.Remove(raw)

	opts := lsm.Options{Dir: filepath.Join(dir, "pebble"), MaxDisk: -1}
	st, err := lsm.Open(ctx, opts)
	if err != nil {
		return res, err
	}
	key := func(i int64) []byte { return []byte(fmt.Sprintf("kvbench@1@0@%08x@bfloat16kv_bytes", i)) }
	start = time.Now()
	for i := int64(0); i < n; i++ {
		if err := st.Put(ctx, 0, key(i), value, lsm.RecordMeta{}); err != nil {
			st.Close()
			return res, err
		}
	}
	if err := st.Flush(ctx); err != nil {
		st.Close()
		return res, err
	}
	exec.Command("sync").Run()
	res.PutMBps = mbps(res.TotalBytes, time.Since(start))
	if err := st.Close(); err != nil {
		return res, err
	}
	dropCaches()
	if st, err = lsm.Open(ctx, opts); err != nil {
		return res, err
	}
	defer st.Close()
	start = time.Now()
	for i := int64(0); i < n; i++ {
		if _, _, err := st.Get(ctx, 0, key(i)); err != nil {
			return res, err
		}
	}
	res.GetMBps = mbps(res.TotalBytes, time.Since(start))
	res.WritePct = 100 * res.PutMBps / res.RawWriteMBps
	res.ReadPct = 100 * res.GetMBps / res.RawReadMBps
	return res, nil
}
