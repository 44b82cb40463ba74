package gpuclient

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/kvserver/kvserver/kvmeta"
)

// DType is the element type of an engine's KV cache.
type DType uint8

// The KV-cache element types engines use. The zero value is invalid, so a
// layout nobody filled in fails Validate instead of copying garbage.
const (
	FP16    DType = iota + 1 // IEEE half
	BF16                     // bfloat16
	FP8E4M3                  // float8_e4m3fn
	FP8E5M2                  // float8_e5m2
)

var dtypeNames = [...]string{"invalid", "fp16", "bf16", "fp8_e4m3", "fp8_e5m2"}

// String returns a short name ("bf16"), or "DType(n)".
func (d DType) String() string {
	if int(d) < len(dtypeNames) {
		return dtypeNames[d]
	}
	return "DType(" + strconv.Itoa(int(d)) + ")"
}

// Size is the size of one element in bytes; 0 for an invalid type.
func (d DType) Size() int {
	switch d {
	case FP16, BF16:
		return 2
	case FP8E4M3, FP8E5M2:
		return 1
	}
	return 0
}

// KVMeta is the code LMCache writes for d in a chunk's metadata.
func (d DType) KVMeta() kvmeta.DType {
	switch d {
	case FP16:
		return kvmeta.DTypeFloat16
	case BF16:
		return kvmeta.DTypeBFloat16
	case FP8E4M3:
		return kvmeta.DTypeFloat8E4M3FN
	case FP8E5M2:
		return kvmeta.DTypeFloat8E5M2
	}
	return kvmeta.DTypeNone
}

// PagedKind says how an engine lays out one layer of its paged KV cache.
type PagedKind uint8

// The paged layouts. In each, a token at slot s lives in block s/BlockSize
// at position s%BlockSize.
const (
	// FlashAttn is vLLM's flash-attention layout, per layer
	// [2, num_blocks, block_size, heads, head_size]: all keys, then all values.
	FlashAttn PagedKind = iota + 1
	// FlashInfer swaps the first two axes, per layer
	// [num_blocks, 2, block_size, heads, head_size]: keys and values per block.
	FlashInfer
	// MLA is the multi-head latent attention layout, per layer
	// [num_blocks, block_size, head_dim]: one latent row per token, no K/V split.
	MLA
)

var pagedNames = [...]string{"invalid", "flash-attn", "flashinfer", "mla"}

// String returns the layout's name, or "PagedKind(n)".
func (k PagedKind) String() string {
	if int(k) < len(pagedNames) {
		return pagedNames[k]
	}
	return "PagedKind(" + strconv.Itoa(int(k)) + ")"
}

// PagedLayout describes one layer of an engine's paged KV cache. All layers
// of a model share it.
type PagedLayout struct {
	Kind      PagedKind
	NumBlocks int
	BlockSize int // tokens per block
	Heads     int // KV heads; must be 1 for MLA
	HeadSize  int // elements per head; the latent size (head_dim) for MLA
	DType     DType
}

// ErrLayout is wrapped by every error about a layout, a chunk shape or a
// buffer that does not fit them.
var ErrLayout = errors.New("gpuclient: bad layout")

// maxLayerBytes bounds one layer's buffer so that every offset fits an int
// and an int64 on the device; 1 TiB is far beyond any GPU.
const maxLayerBytes = 1 << 40

// Validate reports whether the layout is complete and consistent.
func (p PagedLayout) Validate() error {
	switch {
	case p.Kind < FlashAttn || p.Kind > MLA:
		return fmt.Errorf("%w: unknown paged kind %d", ErrLayout, p.Kind)
	case p.DType.Size() == 0:
		return fmt.Errorf("%w: unknown dtype %d", ErrLayout, p.DType)
	case p.NumBlocks <= 0 || p.BlockSize <= 0 || p.Heads <= 0 || p.HeadSize <= 0:
		return fmt.Errorf("%w: %v: dimensions must be positive", ErrLayout, p)
	case p.Kind == MLA && p.Heads != 1:
		return fmt.Errorf("%w: MLA layout has one latent head, not %d", ErrLayout, p.Heads)
	}
	// Multiply step by step so that a huge dimension cannot overflow
	// before the bound is checked.
	n := int64(p.KVPlanes())
	for _, d := range []int{p.NumBlocks, p.BlockSize, p.Heads, p.HeadSize, p.DType.Size()} {
		if n *= int64(d); n > maxLayerBytes {
			return fmt.Errorf("%w: %v: layer larger than %d bytes", ErrLayout, p, int64(maxLayerBytes))
		}
	}
	return nil
}

// String describes the layout, for errors and logs.
func (p PagedLayout) String() string {
	return fmt.Sprintf("%s[blocks=%d block_size=%d heads=%d head_size=%d %s]",
		p.Kind, p.NumBlocks, p.BlockSize, p.Heads, p.HeadSize, p.DType)
}

// KVPlanes is 2 for layouts with separate keys and values, 1 for MLA.
func (p PagedLayout) KVPlanes() int {
	if p.Kind == MLA {
		return 1
	}
	return 2
}

// RowElems is the number of elements of one token's keys (or values) in one
// layer: heads x head_size.
func (p PagedLayout) RowElems() int { return p.Heads * p.HeadSize }

// RowBytes is the size of one token's keys (or values) in one layer.
func (p PagedLayout) RowBytes() int { return p.RowElems() * p.DType.Size() }

// Slots is the number of token slots in a layer: num_blocks x block_size.
func (p PagedLayout) Slots() int { return p.NumBlocks * p.BlockSize }

// LayerBytes is the size of one layer's buffer.
func (p PagedLayout) LayerBytes() int { return p.KVPlanes() * p.Slots() * p.RowBytes() }

// KVStride is the byte distance from a token's key row to its value row (0
// for MLA).
func (p PagedLayout) KVStride() int {
	switch p.Kind {
	case FlashAttn:
		return p.Slots() * p.RowBytes()
	case FlashInfer:
		return p.BlockSize * p.RowBytes()
	}
	return 0
}

// BlockStride is the byte distance between consecutive blocks.
func (p PagedLayout) BlockStride() int {
	if p.Kind == FlashInfer {
		return 2 * p.BlockSize * p.RowBytes()
	}
	return p.BlockSize * p.RowBytes()
}

// Offset is the byte offset, within a layer's buffer, of the row of plane kv
// (0 keys, 1 values; always 0 for MLA) of the token at position pos of
// block. It does not check its arguments.
func (p PagedLayout) Offset(kv, block, pos int) int {
	return kv*p.KVStride() + block*p.BlockStride() + pos*p.RowBytes()
}

// SlotOffset is Offset for slot = block*BlockSize + pos; slot must be in
// [0, Slots()).
func (p PagedLayout) SlotOffset(kv int, slot int64) int {
	s := int(slot)
	return p.Offset(kv, s/p.BlockSize, s%p.BlockSize)
}

// Chunk describes a contiguous chunk buffer in one of LMCache's memory
// formats, holding Tokens tokens of Layers layers of a model whose paged
// cache is Paged. D below is Paged.RowElems().
//
//	KV_2LTD     [2, L, T, D]  all layers: keys of every layer, then values
//	KV_T2D      [T, 2, D]     one layer (layer-wise mode), K and V per token
//	KV_2TD      [2, T, D]     one layer, keys then values
//	KV_MLA_FMT  [1, L, T, D]  all layers of an MLA model
type Chunk struct {
	Format kvmeta.Format
	Layers int
	Tokens int
	Paged  PagedLayout
}

// Validate reports whether the format fits the paged layout and the counts
// are positive. The one-layer formats need Layers == 1.
func (c Chunk) Validate() error {
	if err := c.Paged.Validate(); err != nil {
		return err
	}
	if c.Layers <= 0 || c.Tokens <= 0 {
		return fmt.Errorf("%w: chunk of %d layers and %d tokens", ErrLayout, c.Layers, c.Tokens)
	}
	mla := c.Paged.Kind == MLA
	switch c.Format {
	case kvmeta.FormatKV2LTD:
	case kvmeta.FormatKVT2D, kvmeta.FormatKV2TD:
		if c.Layers != 1 {
			return fmt.Errorf("%w: %s holds one layer, not %d", ErrLayout, c.Format, c.Layers)
		}
	case kvmeta.FormatKVMLA:
		if !mla {
			return fmt.Errorf("%w: %s needs an MLA paged layout, not %s", ErrLayout, c.Format, c.Paged.Kind)
		}
		return c.checkSize()
	default:
		return fmt.Errorf("%w: %s is not a KV chunk format", ErrLayout, c.Format)
	}
	if mla {
		return fmt.Errorf("%w: an MLA cache is stored as %s, not %s", ErrLayout, kvmeta.FormatKVMLA, c.Format)
	}
	return c.checkSize()
}

// checkSize keeps Size within what kvmeta's int32 length field carries.
func (c Chunk) checkSize() error {
	n := int64(c.Paged.KVPlanes())
	for _, d := range []int{c.Layers, c.Tokens, c.Paged.RowBytes()} {
		if n *= int64(d); n > 1<<31-1 {
			return fmt.Errorf("%w: chunk larger than 2 GiB", ErrLayout)
		}
	}
	return nil
}

// Size is the chunk's size in bytes.
func (c Chunk) Size() int { return c.Paged.KVPlanes() * c.Layers * c.Tokens * c.Paged.RowBytes() }

// Strides are the byte strides of a copy between a paged cache and a chunk,
// the parameters of the kv_*_strided kernels in package cuda. A row is one
// token's keys or values in one layer.
type Strides struct {
	Planes      int   // 2 (K and V) or 1 (MLA)
	BlockSize   int64 // tokens per block
	Row         int64 // bytes per row
	PagedKV     int64 // paged: key row to value row
	PagedBlock  int64 // paged: block to block
	ChunkKV     int64 // chunk: key plane to value plane
	ChunkLayer  int64 // chunk: layer to layer
	ChunkToken  int64 // chunk: token to token
	ChunkLayers int   // layers in the chunk (the kernels' gridDim.y)
}

// Strides returns the strides of copies between c and its paged layout. The
// row of (kv, layer, token) starts at kv*ChunkKV + layer*ChunkLayer +
// token*ChunkToken in the chunk, and that of (kv, slot) at kv*PagedKV +
// (slot/BlockSize)*PagedBlock + (slot%BlockSize)*Row in the layer's buffer.
func (c Chunk) Strides() Strides {
	p := c.Paged
	row := int64(p.RowBytes())
	s := Strides{
		Planes:      p.KVPlanes(),
		BlockSize:   int64(p.BlockSize),
		Row:         row,
		PagedKV:     int64(p.KVStride()),
		PagedBlock:  int64(p.BlockStride()),
		ChunkLayers: c.Layers,
	}
	t, l := int64(c.Tokens), int64(c.Layers)
	switch c.Format {
	case kvmeta.FormatKV2LTD:
		s.ChunkKV, s.ChunkLayer, s.ChunkToken = l*t*row, t*row, row
	case kvmeta.FormatKVT2D:
		s.ChunkKV, s.ChunkLayer, s.ChunkToken = row, 0, 2*row
	case kvmeta.FormatKV2TD:
		s.ChunkKV, s.ChunkLayer, s.ChunkToken = t*row, 0, row
	case kvmeta.FormatKVMLA:
		s.ChunkKV, s.ChunkLayer, s.ChunkToken = 0, t*row, row
	}
	return s
}

// Offset is the byte offset in the chunk of the row of plane kv of token in
// layer. It does not check its arguments.
func (c Chunk) Offset(kv, layer, token int) int {
	s := c.Strides()
	return int(int64(kv)*s.ChunkKV + int64(layer)*s.ChunkLayer + int64(token)*s.ChunkToken)
}

// Metadata is the metadata LMCache stores next to the chunk (`<key>metadata`),
// with the shape padded the way current LMCache pads it.
func (c Chunk) Metadata() kvmeta.Metadata {
	l, t, d := int32(c.Layers), int32(c.Tokens), int32(c.Paged.RowElems())
	m := kvmeta.Metadata{Length: int64(c.Size()), Format: c.Format, DType: c.Paged.DType.KVMeta()}
	switch c.Format {
	case kvmeta.FormatKV2LTD:
		m.Shape = [4]int32{2, l, t, d}
	case kvmeta.FormatKVT2D:
		m.Shape = [4]int32{t, 2, d, 0}
	case kvmeta.FormatKV2TD:
		m.Shape = [4]int32{2, t, d, 0}
	case kvmeta.FormatKVMLA:
		m.Shape = [4]int32{1, l, t, d}
	}
	return m
}
