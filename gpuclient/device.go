package gpuclient

import (
	"context"
	"fmt"
)

// Device copies KV rows between an engine's paged cache and chunk buffers.
//
// layers holds one paged buffer per layer of the chunk (layers[l] is layer l,
// len(layers) == c.Layers, each c.Paged.LayerBytes() long); slots holds the
// slot of each of the chunk's tokens (len(slots) == c.Tokens). A slot is
// block_id*BlockSize + offset and must be below c.Paged.Slots(); a negative
// slot marks a token that is not in the paged cache:
//
//   - Gather writes zeros to that token's chunk rows, so that a chunk's bytes
//     depend only on the cache, never on what the buffer held before.
//   - Scatter skips it: the paged buffers are not touched for that token.
//
// Both check every argument before copying anything, so an error leaves the
// buffers as they were. Scatter with the same slot twice is not defined
// (the GPU gives no order between tokens); CPUDevice keeps the last.
//
// Implementations: CPUDevice (the reference, for tests and CPU offload) and
// the CUDA device of package gpuclient/cudadev, which launches package
// cuda's kernels. Devices that can also decode int8-quantized chunks while
// scattering implement DequantScatterer.
type Device interface {
	// Gather copies the tokens' rows from layers into dst (c.Size() bytes).
	Gather(ctx context.Context, c Chunk, layers [][]byte, slots []int64, dst []byte) error
	// Scatter copies the tokens' rows from src (c.Size() bytes) into layers.
	Scatter(ctx context.Context, c Chunk, layers [][]byte, slots []int64, src []byte) error
}

// CPUDevice is the reference Device on host memory. It follows the same
// addressing as the CUDA kernels (Chunk.Strides) one row at a time. The zero
// value is ready to use.
type CPUDevice struct{}

var _ Device = CPUDevice{}

// Gather implements Device.
func (CPUDevice) Gather(ctx context.Context, c Chunk, layers [][]byte, slots []int64, dst []byte) error {
	if err := checkCopy(c, layers, slots, dst); err != nil {
		return err
	}
	copyRows(ctx, c, layers, slots, dst, true)
	return ctx.Err()
}

// Scatter implements Device.
func (CPUDevice) Scatter(ctx context.Context, c Chunk, layers [][]byte, slots []int64, src []byte) error {
	if err := checkCopy(c, layers, slots, src); err != nil {
		return err
	}
	copyRows(ctx, c, layers, slots, src, false)
	return ctx.Err()
}

// copyRows does the copy layer by layer, stopping between layers when ctx
// is done.
func copyRows(ctx context.Context, c Chunk, layers [][]byte, slots []int64, chunk []byte, gather bool) {
	s := c.Strides()
	for l, layer := range layers {
		if ctx.Err() != nil {
			return
		}
		for t, slot := range slots {
			base := int64(l)*s.ChunkLayer + int64(t)*s.ChunkToken
			for kv := 0; kv < s.Planes; kv++ {
				cr := chunk[base+int64(kv)*s.ChunkKV:][:s.Row]
				if slot < 0 {
					if gather {
						clear(cr)
					}
					continue
				}
				po := int64(kv)*s.PagedKV + slot/s.BlockSize*s.PagedBlock + slot%s.BlockSize*s.Row
				pr := layer[po:][:s.Row]
				if gather {
					copy(cr, pr)
				} else {
					copy(pr, cr)
				}
			}
		}
	}
}

// checkCopy validates the arguments of a Gather or Scatter.
func checkCopy(c Chunk, layers [][]byte, slots []int64, chunk []byte) error {
	if err := checkPaged(c, layers, slots); err != nil {
		return err
	}
	if len(chunk) != c.Size() {
		return fmt.Errorf("%w: chunk buffer is %d bytes, %s of %d layers and %d tokens needs %d",
			ErrLayout, len(chunk), c.Format, c.Layers, c.Tokens, c.Size())
	}
	return nil
}

// checkPaged validates the chunk, the paged buffers and the slots of a copy.
func checkPaged(c Chunk, layers [][]byte, slots []int64) error {
	if err := c.Validate(); err != nil {
		return err
	}
	if len(layers) != c.Layers {
		return fmt.Errorf("%w: %d layer buffers for a chunk of %d layers", ErrLayout, len(layers), c.Layers)
	}
	want := c.Paged.LayerBytes()
	for l, b := range layers {
		if len(b) != want {
			return fmt.Errorf("%w: layer %d buffer is %d bytes, %v needs %d", ErrLayout, l, len(b), c.Paged, want)
		}
	}
	return checkSlots(c, slots)
}

// checkSlots validates the slots of a copy of a valid chunk.
func checkSlots(c Chunk, slots []int64) error {
	if len(slots) != c.Tokens {
		return fmt.Errorf("%w: %d slots for a chunk of %d tokens", ErrLayout, len(slots), c.Tokens)
	}
	n := int64(c.Paged.Slots())
	for t, s := range slots {
		if s >= n {
			return fmt.Errorf("%w: slot %d of token %d is beyond the cache's %d slots", ErrLayout, s, t, n)
		}
	}
	return nil
}
