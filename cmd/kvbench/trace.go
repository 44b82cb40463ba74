package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kvserver/kvserver/config"
	"github.com/kvserver/kvserver/grouping"
)

// traceRequest is one line of a Mooncake trace: the prefix-block hashes of
// a request (512 tokens per block).
type traceRequest struct {
	Timestamp int64   `json:"timestamp"`
	HashIDs   []int64 `json:"hash_ids"`
}

// traceResult is what one server achieved on one trace.
type traceResult struct {
	Trace            string  `json:"trace"`
	Server           string  `json:"server"`
	Requests         int     `json:"requests"`
	BlockRefs        int     `json:"block_refs"`
	Hits             int     `json:"hits"`
	HitRate          float64 `json:"hit_rate"`
	IdealHitRate     float64 `json:"ideal_hit_rate"`
	OfIdeal          float64 `json:"of_ideal"`
	MissAfterExists  int     `json:"get_miss_after_exists_hit"`
	Seconds          float64 `json:"seconds"`
	BlockBytes       int64   `json:"block_bytes"`
	MaxMemory        string  `json:"maxmemory"`
	RatioToRedisHits float64 `json:"ratio_to_redis,omitempty"`
}

func loadTrace(path string, limit int) ([]traceRequest, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open trace: %w", err)
	}
	defer f.Close()
	var out []traceRequest
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var r traceRequest
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", path, len(out)+1, err)
		}
		out = append(out, r)
		if limit > 0 && len(out) == limit {
			break
		}
	}
	return out, sc.Err()
}

// idealHitRate is the infinite-cache block hit rate: a block reference hits
// if its hash appeared earlier in the trace.
func idealHitRate(reqs []traceRequest) float64 {
	seen := map[int64]bool{}
	refs, hits := 0, 0
	for _, r := range reqs {
		for _, h := range r.HashIDs {
			refs++
			if seen[h] {
				hits++
			}
			seen[h] = true
		}
	}
	return float64(hits) / float64(refs)
}

// replayTrace plays the trace the way an LMCache engine uses the store: per
// request, walk the blocks with EXISTS <key>metadata until the first miss,
// fetching each hit (GET metadata, GET kv_bytes); then store every block
// from the first miss on (SET kv_bytes, SET metadata). A block is a hit if
// it was served. A GET that misses after its EXISTS hit is counted: that
// is the failure LMCache turns into a recompute.
func replayTrace(ctx context.Context, addr string, reqs []traceRequest, blockBytes int64) (traceResult, error) {
	c, err := dialBench(ctx, addr)
	if err != nil {
		return traceResult{}, err
	}
	defer c.Close()
	value := make([]byte, blockBytes)
	for i := range value {
		value[i] = byte(i*131 + 7)
	}
	meta := lmcacheMetadata(blockBytes)
	res := traceResult{Requests: len(reqs), BlockBytes: blockBytes}
	start := time.Now()
	for _, r := range reqs {
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		firstMiss := len(r.HashIDs)
		for j, h := range r.HashIDs {
			res.BlockRefs++
			k := fmt.Sprintf("mooncake@1@0@%016x@bfloat16", h)
			line, err := c.Do("EXISTS", k+grouping.MetadataSuffix)
			if err != nil {
				return res, err
			}
			if line != ":1" {
				firstMiss = j
				break
			}
			n1, err := c.Get(k + grouping.MetadataSuffix)
			if err != nil {
				return res, err
			}
			n2, err := c.Get(k + grouping.DataSuffix)
			if err != nil {
				return res, err
			}
			if n1 < 0 || n2 < 0 {
				res.MissAfterExists++
				firstMiss = j
				break
			}
			res.Hits++
		}
		if firstMiss < len(r.HashIDs) {
			// The walk stopped at the first miss; the blocks after it are
			// references (misses) too.
			res.BlockRefs += len(r.HashIDs) - firstMiss - 1
		}
		for _, h := range r.HashIDs[firstMiss:] {
			k := fmt.Sprintf("mooncake@1@0@%016x@bfloat16", h)
			if err := c.Set(k+grouping.DataSuffix, value); err != nil {
				return res, err
			}
			if err := c.Set(k+grouping.MetadataSuffix, meta); err != nil {
				return res, err
			}
		}
	}
	res.Seconds = time.Since(start).Seconds()
	res.HitRate = float64(res.Hits) / float64(res.BlockRefs)
	return res, nil
}

// runTrace replays the Mooncake traces against redis-server and kvserver
// with the same maxmemory and reports block hit rates beside the ideal.
func runTrace(ctx context.Context, args []string, out io.Writer) error {
	fs := newFlagSet("trace", "[--traces synthetic,conversation] [--maxmemory 64mb] [--json]", `
Replays the Mooncake traces (<data>/<name>_trace.jsonl) against redis-server
and kvserver, one after the other with the same maxmemory, the way an LMCache
engine uses the store: per request an EXISTS walk over the prefix blocks until
the first miss, GET metadata and kv_bytes of each hit, then SET of every block
from the first miss on. Reports block hit rates beside the ideal
(infinite-cache) hit rate and GET misses that followed an EXISTS hit.`)
	dataDir := fs.String("data", "../shared/data/mooncake", "directory of the Mooncake trace files")
	traces := fs.String("traces", "synthetic,conversation", "comma-separated trace names (<name>_trace.jsonl)")
	maxMemory := fs.String("maxmemory", "64mb", "maxmemory of both servers")
	block := fs.String("block", "16kb", "bytes stored per 512-token block")
	limit := fs.Int("requests", 0, "replay only the first N requests of each trace (0 = all)")
	redisBin := fs.String("redis-server", "redis-server", "redis-server binary")
	kvBin := fs.String("kvserver", "", "kvserver binary (default: build ./cmd/kvserver)")
	asJSON := fs.Bool("json", false, "print JSON lines instead of a table")
	if err := fs.Parse(args); err != nil {
		return err
	}
	blockBytes, err := config.ParseSize(*block)
	if err != nil {
		return fmt.Errorf("--block: %w", err)
	}
	if _, err := exec.LookPath(*redisBin); err != nil {
		return fmt.Errorf("redis-server not found (apt-get install redis-server): %w", err)
	}
	tmp, bin, err := workDir(ctx, "kvbench-trace-", *kvBin)
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	*kvBin = bin
	var results []traceResult
	for _, name := range strings.Split(*traces, ",") {
		reqs, err := loadTrace(filepath.Join(*dataDir, strings.TrimSpace(name)+"_trace.jsonl"), *limit)
		if err != nil {
			return err
		}
		ideal := idealHitRate(reqs)
		var redisHits float64
		for _, srv := range []string{"redis", "kvserver"} {
			dir := filepath.Join(tmp, name+"-"+srv)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			var t *target
			if srv == "redis" {
				t, err = startRedis(ctx, *redisBin, dir, *maxMemory)
			} else {
				t, err = startKVServer(ctx, *kvBin, dir, *maxMemory)
			}
			if err != nil {
				return err
			}
			res, err := replayTrace(ctx, t.Addr, reqs, blockBytes)
			t.Stop()
			if err != nil {
				return fmt.Errorf("%s on %s: %w", name, srv, err)
			}
			res.Trace, res.Server, res.MaxMemory = name, srv, *maxMemory
			res.IdealHitRate = ideal
			res.OfIdeal = res.HitRate / ideal
			if srv == "redis" {
				redisHits = res.HitRate
			} else if redisHits > 0 {
				res.RatioToRedisHits = res.HitRate / redisHits
			}
			results = append(results, res)
		}
	}
	if *asJSON {
		return writeJSONLines(out, results)
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "trace\tserver\trequests\tblock refs\thit rate\tideal\tof ideal\tvs redis\tGET miss after EXISTS hit\tseconds\t")
	for _, r := range results {
		vs := ""
		if r.RatioToRedisHits > 0 {
			vs = strconv.FormatFloat(r.RatioToRedisHits, 'f', 2, 64) + "x"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%.2f%%\t%.2f%%\t%.1f%%\t%s\t%d\t%.1f\t\n", r.Trace, r.Server, r.Requests,
			r.BlockRefs, 100*r.HitRate, 100*r.IdealHitRate, 100*r.OfIdeal, vs, r.MissAfterExists, r.Seconds)
	}
	return tw.Flush()
}
