package gpuclient_test

import (
	"errors"
	"testing"

	"github.com/kvserver/kvserver/gpuclient"
	"github.com/kvserver/kvserver/kvmeta"
)

func TestPagedLayoutOffsetsMatchShapes(t *testing.T) {
	for _, kind := range []gpuclient.PagedKind{gpuclient.FlashAttn, gpuclient.FlashInfer, gpuclient.MLA} {
		for _, dt := range []gpuclient.DType{gpuclient.FP16, gpuclient.BF16, gpuclient.FP8E4M3, gpuclient.FP8E5M2} {
			heads := 3
			if kind == gpuclient.MLA {
				heads = 1
			}
			p := gpuclient.PagedLayout{Kind: kind, NumBlocks: 5, BlockSize: 16, Heads: heads, HeadSize: 4, DType: dt}
			if err := p.Validate(); err != nil {
				t.Fatal(err)
			}
			for kv := range p.KVPlanes() {
				for block := range p.NumBlocks {
					for pos := range p.BlockSize {
						want := refPagedIndex(p, kv, block, pos, 0) * dt.Size()
						if got := p.Offset(kv, block, pos); got != want {
							t.Fatalf("%v: Offset(%d, %d, %d) = %d, want %d", p, kv, block, pos, got, want)
						}
						if got := p.SlotOffset(kv, int64(block*p.BlockSize+pos)); got != want {
							t.Fatalf("%v: SlotOffset = %d, want %d", p, got, want)
						}
					}
				}
			}
			last := refPagedIndex(p, p.KVPlanes()-1, p.NumBlocks-1, p.BlockSize-1, p.RowElems()) * dt.Size()
			if p.LayerBytes() != last {
				t.Errorf("%v: LayerBytes = %d, want %d", p, p.LayerBytes(), last)
			}
		}
	}
}

func TestChunkOffsetsMatchShapes(t *testing.T) {
	fa := gpuclient.PagedLayout{Kind: gpuclient.FlashAttn, NumBlocks: 8, BlockSize: 16, Heads: 2, HeadSize: 8, DType: gpuclient.BF16}
	mla := gpuclient.PagedLayout{Kind: gpuclient.MLA, NumBlocks: 8, BlockSize: 16, Heads: 1, HeadSize: 24, DType: gpuclient.FP8E4M3}
	for _, c := range []gpuclient.Chunk{
		{Format: kvmeta.FormatKV2LTD, Layers: 4, Tokens: 7, Paged: fa},
		{Format: kvmeta.FormatKVT2D, Layers: 1, Tokens: 7, Paged: fa},
		{Format: kvmeta.FormatKV2TD, Layers: 1, Tokens: 7, Paged: fa},
		{Format: kvmeta.FormatKVMLA, Layers: 4, Tokens: 7, Paged: mla},
	} {
		if err := c.Validate(); err != nil {
			t.Fatal(err)
		}
		es := c.Paged.DType.Size()
		for kv := range c.Paged.KVPlanes() {
			for l := range c.Layers {
				for tok := range c.Tokens {
					if got, want := c.Offset(kv, l, tok), refChunkIndex(c, kv, l, tok, 0)*es; got != want {
						t.Fatalf("%s: Offset(%d, %d, %d) = %d, want %d", c.Format, kv, l, tok, got, want)
					}
				}
			}
		}
	}
}

// TestChunkMetadataIsWhatLMCacheWrites pins the example from LMCache: a
// 256-token Llama-3.1-8B chunk, and checks every format's metadata is
// accepted by kvmeta.
func TestChunkMetadataIsWhatLMCacheWrites(t *testing.T) {
	llama := gpuclient.PagedLayout{Kind: gpuclient.FlashAttn, NumBlocks: 1024, BlockSize: 16, Heads: 8, HeadSize: 128, DType: gpuclient.BF16}
	mla := gpuclient.PagedLayout{Kind: gpuclient.MLA, NumBlocks: 64, BlockSize: 64, Heads: 1, HeadSize: 576, DType: gpuclient.BF16}
	tests := []struct {
		name string
		c    gpuclient.Chunk
		want kvmeta.Metadata
	}{
		{"llama 2LTD", gpuclient.Chunk{Format: kvmeta.FormatKV2LTD, Layers: 32, Tokens: 256, Paged: llama},
			kvmeta.Metadata{Length: 33554432, Format: kvmeta.FormatKV2LTD, DType: kvmeta.DTypeBFloat16, Shape: [4]int32{2, 32, 256, 1024}}},
		{"llama layer T2D", gpuclient.Chunk{Format: kvmeta.FormatKVT2D, Layers: 1, Tokens: 256, Paged: llama},
			kvmeta.Metadata{Length: 1 << 20, Format: kvmeta.FormatKVT2D, DType: kvmeta.DTypeBFloat16, Shape: [4]int32{256, 2, 1024, 0}}},
		{"llama layer 2TD partial", gpuclient.Chunk{Format: kvmeta.FormatKV2TD, Layers: 1, Tokens: 100, Paged: llama},
			kvmeta.Metadata{Length: 2 * 100 * 1024 * 2, Format: kvmeta.FormatKV2TD, DType: kvmeta.DTypeBFloat16, Shape: [4]int32{2, 100, 1024, 0}}},
		{"deepseek MLA", gpuclient.Chunk{Format: kvmeta.FormatKVMLA, Layers: 61, Tokens: 256, Paged: mla},
			kvmeta.Metadata{Length: 61 * 256 * 576 * 2, Format: kvmeta.FormatKVMLA, DType: kvmeta.DTypeBFloat16, Shape: [4]int32{1, 61, 256, 576}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.c.Metadata()
			if got != tc.want {
				t.Fatalf("Metadata() = %+v, want %+v", got, tc.want)
			}
			if err := got.Validate(); err != nil {
				t.Fatalf("kvmeta rejects it: %v", err)
			}
			if int(got.Length) != tc.c.Size() {
				t.Fatalf("Length %d != Size %d", got.Length, tc.c.Size())
			}
		})
	}
}

func TestPagedLayoutValidateRejects(t *testing.T) {
	ok := gpuclient.PagedLayout{Kind: gpuclient.FlashAttn, NumBlocks: 4, BlockSize: 16, Heads: 8, HeadSize: 128, DType: gpuclient.FP16}
	tests := []struct {
		name string
		edit func(*gpuclient.PagedLayout)
	}{
		{"zero value kind", func(p *gpuclient.PagedLayout) { p.Kind = 0 }},
		{"zero value dtype", func(p *gpuclient.PagedLayout) { p.DType = 0 }},
		{"no blocks", func(p *gpuclient.PagedLayout) { p.NumBlocks = 0 }},
		{"negative head size", func(p *gpuclient.PagedLayout) { p.HeadSize = -1 }},
		{"MLA with heads", func(p *gpuclient.PagedLayout) { p.Kind = gpuclient.MLA }},
		{"huge layer", func(p *gpuclient.PagedLayout) { p.NumBlocks = 1 << 40 }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := ok
			tc.edit(&p)
			if err := p.Validate(); !errors.Is(err, gpuclient.ErrLayout) {
				t.Fatalf("Validate(%v) = %v, want ErrLayout", p, err)
			}
		})
	}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestDTypes(t *testing.T) {
	for _, tc := range []struct {
		d    gpuclient.DType
		size int
		meta kvmeta.DType
	}{
		{gpuclient.FP16, 2, kvmeta.DTypeFloat16},
		{gpuclient.BF16, 2, kvmeta.DTypeBFloat16},
		{gpuclient.FP8E4M3, 1, kvmeta.DTypeFloat8E4M3FN},
		{gpuclient.FP8E5M2, 1, kvmeta.DTypeFloat8E5M2},
		{0, 0, kvmeta.DTypeNone},
	} {
		if tc.d.Size() != tc.size || tc.d.KVMeta() != tc.meta || tc.meta.ElemSize() != tc.size {
			t.Errorf("%v: Size %d KVMeta %v, want %d %v", tc.d, tc.d.Size(), tc.d.KVMeta(), tc.size, tc.meta)
		}
	}
}
