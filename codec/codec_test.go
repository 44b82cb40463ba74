package codec

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/kvserver/kvserver/kvmeta"
)

// kvSpec describes a synthetic chunk.
type kvSpec struct {
	format  kvmeta.Format
	dtype   kvmeta.DType
	l, t, d int
}

func (s kvSpec) String() string {
	return fmt.Sprintf("%s/%s/L%d-T%d-D%d", s.format, s.dtype, s.l, s.t, s.d)
}

func (s kvSpec) meta() kvmeta.Metadata {
	m := kvmeta.Metadata{Format: s.format, DType: s.dtype}
	switch s.format {
	case kvmeta.FormatKV2LTD:
		m.Shape = [4]int32{2, int32(s.l), int32(s.t), int32(s.d)}
	case kvmeta.FormatKVMLA:
		m.Shape = [4]int32{1, int32(s.l), int32(s.t), int32(s.d)}
	case kvmeta.FormatKVT2D:
		m.Shape = [4]int32{int32(s.t), 2, int32(s.d), 0}
	case kvmeta.FormatKV2TD:
		m.Shape = [4]int32{2, int32(s.t), int32(s.d), 0}
	}
	lead := 2
	if s.format == kvmeta.FormatKVMLA {
		lead = 1
	}
	m.Length = int64(lead * s.l * s.t * s.d * 2)
	return m
}

// chunk is a synthetic KV chunk: the raw bytes, and for every element
// whether it belongs to a key tensor and to an outlier channel.
type chunk struct {
	meta    kvmeta.Metadata
	data    []byte
	isKey   []bool
	outlier []bool
}

// synth builds keys ~ N(0,1) per element with two outlier channels per 128
// (gain 20..50, fixed per channel, as in real key caches), values and MLA
// latents ~ N(0,1), rounded to the dtype.
func synth(s kvSpec, seed uint64) chunk {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	m := s.meta()
	n := int(m.Length / 2)
	c := chunk{meta: m, data: make([]byte, 2*n), isKey: make([]bool, n), outlier: make([]bool, n)}
	gain := make([]float64, s.d)
	for i := range gain {
		gain[i] = 1
	}
	for h := 0; h < s.d; h += 128 {
		w := min(128, s.d-h)
		for k := 0; k < 2; k++ {
			gain[h+rng.IntN(w)] = 20 + 30*rng.Float64()
		}
	}
	put := func(elem int, key bool, ch int) {
		v := rng.NormFloat64()
		if key {
			v *= gain[ch]
			c.isKey[elem] = true
			c.outlier[elem] = gain[ch] > 1
		}
		var h uint16
		if s.dtype == kvmeta.DTypeBFloat16 {
			h = Float32ToBF16(float32(v))
		} else {
			h = Float32ToFP16(float32(v))
		}
		binary.LittleEndian.PutUint16(c.data[2*elem:], h)
	}
	switch s.format {
	case kvmeta.FormatKV2LTD, kvmeta.FormatKV2TD:
		half := n / 2
		for i := 0; i < n; i++ {
			put(i, i < half, i%s.d)
		}
	case kvmeta.FormatKVT2D:
		for i := 0; i < n; i++ {
			put(i, (i/s.d)%2 == 0, i%s.d)
		}
	case kvmeta.FormatKVMLA:
		for i := 0; i < n; i++ {
			put(i, false, i%s.d)
		}
	}
	return c
}

func widenAll(dtype kvmeta.DType, b []byte) []float64 {
	out := make([]float64, len(b)/2)
	for i := range out {
		h := binary.LittleEndian.Uint16(b[2*i:])
		if dtype == kvmeta.DTypeBFloat16 {
			out[i] = float64(BF16ToFloat32(h))
		} else {
			out[i] = float64(FP16ToFloat32(h))
		}
	}
	return out
}

// relRMSE is ||x-y||/||x|| over the elements where sel is nil or true.
func relRMSE(x, y []float64, sel []bool, want bool) float64 {
	var num, den float64
	for i := range x {
		if sel != nil && sel[i] != want {
			continue
		}
		num += (x[i] - y[i]) * (x[i] - y[i])
		den += x[i] * x[i]
	}
	return math.Sqrt(num / den)
}

func roundTrip(t *testing.T, mode Mode, c chunk) (got []byte, blob []byte) {
	t.Helper()
	blob, err := Encode(mode, c.meta, c.data)
	if err != nil {
		t.Fatalf("Encode: %v", err)
	}
	if n, err := EncodedLen(mode, c.meta); err != nil || n != len(blob) {
		t.Fatalf("EncodedLen = %d, %v; blob is %d bytes", n, err, len(blob))
	}
	if !IsEncoded(blob) || IsEncoded(c.data) {
		t.Fatalf("IsEncoded does not tell the blob from the raw chunk")
	}
	got, meta, err := Decode(blob)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if meta != c.meta || len(got) != len(c.data) {
		t.Fatalf("Decode gave %v, %d bytes; want %v, %d bytes", meta, len(got), c.meta, len(c.data))
	}
	return got, blob
}

// bounds are the relative RMSE each mode must stay under on the synthetic data.
var bounds = map[Mode]float64{Int8: 0.01, FP8: 0.05, Int4: 0.12}

// Every format, both dtypes, every mode, sizes that do not divide into the
// groups (T=77 tokens, D=200 and an odd D=99 channels) and real ones.
func TestRoundTripEveryFormat(t *testing.T) {
	var specs []kvSpec
	for _, dt := range []kvmeta.DType{kvmeta.DTypeBFloat16, kvmeta.DTypeFloat16} {
		specs = append(specs,
			kvSpec{kvmeta.FormatKV2LTD, dt, 2, 77, 200},
			kvSpec{kvmeta.FormatKV2LTD, dt, 1, 256, 256},
			kvSpec{kvmeta.FormatKVT2D, dt, 1, 77, 200},
			kvSpec{kvmeta.FormatKVT2D, dt, 1, 256, 128},
			kvSpec{kvmeta.FormatKV2TD, dt, 1, 77, 99},
			kvSpec{kvmeta.FormatKV2TD, dt, 1, 256, 128},
			kvSpec{kvmeta.FormatKVMLA, dt, 3, 77, 576},
			kvSpec{kvmeta.FormatKVMLA, dt, 1, 1, 1},
			kvSpec{kvmeta.FormatKV2LTD, dt, 1, 1, 1},
		)
	}
	for _, s := range specs {
		c := synth(s, 7)
		x := widenAll(s.dtype, c.data)
		for _, mode := range []Mode{Int8, FP8, Int4} {
			t.Run(s.String()+"/"+mode.String(), func(t *testing.T) {
				got, _ := roundTrip(t, mode, c)
				y := widenAll(s.dtype, got)
				if e := relRMSE(x, y, nil, false); e > bounds[mode] {
					t.Errorf("relative RMSE %.4f > %.2f", e, bounds[mode])
				}
				// Values and keys separately: a layout mistake (rows swapped
				// between K and V, a wrong stride) shows up as ~100% here.
				if s.format != kvmeta.FormatKVMLA {
					if e := relRMSE(x, y, c.isKey, true); e > bounds[mode] {
						t.Errorf("keys: relative RMSE %.4f > %.2f", e, bounds[mode])
					}
				}
				if e := relRMSE(x, y, c.isKey, false); e > bounds[mode] {
					t.Errorf("values: relative RMSE %.4f > %.2f", e, bounds[mode])
				}
			})
		}
	}
}

// The headline figures on a 4-layer slice of a Llama-3.1-8B chunk (256
// tokens x 1024 channels): accuracy and size per mode, both dtypes.
func TestAccuracyAndSize(t *testing.T) {
	maxRatio := map[Mode]float64{Int8: 0.60, FP8: 0.60, Int4: 0.35}
	for _, dt := range []kvmeta.DType{kvmeta.DTypeBFloat16, kvmeta.DTypeFloat16} {
		c := synth(kvSpec{kvmeta.FormatKV2LTD, dt, 4, 256, 1024}, 11)
		x := widenAll(dt, c.data)
		for _, mode := range []Mode{Int8, FP8, Int4} {
			got, blob := roundTrip(t, mode, c)
			y := widenAll(dt, got)
			all := relRMSE(x, y, nil, false)
			keys := relRMSE(x, y, c.isKey, true)
			vals := relRMSE(x, y, c.isKey, false)
			ratio := float64(len(blob)) / float64(len(c.data))
			t.Logf("%-8s %-4s rel RMSE %.3f%% (keys %.3f%%, values %.3f%%), size %.1f%% of raw",
				dt, mode, 100*all, 100*keys, 100*vals, 100*ratio)
			if all > bounds[mode] || keys > bounds[mode] || vals > bounds[mode] {
				t.Errorf("%s %s: relative RMSE %.4f/%.4f/%.4f above %.2f", dt, mode, all, keys, vals, bounds[mode])
			}
			if ratio > maxRatio[mode] {
				t.Errorf("%s %s: blob is %.1f%% of raw, want <= %.0f%%", dt, mode, 100*ratio, 100*maxRatio[mode])
			}
		}
	}
}

// quantRef quantizes x symmetrically to int8 with one scale per group,
// where group(i) names the group of element i: the reference for schemes
// the codec does not implement.
func quantRef(x []float64, sel []bool, group func(i int) int) []float64 {
	amax := map[int]float64{}
	for i, v := range x {
		if sel[i] {
			amax[group(i)] = max(amax[group(i)], math.Abs(v))
		}
	}
	y := make([]float64, len(x))
	for i, v := range x {
		if s := amax[group(i)] / 127; sel[i] && s > 0 {
			y[i] = math.Round(v/s) * s
		}
	}
	return y
}

// Why keys get a scale per channel: with outlier channels 20-50x larger than
// the rest, one scale per tensor (or per token) is set by the outliers and
// leaves the ordinary channels a handful of levels, or none. The error on
// those channels, which carry most of a query's dot product, is what breaks.
func TestPerChannelKeysBeatPerTensor(t *testing.T) {
	s := kvSpec{kvmeta.FormatKV2LTD, kvmeta.DTypeBFloat16, 2, 256, 1024}
	c := synth(s, 13)
	x := widenAll(s.dtype, c.data)
	got, _ := roundTrip(t, Int8, c)
	y := widenAll(s.dtype, got)
	perTensorLayer := func(i int) int { return i / (s.t * s.d) }
	perToken := func(i int) int { return i / s.d }
	tensor := quantRef(x, c.isKey, perTensorLayer)
	token := quantRef(x, c.isKey, perToken)

	normal := make([]bool, len(x)) // key elements in ordinary channels
	for i := range normal {
		normal[i] = c.isKey[i] && !c.outlier[i]
	}
	type result struct {
		name        string
		keys, plain float64
	}
	results := []result{
		{"per-channel (codec int8)", relRMSE(x, y, c.isKey, true), relRMSE(x, y, normal, true)},
		{"per-token int8", relRMSE(x, token, c.isKey, true), relRMSE(x, token, normal, true)},
		{"per-tensor int8", relRMSE(x, tensor, c.isKey, true), relRMSE(x, tensor, normal, true)},
	}
	for _, r := range results {
		t.Logf("%-26s keys rel RMSE %7.3f%%, ordinary channels %7.3f%%", r.name, 100*r.keys, 100*r.plain)
	}
	codec, tensorRes := results[0], results[2]
	if tensorRes.keys < 5*codec.keys || tensorRes.plain < 20*codec.plain {
		t.Errorf("per-tensor int8 is not much worse than per-channel: %+v vs %+v", tensorRes, codec)
	}
	if results[1].plain < 5*codec.plain {
		t.Errorf("per-token int8 on keys is not much worse than per-channel: %+v vs %+v", results[1], codec)
	}
}

func TestConstantAndZeroChunksAreExact(t *testing.T) {
	s := kvSpec{kvmeta.FormatKV2LTD, kvmeta.DTypeBFloat16, 1, 70, 130}
	m := s.meta()
	for _, v := range []float32{0, 1, -3.5, 0x1p-130} {
		data := make([]byte, m.Length)
		for i := 0; i < len(data); i += 2 {
			binary.LittleEndian.PutUint16(data[i:], Float32ToBF16(v))
		}
		for _, mode := range []Mode{Int8, FP8, Int4} {
			blob, err := Encode(mode, m, data)
			if err != nil {
				t.Fatal(err)
			}
			got, _, err := Decode(blob)
			if err != nil {
				t.Fatal(err)
			}
			if v >= 0x1p-126 || v <= 0 { // tiny subnormals may flush; the rest must be exact
				if !bytes.Equal(got, data) {
					t.Errorf("%s: chunk of %g does not come back exactly", mode, v)
				}
			}
		}
	}
}

func TestDecodeInto(t *testing.T) {
	c := synth(kvSpec{kvmeta.FormatKVT2D, kvmeta.DTypeFloat16, 1, 40, 64}, 3)
	blob, err := Encode(Int8, c.meta, c.data)
	if err != nil {
		t.Fatal(err)
	}
	h, err := Inspect(blob)
	if err != nil || h.Mode != Int8 || h.Meta != c.meta || h.KeyBlock != 64 || h.ValueGroup != 64 {
		t.Fatalf("Inspect = %+v, %v", h, err)
	}
	want, _, _ := Decode(blob)
	dst := make([]byte, h.Meta.Length)
	if _, err := DecodeInto(dst, blob); err != nil || !bytes.Equal(dst, want) {
		t.Fatalf("DecodeInto: %v", err)
	}
	if _, err := DecodeInto(dst[1:], blob); err == nil {
		t.Fatalf("DecodeInto accepted a short destination")
	}
}

func TestEncodeRefuses(t *testing.T) {
	good := kvSpec{kvmeta.FormatKV2LTD, kvmeta.DTypeBFloat16, 1, 8, 16}.meta()
	data := make([]byte, good.Length)
	fp32 := kvmeta.Metadata{Length: 2 * 8 * 16 * 4, Format: kvmeta.FormatKV2LTD, DType: kvmeta.DTypeFloat32, Shape: [4]int32{2, 1, 8, 16}}
	fp8 := kvmeta.Metadata{Length: 2 * 8 * 16, Format: kvmeta.FormatKV2LTD, DType: kvmeta.DTypeFloat8E4M3FN, Shape: [4]int32{2, 1, 8, 16}}
	binary := kvmeta.Metadata{Length: 256, Format: kvmeta.FormatBinaryBuffer, DType: kvmeta.DTypeNone, Shape: [4]int32{256}}
	wrongLen := good
	wrongLen.Length = 100
	withInf := bytes.Clone(data)
	withInf[100], withInf[101] = 0x80, 0x7f // +inf in a key
	withNaN := bytes.Clone(data)
	withNaN[len(withNaN)-2], withNaN[len(withNaN)-1] = 0xc0, 0x7f // NaN in a value
	tests := []struct {
		name string
		mode Mode
		meta kvmeta.Metadata
		data []byte
	}{
		{"mode off", Off, good, data},
		{"unknown mode", Mode(9), good, data},
		{"float32", Int8, fp32, make([]byte, fp32.Length)},
		{"fp8 already", Int8, fp8, make([]byte, fp8.Length)},
		{"opaque bytes", Int8, binary, make([]byte, 256)},
		{"metadata inconsistent", Int8, wrongLen, data},
		{"data shorter than metadata", Int8, good, data[:len(data)-2]},
		{"infinity", Int8, good, withInf},
		{"NaN", FP8, good, withNaN},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Encode(tc.mode, tc.meta, tc.data); !errors.Is(err, ErrUnsupported) {
				t.Fatalf("Encode error = %v, want ErrUnsupported", err)
			}
		})
	}
}

func TestDecodeRefuses(t *testing.T) {
	c := synth(kvSpec{kvmeta.FormatKV2TD, kvmeta.DTypeBFloat16, 1, 10, 32}, 5)
	blob, err := Encode(Int4, c.meta, c.data)
	if err != nil {
		t.Fatal(err)
	}
	edit := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(blob)) }
	tests := []struct {
		name string
		blob []byte
	}{
		{"empty", nil},
		{"header only", blob[:headerSize]},
		{"truncated", blob[:len(blob)-1]},
		{"trailing byte", append(bytes.Clone(blob), 0)},
		{"raw chunk", c.data},
		{"magic", edit(func(b []byte) []byte { b[1] = 'X'; return b })},
		{"version", edit(func(b []byte) []byte { b[8] = 2; return b })},
		{"mode off", edit(func(b []byte) []byte { b[9] = 0; return b })},
		{"mode unknown", edit(func(b []byte) []byte { b[9] = 4; return b })},
		{"flags", edit(func(b []byte) []byte { b[10] = 1; return b })},
		{"reserved", edit(func(b []byte) []byte { b[47] = 1; return b })},
		{"key block zero", edit(func(b []byte) []byte { b[12], b[13] = 0, 0; return b })},
		{"value group changed", edit(func(b []byte) []byte { b[14] = 16; return b })},
		{"metadata length", edit(func(b []byte) []byte { b[16]++; return b })},
		{"metadata dtype fp32", edit(func(b []byte) []byte { b[24] = 4; return b })},
		{"negative scale", edit(func(b []byte) []byte { b[headerSize+3] = 0x80; b[headerSize+2] = 0x80; return b })},
		{"NaN scale", edit(func(b []byte) []byte { copy(b[headerSize:], []byte{0, 0, 0xc0, 0x7f}); return b })},
		// The last value row is one scale then 16 bytes of int4 codes.
		{"infinite scale", edit(func(b []byte) []byte { copy(b[len(b)-16-4:], []byte{0, 0, 0x80, 0x7f}); return b })},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if IsEncoded(tc.blob) && tc.name == "raw chunk" {
				t.Fatalf("IsEncoded(raw chunk)")
			}
			if _, _, err := Decode(tc.blob); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Decode error = %v, want ErrCorrupt", err)
			}
		})
	}
}

func TestParseMode(t *testing.T) {
	for in, want := range map[string]Mode{"": Off, "off": Off, "int8": Int8, " INT8 ": Int8, "fp8": FP8, "int4": Int4} {
		if got, err := ParseMode(in); err != nil || got != want {
			t.Errorf("ParseMode(%q) = %v, %v", in, got, err)
		}
	}
	for _, in := range []string{"int2", "fp16", "none"} {
		if _, err := ParseMode(in); err == nil {
			t.Errorf("ParseMode(%q) accepted", in)
		}
	}
	for m := Off; m <= Int4; m++ {
		if back, _ := ParseMode(m.String()); back != m {
			t.Errorf("%v does not round-trip through its name", m)
		}
	}
	if Mode(7).String() != "Mode(7)" {
		t.Errorf("Mode(7).String() = %q", Mode(7).String())
	}
}

func FuzzDecode(f *testing.F) {
	for i, mode := range []Mode{Int8, FP8, Int4} {
		c := synth(kvSpec{kvmeta.FormatKVT2D, kvmeta.DTypeBFloat16, 1, 3, 6}, uint64(i))
		blob, err := Encode(mode, c.meta, c.data)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(blob)
	}
	f.Add([]byte(magic))
	f.Fuzz(func(t *testing.T, b []byte) {
		out, meta, err := Decode(b)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		if int64(len(out)) != meta.Length || meta.Validate() != nil {
			t.Fatalf("decoded %d bytes for %v", len(out), meta)
		}
		if len(out) > 4*len(b) {
			t.Fatalf("decoded %d bytes from a %d-byte blob", len(out), len(b))
		}
	})
}

// benchChunk is a bf16 KV_2LTD chunk of 256 tokens x 1024 channels, as
// Llama-3.1-8B stores them; 32 layers is the full 32 MiB chunk.
func benchChunk(b testing.TB, layers int) chunk {
	b.Helper()
	return synth(kvSpec{kvmeta.FormatKV2LTD, kvmeta.DTypeBFloat16, layers, 256, 1024}, 1)
}

// benchEncode measures the encoder like benchDecode measures the decoder:
// into a reused buffer, so the figure is the quantization itself.
// BenchmarkEncodeInt8Alloc adds the allocation of a fresh blob.
func benchEncode(b *testing.B, mode Mode) {
	c := benchChunk(b, 32)
	n, err := EncodedLen(mode, c.meta)
	if err != nil {
		b.Fatal(err)
	}
	dst := make([]byte, n)
	b.SetBytes(int64(len(c.data)))
	for b.Loop() {
		if _, err := EncodeInto(dst, mode, c.meta, c.data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeInt8Alloc(b *testing.B) {
	c := benchChunk(b, 32)
	b.SetBytes(int64(len(c.data)))
	for b.Loop() {
		if _, err := Encode(Int8, c.meta, c.data); err != nil {
			b.Fatal(err)
		}
	}
}

func benchDecode(b *testing.B, mode Mode) {
	c := benchChunk(b, 32)
	blob, err := Encode(mode, c.meta, c.data)
	if err != nil {
		b.Fatal(err)
	}
	dst := make([]byte, len(c.data))
	b.SetBytes(int64(len(c.data)))
	for b.Loop() {
		if _, err := DecodeInto(dst, blob); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeInt8(b *testing.B) { benchEncode(b, Int8) }
func BenchmarkDecodeInt8(b *testing.B) { benchDecode(b, Int8) }
func BenchmarkEncodeFP8(b *testing.B)  { benchEncode(b, FP8) }
func BenchmarkDecodeFP8(b *testing.B)  { benchDecode(b, FP8) }
func BenchmarkEncodeInt4(b *testing.B) { benchEncode(b, Int4) }
func BenchmarkDecodeInt4(b *testing.B) { benchDecode(b, Int4) }

func benchFP16(b *testing.B, decode bool) {
	c := synth(kvSpec{kvmeta.FormatKV2LTD, kvmeta.DTypeFloat16, 32, 256, 1024}, 1)
	blob, err := Encode(Int8, c.meta, c.data)
	if err != nil {
		b.Fatal(err)
	}
	dst := make([]byte, len(c.data))
	b.SetBytes(int64(len(c.data)))
	for b.Loop() {
		if decode {
			_, err = DecodeInto(dst, blob)
		} else {
			_, err = Encode(Int8, c.meta, c.data)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeInt8FP16(b *testing.B) { benchFP16(b, false) }
func BenchmarkDecodeInt8FP16(b *testing.B) { benchFP16(b, true) }

// FuzzEncode quantizes arbitrary 16-bit data (subnormals, the largest
// finite values, infinities, NaN) in every format, and checks that Encode
// either refuses it or produces a blob that decodes to the same length with
// every element within the mode's error bound, taken loosely from the
// tensor's largest magnitude.
func FuzzEncode(f *testing.F) {
	f.Add(byte(1), byte(1), byte(1), byte(3), byte(5), true, []byte{0x80, 0x3f, 0x7f, 0x7f, 0x01, 0x00})
	f.Add(byte(2), byte(2), byte(1), byte(7), byte(3), false, []byte{0xff, 0x7b, 0x01, 0x00, 0x00, 0x80})
	f.Add(byte(3), byte(6), byte(2), byte(2), byte(9), true, []byte{0x12, 0x34, 0x56})
	f.Fuzz(func(t *testing.T, mode, format, layers, tokens, hidden byte, bf16 bool, fill []byte) {
		m := Mode(mode%3 + 1)
		s := kvSpec{format: []kvmeta.Format{kvmeta.FormatKV2LTD, kvmeta.FormatKVT2D, kvmeta.FormatKV2TD, kvmeta.FormatKVMLA}[format%4],
			dtype: kvmeta.DTypeFloat16, l: int(layers%3) + 1, t: int(tokens%70) + 1, d: int(hidden%70) + 1}
		if bf16 {
			s.dtype = kvmeta.DTypeBFloat16
		}
		if s.format == kvmeta.FormatKVT2D || s.format == kvmeta.FormatKV2TD {
			s.l = 1
		}
		meta := s.meta()
		if len(fill) == 0 {
			fill = []byte{0}
		}
		data := make([]byte, meta.Length)
		for i := range data {
			data[i] = fill[i%len(fill)] ^ byte(i/len(fill))
		}
		blob, err := Encode(m, meta, data)
		if err != nil {
			if !errors.Is(err, ErrUnsupported) {
				t.Fatalf("Encode: %v", err)
			}
			return
		}
		got, gotMeta, err := Decode(blob)
		if err != nil || gotMeta != meta || len(got) != len(data) {
			t.Fatalf("Decode: %v, %v, %d bytes", err, gotMeta, len(got))
		}
		x, y := widenAll(s.dtype, data), widenAll(s.dtype, got)
		var gmax float64
		for _, v := range x {
			gmax = max(gmax, math.Abs(v))
		}
		_, _, qmax := m.groups()
		for i := range x {
			// Quantization, the final rounding to 16 bits (relative, and
			// absolute among the subnormals), and the absolute step of tiny
			// groups (see scaleFor).
			round := math.Abs(y[i])/256 + 0x1p-126
			if !bf16 {
				round += 0x1p-25
			}
			bound := 0.5001*gmax/qmax + round
			if m == FP8 {
				bound = math.Abs(x[i])/16*1.001 + gmax/448/512 + round
			}
			if math.Abs(x[i]-y[i]) > bound || math.IsNaN(y[i]) {
				t.Fatalf("%s %v element %d: %g decoded as %g (bound %g, max %g)", m, s, i, x[i], y[i], bound, gmax)
			}
		}
	})
}

// A forged header that promises a huge chunk is refused by its size alone,
// before anything of that size is allocated.
func TestDecodeForgedHeaderAllocatesNothingLarge(t *testing.T) {
	meta := kvmeta.Metadata{Length: 1 << 30, Format: kvmeta.FormatKV2LTD, DType: kvmeta.DTypeBFloat16, Shape: [4]int32{2, 1 << 27, 1, 2}}
	if err := meta.Validate(); err != nil {
		t.Fatal(err)
	}
	blob := make([]byte, headerSize+64)
	copy(blob, magic)
	blob[8], blob[9] = version, byte(Int8)
	binary.LittleEndian.PutUint16(blob[12:], 64)
	binary.LittleEndian.PutUint16(blob[14:], 64)
	copy(blob[16:], meta.Encode())
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, _, err := Decode(blob)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Decode = %v, want ErrCorrupt", err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
		t.Fatalf("Decode allocated %d bytes for a %d-byte blob", n, len(blob))
	}
}

func TestEncodeIntoReusesTheBufferAndMatchesEncode(t *testing.T) {
	c := benchChunk(t, 2)
	want, err := Encode(Int8, c.meta, c.data)
	if err != nil {
		t.Fatal(err)
	}
	dst := make([]byte, len(want))
	for i := range dst {
		dst[i] = 0xee // stale bytes must not leak into the blob
	}
	got, err := EncodeInto(dst, Int8, c.meta, c.data)
	if err != nil {
		t.Fatal(err)
	}
	if &got[0] != &dst[0] || !bytes.Equal(got, want) {
		t.Fatal("EncodeInto did not reuse dst or differs from Encode")
	}
}
