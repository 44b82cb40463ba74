package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// memoryResult is what one server holds for one value size: the process's
// resident memory and its own used_memory figure, each as growth over the
// empty server, against the raw bytes of the values stored.
type memoryResult struct {
	Server    string  `json:"server"`
	ValueSize int64   `json:"value_size"`
	Values    int     `json:"values"`
	RawBytes  int64   `json:"raw_bytes"`
	RSSBytes  int64   `json:"rss_growth_bytes"`
	UsedBytes int64   `json:"used_memory_growth_bytes"`
	RSSRatio  float64 `json:"rss_over_raw"`
	UsedRatio float64 `json:"used_memory_over_raw"`
}

// memoryOptions are the flags of kvbench memory.
type memoryOptions struct {
	sizes    []int64
	total    int64
	redisBin string
	kvBin    string
	// collections are the composite types measured (memory_collections.go)
	// instead of string values.
	collections []collectionKind
}

func parseMemoryFlags(args []string) (memoryOptions, bool, error) {
	fs := newFlagSet("memory", "[--sizes 1mb,32mb] [--total 1gb] [--hashes] [--zsets] [--json]", `
Starts a fresh redis-server and kvserver for each value size, stores --total
bytes of distinct random values of that size in each (maxmemory well above
it, so nothing is evicted or demoted), and reports how much each process
grew: resident memory (VmRSS from /proc) and the server's own used_memory,
both over the raw bytes stored. Redis's allocator rounds a 1 MiB or 32 MiB
value plus its header up to the next size class (1.25x). With --hashes or
--zsets (or both) it stores 100,000 short hash fields or sorted-set members
instead, in 1000 listpacks and in one big collection (hashtable, skiplist),
and reports the growth per element.`)
	sizes := fs.String("sizes", "1mb,32mb", "comma-separated value sizes")
	hashes := fs.Bool("hashes", false, "measure hashes instead: 100,000 short fields in 1000 small hashes and in one big one")
	zsets := fs.Bool("zsets", false, "measure sorted sets instead: 100,000 short members in 1000 small sets and in one big one")
	total := fs.String("total", "1gb", "raw bytes stored per size and server")
	redisBin := fs.String("redis", "redis-server", "redis-server binary")
	kvBin := fs.String("kvserver", "", "kvserver binary (default: build ./cmd/kvserver)")
	asJSON := fs.Bool("json", false, "print JSON lines instead of a table")
	if err := fs.Parse(args); err != nil {
		return memoryOptions{}, false, err
	}
	o := memoryOptions{redisBin: *redisBin, kvBin: *kvBin}
	if *hashes {
		o.collections = append(o.collections, hashKind)
	}
	if *zsets {
		o.collections = append(o.collections, zsetKind)
	}
	var err error
	if o.sizes, err = parseSizeList("sizes", *sizes); err != nil {
		return o, false, err
	}
	if o.total, err = parseSize("total", *total); err != nil {
		return o, false, err
	}
	return o, *asJSON, nil
}

// runMemory measures memory overhead per stored byte for both servers.
func runMemory(ctx context.Context, args []string, out io.Writer) error {
	o, asJSON, err := parseMemoryFlags(args)
	if err != nil {
		return err
	}
	tmp, bin, err := workDir(ctx, "kvbench-memory-", o.kvBin)
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	o.kvBin = bin
	if len(o.collections) > 0 {
		var results []collectionMemoryResult
		for _, kind := range o.collections {
			r, err := measureCollectionMemory(ctx, o, tmp, kind)
			if err != nil {
				return err
			}
			results = append(results, r...)
		}
		if asJSON {
			return writeJSONLines(out, results)
		}
		return writeCollectionMemoryTable(out, results)
	}
	results, err := measureMemory(ctx, o, tmp)
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSONLines(out, results)
	}
	return writeMemoryTable(out, results)
}

// measureMemory runs every size against a fresh pair of servers in dir.
func measureMemory(ctx context.Context, o memoryOptions, dir string) ([]memoryResult, error) {
	var results []memoryResult
	for _, size := range o.sizes {
		n := int(max(o.total/size, 1))
		value := make([]byte, size)
		rng := rand.NewChaCha8([32]byte{1})
		rng.Read(value)
		err := onFreshServers(ctx, o, dir, sizeLabel(size)+" values", func(t *target) error {
			r, err := memoryOf(ctx, t, value, n)
			results = append(results, r)
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	return results, nil
}

// onFreshServers starts a fresh redis-server, then a fresh kvserver, each
// in a directory of its own under dir with maxmemory well above --total,
// and runs measure on each before stopping it.
func onFreshServers(ctx context.Context, o memoryOptions, dir, what string, measure func(t *target) error) error {
	maxMemory := strconv.FormatInt(o.total*4, 10)
	sub, err := os.MkdirTemp(dir, "s")
	if err != nil {
		return err
	}
	defer os.RemoveAll(sub)
	for i, start := range []func(ctx context.Context, bin, dir, maxMemory string) (*target, error){startRedis, startKVServer} {
		bin := o.redisBin
		if i == 1 {
			bin = o.kvBin
		}
		d := filepath.Join(sub, strconv.Itoa(i))
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		t, err := start(ctx, bin, d, maxMemory)
		if err != nil {
			return err
		}
		err = measure(t)
		t.Stop()
		if err != nil {
			return fmt.Errorf("%s, %s: %w", t.Name, what, err)
		}
	}
	return nil
}

// memoryOf stores n copies of value under distinct keys (the first 8
// bytes of each made unique, so no server can share them) and measures the
// growth of t's memory.
func memoryOf(ctx context.Context, t *target, value []byte, n int) (memoryResult, error) {
	c, err := dialBench(ctx, t.Addr)
	if err != nil {
		return memoryResult{}, err
	}
	defer c.Close()
	settle := func() (rss, used int64, err error) { return settleMemory(t, c, 3*time.Second) }
	rss0, used0, err := settle()
	if err != nil {
		return memoryResult{}, err
	}
	for i := 0; i < n; i++ {
		copy(value, fmt.Sprintf("%08d", i))
		if err := c.Set(fmt.Sprintf("chunk:%06d", i), value); err != nil {
			return memoryResult{}, err
		}
	}
	if line, err := c.Do("DBSIZE"); err != nil || line != ":"+strconv.Itoa(n) {
		return memoryResult{}, fmt.Errorf("DBSIZE after %d SETs: %q %v (values evicted?)", n, line, err)
	}
	rss1, used1, err := settle()
	if err != nil {
		return memoryResult{}, err
	}
	raw := int64(n) * int64(len(value))
	return memoryResult{
		Server: t.Name, ValueSize: int64(len(value)), Values: n, RawBytes: raw,
		RSSBytes: rss1 - rss0, UsedBytes: used1 - used0,
		RSSRatio: float64(rss1-rss0) / float64(raw), UsedRatio: float64(used1-used0) / float64(raw),
	}, nil
}

// settleMemory waits for background work (kvserver's write-behind, a GC
// cycle, the idle release of memory to the system) and reads t's resident
// memory and used_memory.
func settleMemory(t *target, c *benchConn, wait time.Duration) (rss, used int64, err error) {
	time.Sleep(wait)
	if rss, err = processRSS(t.cmd.Process.Pid); err != nil {
		return 0, 0, err
	}
	used, err = usedMemory(c)
	return rss, used, err
}

// processRSS reads a process's resident set (VmRSS) in bytes.
func processRSS(pid int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("read process status: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("parse VmRSS %q: %w", rest, err)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}

// usedMemory reads used_memory from INFO memory.
func usedMemory(c *benchConn) (int64, error) {
	info, err := c.DoBulk("INFO", "memory")
	if err != nil {
		return 0, err
	}
	v, ok := infoField(info, "used_memory")
	if !ok {
		return 0, fmt.Errorf("no used_memory in INFO memory")
	}
	return strconv.ParseInt(v, 10, 64)
}

func writeMemoryTable(out io.Writer, results []memoryResult) error {
	fmt.Fprintf(out, "%9s  %6s  %6s  %9s  %10s  %10s  %9s  %10s\n",
		"server", "value", "values", "raw MiB", "RSS +MiB", "RSS/raw", "used +MiB", "used/raw")
	for _, r := range results {
		fmt.Fprintf(out, "%9s  %6s  %6d  %9.0f  %10.0f  %9.3fx  %9.0f  %9.3fx\n",
			r.Server, sizeLabel(r.ValueSize), r.Values, float64(r.RawBytes)/(1<<20),
			float64(r.RSSBytes)/(1<<20), r.RSSRatio, float64(r.UsedBytes)/(1<<20), r.UsedRatio)
	}
	return nil
}
