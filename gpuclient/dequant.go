package gpuclient

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/kvserver/kvserver/codec"
	"github.com/kvserver/kvserver/kvmeta"
)

// DequantScatterer is implemented by devices that can decode a chunk stored
// quantized by package codec (int8 mode) straight into the paged cache, with
// no decoded copy of the chunk in between. The result is bit for bit what
// codec.Decode followed by Device.Scatter gives.
//
// c describes the decoded chunk (its dtype, float16 or bfloat16, is the
// cache's); blob is the codec blob, header included. Like Scatter,
// DequantScatter checks everything (the blob's header, size and every scale)
// before writing, so an error (wrapping ErrLayout for a blob of another
// chunk or mode, codec.ErrCorrupt for a damaged one) leaves the cache as it
// was: a corrupt chunk is never scattered as garbage.
type DequantScatterer interface {
	DequantScatter(ctx context.Context, c Chunk, layers [][]byte, slots []int64, blob []byte) error
}

// Int8Blob is a checked int8 blob of package codec and the geometry of its
// payload, as the fused dequantise-scatter (CPUDevice.DequantScatter, the
// kv_dequant_scatter_int8 kernel of package cuda) reads it:
//
//	key planes (HasKeys; one per layer), each ceil(T/KeyBlock) blocks of
//	    D float32 scales, then the int8 codes of the block's rows
//	value planes (one per layer; MLA latents are values), each T rows of
//	    ceil(D/ValueGroup) float32 scales, then the row's D int8 codes
//
// with D elements per row, T tokens and nothing padded.
type Int8Blob struct {
	// Payload is the blob after its header, aliasing the caller's blob.
	Payload []byte
	// PayloadOffset is where Payload starts in the blob.
	PayloadOffset int
	// KeyBlock is the number of tokens sharing a key scale.
	KeyBlock int
	// ValueGroup is the number of channels sharing a value scale.
	ValueGroup int
	// HasKeys is false for MLA chunks, whose single tensor is coded as values.
	HasKeys bool
	// BF16 is true when the decoded dtype is bfloat16, false for float16.
	BF16 bool

	layers, tokens, d int
}

// KeyPlaneBytes is the size of one key plane (0 without keys).
func (b Int8Blob) KeyPlaneBytes() int {
	if !b.HasKeys {
		return 0
	}
	nb := (b.tokens + b.KeyBlock - 1) / b.KeyBlock
	return nb*b.d*4 + b.tokens*b.d
}

// ValueRowBytes is the size of one token's row in a value plane: its
// scales, then its codes.
func (b Int8Blob) ValueRowBytes() int {
	return 4*((b.d+b.ValueGroup-1)/b.ValueGroup) + b.d
}

// keyRow returns the scales (one per channel) and codes of token's key row
// in layer.
func (b Int8Blob) keyRow(layer, token int) (scales, codes []byte) {
	blk := layer*b.KeyPlaneBytes() + token/b.KeyBlock*(4*b.d+b.KeyBlock*b.d)
	scales = b.Payload[blk:][:4*b.d]
	codes = b.Payload[blk+4*b.d+token%b.KeyBlock*b.d:][:b.d]
	return scales, codes
}

// valueRow returns the scales (one per ValueGroup channels) and codes of
// token's value row in layer.
func (b Int8Blob) valueRow(layer, token int) (scales, codes []byte) {
	row := b.ValueRowBytes()
	o := b.layers*b.KeyPlaneBytes() + (layer*b.tokens+token)*row
	ns := row - b.d
	return b.Payload[o:][:ns], b.Payload[o+ns:][:b.d]
}

// ParseInt8Blob checks that blob is an int8 blob of package codec holding
// chunk c (same format, dtype, layers, tokens and row size), that its size
// matches its header and that every scale is one an encoder writes (finite,
// not negative), and returns its geometry. Errors wrap ErrLayout for a blob
// of another chunk or mode, codec.ErrCorrupt for a damaged blob.
func ParseInt8Blob(c Chunk, blob []byte) (Int8Blob, error) {
	if err := c.Validate(); err != nil {
		return Int8Blob{}, err
	}
	if c.Paged.DType != FP16 && c.Paged.DType != BF16 {
		return Int8Blob{}, fmt.Errorf("%w: int8 blobs decode to float16 or bfloat16, not %s", ErrLayout, c.Paged.DType)
	}
	h, err := codec.Inspect(blob)
	if err != nil {
		return Int8Blob{}, fmt.Errorf("gpuclient: quantized chunk: %w", err)
	}
	if h.Mode != codec.Int8 {
		return Int8Blob{}, fmt.Errorf("%w: blob is %s, the fused scatter decodes int8", ErrLayout, h.Mode)
	}
	m := h.Meta
	wantDT := c.Paged.DType.KVMeta()
	sameDT := m.DType == wantDT || (m.DType == kvmeta.DTypeHalf && wantDT == kvmeta.DTypeFloat16)
	if m.Format != c.Format || !sameDT || m.Layers() != c.Layers || m.Tokens() != c.Tokens || m.Hidden() != c.Paged.RowElems() {
		return Int8Blob{}, fmt.Errorf("%w: blob holds %v, chunk is %v", ErrLayout, m, c.Metadata())
	}
	b := Int8Blob{
		KeyBlock: h.KeyBlock, ValueGroup: h.ValueGroup,
		HasKeys: c.Format != kvmeta.FormatKVMLA, BF16: c.Paged.DType == BF16,
		layers: c.Layers, tokens: c.Tokens, d: c.Paged.RowElems(),
	}
	payload := c.Layers * (b.KeyPlaneBytes() + c.Tokens*b.ValueRowBytes())
	if payload > len(blob) {
		// codec.Inspect checked the size against the header; this is a
		// disagreement between this geometry and codec's.
		return Int8Blob{}, fmt.Errorf("%w: payload of %d bytes in a blob of %d", codec.ErrCorrupt, payload, len(blob))
	}
	b.PayloadOffset = len(blob) - payload
	b.Payload = blob[b.PayloadOffset:]
	if err := b.checkScales(); err != nil {
		return Int8Blob{}, err
	}
	return b, nil
}

// checkScales refuses scales an encoder cannot write (negative, infinite,
// NaN), as codec.Decode does, so that the fused scatter needs no checks.
func (b Int8Blob) checkScales() error {
	check := func(p []byte) error {
		for i := 0; i+4 <= len(p); i += 4 {
			s := math.Float32frombits(binary.LittleEndian.Uint32(p[i:]))
			if !(s >= 0 && s <= math.MaxFloat32) {
				return fmt.Errorf("%w: scale %v", codec.ErrCorrupt, s)
			}
		}
		return nil
	}
	for l := range b.layers {
		if b.HasKeys {
			for t := 0; t < b.tokens; t += b.KeyBlock {
				s, _ := b.keyRow(l, t)
				if err := check(s); err != nil {
					return err
				}
			}
		}
		for t := range b.tokens {
			s, _ := b.valueRow(l, t)
			if err := check(s); err != nil {
				return err
			}
		}
	}
	return nil
}

var _ DequantScatterer = CPUDevice{}

// DequantScatter implements DequantScatterer: the reference for the fused
// kv_dequant_scatter_int8 kernel, row by row in the same order and with the
// same arithmetic (float32(code)*scale, rounded to the cache's dtype nearest
// even), without a decoded copy of the chunk.
func (CPUDevice) DequantScatter(ctx context.Context, c Chunk, layers [][]byte, slots []int64, blob []byte) error {
	if err := checkPaged(c, layers, slots); err != nil {
		return err
	}
	b, err := ParseInt8Blob(c, blob)
	if err != nil {
		return err
	}
	p := c.Paged
	row := int64(p.RowBytes())
	for l, layer := range layers {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		for t, slot := range slots {
			if slot < 0 {
				continue
			}
			kv := 0
			if b.HasKeys {
				s, codes := b.keyRow(l, t)
				dequantRow(layer[p.SlotOffset(0, slot):][:row], codes, s, 0, b.BF16)
				kv = 1
			}
			s, codes := b.valueRow(l, t)
			dequantRow(layer[p.SlotOffset(kv, slot):][:row], codes, s, b.ValueGroup, b.BF16)
		}
	}
	return ctx.Err()
}

// dequantRow decodes one row into dst (2 bytes per element): group 0 means
// a scale per element (keys), else one per group elements (values).
func dequantRow(dst, codes, scales []byte, group int, bf16 bool) {
	for e, code := range codes {
		si := e
		if group > 0 {
			si = e / group
		}
		s := math.Float32frombits(binary.LittleEndian.Uint32(scales[4*si:]))
		x := float32(int8(code)) * s
		var h uint16
		if bf16 {
			h = codec.Float32ToBF16(x)
		} else {
			h = codec.Float32ToFP16(x)
		}
		binary.LittleEndian.PutUint16(dst[2*e:], h)
	}
}
