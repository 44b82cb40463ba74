// Package kvtest generates the inputs the gpuclient devices are tested on:
// chunk shapes covering every paged layout, dtype and chunk format, random
// paged caches, slot mappings with absent tokens, and finite 16-bit float
// chunks that package codec can quantize. It is shared by the CPU tests of
// gpuclient and the GPU tests of gpuclient/cudadev, so that both check the
// same cases; it is for tests only.
package kvtest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/kvserver/kvserver/codec"
	"github.com/kvserver/kvserver/gpuclient"
	"github.com/kvserver/kvserver/kvmeta"
)

// Case is one chunk shape to test, with how often a token is absent.
type Case struct {
	Name  string
	Chunk gpuclient.Chunk
	// NegEvery: about one token in NegEvery gets a negative slot; 0 none.
	NegEvery int
}

// Formats lists the chunk formats that fit paged layout kind k, and the
// layers a chunk of each holds when the model has layers layers.
func Formats(k gpuclient.PagedKind, layers int) map[kvmeta.Format]int {
	if k == gpuclient.MLA {
		return map[kvmeta.Format]int{kvmeta.FormatKVMLA: layers}
	}
	return map[kvmeta.Format]int{kvmeta.FormatKV2LTD: layers, kvmeta.FormatKVT2D: 1, kvmeta.FormatKV2TD: 1}
}

// shape is heads x head size; for MLA heads is forced to 1.
type shape struct{ heads, size int }

// CopyCases covers every paged kind, dtype and chunk format, full and
// partial chunks, with and without absent tokens, and rows that take the
// kernels' 16-byte, 2-byte and 1-byte paths.
func CopyCases() []Case {
	return cases([]gpuclient.DType{gpuclient.FP16, gpuclient.BF16, gpuclient.FP8E4M3, gpuclient.FP8E5M2},
		[]shape{{2, 8}, {1, 3}, {3, 5}, {2, 64}}, 7, 4, []int{-1, 16, 5, 1})
}

// QuantCases are the shapes for the int8 dequantise-scatter: float16 and
// bfloat16 only, more tokens than one key block (64) with a partial last
// block, rows narrower than a value group (64), spanning a partial second
// group, and rows that are not a multiple of 8 elements (the kernel's
// scalar path).
func QuantCases() []Case {
	return cases([]gpuclient.DType{gpuclient.FP16, gpuclient.BF16},
		[]shape{{1, 8}, {3, 4}, {1, 72}, {2, 64}, {1, 13}}, 40, 4, []int{150, 64, 1})
}

// cases builds the cross product; tokens -1 means every slot of the cache.
func cases(dtypes []gpuclient.DType, shapes []shape, blocks, blockSize int, tokens []int) []Case {
	var out []Case
	for _, kind := range []gpuclient.PagedKind{gpuclient.FlashAttn, gpuclient.FlashInfer, gpuclient.MLA} {
		for _, dt := range dtypes {
			for _, hs := range shapes {
				heads := hs.heads
				if kind == gpuclient.MLA {
					heads = 1
				}
				p := gpuclient.PagedLayout{Kind: kind, NumBlocks: blocks, BlockSize: blockSize, Heads: heads, HeadSize: hs.size, DType: dt}
				for _, f := range []kvmeta.Format{kvmeta.FormatKV2LTD, kvmeta.FormatKVT2D, kvmeta.FormatKV2TD, kvmeta.FormatKVMLA} {
					layers, ok := Formats(kind, 3)[f]
					if !ok {
						continue
					}
					for _, t := range tokens {
						if t < 0 {
							t = p.Slots()
						}
						for _, neg := range []int{0, 3} {
							c := gpuclient.Chunk{Format: f, Layers: layers, Tokens: t, Paged: p}
							out = append(out, Case{Name: fmt.Sprintf("%v/%s/T=%d/neg=%d", p, f, t, neg), Chunk: c, NegEvery: neg})
						}
					}
				}
			}
		}
	}
	return out
}

// Bytes returns n random bytes.
func Bytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := 0; i+8 <= n; i += 8 {
		binary.LittleEndian.PutUint64(b[i:], r.Uint64())
	}
	for i := n &^ 7; i < n; i++ {
		b[i] = byte(r.Uint32())
	}
	return b
}

// Layers returns c.Layers random paged buffers.
func Layers(r *rand.Rand, c gpuclient.Chunk) [][]byte {
	ls := make([][]byte, c.Layers)
	for i := range ls {
		ls[i] = Bytes(r, c.Paged.LayerBytes())
	}
	return ls
}

// Clone deep-copies paged buffers.
func Clone(ls [][]byte) [][]byte {
	out := make([][]byte, len(ls))
	for i, l := range ls {
		out[i] = bytes.Clone(l)
	}
	return out
}

// Slots picks distinct slots in random order (a scatter with repeated slots
// is not defined) and marks about one token in negEvery as absent with a
// negative slot; negEvery 0 means none.
func Slots(r *rand.Rand, p gpuclient.PagedLayout, tokens, negEvery int) []int64 {
	perm := r.Perm(p.Slots())
	s := make([]int64, tokens)
	for i := range s {
		s[i] = int64(perm[i])
		if negEvery > 0 && r.IntN(negEvery) == 0 {
			s[i] = -1 - int64(r.IntN(3)) // any negative value means absent
		}
	}
	return s
}

// HalfChunk returns a chunk of c's shape filled with finite 16-bit floats of
// c's dtype that exercise the quantizer: normal values, a few large outlier
// channels, zero rows (scale 0), and for bfloat16 rows so small that the
// codec quantizes them with an absolute step.
func HalfChunk(r *rand.Rand, c gpuclient.Chunk) []byte {
	d := c.Paged.RowElems()
	n := c.Size() / 2
	out := make([]byte, 2*n)
	bf16 := c.Paged.DType == gpuclient.BF16
	var mag float64
	for i := range n {
		if i%d == 0 { // a new row: pick its magnitude
			switch r.IntN(10) {
			case 0:
				mag = 0
			case 1:
				mag = 1e-3
				if bf16 {
					mag = 1e-38
				}
			case 2:
				mag = 100
			default:
				mag = 1
			}
		}
		x := r.NormFloat64() * mag
		if i%d%17 == 3 { // outlier channel
			x *= 30
		}
		x = math.Max(-6e4, math.Min(6e4, x)) // finite in float16
		var h uint16
		if bf16 {
			h = codec.Float32ToBF16(float32(x))
		} else {
			h = codec.Float32ToFP16(float32(x))
		}
		binary.LittleEndian.PutUint16(out[2*i:], h)
	}
	return out
}

// Int8Blob returns HalfChunk data for c and its int8 codec blob.
func Int8Blob(r *rand.Rand, c gpuclient.Chunk) (data, blob []byte, err error) {
	data = HalfChunk(r, c)
	blob, err = codec.Encode(codec.Int8, c.Metadata(), data)
	return data, blob, err
}
