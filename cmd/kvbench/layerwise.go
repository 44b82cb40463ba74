package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"time"

	"github.com/kvserver/kvserver/gpuclient"
)

// layerwiseResult is one run of kvbench layerwise: a chunk set stored layer
// by layer, then retrieved sequentially (fetch, scatter, compute, one layer
// after the other) and pipelined (gpuclient.LayerRetriever), with the
// simulated per-layer compute equal to the measured per-layer load time.
type layerwiseResult struct {
	Layers        int     `json:"layers"`
	Chunks        int     `json:"chunks"`
	Tokens        int     `json:"tokens"`
	Bytes         int64   `json:"bytes"`
	LayerBytes    int64   `json:"layer_bytes"`
	Rounds        int     `json:"rounds"`
	StoreSeconds  float64 `json:"store_s"`
	FetchMillis   float64 `json:"fetch_ms_per_layer"`
	ComputeMillis float64 `json:"compute_ms_per_layer"`
	Sequential    float64 `json:"sequential_s"`
	Pipelined     float64 `json:"pipelined_s"`
	Ratio         float64 `json:"ratio"`
	Verified      bool    `json:"verified"`
}

// runLayerwise stores and retrieves a layer-wise chunk set through a real
// server with the CPU device.
func runLayerwise(ctx context.Context, args []string, out io.Writer) error {
	fs := newFlagSet("layerwise", "[--addr HOST:PORT] [--layers 32] [--chunks 4] [--rounds 3] [--json]", `
Stores a chunk set layer by layer (one key pair per chunk and layer, KV_T2D)
through a real server with gpuclient's CPU device, then loads it back twice
per round: sequentially (fetch layer l, scatter it, compute it, then layer
l+1) and pipelined (gpuclient.LayerRetriever fetches and scatters layer l+1
while layer l computes). Compute is simulated as a sleep (a GPU's compute
takes no host CPU) equal to the measured per-layer load time (fetch +
validation + scatter), so ideal pipelining takes about half the sequential
time. Every retrieval is checked byte for byte against the source cache;
verified is true only if all were exact. Medians over --rounds.

Without --addr a kvserver is built and started for the run.`)
	addr := fs.String("addr", "", "server host:port (default: start a kvserver)")
	layers := fs.Int("layers", 32, "model layers")
	chunks := fs.Int("chunks", 4, "256-token chunks in the prefix")
	heads := fs.Int("heads", 8, "KV heads")
	headSize := fs.Int("head-size", 128, "head size (bf16 elements)")
	rounds := fs.Int("rounds", 3, "rounds of sequential + pipelined retrieval; medians are reported")
	kvBin := fs.String("kvserver", "", "kvserver binary when no --addr (default: build ./cmd/kvserver)")
	asJSON := fs.Bool("json", false, "print one JSON line")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *layers < 1 || *chunks < 1 || *heads < 1 || *headSize < 1 || *rounds < 1 {
		return fmt.Errorf("layerwise: --layers, --chunks, --heads, --head-size and --rounds must be positive")
	}
	if *addr == "" {
		tmp, bin, err := workDir(ctx, "kvbench-layerwise-", *kvBin)
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		kv, err := startKVServer(ctx, bin, tmp+"/kv", "4gb")
		if err != nil {
			return err
		}
		defer kv.Stop()
		*addr = kv.Addr
	}
	b, err := newLayerBench(*addr, *layers, *chunks, *heads, *headSize)
	if err != nil {
		return err
	}
	defer b.client.Close()
	res, err := b.run(ctx, *rounds)
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(out).Encode(res)
	}
	_, err = fmt.Fprintf(out, "layerwise: %d layers x %d chunks (%.1f MiB per layer, %.0f MiB in all), %d rounds (medians)\n"+
		"  store:       %8.3f s\n  per layer:   %8.2f ms load, %.2f ms compute\n"+
		"  sequential:  %8.3f s\n  pipelined:   %8.3f s  (%.2fx sequential)\n  verified:    %v\n",
		res.Layers, res.Chunks, float64(res.LayerBytes)/(1<<20), float64(res.Bytes)/(1<<20), res.Rounds,
		res.StoreSeconds, res.FetchMillis, res.ComputeMillis, res.Sequential, res.Pipelined, res.Ratio, res.Verified)
	return err
}

// layerBench holds a source cache with the prefix's KV, a destination
// cache it is loaded into, and their slot mappings (different blocks, as
// for a later request).
type layerBench struct {
	client   *gpuclient.Client
	paged    gpuclient.PagedLayout
	src, dst *gpuclient.Connector
	srcKV    [][]byte
	dstKV    [][]byte
	tokens   []uint32
	srcSlots []int64
	dstSlots []int64
	layers   int
	chunks   int
}

func newLayerBench(addr string, layers, chunks, heads, headSize int) (*layerBench, error) {
	const blockSize = 16
	ntok := chunks * gpuclient.DefaultChunkTokens
	blocks := ntok/blockSize + 8
	paged := gpuclient.PagedLayout{Kind: gpuclient.FlashAttn, NumBlocks: blocks, BlockSize: blockSize,
		Heads: heads, HeadSize: headSize, DType: gpuclient.BF16}
	if err := paged.Validate(); err != nil {
		return nil, err
	}
	seed := uint64(time.Now().UnixNano())
	r := rand.New(rand.NewPCG(seed, 1))
	b := &layerBench{paged: paged, layers: layers, chunks: chunks}
	// Random tokens: a run never finds a previous run's chunks.
	b.tokens = make([]uint32, ntok)
	for i := range b.tokens {
		b.tokens[i] = r.Uint32N(128000)
	}
	b.srcSlots = blockSlots(r, blocks, blockSize, ntok)
	b.dstSlots = blockSlots(r, blocks, blockSize, ntok)
	fill := rand.NewChaCha8([32]byte{byte(seed), byte(seed >> 8), byte(seed >> 16), 7})
	b.srcKV, b.dstKV = make([][]byte, layers), make([][]byte, layers)
	for l := range layers {
		b.srcKV[l] = make([]byte, paged.LayerBytes())
		fill.Read(b.srcKV[l])
		b.dstKV[l] = make([]byte, paged.LayerBytes())
	}
	b.client = gpuclient.NewClient(gpuclient.ClientOptions{Addr: addr})
	cfg := gpuclient.Config{Prefix: gpuclient.KeyPrefix{Model: "kvbench/layerwise", WorldSize: 1}, Paged: paged, Layers: layers}
	var err error
	if b.src, err = gpuclient.NewConnector(b.client, cfg, b.srcKV); err != nil {
		return nil, err
	}
	if b.dst, err = gpuclient.NewConnector(b.client, cfg, b.dstKV); err != nil {
		return nil, err
	}
	return b, nil
}

// blockSlots gives ntok tokens the slots of randomly chosen blocks, in
// order within each block, as an engine's block table does.
func blockSlots(r *rand.Rand, blocks, blockSize, ntok int) []int64 {
	perm := r.Perm(blocks)
	s := make([]int64, ntok)
	for t := range s {
		s[t] = int64(perm[t/blockSize]*blockSize + t%blockSize)
	}
	return s
}

func (b *layerBench) run(ctx context.Context, rounds int) (layerwiseResult, error) {
	res := layerwiseResult{Layers: b.layers, Chunks: b.chunks, Tokens: len(b.tokens), Rounds: rounds, Verified: true}
	res.LayerBytes = int64(b.chunks * b.src.LayerShape().Size())
	res.Bytes = res.LayerBytes * int64(b.layers)

	start := time.Now()
	st, err := b.src.StoreLayers(ctx, b.tokens, b.srcSlots, gpuclient.LayerOptions{})
	if err != nil {
		return res, err
	}
	for l := range b.layers {
		if err := st.LayerDone(ctx, l); err != nil {
			st.Close()
			return res, err
		}
	}
	sr, err := st.Wait(ctx)
	if err != nil {
		return res, err
	}
	if sr.Stored != b.chunks {
		return res, fmt.Errorf("layerwise: stored %d of %d chunks", sr.Stored, b.chunks)
	}
	res.StoreSeconds = time.Since(start).Seconds()

	// Calibrate: a sequential load with no compute gives the per-layer
	// load time; take the best of two to skip a cold start.
	var load time.Duration
	for i := range 2 {
		d, err := b.retrieve(ctx, true, 0, &res)
		if err != nil {
			return res, err
		}
		if i == 0 || d < load {
			load = d
		}
	}
	compute := load / time.Duration(b.layers)
	res.FetchMillis = float64(compute.Microseconds()) / 1000
	res.ComputeMillis = res.FetchMillis

	var seq, pipe []float64
	for round := range rounds {
		for _, sequential := range []bool{round%2 == 0, round%2 != 0} {
			d, err := b.retrieve(ctx, sequential, compute, &res)
			if err != nil {
				return res, err
			}
			if sequential {
				seq = append(seq, d.Seconds())
			} else {
				pipe = append(pipe, d.Seconds())
			}
		}
	}
	res.Sequential, res.Pipelined = median(seq), median(pipe)
	res.Ratio = res.Pipelined / res.Sequential
	return res, nil
}

// retrieve loads the prefix into a cleared destination cache layer by
// layer, sleeping compute after each layer as the engine's forward pass
// would take, checks the bytes, and returns the elapsed time.
func (b *layerBench) retrieve(ctx context.Context, sequential bool, compute time.Duration, res *layerwiseResult) (time.Duration, error) {
	for _, l := range b.dstKV {
		clear(l)
	}
	start := time.Now()
	r, err := b.dst.RetrieveLayers(ctx, b.tokens, b.dstSlots, gpuclient.LayerOptions{Sequential: sequential})
	if err != nil {
		return 0, err
	}
	for l := range b.layers {
		if err := r.WaitLayer(ctx, l); err != nil {
			r.Close()
			return 0, err
		}
		if compute > 0 {
			time.Sleep(compute)
		}
	}
	rr, err := r.Result(ctx)
	if err != nil {
		return 0, err
	}
	elapsed := time.Since(start)
	if rr.Tokens != len(b.tokens) || len(rr.Failed) > 0 {
		res.Verified = false
		return elapsed, fmt.Errorf("layerwise: loaded %d of %d tokens, failed %v", rr.Tokens, len(b.tokens), rr.Failed)
	}
	if !b.verify() {
		res.Verified = false
	}
	return elapsed, nil
}

// verify checks that every destination row is the source row of the same
// token and that every slot no token maps to is still zero.
func (b *layerBench) verify() bool {
	p := b.paged
	row := p.RowBytes()
	target := make(map[int64]int64, len(b.dstSlots)) // dst slot -> src slot
	for t, s := range b.dstSlots {
		target[s] = b.srcSlots[t]
	}
	zero := make([]byte, row)
	for l := range b.layers {
		for slot := range int64(p.Slots()) {
			for kv := range p.KVPlanes() {
				got := b.dstKV[l][p.SlotOffset(kv, slot):][:row]
				want := zero
				if src, ok := target[slot]; ok {
					want = b.srcKV[l][p.SlotOffset(kv, src):][:row]
				}
				if !bytes.Equal(got, want) {
					return false
				}
			}
		}
	}
	return true
}
