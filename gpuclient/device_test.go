package gpuclient_test

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/kvserver/kvserver/gpuclient"
	"github.com/kvserver/kvserver/gpuclient/internal/kvtest"
	"github.com/kvserver/kvserver/kvmeta"
)

// refPagedIndex is the element index of (kv, block, pos, e) in one layer,
// written straight from each layout's shape; e indexes heads x head_size.
func refPagedIndex(p gpuclient.PagedLayout, kv, block, pos, e int) int {
	d := p.Heads * p.HeadSize
	switch p.Kind {
	case gpuclient.FlashAttn: // [2, num_blocks, block_size, heads, head_size]
		return ((kv*p.NumBlocks+block)*p.BlockSize+pos)*d + e
	case gpuclient.FlashInfer: // [num_blocks, 2, block_size, heads, head_size]
		return ((block*2+kv)*p.BlockSize+pos)*d + e
	case gpuclient.MLA: // [num_blocks, block_size, head_dim]
		return (block*p.BlockSize+pos)*d + e
	}
	panic("unknown kind")
}

// refChunkIndex is the element index of (kv, layer, token, e) in a chunk,
// written straight from each format's shape.
func refChunkIndex(c gpuclient.Chunk, kv, layer, token, e int) int {
	d, l, t := c.Paged.Heads*c.Paged.HeadSize, c.Layers, c.Tokens
	switch c.Format {
	case kvmeta.FormatKV2LTD: // [2, L, T, D]
		return ((kv*l+layer)*t+token)*d + e
	case kvmeta.FormatKVT2D: // [T, 2, D]
		return (token*2+kv)*d + e
	case kvmeta.FormatKV2TD: // [2, T, D]
		return (kv*t+token)*d + e
	case kvmeta.FormatKVMLA: // [1, L, T, D]
		return (layer*t+token)*d + e
	}
	panic("unknown format")
}

// refGather is the naive gather: one element at a time.
func refGather(c gpuclient.Chunk, layers [][]byte, slots []int64, dst []byte) {
	p, es := c.Paged, c.Paged.DType.Size()
	for l := range c.Layers {
		for t, s := range slots {
			for kv := range p.KVPlanes() {
				for e := range p.Heads * p.HeadSize {
					ci := refChunkIndex(c, kv, l, t, e) * es
					if s < 0 {
						clear(dst[ci : ci+es])
						continue
					}
					pi := refPagedIndex(p, kv, int(s)/p.BlockSize, int(s)%p.BlockSize, e) * es
					copy(dst[ci:ci+es], layers[l][pi:pi+es])
				}
			}
		}
	}
}

// refScatter is the naive scatter: one element at a time.
func refScatter(c gpuclient.Chunk, layers [][]byte, slots []int64, src []byte) {
	p, es := c.Paged, c.Paged.DType.Size()
	for l := range c.Layers {
		for t, s := range slots {
			if s < 0 {
				continue
			}
			for kv := range p.KVPlanes() {
				for e := range p.Heads * p.HeadSize {
					ci := refChunkIndex(c, kv, l, t, e) * es
					pi := refPagedIndex(p, kv, int(s)/p.BlockSize, int(s)%p.BlockSize, e) * es
					copy(layers[l][pi:pi+es], src[ci:ci+es])
				}
			}
		}
	}
}

func TestCPUDeviceGatherMatchesReference(t *testing.T) {
	ctx := context.Background()
	for i, tc := range kvtest.CopyCases() {
		t.Run(tc.Name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(i), 1))
			layers := kvtest.Layers(r, tc.Chunk)
			slots := kvtest.Slots(r, tc.Chunk.Paged, tc.Chunk.Tokens, tc.NegEvery)
			// Start both buffers with garbage: gather must overwrite every
			// byte, absent tokens included.
			got := kvtest.Bytes(r, tc.Chunk.Size())
			want := bytes.Clone(got)
			before := kvtest.Clone(layers)
			if err := (gpuclient.CPUDevice{}).Gather(ctx, tc.Chunk, layers, slots, got); err != nil {
				t.Fatal(err)
			}
			refGather(tc.Chunk, layers, slots, want)
			if !bytes.Equal(got, want) {
				t.Fatalf("gather differs from reference (slots %v)", slots)
			}
			for l := range layers {
				if !bytes.Equal(layers[l], before[l]) {
					t.Fatalf("gather modified paged layer %d", l)
				}
			}
		})
	}
}

func TestCPUDeviceScatterMatchesReference(t *testing.T) {
	ctx := context.Background()
	for i, tc := range kvtest.CopyCases() {
		t.Run(tc.Name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(i), 2))
			got := kvtest.Layers(r, tc.Chunk)
			want := kvtest.Clone(got)
			slots := kvtest.Slots(r, tc.Chunk.Paged, tc.Chunk.Tokens, tc.NegEvery)
			src := kvtest.Bytes(r, tc.Chunk.Size())
			srcBefore := bytes.Clone(src)
			if err := (gpuclient.CPUDevice{}).Scatter(ctx, tc.Chunk, got, slots, src); err != nil {
				t.Fatal(err)
			}
			refScatter(tc.Chunk, want, slots, src)
			for l := range got {
				if !bytes.Equal(got[l], want[l]) {
					t.Fatalf("scatter into layer %d differs from reference (slots %v)", l, slots)
				}
			}
			if !bytes.Equal(src, srcBefore) {
				t.Fatal("scatter modified the chunk")
			}
		})
	}
}

// TestGatherThenScatterRestoresPagedCache: a chunk gathered from a cache and
// scattered into a copy whose rows at those slots were wiped restores the
// cache byte for byte; every other row, absent tokens' included, is left as
// it was.
func TestGatherThenScatterRestoresPagedCache(t *testing.T) {
	ctx := context.Background()
	var dev gpuclient.Device = gpuclient.CPUDevice{}
	for i, tc := range kvtest.CopyCases() {
		t.Run(tc.Name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(i), 3))
			orig := kvtest.Layers(r, tc.Chunk)
			slots := kvtest.Slots(r, tc.Chunk.Paged, tc.Chunk.Tokens, tc.NegEvery)
			chunk := make([]byte, tc.Chunk.Size())
			if err := dev.Gather(ctx, tc.Chunk, orig, slots, chunk); err != nil {
				t.Fatal(err)
			}
			// Wipe the present tokens' rows in a copy, then scatter back.
			restored := kvtest.Clone(orig)
			for l := range restored {
				for _, s := range slots {
					if s < 0 {
						continue
					}
					for kv := range tc.Chunk.Paged.KVPlanes() {
						off := tc.Chunk.Paged.SlotOffset(kv, s)
						clear(restored[l][off : off+tc.Chunk.Paged.RowBytes()])
					}
				}
			}
			if err := dev.Scatter(ctx, tc.Chunk, restored, slots, chunk); err != nil {
				t.Fatal(err)
			}
			for l := range orig {
				if !bytes.Equal(restored[l], orig[l]) {
					t.Fatalf("layer %d not restored", l)
				}
			}
		})
	}
}

func TestGatherZeroesAbsentTokens(t *testing.T) {
	p := gpuclient.PagedLayout{Kind: gpuclient.FlashAttn, NumBlocks: 2, BlockSize: 2, Heads: 1, HeadSize: 8, DType: gpuclient.BF16}
	c := gpuclient.Chunk{Format: kvmeta.FormatKV2LTD, Layers: 1, Tokens: 2, Paged: p}
	layer := bytes.Repeat([]byte{0xAB}, p.LayerBytes())
	dst := bytes.Repeat([]byte{0xFF}, c.Size())
	if err := (gpuclient.CPUDevice{}).Gather(context.Background(), c, [][]byte{layer}, []int64{-1, 3}, dst); err != nil {
		t.Fatal(err)
	}
	row := p.RowBytes()
	for kv := range 2 {
		absent := dst[c.Offset(kv, 0, 0):][:row]
		present := dst[c.Offset(kv, 0, 1):][:row]
		if !bytes.Equal(absent, make([]byte, row)) {
			t.Errorf("plane %d: absent token's row is %x, want zeros", kv, absent)
		}
		if !bytes.Equal(present, bytes.Repeat([]byte{0xAB}, row)) {
			t.Errorf("plane %d: present token's row is %x", kv, present)
		}
	}
}

func TestCopyRejectsBadArgumentsWithoutWriting(t *testing.T) {
	p := gpuclient.PagedLayout{Kind: gpuclient.FlashAttn, NumBlocks: 4, BlockSize: 4, Heads: 2, HeadSize: 8, DType: gpuclient.FP16}
	good := gpuclient.Chunk{Format: kvmeta.FormatKV2LTD, Layers: 2, Tokens: 3, Paged: p}
	layers := func(n int) [][]byte {
		ls := make([][]byte, n)
		for i := range ls {
			ls[i] = make([]byte, p.LayerBytes())
		}
		return ls
	}
	mla := gpuclient.PagedLayout{Kind: gpuclient.MLA, NumBlocks: 4, BlockSize: 4, Heads: 1, HeadSize: 8, DType: gpuclient.FP16}
	tests := []struct {
		name   string
		c      gpuclient.Chunk
		layers [][]byte
		slots  []int64
		chunk  int
	}{
		{"slot beyond cache", good, layers(2), []int64{0, 16, 1}, good.Size()},
		{"too few slots", good, layers(2), []int64{0, 1}, good.Size()},
		{"too few layers", good, layers(1), []int64{0, 1, 2}, good.Size()},
		{"short layer buffer", good, [][]byte{make([]byte, p.LayerBytes()), make([]byte, 10)}, []int64{0, 1, 2}, good.Size()},
		{"short chunk buffer", good, layers(2), []int64{0, 1, 2}, good.Size() - 1},
		{"T2D with two layers", gpuclient.Chunk{Format: kvmeta.FormatKVT2D, Layers: 2, Tokens: 3, Paged: p}, layers(2), []int64{0, 1, 2}, good.Size()},
		{"MLA format on flash-attn", gpuclient.Chunk{Format: kvmeta.FormatKVMLA, Layers: 2, Tokens: 3, Paged: p}, layers(2), []int64{0, 1, 2}, good.Size() / 2},
		{"2LTD on MLA cache", gpuclient.Chunk{Format: kvmeta.FormatKV2LTD, Layers: 1, Tokens: 3, Paged: mla}, [][]byte{make([]byte, mla.LayerBytes())}, []int64{0, 1, 2}, 2 * 3 * mla.RowBytes()},
		{"binary format", gpuclient.Chunk{Format: kvmeta.FormatBinary, Layers: 2, Tokens: 3, Paged: p}, layers(2), []int64{0, 1, 2}, good.Size()},
		{"zero tokens", gpuclient.Chunk{Format: kvmeta.FormatKV2LTD, Layers: 2, Tokens: 0, Paged: p}, layers(2), nil, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			chunk := make([]byte, tc.chunk)
			if err := (gpuclient.CPUDevice{}).Gather(context.Background(), tc.c, tc.layers, tc.slots, chunk); !errors.Is(err, gpuclient.ErrLayout) {
				t.Errorf("Gather: got %v, want ErrLayout", err)
			}
			for i := range chunk {
				chunk[i] = 1
			}
			if err := (gpuclient.CPUDevice{}).Scatter(context.Background(), tc.c, tc.layers, tc.slots, chunk); !errors.Is(err, gpuclient.ErrLayout) {
				t.Errorf("Scatter: got %v, want ErrLayout", err)
			}
			for l, b := range tc.layers {
				if bytes.ContainsFunc(b, func(r rune) bool { return r != 0 }) {
					t.Errorf("layer %d written despite the error", l)
				}
			}
		})
	}
}

func TestCopyStopsOnCancelledContext(t *testing.T) {
	p := gpuclient.PagedLayout{Kind: gpuclient.FlashAttn, NumBlocks: 2, BlockSize: 2, Heads: 1, HeadSize: 8, DType: gpuclient.FP16}
	c := gpuclient.Chunk{Format: kvmeta.FormatKV2LTD, Layers: 2, Tokens: 1, Paged: p}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ls := [][]byte{make([]byte, p.LayerBytes()), make([]byte, p.LayerBytes())}
	if err := (gpuclient.CPUDevice{}).Gather(ctx, c, ls, []int64{0}, make([]byte, c.Size())); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
}

// TestLayerChunksCarryTheWholeChunksRows: the layer-wise format (KV_T2D per
// layer, KV_MLA_FMT with one layer for MLA) holds exactly the rows of the
// whole-chunk format, so a prefix stored one way and loaded the other
// fills the paged cache identically. Every layout and dtype, random slots
// with absent tokens, full and partial chunks.
func TestLayerChunksCarryTheWholeChunksRows(t *testing.T) {
	ctx := context.Background()
	var dev gpuclient.Device = gpuclient.CPUDevice{}
	for i, tc := range kvtest.CopyCases() {
		if tc.Chunk.Layers == 1 {
			continue // the whole-chunk cases only
		}
		t.Run(tc.Name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(i), 4))
			whole := tc.Chunk
			layerFmt := kvmeta.FormatKVT2D
			if whole.Paged.Kind == gpuclient.MLA {
				layerFmt = kvmeta.FormatKVMLA
			}
			one := gpuclient.Chunk{Format: layerFmt, Layers: 1, Tokens: whole.Tokens, Paged: whole.Paged}
			src := kvtest.Layers(r, whole)
			slots := kvtest.Slots(r, whole.Paged, whole.Tokens, tc.NegEvery)
			wbuf := make([]byte, whole.Size())
			if err := dev.Gather(ctx, whole, src, slots, wbuf); err != nil {
				t.Fatal(err)
			}
			viaLayers := kvtest.Clone(src)
			viaWhole := kvtest.Clone(src)
			for _, l := range append(viaLayers, viaWhole...) {
				clear(l)
			}
			row := whole.Paged.RowBytes()
			for l := range whole.Layers {
				lbuf := make([]byte, one.Size())
				if err := dev.Gather(ctx, one, src[l:l+1], slots, lbuf); err != nil {
					t.Fatal(err)
				}
				for kv := range whole.Paged.KVPlanes() {
					for tok := range whole.Tokens {
						if !bytes.Equal(lbuf[one.Offset(kv, 0, tok):][:row], wbuf[whole.Offset(kv, l, tok):][:row]) {
							t.Fatalf("layer %d plane %d token %d differs between formats", l, kv, tok)
						}
					}
				}
				if err := dev.Scatter(ctx, one, viaLayers[l:l+1], slots, lbuf); err != nil {
					t.Fatal(err)
				}
			}
			if err := dev.Scatter(ctx, whole, viaWhole, slots, wbuf); err != nil {
				t.Fatal(err)
			}
			for l := range viaWhole {
				if !bytes.Equal(viaLayers[l], viaWhole[l]) {
					t.Fatalf("layer %d: layer-wise scatter differs from whole-chunk scatter", l)
				}
			}
		})
	}
}
