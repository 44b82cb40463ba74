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
	fs := newFlagSet("layerwise", "[--addr HOST:PORT] [--layers 32] [--chunks 4] [--rounds 7] [--json]", `
Stores a chunk set layer by layer (one key pair per chunk and layer, KV_T2D)
through a real server with gpuclient's CPU device, then loads it back twice
per round: sequentially (fetch layer l, scatter it, compute it, then layer
l+1) and pipelined (gpuclient.LayerRetriever fetches and scatters layer l+1
while layer l computes). Compute is simulated as a sleep (a GPU's compute
takes no host CPU) equal to the measured per-layer load time (fetch +
validation + scatter, the time WaitLayer took): in the sequential run each
layer computes as long as its own load took, and the pipelined run that
follows uses that run's mean. Ideal pipelining takes about half the
sequential time. Every retrieval is checked byte for byte against the source cache;
verified is true only if all were exact. Medians over --rounds.

Without --addr a kvserver is built and started for the run.`)
	addr := fs.String("addr", "", "server host:port (default: start a kvserver)")
	layers := fs.Int("layers", 32, "model layers")
	chunks := fs.Int("chunks", 4, "256-token chunks in the prefix")
	heads := fs.Int("heads", 8, "KV heads")
	headSize := fs.Int("head-size", 128, "head size (bf16 elements)")
	buffers := fs.Int("buffers", 0, "layer staging buffers of the pipelined retriever (default gpuclient.DefaultLayerBuffers)")
	rounds := fs.Int("rounds", 7, "rounds of sequential + pipelined retrieval; medians are reported")
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
	b.buffers = *buffers
	res, err := b.run(ctx, *rounds)
	if cerr := b.cleanup(ctx); err == nil {
		err = cerr
	}
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
	buffers  int // gpuclient.LayerOptions.Buffers
	prefix   gpuclient.KeyPrefix
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
	b.prefix = gpuclient.KeyPrefix{Model: "kvbench/layerwise", WorldSize: 1, DType: paged.DType}
	cfg := gpuclient.Config{Prefix: b.prefix, Paged: paged, Layers: layers}
	var err error
	if b.src, err = gpuclient.NewConnector(b.client, cfg, b.srcKV); err != nil {
		return nil, err
	}
	if b.dst, err = gpuclient.NewConnector(b.client, cfg, b.dstKV); err != nil {
		return nil, err
	}
	return b, nil
}

// cleanup deletes the keys the run stored, so that runs against a
// long-lived server (--addr) do not pile up.
func (b *layerBench) cleanup(ctx context.Context) error {
	prefix := b.prefix
	args := []string{"DEL"}
	for _, h := range gpuclient.ChunkHashes(b.tokens, gpuclient.DefaultChunkTokens) {
		for l := range b.layers {
			k := prefix.LayerKey(h, l)
			args = append(args, k+gpuclient.DataSuffix, k+gpuclient.MetadataSuffix)
		}
	}
	c, err := dialBench(ctx, b.client.Addr())
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.Do(args...); err != nil {
		return fmt.Errorf("layerwise: delete the run's keys: %w", err)
	}
	return nil
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

	// A warm-up load, not timed.
	if _, _, err := b.retrieve(ctx, true, 0, &res); err != nil {
		return res, err
	}
	// Each round: a sequential load in which every layer computes as long
	// as its own load (WaitLayer) took, and a pipelined load with the
	// compute set to the mean load per layer of the latest sequential run.
	// The order alternates, so that a burst of load from elsewhere on the
	// machine does not always hit the same mode.
	var seq, pipe, per []float64
	var compute time.Duration
	sequential := func() error {
		d, load, err := b.retrieve(ctx, true, 0, &res)
		if err != nil {
			return err
		}
		seq = append(seq, d.Seconds())
		compute = load / time.Duration(b.layers)
		per = append(per, float64(compute.Microseconds())/1000)
		return nil
	}
	pipelined := func() error {
		d, _, err := b.retrieve(ctx, false, compute, &res)
		pipe = append(pipe, d.Seconds())
		return err
	}
	for round := range rounds {
		steps := []func() error{sequential, pipelined}
		if round%2 == 1 { // compute from the previous round's sequential run
			steps[0], steps[1] = pipelined, sequential
		}
		for _, step := range steps {
			if err := step(); err != nil {
				return res, err
			}
		}
	}
	res.Sequential, res.Pipelined = median(seq), median(pipe)
	res.FetchMillis = median(per)
	res.ComputeMillis = res.FetchMillis
	res.Ratio = res.Pipelined / res.Sequential
	return res, nil
}

// retrieve loads the prefix into a cleared destination cache layer by
// layer while a simulated GPU computes each layer once it is loaded, and
// checks the bytes. It returns the time to the end of the last layer's
// compute and the sum of the per-layer load times (time in WaitLayer,
// sequential runs).
//
// The GPU is simulated on a timeline: layer l's compute starts when layer
// l is in the paged cache and layer l-1's compute is over, and lasts
// exactly compute (sequential runs with compute 0: as long as layer l's
// load took). The host sleeps until each compute ends so that real time
// passes as on an engine, but a late wake-up of that sleep (milliseconds
// on a busy machine) is not charged to either mode: a GPU does not compute
// slower when its host is busy. Sequential runs fetch layer l+1 only after
// layer l's compute; pipelined ones learn when each layer is ready from a
// goroutine that waits for the layers in order, as an engine's layer
// hooks would.
func (b *layerBench) retrieve(ctx context.Context, sequential bool, compute time.Duration, res *layerwiseResult) (elapsed, load time.Duration, err error) {
	for _, l := range b.dstKV {
		clear(l)
	}
	start := time.Now()
	r, err := b.dst.RetrieveLayers(ctx, b.tokens, b.dstSlots, gpuclient.LayerOptions{Sequential: sequential, Buffers: b.buffers})
	if err != nil {
		return 0, 0, err
	}
	defer r.Close()
	ready := make(chan time.Time, b.layers)
	if !sequential {
		go func() { // ends after the last layer or once r is closed
			defer close(ready)
			for l := range b.layers {
				if r.WaitLayer(ctx, l) != nil {
					return
				}
				ready <- time.Now()
			}
		}()
	}
	gpuFree := time.Now() // the simulated GPU's timeline
	for l := range b.layers {
		var loaded time.Time
		c := compute
		if sequential {
			t0 := time.Now()
			if err := r.WaitLayer(ctx, l); err != nil {
				return 0, 0, err
			}
			loaded = time.Now()
			d := loaded.Sub(t0)
			load += d
			if c == 0 {
				c = d
			}
			// The fetch started late by the previous sleep's overshoot;
			// shift the timeline by that, not by the overshoot.
			if l > 0 {
				loaded = gpuFree.Add(d)
			}
		} else {
			var ok bool
			if loaded, ok = <-ready; !ok {
				_, err := r.Result(ctx)
				return 0, 0, fmt.Errorf("layerwise: layer %d not loaded: %w", l, err)
			}
		}
		gpuFree = later(loaded, gpuFree).Add(c)
		time.Sleep(time.Until(gpuFree))
	}
	rr, err := r.Result(ctx)
	if err != nil {
		return 0, 0, err
	}
	elapsed = gpuFree.Sub(start)
	if rr.Tokens != len(b.tokens) || len(rr.Failed) > 0 {
		res.Verified = false
		return elapsed, load, fmt.Errorf("layerwise: loaded %d of %d tokens, failed %v", rr.Tokens, len(b.tokens), rr.Failed)
	}
	if !b.verify() {
		res.Verified = false
	}
	return elapsed, load, nil
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
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
