package main

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/kvserver/kvserver/config"
	"github.com/kvserver/kvserver/grouping"
)

// lmcacheOptions are the flags of `kvbench lmcache`.
type lmcacheOptions struct {
	chunk  int64
	chunks int
	conns  int
	rounds int
	walks  int
	pairOptions
	asJSON bool
}

// lmcacheRow is the median of one phase of the LMCache pattern on both
// servers. Ratio is kvserver's speed relative to redis for every phase
// (> 1 means kvserver is faster): KV/Redis for GB/s, Redis/KV for ms.
type lmcacheRow struct {
	Phase string  `json:"phase"`
	Unit  string  `json:"unit"`
	Redis float64 `json:"redis"`
	KV    float64 `json:"kvserver"`
	Ratio float64 `json:"ratio"`
}

// lmcacheResult is the outcome of `kvbench lmcache`.
type lmcacheResult struct {
	ChunkBytes int64        `json:"chunk_bytes"`
	Chunks     int          `json:"chunks"`
	Conns      int          `json:"conns"`
	Rounds     int          `json:"rounds"`
	Walks      int          `json:"walks_per_round"`
	Phases     []lmcacheRow `json:"phases"`
}

const lmcacheAbout = `
Replays LMCache's Redis connector pattern against redis-server and kvserver
side by side (same maxmemory, large enough that nothing is evicted):
  store     per chunk SET <key>kv_bytes <chunk>, then SET <key>metadata <28 bytes>,
            chunks spread over --conns connections (GB/s of chunk bytes)
  lookup    one connection walks EXISTS <key>metadata over the chunks in
            prefix order until the first 0 (ms per walk; one key past the
            last chunk is missing, so a walk is chunks+1 round trips)
  retrieve  per chunk GET <key>metadata, then GET <key>kv_bytes (GB/s)
Keys look like model@1@0@<prefix hash hex>@bfloat16kv_bytes. Each round
empties both servers first and alternates which one goes first; medians are
reported with kvserver's speed relative to redis (> 1: kvserver is faster).`

func parseLMCacheFlags(args []string) (lmcacheOptions, error) {
	fs := newFlagSet("lmcache", "[--chunk 16mb] [--chunks 32] [--conns 8] [--rounds 5] [--json]", lmcacheAbout)
	var o lmcacheOptions
	chunk := fs.String("chunk", "16mb", "bytes of one KV chunk (the kv_bytes value)")
	fs.IntVar(&o.chunks, "chunks", 32, "chunks in the prefix")
	fs.IntVar(&o.conns, "conns", 8, "connections storing and retrieving chunks in parallel")
	fs.IntVar(&o.rounds, "rounds", 5, "alternating rounds; medians are reported")
	fs.IntVar(&o.walks, "walks", 50, "lookup walks per round")
	o.pairOptions.define(fs)
	fs.BoolVar(&o.asJSON, "json", false, "print JSON instead of a table")
	if err := parseNoArgs(fs, args); err != nil {
		return o, err
	}
	var err error
	if o.chunk, err = parseSize("chunk", *chunk); err != nil {
		return o, err
	}
	if err = o.parseMaxMemory(); err != nil {
		return o, err
	}
	switch {
	case o.chunks < 1, o.conns < 1, o.rounds < 1, o.walks < 1:
		return o, fmt.Errorf("--chunks, --conns, --rounds and --walks must be at least 1")
	case o.chunk*int64(o.chunks) > o.maxMemBytes/2:
		return o, fmt.Errorf("%d chunks of %s need more than half of --maxmemory %s; raise it so nothing is evicted",
			o.chunks, config.FormatSize(o.chunk), o.maxMemory)
	}
	return o, nil
}

// runLMCache measures the LMCache pattern on both servers.
func runLMCache(ctx context.Context, args []string, out io.Writer) error {
	o, err := parseLMCacheFlags(args)
	if err != nil {
		return err
	}
	res, err := onPair(ctx, &o.pairOptions, func(pair *serverPair) (lmcacheResult, error) {
		return lmcacheRounds(ctx, o, pair)
	})
	if err != nil {
		return err
	}
	if o.asJSON {
		return json.NewEncoder(out).Encode(res)
	}
	return printLMCache(out, res)
}

// lmcacheKeys returns the chunk key prefixes of one request: LMCache names
// a chunk by the hash of its whole token prefix, so each hash chains the
// previous one.
func lmcacheKeys(n int) []string {
	keys := make([]string, n)
	h := sha256.Sum256([]byte("kvbench lmcache prefix"))
	for i := range keys {
		var idx [8]byte
		binary.LittleEndian.PutUint64(idx[:], uint64(i))
		h = sha256.Sum256(append(h[:], idx[:]...))
		keys[i] = "model@1@0@" + hex.EncodeToString(h[:]) + "@bfloat16"
	}
	return keys
}

// lmcacheMetadata is the 28-byte metadata value LMCache stores beside each
// chunk: seven little-endian int32 fields describing its layout.
func lmcacheMetadata(chunkBytes int64) []byte {
	meta := make([]byte, 28)
	for i, v := range []int32{int32(chunkBytes), 1, 3, 2, 1, 512, int32(chunkBytes / (2 * 512 * 2))} {
		binary.LittleEndian.PutUint32(meta[i*4:], uint32(v))
	}
	return meta
}

// lmcacheSample is one round of the pattern on one server.
type lmcacheSample struct {
	storeGBps, lookupMs, retrieveGBps float64
}

// lmcacheRounds runs the alternating rounds against the pair.
func lmcacheRounds(ctx context.Context, o lmcacheOptions, pair *serverPair) (lmcacheResult, error) {
	chunk := make([]byte, o.chunk)
	rng := rand.New(rand.NewPCG(uint64(o.chunk), uint64(o.chunks)))
	for i := range chunk {
		chunk[i] = byte(rng.Uint32())
	}
	// One key past the last chunk is never stored: the walk ends there.
	keys := lmcacheKeys(o.chunks + 1)
	meta := lmcacheMetadata(o.chunk)
	samples := map[string][]lmcacheSample{}
	for round := 0; round < o.rounds; round++ {
		for _, t := range pair.order(round) {
			if err := pair.flush(ctx); err != nil {
				return lmcacheResult{}, err
			}
			s, err := lmcacheRound(ctx, t.Addr, keys, chunk, meta, o.conns, o.walks)
			if err != nil {
				return lmcacheResult{}, fmt.Errorf("lmcache on %s: %w", t.Name, err)
			}
			samples[t.Name] = append(samples[t.Name], s)
		}
	}
	if err := pair.flush(ctx); err != nil {
		return lmcacheResult{}, err
	}
	pick := func(name string, f func(lmcacheSample) float64) float64 {
		var xs []float64
		for _, s := range samples[name] {
			xs = append(xs, f(s))
		}
		return median(xs)
	}
	row := func(phase, unit string, f func(lmcacheSample) float64, lowerIsBetter bool) lmcacheRow {
		r := lmcacheRow{Phase: phase, Unit: unit, Redis: pick("redis", f), KV: pick("kvserver", f)}
		if lowerIsBetter {
			r.Ratio = ratio(r.Redis, r.KV)
		} else {
			r.Ratio = ratio(r.KV, r.Redis)
		}
		return r
	}
	return lmcacheResult{ChunkBytes: o.chunk, Chunks: o.chunks, Conns: o.conns, Rounds: o.rounds, Walks: o.walks,
		Phases: []lmcacheRow{
			row("store", "GB/s", func(s lmcacheSample) float64 { return s.storeGBps }, false),
			row("lookup", "ms/walk", func(s lmcacheSample) float64 { return s.lookupMs }, true),
			row("retrieve", "GB/s", func(s lmcacheSample) float64 { return s.retrieveGBps }, false),
		}}, nil
}

// lmcacheRound stores, looks up and retrieves the chunks once. keys has
// one more entry than there are chunks; that last key is never stored.
func lmcacheRound(ctx context.Context, addr string, keys []string, chunk, meta []byte, conns, walks int) (lmcacheSample, error) {
	chunks := len(keys) - 1
	var s lmcacheSample
	total := float64(int64(chunks) * int64(len(chunk)))

	elapsed, err := eachChunk(ctx, addr, chunks, conns, func(c *benchConn, i int) error {
		if err := c.Set(keys[i]+grouping.DataSuffix, chunk); err != nil {
			return err
		}
		return c.Set(keys[i]+grouping.MetadataSuffix, meta)
	})
	if err != nil {
		return s, fmt.Errorf("store: %w", err)
	}
	s.storeGBps = total / elapsed.Seconds() / 1e9

	c, err := dialBench(ctx, addr)
	if err != nil {
		return s, err
	}
	start := time.Now()
	for w := 0; w < walks; w++ {
		hits := 0
		for _, k := range keys {
			line, err := c.Do("EXISTS", k+grouping.MetadataSuffix)
			if err != nil {
				c.Close()
				return s, fmt.Errorf("lookup: %w", err)
			}
			if line != ":1" {
				break
			}
			hits++
		}
		if hits != chunks {
			c.Close()
			return s, fmt.Errorf("lookup walk found %d of %d chunks (evicted? raise --maxmemory)", hits, chunks)
		}
	}
	s.lookupMs = float64(time.Since(start).Microseconds()) / 1e3 / float64(walks)
	c.Close()

	elapsed, err = eachChunk(ctx, addr, chunks, conns, func(c *benchConn, i int) error {
		n, err := c.Get(keys[i] + grouping.MetadataSuffix)
		if err != nil {
			return err
		}
		if n != len(meta) {
			return fmt.Errorf("GET %smetadata returned %d bytes, want %d", keys[i], n, len(meta))
		}
		if n, err = c.Get(keys[i] + grouping.DataSuffix); err != nil {
			return err
		}
		if n != len(chunk) {
			return fmt.Errorf("GET %s%s returned %d bytes, want %d", keys[i], grouping.DataSuffix, n, len(chunk))
		}
		return nil
	})
	if err != nil {
		return s, fmt.Errorf("retrieve: %w", err)
	}
	s.retrieveGBps = total / elapsed.Seconds() / 1e9
	return s, nil
}

// eachChunk runs do for chunks 0..chunks-1 over conns connections
// (connection c takes chunks c, c+conns, ...) and returns the wall time.
func eachChunk(ctx context.Context, addr string, chunks, conns int, do func(c *benchConn, i int) error) (time.Duration, error) {
	conns = min(conns, chunks)
	clients := make([]*benchConn, conns)
	for i := range clients {
		c, err := dialBench(ctx, addr)
		if err != nil {
			return 0, err
		}
		defer c.Close()
		clients[i] = c
	}
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	start := time.Now()
	for ci, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := ci; i < chunks; i += conns {
				if err := ctx.Err(); err != nil {
					errs <- err
					return
				}
				if err := do(c, i); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(errs)
	return elapsed, <-errs
}

func printLMCache(out io.Writer, r lmcacheResult) error {
	fmt.Fprintf(out, "LMCache pattern: %d chunks of %s, %d conns, %d rounds (medians)\n",
		r.Chunks, config.FormatSize(r.ChunkBytes), r.Conns, r.Rounds)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "phase\tunit\tredis\tkvserver\tkvserver speed vs redis\t")
	for _, p := range r.Phases {
		fmt.Fprintf(tw, "%s\t%s\t%.2f\t%.2f\t%.2fx\t\n", p.Phase, p.Unit, p.Redis, p.KV, p.Ratio)
	}
	return tw.Flush()
}
