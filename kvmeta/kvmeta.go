package kvmeta

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
)

// Format is LMCache's MemoryFormat: how the tensor in a data value is laid out.
type Format int32

// The memory formats LMCache defines. T is tokens, L layers, D the hidden
// size of one token in one layer (KV heads x head size).
const (
	FormatUndefined    Format = 0
	FormatKV2LTD       Format = 1 // [2, L, T, D]: all keys, then all values
	FormatKVT2D        Format = 2 // [T, 2, D]: one layer, K and V rows interleaved per token
	FormatKV2TD        Format = 3 // [2, T, D]: one layer, keys then values
	FormatBinary       Format = 4 // opaque bytes (for example a CacheGen bitstream)
	FormatBinaryBuffer Format = 5 // opaque bytes, shape [n, 0, 0, 0]
	FormatKVMLA        Format = 6 // [1, L, T, D]: MLA latent, one tensor
)

var formatNames = [...]string{"UNDEFINED", "KV_2LTD", "KV_T2D", "KV_2TD", "BINARY", "BINARY_BUFFER", "KV_MLA_FMT"}

// String returns LMCache's name for the format, or "Format(n)" for an unknown one.
func (f Format) String() string {
	if f >= 0 && int(f) < len(formatNames) {
		return formatNames[f]
	}
	return "Format(" + strconv.Itoa(int(f)) + ")"
}

// Known reports whether f is one of the formats LMCache writes (UNDEFINED is not).
func (f Format) Known() bool { return f >= FormatKV2LTD && f <= FormatKVMLA }

// IsKV reports whether the format holds attention KV tensors.
func (f Format) IsKV() bool {
	return f == FormatKV2LTD || f == FormatKVT2D || f == FormatKV2TD || f == FormatKVMLA
}

// DType is the element type code LMCache writes (its DTYPE_TO_INT table).
type DType int32

// The element types LMCache defines. LMCache's table maps both torch.half and
// torch.float16 to a code, but since they are the same torch object the
// writer always emits 2; 1 is accepted as a reader would accept it.
const (
	DTypeNone          DType = 0 // no element type: opaque byte buffers
	DTypeHalf          DType = 1 // alias of float16, never written by LMCache
	DTypeFloat16       DType = 2
	DTypeBFloat16      DType = 3
	DTypeFloat32       DType = 4
	DTypeFloat64       DType = 5
	DTypeUint8         DType = 6
	DTypeFloat8E4M3FN  DType = 7
	DTypeFloat8E5M2    DType = 8
	maxDType                 = DTypeFloat8E5M2
	dtypeNoneByteWidth       = 1
)

var dtypeNames = [...]string{"none", "half", "float16", "bfloat16", "float32", "float64", "uint8", "float8_e4m3fn", "float8_e5m2"}
var dtypeSizes = [...]int{0, 2, 2, 2, 4, 8, 1, 1, 1}

// String returns the torch name of the type ("bfloat16"), or "DType(n)".
func (d DType) String() string {
	if d >= 0 && d <= maxDType {
		return dtypeNames[d]
	}
	return "DType(" + strconv.Itoa(int(d)) + ")"
}

// Known reports whether d is a code LMCache defines (including none).
func (d DType) Known() bool { return d >= DTypeNone && d <= maxDType }

// ElemSize is the size of one element in bytes; 0 for DTypeNone and unknown codes.
func (d DType) ElemSize() int {
	if d >= 0 && d <= maxDType {
		return dtypeSizes[d]
	}
	return 0
}

// IsHalf reports whether d is a 16-bit float (float16, its alias half, or bfloat16).
func (d DType) IsHalf() bool { return d == DTypeHalf || d == DTypeFloat16 || d == DTypeBFloat16 }

// Sizes of the encoded forms.
const (
	// Size is the size of the classic single-group metadata value: 7 int32.
	Size = 28
	// headerSize is the shared prefix of the multi-group form: length, format.
	headerSize = 8
	// groupSize is the per-group part of the multi-group form: dtype, shape[4].
	groupSize = 20
	// MaxGroups bounds the groups Parse accepts, so that a large value that
	// happens to have a plausible length cannot make it allocate much.
	MaxGroups = 256
)

// ErrMalformed is wrapped by every error Parse and Validate return.
var ErrMalformed = errors.New("kvmeta: malformed metadata")

// Metadata describes one tensor (one KV-cache group) of a chunk.
//
// Shape is kept exactly as received so that Encode reproduces the bytes a
// client wrote. Three-dimensional formats (KV_T2D, KV_2TD) arrive padded to
// four dims, by trailing zeros in current LMCache ([T, 2, D, 0]) and by
// leading ones in some earlier releases ([1, T, 2, D]); the accessors
// (Tokens, Layers, Hidden) understand both.
type Metadata struct {
	// Length is the size of the tensor in bytes. In a single-group value it
	// is the length field itself; in a multi-group value Parse sets it to
	// this group's share, computed from its shape and dtype.
	Length int64
	Format Format
	DType  DType
	Shape  [4]int32
}

// Chunk is a parsed metadata value: one Metadata per KV-cache group, in the
// order the groups' tensors are concatenated in the data value. All groups
// share the format.
type Chunk struct {
	Groups []Metadata
}

// Length is the size of the chunk's data value: the sum of the groups' lengths.
func (c Chunk) Length() int64 {
	var n int64
	for _, g := range c.Groups {
		n += g.Length
	}
	return n
}

// Encode returns the wire form of the chunk. One group gives the classic
// 28-byte value; N groups give 8+20N bytes (length, format, then dtype and
// shape per group), LMCache's multi-group layout.
func (c Chunk) Encode() []byte {
	if len(c.Groups) == 0 {
		return nil
	}
	b := make([]byte, headerSize+groupSize*len(c.Groups))
	binary.LittleEndian.PutUint32(b[0:], uint32(int32(c.Length())))
	binary.LittleEndian.PutUint32(b[4:], uint32(c.Groups[0].Format))
	for i, g := range c.Groups {
		putGroup(b[headerSize+groupSize*i:], g)
	}
	return b
}

// Encode returns the 28-byte single-group wire form of m. Length is written
// as int32; Validate rejects lengths that do not fit.
func (m Metadata) Encode() []byte {
	b := make([]byte, Size)
	binary.LittleEndian.PutUint32(b[0:], uint32(int32(m.Length)))
	binary.LittleEndian.PutUint32(b[4:], uint32(m.Format))
	putGroup(b[headerSize:], m)
	return b
}

func putGroup(b []byte, m Metadata) {
	binary.LittleEndian.PutUint32(b[0:], uint32(m.DType))
	for i, s := range m.Shape {
		binary.LittleEndian.PutUint32(b[4+4*i:], uint32(s))
	}
}

// Parse decodes a metadata value strictly: the size must be 8+20N bytes
// (N groups, 1 <= N <= MaxGroups; N=1 is the classic 28-byte value), the
// format and every dtype known, every shape valid for the format, and the
// length field equal to the sum of the groups' sizes. It never panics.
func Parse(b []byte) (Chunk, error) {
	if len(b) < Size || (len(b)-headerSize)%groupSize != 0 {
		return Chunk{}, fmt.Errorf("%w: %d bytes, want 8+20*N (28 for one group)", ErrMalformed, len(b))
	}
	n := (len(b) - headerSize) / groupSize
	if n > MaxGroups {
		return Chunk{}, fmt.Errorf("%w: %d groups, at most %d", ErrMalformed, n, MaxGroups)
	}
	length := int64(int32(binary.LittleEndian.Uint32(b[0:])))
	format := Format(int32(binary.LittleEndian.Uint32(b[4:])))
	if length < 0 {
		return Chunk{}, fmt.Errorf("%w: negative length %d", ErrMalformed, length)
	}
	if !format.Known() {
		return Chunk{}, fmt.Errorf("%w: unknown format %d", ErrMalformed, int32(format))
	}
	c := Chunk{Groups: make([]Metadata, n)}
	var sum int64
	for i := range c.Groups {
		g := b[headerSize+groupSize*i:]
		m := Metadata{Format: format, DType: DType(int32(binary.LittleEndian.Uint32(g[0:])))}
		for j := range m.Shape {
			m.Shape[j] = int32(binary.LittleEndian.Uint32(g[4+4*j:]))
		}
		size, err := m.size()
		if err != nil {
			if n > 1 {
				return Chunk{}, fmt.Errorf("group %d: %w", i, err)
			}
			return Chunk{}, err
		}
		m.Length = size
		sum += size
		c.Groups[i] = m
	}
	if sum != length {
		return Chunk{}, fmt.Errorf("%w: length %d, shapes and dtypes give %d", ErrMalformed, length, sum)
	}
	return c, nil
}

// Validate checks m as Parse checks a single group: known format and dtype,
// a shape valid for the format, and Length equal to the shape's size in bytes.
func (m Metadata) Validate() error {
	size, err := m.size()
	if err != nil {
		return err
	}
	if size != m.Length {
		return fmt.Errorf("%w: length %d, %s %s %v gives %d", ErrMalformed, m.Length, m.Format, m.DType, m.Shape, size)
	}
	return nil
}

// dims3 is the logical shape of a three-dimensional format and whether the
// stored shape is a valid padding of one: trailing padding ([a, b, c, 0|1])
// is tried first, as current LMCache writes it, then leading ones ([1, a, b, c]).
func (m Metadata) dims3(mid int32, midAt int) (d [3]int32, ok bool) {
	s := m.Shape
	fits := func(d [3]int32) bool {
		return d[0] > 0 && d[1] > 0 && d[2] > 0 && d[midAt] == mid
	}
	if t := [3]int32{s[0], s[1], s[2]}; (s[3] == 0 || s[3] == 1) && fits(t) {
		return t, true
	}
	if t := [3]int32{s[1], s[2], s[3]}; s[0] == 1 && fits(t) {
		return t, true
	}
	return d, false
}

// ltd returns layers, tokens and hidden size for the KV formats, ok=false
// when the shape does not fit the format.
func (m Metadata) ltd() (l, t, d int32, ok bool) {
	s := m.Shape
	switch m.Format {
	case FormatKV2LTD, FormatKVMLA:
		lead := int32(2)
		if m.Format == FormatKVMLA {
			lead = 1
		}
		if s[0] != lead || s[1] <= 0 || s[2] <= 0 || s[3] <= 0 {
			return 0, 0, 0, false
		}
		return s[1], s[2], s[3], true
	case FormatKVT2D:
		if x, ok := m.dims3(2, 1); ok {
			return 1, x[0], x[2], true
		}
	case FormatKV2TD:
		if x, ok := m.dims3(2, 0); ok {
			return 1, x[1], x[2], true
		}
	}
	return 0, 0, 0, false
}

// maxLength is the largest length the int32 length field can carry.
const maxLength = math.MaxInt32

// size computes the byte size the shape and dtype describe, checking
// format, dtype and shape on the way.
func (m Metadata) size() (int64, error) {
	if !m.Format.Known() {
		return 0, fmt.Errorf("%w: unknown format %d", ErrMalformed, int32(m.Format))
	}
	if !m.DType.Known() {
		return 0, fmt.Errorf("%w: unknown dtype %d", ErrMalformed, int32(m.DType))
	}
	for _, s := range m.Shape {
		if s < 0 {
			return 0, fmt.Errorf("%w: negative dimension in shape %v", ErrMalformed, m.Shape)
		}
	}
	es := int64(m.DType.ElemSize())
	var dims []int64
	if m.Format.IsKV() {
		if m.DType == DTypeNone {
			return 0, fmt.Errorf("%w: %s needs an element type", ErrMalformed, m.Format)
		}
		l, t, d, ok := m.ltd()
		if !ok {
			return 0, fmt.Errorf("%w: shape %v does not fit %s", ErrMalformed, m.Shape, m.Format)
		}
		lead := int64(2)
		if m.Format == FormatKVMLA {
			lead = 1
		}
		dims = []int64{lead, int64(l), int64(t), int64(d)}
	} else {
		// Opaque buffers: [n, 0, 0, 0] in LMCache; trailing dims that are
		// not zero multiply in. A none dtype counts as bytes.
		if es == 0 {
			es = dtypeNoneByteWidth
		}
		dims = []int64{int64(m.Shape[0])}
		for _, s := range m.Shape[1:] {
			if s != 0 {
				dims = append(dims, int64(s))
			}
		}
	}
	size := es
	for _, d := range dims {
		size *= d // every factor < 2^31 and size <= maxLength before: no overflow
		if size > maxLength {
			return 0, fmt.Errorf("%w: shape %v of %s is larger than 2 GiB", ErrMalformed, m.Shape, m.DType)
		}
	}
	return size, nil
}

// IsKV reports whether m holds attention KV tensors (KV_2LTD, KV_T2D, KV_2TD, KV_MLA_FMT).
func (m Metadata) IsKV() bool { return m.Format.IsKV() }

// IsHalf reports whether the elements are 16-bit floats (float16 or bfloat16).
func (m Metadata) IsHalf() bool { return m.DType.IsHalf() }

// Layers is the number of layers in the tensor: L for KV_2LTD and
// KV_MLA_FMT, 1 for the single-layer formats, 0 for opaque or invalid shapes.
func (m Metadata) Layers() int { l, _, _, _ := m.ltd(); return int(l) }

// Tokens is the number of tokens in the tensor, 0 for opaque or invalid shapes.
func (m Metadata) Tokens() int { _, t, _, _ := m.ltd(); return int(t) }

// Hidden is the number of elements per token per layer in one of K or V
// (KV heads x head size; the latent size for MLA), 0 for opaque or invalid shapes.
func (m Metadata) Hidden() int { _, _, d, _ := m.ltd(); return int(d) }

// String formats m for logs: "KV_2LTD bfloat16 [2 32 256 1024] 33554432B".
func (m Metadata) String() string {
	return fmt.Sprintf("%s %s %v %dB", m.Format, m.DType, m.Shape, m.Length)
}
