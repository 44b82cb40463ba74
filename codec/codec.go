package codec

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/kvserver/kvserver/kvmeta"
)

// Mode selects the quantization of a chunk.
type Mode uint8

// The modes. The zero value, Off, stores chunks unchanged; it has no encoding.
const (
	Off  Mode = 0
	Int8 Mode = 1 // symmetric int8 codes, float32 scale per group
	FP8  Mode = 2 // float8_e4m3fn codes, float32 scale per group
	Int4 Mode = 3 // symmetric int4 codes two per byte, float32 scale per group
)

var modeNames = [...]string{"off", "int8", "fp8", "int4"}

// String returns the name ParseMode accepts.
func (m Mode) String() string {
	if int(m) < len(modeNames) {
		return modeNames[m]
	}
	return fmt.Sprintf("Mode(%d)", uint8(m))
}

// ParseMode reads "off", "int8", "fp8" or "int4" (any case). The empty
// string is Off, so that an unset option means no quantization.
func ParseMode(s string) (Mode, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" {
		return Off, nil
	}
	for i, n := range modeNames {
		if s == n {
			return Mode(i), nil
		}
	}
	return Off, fmt.Errorf("codec: unknown mode %q (want off, int8, fp8 or int4)", s)
}

// groups returns the key token block and value channel group a mode encodes
// with, and the largest code magnitude.
func (m Mode) groups() (keyBlock, valueGroup int, qmax float64) {
	switch m {
	case Int8:
		return 64, 64, 127
	case FP8:
		return 64, 64, 448
	case Int4:
		return 32, 32, 7
	}
	return 0, 0, 0
}

func (m Mode) valid() bool { return m == Int8 || m == FP8 || m == Int4 }

var (
	// ErrUnsupported is wrapped by Encode's errors: the chunk is not one it
	// quantizes (the caller stores it unchanged instead).
	ErrUnsupported = errors.New("codec: chunk not supported")
	// ErrCorrupt is wrapped by Decode's errors: the blob is not a valid encoding.
	ErrCorrupt = errors.New("codec: corrupt blob")
)

// Blob header, little-endian:
//
//	off size
//	0   8    magic "\x89KVQ\r\n\x1a\n"
//	8   1    version (1)
//	9   1    mode (1 int8, 2 fp8, 3 int4)
//	10  2    flags, 0
//	12  2    key token block (tokens per key scale)
//	14  2    value channel group (channels per value scale)
//	16  28   original metadata, kvmeta 28-byte form
//	44  4    reserved, 0
//	48       payload
const (
	magic      = "\x89KVQ\r\n\x1a\n"
	version    = 1
	headerSize = 48
)

// IsEncoded reports whether b starts like a blob of this package (magic and
// version). It is a sniff, not a validation; Decode checks everything.
func IsEncoded(b []byte) bool {
	return len(b) >= headerSize && bytes.HasPrefix(b, []byte(magic)) && b[8] == version
}

// layout is everything derived from (mode, metadata, group sizes): where
// the K and V rows are in the raw chunk and how large each part of the blob
// is. It is computed before anything is allocated, so that a forged header
// cannot make Decode allocate more than the blob's size implies.
type layout struct {
	meta       kvmeta.Metadata
	mode       Mode
	keyBlock   int
	valueGroup int
	t, d       int
	layers     int
	rowCodes   int // bytes of codes for one row
	size       int // total blob size
}

// plane is one [T, D] tensor inside the raw chunk: row r starts at off+r*stride bytes.
type plane struct{ off, stride int }

// keyPlanes and valuePlanes list the chunk's K and V tensors in blob order.
// KV_MLA_FMT has no keys: its one tensor per layer is quantized as values.
func (l *layout) keyPlanes(yield func(plane) bool) {
	rowBytes := 2 * l.d
	switch l.meta.Format {
	case kvmeta.FormatKV2LTD, kvmeta.FormatKV2TD:
		for i := 0; i < l.layers && yield(plane{i * l.t * rowBytes, rowBytes}); i++ {
		}
	case kvmeta.FormatKVT2D:
		yield(plane{0, 2 * rowBytes})
	}
}

func (l *layout) valuePlanes(yield func(plane) bool) {
	rowBytes := 2 * l.d
	switch l.meta.Format {
	case kvmeta.FormatKV2LTD, kvmeta.FormatKV2TD:
		for i := 0; i < l.layers && yield(plane{(l.layers + i) * l.t * rowBytes, rowBytes}); i++ {
		}
	case kvmeta.FormatKVT2D:
		yield(plane{rowBytes, 2 * rowBytes})
	case kvmeta.FormatKVMLA:
		for i := 0; i < l.layers && yield(plane{i * l.t * rowBytes, rowBytes}); i++ {
		}
	}
}

func newLayout(mode Mode, meta kvmeta.Metadata, keyBlock, valueGroup int) (*layout, error) {
	l := &layout{meta: meta, mode: mode, keyBlock: keyBlock, valueGroup: valueGroup,
		t: meta.Tokens(), d: meta.Hidden(), layers: meta.Layers()}
	var keys, vals int
	switch meta.Format {
	case kvmeta.FormatKV2LTD, kvmeta.FormatKV2TD, kvmeta.FormatKVT2D:
		keys, vals = l.layers, l.layers
	case kvmeta.FormatKVMLA:
		vals = l.layers
	default:
		return nil, fmt.Errorf("format %s is not a KV tensor", meta.Format)
	}
	l.rowCodes = l.d
	if mode == Int4 {
		l.rowCodes = (l.d + 1) / 2
	}
	// Sizes fit easily in int: the metadata bounds the chunk to 2 GiB, and
	// the blob is at most 5 bytes per 2-byte element (a scale per element).
	nb := (l.t + keyBlock - 1) / keyBlock
	ng := (l.d + valueGroup - 1) / valueGroup
	keyPlane := nb*l.d*4 + l.t*l.rowCodes
	valPlane := l.t * (ng*4 + l.rowCodes)
	l.size = headerSize + keys*keyPlane + vals*valPlane
	return l, nil
}

// EncodedLen is the size of the blob Encode would return for a chunk with
// this metadata, or an error when the chunk cannot be encoded.
func EncodedLen(mode Mode, meta kvmeta.Metadata) (int, error) {
	l, err := encodeLayout(mode, meta)
	if err != nil {
		return 0, err
	}
	return l.size, nil
}

func encodeLayout(mode Mode, meta kvmeta.Metadata) (*layout, error) {
	if !mode.valid() {
		return nil, fmt.Errorf("%w: mode %s", ErrUnsupported, mode)
	}
	if err := meta.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnsupported, err)
	}
	if !meta.IsKV() {
		return nil, fmt.Errorf("%w: format %s is not a KV tensor", ErrUnsupported, meta.Format)
	}
	if !meta.IsHalf() {
		return nil, fmt.Errorf("%w: dtype %s is not float16 or bfloat16", ErrUnsupported, meta.DType)
	}
	kb, vg, _ := mode.groups()
	l, err := newLayout(mode, meta, kb, vg)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnsupported, err)
	}
	return l, nil
}

// Encode quantizes a float16 or bfloat16 KV chunk. meta must describe data
// exactly (Validate passes, Length == len(data)); opaque formats, other
// dtypes and chunks holding infinities or NaN are refused with an error
// wrapping ErrUnsupported, and the caller keeps the raw bytes.
//
// Keys are quantized with one scale per channel over blocks of tokens, values
// (and MLA latents) with one scale per token over groups of channels; see the
// package documentation. The result is a self-describing blob for Decode.
// One allocation of the blob's size, plus a few rows of scratch.
func Encode(mode Mode, meta kvmeta.Metadata, data []byte) ([]byte, error) {
	return EncodeInto(nil, mode, meta, data)
}

// EncodeInto is Encode writing into dst when it has the capacity (see
// EncodedLen), so a caller encoding many chunks can reuse one buffer. It
// returns the blob, which aliases dst when dst was large enough.
func EncodeInto(dst []byte, mode Mode, meta kvmeta.Metadata, data []byte) ([]byte, error) {
	l, err := encodeLayout(mode, meta)
	if err != nil {
		return nil, err
	}
	if int64(len(data)) != meta.Length {
		return nil, fmt.Errorf("%w: %d bytes of data, metadata says %d", ErrUnsupported, len(data), meta.Length)
	}
	var out []byte
	if cap(dst) >= l.size {
		out = dst[:l.size]
		clear(out[:headerSize])
	} else {
		out = make([]byte, l.size)
	}
	copy(out, magic)
	out[8] = version
	out[9] = byte(mode)
	binary.LittleEndian.PutUint16(out[12:], uint16(l.keyBlock))
	binary.LittleEndian.PutUint16(out[14:], uint16(l.valueGroup))
	copy(out[16:44], meta.Encode())
	e := newCoder(l)
	p := out[headerSize:]
	for pl := range l.keyPlanes {
		if p, err = e.encodeKeys(p, data, pl); err != nil {
			return nil, err
		}
	}
	for pl := range l.valuePlanes {
		if p, err = e.encodeValues(p, data, pl); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Header is what a blob says about itself.
type Header struct {
	Mode       Mode
	Meta       kvmeta.Metadata // the original chunk's metadata; Meta.Length is the decoded size
	KeyBlock   int             // tokens per key scale
	ValueGroup int             // channels per value scale
}

// Inspect reads and checks a blob's header and its size without decoding it.
func Inspect(blob []byte) (Header, error) {
	h, _, err := inspect(blob)
	return h, err
}

func inspect(blob []byte) (Header, *layout, error) {
	if len(blob) < headerSize || !bytes.HasPrefix(blob, []byte(magic)) {
		return Header{}, nil, fmt.Errorf("%w: no header", ErrCorrupt)
	}
	if blob[8] != version {
		return Header{}, nil, fmt.Errorf("%w: version %d", ErrCorrupt, blob[8])
	}
	h := Header{
		Mode:       Mode(blob[9]),
		KeyBlock:   int(binary.LittleEndian.Uint16(blob[12:])),
		ValueGroup: int(binary.LittleEndian.Uint16(blob[14:])),
	}
	if !h.Mode.valid() {
		return Header{}, nil, fmt.Errorf("%w: mode %d", ErrCorrupt, blob[9])
	}
	if binary.LittleEndian.Uint16(blob[10:]) != 0 || binary.LittleEndian.Uint32(blob[44:]) != 0 {
		return Header{}, nil, fmt.Errorf("%w: reserved fields set", ErrCorrupt)
	}
	if h.KeyBlock == 0 || h.ValueGroup == 0 {
		return Header{}, nil, fmt.Errorf("%w: zero group size", ErrCorrupt)
	}
	c, err := kvmeta.Parse(blob[16:44])
	if err != nil {
		return Header{}, nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	h.Meta = c.Groups[0]
	if !h.Meta.IsKV() || !h.Meta.IsHalf() {
		return Header{}, nil, fmt.Errorf("%w: metadata %v", ErrCorrupt, h.Meta)
	}
	l, err := newLayout(h.Mode, h.Meta, h.KeyBlock, h.ValueGroup)
	if err != nil {
		return Header{}, nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	if l.size != len(blob) {
		return Header{}, nil, fmt.Errorf("%w: %d bytes, header implies %d", ErrCorrupt, len(blob), l.size)
	}
	return h, l, nil
}

// Decode reverses Encode: it returns a chunk of the original dtype and exact
// length, and the original metadata. Any input is safe: errors wrap
// ErrCorrupt, and the output is allocated only after the blob's size has
// been checked against its header (so at most 4x the blob's size).
func Decode(blob []byte) ([]byte, kvmeta.Metadata, error) {
	_, l, err := inspect(blob)
	if err != nil {
		return nil, kvmeta.Metadata{}, err
	}
	out := make([]byte, l.meta.Length)
	if err := decode(out, blob, l); err != nil {
		return nil, kvmeta.Metadata{}, err
	}
	return out, l.meta, nil
}

// DecodeInto decodes into dst, which must be exactly Meta.Length bytes
// (see Inspect), so that a caller can decode straight into a reply buffer.
// After an error, dst holds an unspecified mix of old and decoded bytes.
func DecodeInto(dst, blob []byte) (kvmeta.Metadata, error) {
	_, l, err := inspect(blob)
	if err != nil {
		return kvmeta.Metadata{}, err
	}
	if int64(len(dst)) != l.meta.Length {
		return kvmeta.Metadata{}, fmt.Errorf("codec: destination is %d bytes, chunk is %d", len(dst), l.meta.Length)
	}
	return l.meta, decode(dst, blob, l)
}

func decode(out, blob []byte, l *layout) error {
	d := newCoder(l)
	p := blob[headerSize:]
	var err error
	for pl := range l.keyPlanes {
		if p, err = d.decodeKeys(out, p, pl); err != nil {
			return err
		}
	}
	for pl := range l.valuePlanes {
		if p, err = d.decodeValues(out, p, pl); err != nil {
			return err
		}
	}
	return nil
}

// coder holds the per-call scratch: one float32 row, per-channel maxima,
// scales and inverse scales, int4 codes, and the fp8 table.
type coder struct {
	*layout
	bf16  bool
	qmax  float64
	rqmax float64 // 1/qmax
	row   []float32
	lanes []uint64 // per-channel magnitude maxima, four 16-bit lanes each
	scale []float32
	inv   []float32
	codes []int8
	fp8   *[256]float32
}

func newCoder(l *layout) *coder {
	_, _, qmax := l.mode.groups()
	c := &coder{layout: l, bf16: l.meta.DType == kvmeta.DTypeBFloat16, qmax: qmax, rqmax: 1 / qmax,
		row: make([]float32, l.d), lanes: make([]uint64, (l.d+3)/4),
		scale: make([]float32, l.d), inv: make([]float32, l.d)}
	switch l.mode {
	case Int4:
		c.codes = make([]int8, l.d)
	case FP8:
		c.fp8 = new([256]float32)
		e4m3Table(c.fp8)
	}
	return c
}

// scaleFor returns the scale stored for a group whose largest magnitude has
// the 16-bit float bits h, and the inverse the encoder multiplies by; ok is
// false when h is an infinity or NaN.
//
// A bfloat16 group whose magnitudes are all below qmax*2^-126 (about 1e-36
// for int8) would need an inverse beyond the float32 range; such groups get
// scale 2^-126 and inverse 2^126 instead, both exact, so they quantize with
// an absolute step of 2^-126 rather than relative to their size.
func (c *coder) scaleFor(h uint16) (scale, inv float32, ok bool) {
	var amax float32
	if c.bf16 {
		if h >= 0x7f80 {
			return 0, 0, false
		}
		amax = BF16ToFloat32(h)
	} else {
		if h >= 0x7c00 {
			return 0, 0, false
		}
		amax = FP16ToFloat32(h)
	}
	if amax == 0 {
		return 0, 0, true
	}
	inv64 := c.qmax / float64(amax)
	if inv64 > 0x1p126 {
		return 0x1p-126, 0x1p126, true
	}
	// One division: the scale only has to be close to 1/inv, and the decoder
	// uses whatever was stored.
	return float32(float64(amax) * c.rqmax), float32(inv64), true
}

func (c *coder) widen(dst []float32, src []byte) {
	if c.bf16 {
		widenBF16(dst, src)
	} else {
		widenFP16(dst, src)
	}
}

func (c *coder) narrow(dst []byte, src []float32) {
	if c.bf16 {
		narrowBF16(dst, src)
	} else {
		narrowFP16(dst, src)
	}
}

var errNonFinite = fmt.Errorf("%w: chunk holds infinities or NaN", ErrUnsupported)

// encodeKeys writes one key plane: per block of keyBlock tokens, d scales
// then the codes of each row. The block's rows are read twice: once for the
// per-channel maxima, once to quantize; a block (64 rows of 2 KiB for
// Llama-3.1-8B) stays in cache between the two.
func (c *coder) encodeKeys(p, data []byte, pl plane) ([]byte, error) {
	d, rb := c.d, 2*c.d
	for b0 := 0; b0 < c.t; b0 += c.keyBlock {
		n := min(c.keyBlock, c.t-b0)
		clear(c.lanes)
		for r := b0; r < b0+n; r++ {
			o := pl.off + r*pl.stride
			halfAbsMaxLanes(c.lanes, data[o:o+rb])
		}
		for i := 0; i < d; i++ {
			h := uint16(c.lanes[i/4] >> (16 * (i % 4)))
			var ok bool
			if c.scale[i], c.inv[i], ok = c.scaleFor(h); !ok {
				return nil, errNonFinite
			}
			binary.LittleEndian.PutUint32(p[4*i:], math.Float32bits(c.scale[i]))
		}
		p = p[4*d:]
		for r := b0; r < b0+n; r++ {
			o := pl.off + r*pl.stride
			if c.mode == Int8 && c.bf16 {
				quantInt8VecBF16(p, data[o:o+rb], c.inv[:d])
				p = p[c.rowCodes:]
				continue
			}
			c.widen(c.row, data[o:o+rb])
			switch c.mode {
			case Int8:
				quantInt8Vec(p, c.row, c.inv)
			case FP8:
				quantFP8Vec(p, c.row, c.inv)
			case Int4:
				quantInt4Vec(c.codes, c.row, c.inv)
				packInt4(p, c.codes)
			}
			p = p[c.rowCodes:]
		}
	}
	return p, nil
}

// encodeValues writes one value plane: per token, the scales of its channel
// groups then the codes of the row.
func (c *coder) encodeValues(p, data []byte, pl plane) ([]byte, error) {
	d, g, rb := c.d, c.valueGroup, 2*c.d
	ng := (d + g - 1) / g
	for r := 0; r < c.t; r++ {
		o := pl.off + r*pl.stride
		raw := data[o : o+rb]
		for j := 0; j < ng; j++ {
			var ok bool
			h := halfAbsMax(raw[2*j*g : 2*min(j*g+g, d)])
			if c.scale[j], c.inv[j], ok = c.scaleFor(h); !ok {
				return nil, errNonFinite
			}
			binary.LittleEndian.PutUint32(p[4*j:], math.Float32bits(c.scale[j]))
		}
		codes := p[4*ng:]
		if c.mode == Int8 && c.bf16 {
			for j := 0; j < ng; j++ {
				quantInt8BF16(codes[j*g:], raw[2*j*g:2*min(j*g+g, d)], c.inv[j])
			}
			p = codes[c.rowCodes:]
			continue
		}
		c.widen(c.row, raw)
		for j := 0; j < ng; j++ {
			x := c.row[j*g : min(j*g+g, d)]
			switch c.mode {
			case Int8:
				quantInt8(codes[j*g:], x, c.inv[j])
			case FP8:
				quantFP8(codes[j*g:], x, c.inv[j])
			case Int4:
				quantInt4(c.codes[j*g:], x, c.inv[j])
			}
		}
		if c.mode == Int4 {
			packInt4(codes, c.codes)
		}
		p = codes[c.rowCodes:]
	}
	return p, nil
}

// readScales copies n float32 scales from p into dst, refusing values an
// encoder cannot have written (negative, infinite, NaN).
func readScales(dst []float32, p []byte) error {
	p = p[:4*len(dst)]
	for i := range dst {
		s := math.Float32frombits(binary.LittleEndian.Uint32(p[4*i:]))
		if !(s >= 0 && s <= math.MaxFloat32) {
			return fmt.Errorf("%w: scale %v", ErrCorrupt, s)
		}
		dst[i] = s
	}
	return nil
}

func (c *coder) decodeKeys(out, p []byte, pl plane) ([]byte, error) {
	d, rb := c.d, 2*c.d
	for b0 := 0; b0 < c.t; b0 += c.keyBlock {
		n := min(c.keyBlock, c.t-b0)
		if err := readScales(c.scale, p); err != nil {
			return nil, err
		}
		p = p[4*d:]
		for r := b0; r < b0+n; r++ {
			o := pl.off + r*pl.stride
			if c.mode == Int8 && c.bf16 {
				dequantInt8VecBF16(out[o:o+rb], p, c.scale[:d])
				p = p[c.rowCodes:]
				continue
			}
			switch c.mode {
			case Int8:
				dequantInt8Vec(c.row, p, c.scale)
			case FP8:
				dequantFP8Vec(c.row, p, c.scale, c.fp8)
			case Int4:
				unpackInt4(c.codes, p)
				dequantCodesVec(c.row, c.codes, c.scale)
			}
			p = p[c.rowCodes:]
			c.narrow(out[o:o+rb], c.row)
		}
	}
	return p, nil
}

func (c *coder) decodeValues(out, p []byte, pl plane) ([]byte, error) {
	d, g, rb := c.d, c.valueGroup, 2*c.d
	ng := (d + g - 1) / g
	scales := c.scale[:ng] // ng <= d
	for r := 0; r < c.t; r++ {
		if err := readScales(scales, p); err != nil {
			return nil, err
		}
		codes := p[4*ng:]
		o := pl.off + r*pl.stride
		if c.mode == Int8 && c.bf16 {
			for j, s := range scales {
				dequantInt8BF16(out[o+2*j*g:o+2*min(j*g+g, d)], codes[j*g:], s)
			}
			p = codes[c.rowCodes:]
			continue
		}
		if c.mode == Int4 {
			unpackInt4(c.codes, codes)
		}
		for j, s := range scales {
			x := c.row[j*g : min(j*g+g, d)]
			switch c.mode {
			case Int8:
				dequantInt8(x, codes[j*g:], s)
			case FP8:
				dequantFP8(x, codes[j*g:], s, c.fp8)
			case Int4:
				dequantCodes(x, c.codes[j*g:], s)
			}
		}
		p = codes[c.rowCodes:]
		c.narrow(out[o:o+rb], c.row)
	}
	return p, nil
}
