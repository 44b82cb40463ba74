package gpuclient_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kvserver/kvserver/codec"
	"github.com/kvserver/kvserver/gpuclient"
	"github.com/kvserver/kvserver/gpuclient/internal/kvtest"
	"github.com/kvserver/kvserver/kvmeta"
)

// TestDequantScatterEqualsDecodeThenScatter: the fused int8 dequantise-
// scatter leaves the paged cache bit for bit as codec.Decode followed by
// Scatter does, for every layout, format and 16-bit dtype, partial key
// blocks and value groups, and absent tokens (whose rows stay untouched).
func TestDequantScatterEqualsDecodeThenScatter(t *testing.T) {
	ctx := context.Background()
	dev := gpuclient.CPUDevice{}
	for i, tc := range kvtest.QuantCases() {
		t.Run(tc.Name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(i), 7))
			_, blob, err := kvtest.Int8Blob(r, tc.Chunk)
			if err != nil {
				t.Fatal(err)
			}
			decoded, _, err := codec.Decode(blob)
			if err != nil {
				t.Fatal(err)
			}
			got := kvtest.Layers(r, tc.Chunk)
			want := kvtest.Clone(got)
			slots := kvtest.Slots(r, tc.Chunk.Paged, tc.Chunk.Tokens, tc.NegEvery)
			if err := dev.Scatter(ctx, tc.Chunk, want, slots, decoded); err != nil {
				t.Fatal(err)
			}
			blobBefore := bytes.Clone(blob)
			if err := dev.DequantScatter(ctx, tc.Chunk, got, slots, blob); err != nil {
				t.Fatal(err)
			}
			for l := range got {
				if !bytes.Equal(got[l], want[l]) {
					t.Fatalf("layer %d differs from Decode+Scatter", l)
				}
			}
			if !bytes.Equal(blob, blobBefore) {
				t.Fatal("DequantScatter modified the blob")
			}
		})
	}
}

// setScale overwrites the first value scale of the last layer's last token,
// which Int8Blob's geometry puts just before that row's codes.
func setScale(t *testing.T, c gpuclient.Chunk, blob []byte, v float32) []byte {
	t.Helper()
	b, err := gpuclient.ParseInt8Blob(c, blob)
	if err != nil {
		t.Fatal(err)
	}
	out := bytes.Clone(blob)
	o := len(out) - b.ValueRowBytes()
	binary.LittleEndian.PutUint32(out[o:], math.Float32bits(v))
	return out
}

func TestDequantScatterRefusesWithoutWriting(t *testing.T) {
	p := gpuclient.PagedLayout{Kind: gpuclient.FlashAttn, NumBlocks: 8, BlockSize: 4, Heads: 2, HeadSize: 16, DType: gpuclient.BF16}
	c := gpuclient.Chunk{Format: kvmeta.FormatKV2LTD, Layers: 2, Tokens: 20, Paged: p}
	r := rand.New(rand.NewPCG(1, 1))
	data, blob, err := kvtest.Int8Blob(r, c)
	if err != nil {
		t.Fatal(err)
	}
	fp8, err := codec.Encode(codec.FP8, c.Metadata(), data)
	if err != nil {
		t.Fatal(err)
	}
	other := c
	other.Tokens = 19
	fp16 := c
	fp16.Paged.DType = gpuclient.FP16
	slots := kvtest.Slots(r, p, c.Tokens, 0)
	tests := []struct {
		name  string
		c     gpuclient.Chunk
		blob  []byte
		slots []int64
		want  error
	}{
		{"fp8 blob", c, fp8, slots, gpuclient.ErrLayout},
		{"blob of another shape", other, blob, slots[:19], gpuclient.ErrLayout},
		{"blob of another dtype", fp16, blob, slots, gpuclient.ErrLayout},
		{"truncated blob", c, blob[:len(blob)-1], slots, codec.ErrCorrupt},
		{"raw chunk", c, data, slots, codec.ErrCorrupt},
		{"NaN scale", c, setScale(t, c, blob, float32(math.NaN())), slots, codec.ErrCorrupt},
		{"negative scale", c, setScale(t, c, blob, -1), slots, codec.ErrCorrupt},
		{"infinite scale", c, setScale(t, c, blob, float32(math.Inf(1))), slots, codec.ErrCorrupt},
		{"slot beyond cache", c, blob, append(slots[:19:19], int64(p.Slots())), gpuclient.ErrLayout},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			layers := [][]byte{make([]byte, p.LayerBytes()), make([]byte, p.LayerBytes())}
			err := gpuclient.CPUDevice{}.DequantScatter(context.Background(), tc.c, layers, tc.slots, tc.blob)
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			for l, b := range layers {
				if bytes.ContainsFunc(b, func(r rune) bool { return r != 0 }) {
					t.Errorf("layer %d written despite the error", l)
				}
			}
		})
	}
}

// TestInt8BlobGeometryMatchesCodec: the payload offset ParseInt8Blob derives
// is the codec header's size, so the geometry and codec's agree on where
// the payload starts.
func TestInt8BlobGeometryMatchesCodec(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	for _, tc := range kvtest.QuantCases() {
		_, blob, err := kvtest.Int8Blob(r, tc.Chunk)
		if err != nil {
			t.Fatal(err)
		}
		b, err := gpuclient.ParseInt8Blob(tc.Chunk, blob)
		if err != nil {
			t.Fatalf("%s: %v", tc.Name, err)
		}
		if b.PayloadOffset != 48 {
			t.Fatalf("%s: payload at %d, codec's header is 48 bytes", tc.Name, b.PayloadOffset)
		}
	}
}
