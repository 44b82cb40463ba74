package kvmeta

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
)

// raw builds a wire value from int32 fields.
func raw(fields ...int32) []byte {
	b := make([]byte, 4*len(fields))
	for i, f := range fields {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(f))
	}
	return b
}

func TestParseAcceptsWhatLMCacheWrites(t *testing.T) {
	tests := []struct {
		name                   string
		in                     []byte
		want                   []Metadata
		layers, tokens, hidden int
	}{
		{
			name:   "llama-3.1-8b chunk of 256 tokens",
			in:     raw(33554432, 1, 3, 2, 32, 256, 1024),
			want:   []Metadata{{33554432, FormatKV2LTD, DTypeBFloat16, [4]int32{2, 32, 256, 1024}}},
			layers: 32, tokens: 256, hidden: 1024,
		},
		{
			name:   "partial last chunk, fp16",
			in:     raw(2*2*3*17*64, 1, 2, 2, 3, 17, 64),
			want:   []Metadata{{2 * 2 * 3 * 17 * 64, FormatKV2LTD, DTypeFloat16, [4]int32{2, 3, 17, 64}}},
			layers: 3, tokens: 17, hidden: 64,
		},
		{
			name:   "half alias code 1",
			in:     raw(2*2*1*4*8, 1, 1, 2, 1, 4, 8),
			want:   []Metadata{{128, FormatKV2LTD, DTypeHalf, [4]int32{2, 1, 4, 8}}},
			layers: 1, tokens: 4, hidden: 8,
		},
		{
			name:   "layer-wise KV_T2D padded with a trailing zero",
			in:     raw(256*2*1024*2, 2, 3, 256, 2, 1024, 0),
			want:   []Metadata{{1 << 20, FormatKVT2D, DTypeBFloat16, [4]int32{256, 2, 1024, 0}}},
			layers: 1, tokens: 256, hidden: 1024,
		},
		{
			name:   "layer-wise KV_T2D padded with a leading one",
			in:     raw(256*2*1024*2, 2, 3, 1, 256, 2, 1024),
			want:   []Metadata{{1 << 20, FormatKVT2D, DTypeBFloat16, [4]int32{1, 256, 2, 1024}}},
			layers: 1, tokens: 256, hidden: 1024,
		},
		{
			name:   "KV_T2D padded with a trailing one",
			in:     raw(5*2*8*2, 2, 2, 5, 2, 8, 1),
			want:   []Metadata{{160, FormatKVT2D, DTypeFloat16, [4]int32{5, 2, 8, 1}}},
			layers: 1, tokens: 5, hidden: 8,
		},
		{
			name:   "KV_2TD trailing zero",
			in:     raw(2*7*16*4, 3, 4, 2, 7, 16, 0),
			want:   []Metadata{{896, FormatKV2TD, DTypeFloat32, [4]int32{2, 7, 16, 0}}},
			layers: 1, tokens: 7, hidden: 16,
		},
		{
			name:   "KV_2TD leading one",
			in:     raw(2*7*16*2, 3, 3, 1, 2, 7, 16),
			want:   []Metadata{{448, FormatKV2TD, DTypeBFloat16, [4]int32{1, 2, 7, 16}}},
			layers: 1, tokens: 7, hidden: 16,
		},
		{
			name:   "MLA latent",
			in:     raw(61*256*576*2, 6, 3, 1, 61, 256, 576),
			want:   []Metadata{{61 * 256 * 576 * 2, FormatKVMLA, DTypeBFloat16, [4]int32{1, 61, 256, 576}}},
			layers: 61, tokens: 256, hidden: 576,
		},
		{
			name:   "fp8 KV",
			in:     raw(2*2*4*8, 1, 7, 2, 2, 4, 8),
			want:   []Metadata{{128, FormatKV2LTD, DTypeFloat8E4M3FN, [4]int32{2, 2, 4, 8}}},
			layers: 2, tokens: 4, hidden: 8,
		},
		{
			name: "bytes buffer without dtype",
			in:   raw(1000, 5, 0, 1000, 0, 0, 0),
			want: []Metadata{{1000, FormatBinaryBuffer, DTypeNone, [4]int32{1000, 0, 0, 0}}},
		},
		{
			name: "binary uint8",
			in:   raw(12345, 4, 6, 12345, 0, 0, 0),
			want: []Metadata{{12345, FormatBinary, DTypeUint8, [4]int32{12345, 0, 0, 0}}},
		},
		{
			name: "empty bytes buffer",
			in:   raw(0, 5, 0, 0, 0, 0, 0),
			want: []Metadata{{0, FormatBinaryBuffer, DTypeNone, [4]int32{}}},
		},
		{
			name: "two groups of a hybrid model",
			in: raw(2*4*16*64*2+2*2*16*32*4, 1,
				3, 2, 4, 16, 64,
				4, 2, 2, 16, 32),
			want: []Metadata{
				{2 * 4 * 16 * 64 * 2, FormatKV2LTD, DTypeBFloat16, [4]int32{2, 4, 16, 64}},
				{2 * 2 * 16 * 32 * 4, FormatKV2LTD, DTypeFloat32, [4]int32{2, 2, 16, 32}},
			},
			layers: 4, tokens: 16, hidden: 64,
		},
		{
			name: "three MLA groups",
			in: raw(3*(4*8*16*2), 6,
				3, 1, 4, 8, 16,
				3, 1, 4, 8, 16,
				3, 1, 4, 8, 16),
			want: []Metadata{
				{1024, FormatKVMLA, DTypeBFloat16, [4]int32{1, 4, 8, 16}},
				{1024, FormatKVMLA, DTypeBFloat16, [4]int32{1, 4, 8, 16}},
				{1024, FormatKVMLA, DTypeBFloat16, [4]int32{1, 4, 8, 16}},
			},
			layers: 4, tokens: 8, hidden: 16,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse(tc.in)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if len(c.Groups) != len(tc.want) {
				t.Fatalf("got %d groups, want %d", len(c.Groups), len(tc.want))
			}
			for i, g := range c.Groups {
				if g != tc.want[i] {
					t.Errorf("group %d = %v, want %v", i, g, tc.want[i])
				}
				if err := g.Validate(); err != nil {
					t.Errorf("group %d does not validate on its own: %v", i, err)
				}
			}
			g := c.Groups[0]
			if g.Layers() != tc.layers || g.Tokens() != tc.tokens || g.Hidden() != tc.hidden {
				t.Errorf("L,T,D = %d,%d,%d want %d,%d,%d", g.Layers(), g.Tokens(), g.Hidden(), tc.layers, tc.tokens, tc.hidden)
			}
			if !bytes.Equal(c.Encode(), tc.in) {
				t.Errorf("Chunk.Encode does not reproduce the input")
			}
			if len(c.Groups) == 1 && !bytes.Equal(g.Encode(), tc.in) {
				t.Errorf("Metadata.Encode does not reproduce the input")
			}
			if c.Length() != int64(int32(binary.LittleEndian.Uint32(tc.in))) {
				t.Errorf("Chunk.Length = %d", c.Length())
			}
		})
	}
}

func TestParseRejects(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
	}{
		{"empty", nil},
		{"short", raw(1, 2, 3)},
		{"27 bytes", raw(33554432, 1, 3, 2, 32, 256, 1024)[:27]},
		{"29 bytes", append(raw(33554432, 1, 3, 2, 32, 256, 1024), 0)},
		{"56 bytes is not a group count", append(raw(33554432, 1, 3, 2, 32, 256, 1024), raw(33554432, 1, 3, 2, 32, 256, 1024)...)},
		{"negative length", raw(-1, 1, 3, 2, 32, 256, 1024)},
		{"length off by one", raw(33554431, 1, 3, 2, 32, 256, 1024)},
		{"length of fp16 with bf16 code", raw(33554432/2, 1, 3, 2, 32, 256, 1024)},
		{"format undefined", raw(33554432, 0, 3, 2, 32, 256, 1024)},
		{"format unknown", raw(33554432, 7, 3, 2, 32, 256, 1024)},
		{"format negative", raw(33554432, -1, 3, 2, 32, 256, 1024)},
		{"dtype unknown", raw(33554432, 1, 9, 2, 32, 256, 1024)},
		{"dtype negative", raw(33554432, 1, -3, 2, 32, 256, 1024)},
		{"KV without dtype", raw(2*32*256*1024, 1, 0, 2, 32, 256, 1024)},
		{"KV_2LTD lead not 2", raw(3*32*256*1024*2, 1, 3, 3, 32, 256, 1024)},
		{"KV_2LTD zero tokens", raw(0, 1, 3, 2, 32, 0, 1024)},
		{"negative dim", raw(0, 5, 0, 0, -1, 0, 0)},
		{"negative tokens", raw(2*32*256*1024*2, 1, 3, 2, 32, -256, -1024)},
		{"KV_T2D without the 2", raw(256*3*1024*2, 2, 3, 256, 3, 1024, 0)},
		{"KV_T2D 4-D", raw(256*2*1024*2*2, 2, 3, 256, 2, 1024, 2)},
		{"KV_2TD wrong axis", raw(256*2*1024*2, 3, 3, 256, 2, 1024, 0)},
		{"MLA lead not 1", raw(2*61*256*576*2, 6, 3, 2, 61, 256, 576)},
		{"bigger than 2 GiB", raw(0, 1, 4, 2, 65536, 65536, 65536)},
		{"binary length mismatch", raw(999, 5, 0, 1000, 0, 0, 0)},
		{"second group bad", raw(2*128+2*128, 1, 3, 2, 1, 4, 16, 3, 2, 1, 4, -16)},
		{"groups sum mismatch", raw(2*128, 1, 3, 2, 1, 4, 16, 3, 2, 1, 4, 16)},
		{"too many groups", make([]byte, 8+20*(MaxGroups+1))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse(tc.in)
			if err == nil {
				t.Fatalf("Parse accepted %v", c.Groups)
			}
			if !errors.Is(err, ErrMalformed) {
				t.Errorf("error %v does not wrap ErrMalformed", err)
			}
		})
	}
}

func TestValidateChecksLength(t *testing.T) {
	m := Metadata{Length: 33554432, Format: FormatKV2LTD, DType: DTypeBFloat16, Shape: [4]int32{2, 32, 256, 1024}}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	m.Length--
	if err := m.Validate(); !errors.Is(err, ErrMalformed) {
		t.Fatalf("Validate with wrong length: %v", err)
	}
}

func TestNamesAndSizes(t *testing.T) {
	formats := map[Format]string{
		FormatKV2LTD: "KV_2LTD", FormatKVT2D: "KV_T2D", FormatKV2TD: "KV_2TD", FormatBinary: "BINARY",
		FormatBinaryBuffer: "BINARY_BUFFER", FormatKVMLA: "KV_MLA_FMT", FormatUndefined: "UNDEFINED", 42: "Format(42)", -1: "Format(-1)",
	}
	for f, want := range formats {
		if f.String() != want {
			t.Errorf("Format(%d).String() = %q, want %q", int32(f), f.String(), want)
		}
	}
	dtypes := []struct {
		d    DType
		name string
		size int
		half bool
	}{
		{DTypeNone, "none", 0, false},
		{DTypeHalf, "half", 2, true},
		{DTypeFloat16, "float16", 2, true},
		{DTypeBFloat16, "bfloat16", 2, true},
		{DTypeFloat32, "float32", 4, false},
		{DTypeFloat64, "float64", 8, false},
		{DTypeUint8, "uint8", 1, false},
		{DTypeFloat8E4M3FN, "float8_e4m3fn", 1, false},
		{DTypeFloat8E5M2, "float8_e5m2", 1, false},
		{9, "DType(9)", 0, false},
		{-1, "DType(-1)", 0, false},
	}
	for _, tc := range dtypes {
		if tc.d.String() != tc.name || tc.d.ElemSize() != tc.size || tc.d.IsHalf() != tc.half {
			t.Errorf("DType(%d): %q %d %v, want %q %d %v", int32(tc.d), tc.d.String(), tc.d.ElemSize(), tc.d.IsHalf(), tc.name, tc.size, tc.half)
		}
	}
	for f := Format(-1); f <= 8; f++ {
		want := f == 1 || f == 2 || f == 3 || f == 6
		if (Metadata{Format: f}).IsKV() != want {
			t.Errorf("IsKV(%s) = %v", f, !want)
		}
	}
}

func TestAccessorsOnOpaqueAndInvalid(t *testing.T) {
	for _, m := range []Metadata{
		{Length: 10, Format: FormatBinary, DType: DTypeUint8, Shape: [4]int32{10}},
		{Format: FormatKV2LTD, DType: DTypeBFloat16, Shape: [4]int32{3, 1, 1, 1}},
		{Format: 99},
	} {
		if m.Layers() != 0 || m.Tokens() != 0 || m.Hidden() != 0 {
			t.Errorf("%v: L,T,D = %d,%d,%d, want zeros", m, m.Layers(), m.Tokens(), m.Hidden())
		}
	}
}

func TestEncodeEmptyChunk(t *testing.T) {
	if b := (Chunk{}).Encode(); b != nil {
		t.Fatalf("empty chunk encodes to %x", b)
	}
}

func FuzzParse(f *testing.F) {
	f.Add(raw(33554432, 1, 3, 2, 32, 256, 1024))
	f.Add(raw(1<<20, 2, 3, 256, 2, 1024, 0))
	f.Add(raw(2*4*16*64*2+2*2*16*32*4, 1, 3, 2, 4, 16, 64, 4, 2, 2, 16, 32))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := Parse(b)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			return
		}
		if !bytes.Equal(c.Encode(), b) {
			t.Fatalf("accepted value does not round-trip: % x -> % x", b, c.Encode())
		}
		for i, g := range c.Groups {
			if err := g.Validate(); err != nil {
				t.Fatalf("group %d accepted but invalid alone: %v", i, err)
			}
			if g.IsKV() && (g.Tokens() <= 0 || g.Hidden() <= 0 || g.Layers() <= 0) {
				t.Fatalf("group %d: KV with L,T,D = %d,%d,%d", i, g.Layers(), g.Tokens(), g.Hidden())
			}
			if g.IsKV() && int64(g.Layers())*int64(g.Tokens())*int64(g.Hidden())*int64(g.DType.ElemSize())*map[bool]int64{true: 1, false: 2}[g.Format == FormatKVMLA] != g.Length {
				t.Fatalf("group %d: L*T*D does not give Length: %v", i, g)
			}
		}
	})
}
