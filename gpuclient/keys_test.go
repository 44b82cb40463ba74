package gpuclient

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"testing"

	"github.com/kvserver/kvserver/kvmeta"
)

func seq(n int, from uint32) []uint32 {
	t := make([]uint32, n)
	for i := range t {
		t[i] = from + uint32(i)
	}
	return t
}

func TestChunkHashesChainOverEarlierChunks(t *testing.T) {
	tokens := seq(3*DefaultChunkTokens+10, 1000)
	hs := ChunkHashes(tokens, 0)
	if len(hs) != 4 {
		t.Fatalf("%d hashes for 3 full chunks and a partial one, want 4", len(hs))
	}
	// Same prefix, different tail: the shared chunks keep their hashes.
	other := append(seq(2*DefaultChunkTokens, 1000), seq(DefaultChunkTokens, 5)...)
	ho := ChunkHashes(other, DefaultChunkTokens)
	if ho[0] != hs[0] || ho[1] != hs[1] || ho[2] == hs[2] {
		t.Fatal("a shared prefix must share hashes exactly up to the first differing chunk")
	}
	// A change in chunk 0 changes every later hash, although chunk 1 itself is equal.
	changed := bytes.Clone(binaryTokens(tokens))
	changed[0] ^= 1
	hc := ChunkHashes(tokensOf(changed), DefaultChunkTokens)
	for i := range hc {
		if hc[i] == hs[i] {
			t.Fatalf("chunk %d kept its hash after chunk 0 changed", i)
		}
	}
}

func binaryTokens(ts []uint32) []byte {
	b := make([]byte, 0, 4*len(ts))
	for _, t := range ts {
		b = binary.LittleEndian.AppendUint32(b, t)
	}
	return b
}

func tokensOf(b []byte) []uint32 {
	ts := make([]uint32, len(b)/4)
	for i := range ts {
		ts[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return ts
}

// TestChunkHashDefinition pins the hash to its documented definition, so a
// change that would orphan every stored chunk fails here.
func TestChunkHashDefinition(t *testing.T) {
	tokens := []uint32{1, 2, 3, 4, 5}
	hs := ChunkHashes(tokens, 3)
	h0 := sha256.Sum256(binaryTokens(tokens[:3]))
	h1 := sha256.Sum256(append(h0[:], binaryTokens(tokens[3:])...))
	if hs[0] != Hash(h0) || hs[1] != Hash(h1) || len(hs) != 2 {
		t.Fatalf("got %v, want [%x %x]", hs, h0, h1)
	}
	if ChunkHashes(nil, 3) == nil || len(ChunkHashes(nil, 3)) != 0 {
		t.Fatal("no tokens must give an empty, non-nil list")
	}
}

func TestKeysHaveLMCacheShape(t *testing.T) {
	p := KeyPrefix{Model: "meta-llama/Llama-3.1-8B", WorldSize: 2, WorkerID: 1, DType: BF16}
	tokens := seq(300, 7)
	keys := p.ChunkKeys(tokens, 0)
	h := ChunkHashes(tokens, 0)
	want := "meta-llama/Llama-3.1-8B@2@1@" + hex.EncodeToString(h[0][:]) + "@bfloat16"
	if len(keys) != 2 || keys[0] != want {
		t.Fatalf("keys %q, want first %q", keys, want)
	}
	if got := p.LayerKey(h[1], 31); got != keys[1]+"@31" {
		t.Fatalf("LayerKey = %q", got)
	}
	if keys[0]+DataSuffix != want+"kv_bytes" || keys[0]+MetadataSuffix != want+"metadata" {
		t.Fatal("suffixes must be appended with no separator")
	}
	for d, name := range map[DType]string{FP16: "half", FP8E4M3: "fp8_e4m3", FP8E5M2: "fp8_e5m2"} {
		if d.KeyName() != name {
			t.Errorf("%v.KeyName() = %q, want %q", d, d.KeyName(), name)
		}
	}
}

// TestChunkMetadataEncodesLMCacheBytes: the 28-byte value stored at
// <key>metadata for a 256-token Llama-3.1-8B chunk.
func TestChunkMetadataEncodesLMCacheBytes(t *testing.T) {
	llama := PagedLayout{Kind: FlashAttn, NumBlocks: 1024, BlockSize: 16, Heads: 8, HeadSize: 128, DType: BF16}
	c := Chunk{Format: kvmeta.FormatKV2LTD, Layers: 32, Tokens: DefaultChunkTokens, Paged: llama}
	want := make([]byte, 0, kvmeta.Size)
	for _, v := range []uint32{33554432, 1, 3, 2, 32, 256, 1024} {
		want = binary.LittleEndian.AppendUint32(want, v)
	}
	if got := c.Metadata().Encode(); !bytes.Equal(got, want) {
		t.Fatalf("metadata %x, want %x", got, want)
	}
	parsed, err := kvmeta.Parse(want)
	if err != nil || len(parsed.Groups) != 1 || parsed.Groups[0] != c.Metadata() {
		t.Fatalf("kvmeta.Parse = %+v, %v", parsed, err)
	}
}
