// Package listpack reads and writes Redis's listpack encoding
// (listpack.c): a 6-byte header (total bytes, element count), the
// elements, each an encoding, its data and its length backwards, and a
// 0xFF terminator. Strings that are canonical integers are stored as
// integers, as lpAppend stores them.
//
// It is the encoding only: the RDB payloads of package rdb and the
// stream nodes of package datatype build on it; it knows neither.
package listpack

import (
	"encoding/binary"
	"errors"
	"strconv"
)

// HeaderSize is the size of a listpack's header.
const HeaderSize = 6

// unknownCount is LP_HDR_NUMELE_UNKNOWN: the header's count of a
// listpack of 65535 elements or more.
const unknownCount = 65535

// ErrCorrupt is returned for bytes that are not a listpack.
var ErrCorrupt = errors.New("bad listpack")

// CanonicalInt parses s as Redis's string2ll does when the result must
// print back as s (no sign other than '-', no leading zeros or spaces).
func CanonicalInt[T string | []byte](s T) (int64, bool) {
	if len(s) == 0 || len(s) > 20 {
		return 0, false
	}
	v, err := strconv.ParseInt(string(s), 10, 64)
	if err != nil || strconv.FormatInt(v, 10) != string(s) {
		return 0, false
	}
	return v, true
}

// Start returns buf[:0] with room for the header, for appending elements
// and then Finish.
func Start(buf []byte) []byte { return append(buf[:0], make([]byte, HeaderSize)...) }

// Finish completes a listpack of count elements appended after Start:
// the terminator and the header.
func Finish(b []byte, count int) []byte {
	b = append(b, 0xFF)
	binary.LittleEndian.PutUint32(b, uint32(len(b)))
	SetCount(b, count)
	return b
}

// SetCount writes count into lp's header, saturated as Redis does.
func SetCount(lp []byte, count int) {
	binary.LittleEndian.PutUint16(lp[4:], uint16(min(count, unknownCount)))
}

// Build encodes elems as a listpack.
func Build(elems [][]byte) []byte {
	b := Start(make([]byte, 0, HeaderSize+16*len(elems)+1))
	for _, e := range elems {
		b = AppendString(b, e)
	}
	return Finish(b, len(elems))
}

// AppendString appends one element, as an integer when s is one.
func AppendString[T string | []byte](b []byte, s T) []byte {
	start := len(b)
	if v, ok := CanonicalInt(s); ok {
		b = appendInt(b, v)
	} else {
		switch n := len(s); {
		case n < 64:
			b = append(b, 0x80|byte(n))
		case n < 4096:
			b = append(b, 0xE0|byte(n>>8), byte(n))
		default:
			b = binary.LittleEndian.AppendUint32(append(b, 0xF0), uint32(n))
		}
		b = append(b, s...)
	}
	return appendBacklen(b, uint64(len(b)-start))
}

// AppendInt appends an integer element (lpAppendInteger).
func AppendInt(b []byte, v int64) []byte {
	start := len(b)
	b = appendInt(b, v)
	return appendBacklen(b, uint64(len(b)-start))
}

func appendInt(b []byte, v int64) []byte {
	switch {
	case v >= 0 && v <= 127:
		return append(b, byte(v))
	case v >= -4096 && v <= 4095:
		u := uint64(v) & (1<<13 - 1)
		return append(b, byte(u>>8)|0xC0, byte(u))
	case v >= -32768 && v <= 32767:
		return append(b, 0xF1, byte(v), byte(v>>8))
	case v >= -8388608 && v <= 8388607:
		return append(b, 0xF2, byte(v), byte(v>>8), byte(v>>16))
	case v >= -2147483648 && v <= 2147483647:
		return binary.LittleEndian.AppendUint32(append(b, 0xF3), uint32(v))
	}
	return binary.LittleEndian.AppendUint64(append(b, 0xF4), uint64(v))
}

// IntSize is the size of an integer element, its back length included.
func IntSize(v int64) int {
	var buf [16]byte
	return len(AppendInt(buf[:0], v))
}

// appendBacklen is lpEncodeBacklen.
func appendBacklen(b []byte, l uint64) []byte {
	switch {
	case l <= 127:
		return append(b, byte(l))
	case l < 16383:
		return append(b, byte(l>>7), byte(l&127)|128)
	case l < 2097151:
		return append(b, byte(l>>14), byte((l>>7)&127)|128, byte(l&127)|128)
	case l < 268435455:
		return append(b, byte(l>>21), byte((l>>14)&127)|128, byte((l>>7)&127)|128, byte(l&127)|128)
	}
	return append(b, byte(l>>28), byte((l>>21)&127)|128, byte((l>>14)&127)|128, byte((l>>7)&127)|128, byte(l&127)|128)
}

func backlenSize(l uint64) int {
	switch {
	case l <= 127:
		return 1
	case l < 16383:
		return 2
	case l < 2097151:
		return 3
	case l < 268435455:
		return 4
	}
	return 5
}

// Elem is one decoded element: a string (aliasing the listpack), or an
// integer when IsInt.
type Elem struct {
	Str   []byte
	Int   int64
	IsInt bool
}

// String is the element as Redis returns it.
func (e Elem) String() string {
	if e.IsInt {
		return strconv.FormatInt(e.Int, 10)
	}
	return string(e.Str)
}

// AppendText appends the element as Redis returns it.
func (e Elem) AppendText(b []byte) []byte {
	if e.IsInt {
		return strconv.AppendInt(b, e.Int, 10)
	}
	return append(b, e.Str...)
}

// Equal reports whether the element is s.
func (e Elem) Equal(s string) bool {
	if !e.IsInt {
		return string(e.Str) == s
	}
	v, ok := CanonicalInt(s)
	return ok && v == e.Int
}

// Next decodes the element at the start of p and returns it with its
// whole size (encoding, data and back length, which it checks).
func Next(p []byte) (Elem, int, error) {
	e, size, err := decode(p)
	if err != nil {
		return e, 0, err
	}
	bl := backlenSize(uint64(size))
	if size+bl > len(p) || !backlenIs(p[size:size+bl], uint64(size)) {
		return e, 0, ErrCorrupt
	}
	return e, size + bl, nil
}

// NextTrusted is Next for a listpack already checked (by Range, or
// because this process built it): it does not check the back length.
// It panics on bytes that are not an element.
func NextTrusted(p []byte) (Elem, int) {
	// The encodings of small integers and short strings first: most of
	// a stream's elements.
	switch c := p[0]; {
	case c < 0x80:
		return Elem{Int: int64(c), IsInt: true}, 2
	case c < 0xC0:
		n := int(c & 0x3F)
		return Elem{Str: p[1 : 1+n]}, 2 + n
	case c < 0xE0: // 13-bit integers: millisecond deltas in a node
		return Elem{Int: int64(uint64(c&0x1F)<<8|uint64(p[1])) << 51 >> 51, IsInt: true}, 3
	}
	e, size, err := decode(p)
	if err != nil {
		panic("listpack: NextTrusted on a damaged listpack")
	}
	return e, size + backlenSize(uint64(size))
}

// TextLen is the length of the element as Redis returns it.
func (e Elem) TextLen() int {
	if !e.IsInt {
		return len(e.Str)
	}
	var buf [20]byte
	return len(strconv.AppendInt(buf[:0], e.Int, 10))
}

// backlenIs reports whether b encodes l as appendBacklen does.
func backlenIs(b []byte, l uint64) bool {
	var buf [5]byte
	return string(appendBacklen(buf[:0], l)) == string(b)
}

// Check verifies lp's header (its size) and terminator and returns its
// elements' bytes.
func Check(lp []byte) ([]byte, error) {
	if len(lp) < HeaderSize+1 || int(binary.LittleEndian.Uint32(lp)) != len(lp) || lp[len(lp)-1] != 0xFF {
		return nil, ErrCorrupt
	}
	return lp[HeaderSize : len(lp)-1], nil
}

// Range checks lp and calls fn on each element until fn returns false;
// it checks the header's count when it reaches the end.
func Range(lp []byte, fn func(e Elem) bool) error {
	p, err := Check(lp)
	if err != nil {
		return err
	}
	n := 0
	for len(p) > 0 {
		e, size, err := Next(p)
		if err != nil {
			return err
		}
		n++
		p = p[size:]
		if !fn(e) {
			return nil
		}
	}
	if count := binary.LittleEndian.Uint16(lp[4:]); count != unknownCount && int(count) != n {
		return ErrCorrupt
	}
	return nil
}

// Parse decodes a listpack's elements as strings.
func Parse(lp []byte) ([]string, error) {
	var out []string
	err := Range(lp, func(e Elem) bool {
		out = append(out, e.String())
		return true
	})
	return out, err
}

// decode decodes the element at the start of p: its value and the size
// of its encoding and data.
func decode(p []byte) (Elem, int, error) {
	if len(p) == 0 {
		return Elem{}, 0, ErrCorrupt
	}
	c := p[0]
	need := func(n int) bool { return len(p) >= n }
	intOf := func(u uint64, bits uint) Elem {
		return Elem{Int: int64(u<<(64-bits)) >> (64 - bits), IsInt: true}
	}
	switch {
	case c&0x80 == 0:
		return Elem{Int: int64(c), IsInt: true}, 1, nil
	case c&0xC0 == 0x80:
		n := int(c & 0x3F)
		if !need(1 + n) {
			return Elem{}, 0, ErrCorrupt
		}
		return Elem{Str: p[1 : 1+n]}, 1 + n, nil
	case c&0xE0 == 0xC0:
		if !need(2) {
			return Elem{}, 0, ErrCorrupt
		}
		return intOf(uint64(c&0x1F)<<8|uint64(p[1]), 13), 2, nil
	case c&0xF0 == 0xE0:
		if !need(2) {
			return Elem{}, 0, ErrCorrupt
		}
		n := int(c&0x0F)<<8 | int(p[1])
		if !need(2 + n) {
			return Elem{}, 0, ErrCorrupt
		}
		return Elem{Str: p[2 : 2+n]}, 2 + n, nil
	case c == 0xF0:
		if !need(5) {
			return Elem{}, 0, ErrCorrupt
		}
		n := int(binary.LittleEndian.Uint32(p[1:]))
		if !need(5 + n) {
			return Elem{}, 0, ErrCorrupt
		}
		return Elem{Str: p[5 : 5+n]}, 5 + n, nil
	case c >= 0xF1 && c <= 0xF4:
		width := [...]int{2, 3, 4, 8}[c-0xF1]
		if !need(1 + width) {
			return Elem{}, 0, ErrCorrupt
		}
		var u uint64
		for i := width - 1; i >= 0; i-- {
			u = u<<8 | uint64(p[1+i])
		}
		return intOf(u, uint(8*width)), 1 + width, nil
	}
	return Elem{}, 0, ErrCorrupt
}
