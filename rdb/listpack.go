package rdb

import (
	"encoding/binary"
	"errors"
	"strconv"
)

// Listpacks (listpack.c): a 6-byte header (total bytes, element count),
// the entries, each an encoding, its data and its length backwards, and a
// 0xFF terminator. Strings that are integers are stored as integers, as
// lpAppend does.

const lpHeaderSize = 6

// appendListpackEntry appends one element.
func appendListpackEntry[T string | []byte](b []byte, s T) []byte {
	start := len(b)
	if v, ok := canonicalInt(s); ok {
		b = appendListpackInt(b, v)
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

// appendListpackIntEntry appends an integer element (lpAppendInteger).
func appendListpackIntEntry(b []byte, v int64) []byte {
	start := len(b)
	b = appendListpackInt(b, v)
	return appendBacklen(b, uint64(len(b)-start))
}

func appendListpackInt(b []byte, v int64) []byte {
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

// buildListpack encodes elems as a listpack.
func buildListpack(elems [][]byte) []byte {
	b := make([]byte, lpHeaderSize, lpHeaderSize+16*len(elems)+1)
	for _, e := range elems {
		b = appendListpackEntry(b, e)
	}
	return finishListpack(b, len(elems))
}

// finishListpack completes a listpack of count elements appended after
// lpHeaderSize reserved bytes: the terminator and the header.
func finishListpack(b []byte, count int) []byte {
	b = append(b, 0xFF)
	binary.LittleEndian.PutUint32(b, uint32(len(b)))
	if count > 65535 {
		count = 65535 // LP_HDR_NUMELE_UNKNOWN
	}
	binary.LittleEndian.PutUint16(b[4:], uint16(count))
	return b
}

var errListpack = errors.New("rdb: bad listpack")

// parseListpack decodes a listpack's elements.
func parseListpack(lp []byte) ([]string, error) {
	var out []string
	err := rangeListpack(lp, func(e lpElem) bool {
		out = append(out, e.String())
		return true
	})
	return out, err
}

// lpElem is one decoded listpack element: a string, or an integer when
// isInt.
type lpElem struct {
	str   []byte
	v     int64
	isInt bool
}

// String is the element as Redis returns it.
func (e lpElem) String() string {
	if e.isInt {
		return strconv.FormatInt(e.v, 10)
	}
	return string(e.str)
}

// rangeListpack checks lp's header and terminator and calls fn on each
// element (strings alias lp) until fn returns false; it checks the
// header's count when it reaches the end.
func rangeListpack(lp []byte, fn func(e lpElem) bool) error {
	if len(lp) < lpHeaderSize+1 || int(binary.LittleEndian.Uint32(lp)) != len(lp) || lp[len(lp)-1] != 0xFF {
		return errListpack
	}
	n := 0
	p := lp[lpHeaderSize : len(lp)-1]
	for len(p) > 0 {
		e, size, err := listpackEntry(p)
		if err != nil {
			return err
		}
		// Skip the backlen, checking it.
		bl := backlenSize(uint64(size))
		if size+bl > len(p) {
			return errListpack
		}
		n++
		p = p[size+bl:]
		if !fn(e) {
			return nil
		}
	}
	if count := binary.LittleEndian.Uint16(lp[4:]); count != 65535 && int(count) != n {
		return errListpack
	}
	return nil
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

// listpackEntry decodes the entry at the start of p: its value and the
// size of its encoding and data.
func listpackEntry(p []byte) (lpElem, int, error) {
	c := p[0]
	need := func(n int) bool { return len(p) >= n }
	intOf := func(u uint64, bits uint) lpElem {
		return lpElem{v: int64(u<<(64-bits)) >> (64 - bits), isInt: true}
	}
	switch {
	case c&0x80 == 0:
		return lpElem{v: int64(c), isInt: true}, 1, nil
	case c&0xC0 == 0x80:
		n := int(c & 0x3F)
		if !need(1 + n) {
			return lpElem{}, 0, errListpack
		}
		return lpElem{str: p[1 : 1+n]}, 1 + n, nil
	case c&0xE0 == 0xC0:
		if !need(2) {
			return lpElem{}, 0, errListpack
		}
		return intOf(uint64(c&0x1F)<<8|uint64(p[1]), 13), 2, nil
	case c&0xF0 == 0xE0:
		if !need(2) {
			return lpElem{}, 0, errListpack
		}
		n := int(c&0x0F)<<8 | int(p[1])
		if !need(2 + n) {
			return lpElem{}, 0, errListpack
		}
		return lpElem{str: p[2 : 2+n]}, 2 + n, nil
	case c == 0xF0:
		if !need(5) {
			return lpElem{}, 0, errListpack
		}
		n := int(binary.LittleEndian.Uint32(p[1:]))
		if n < 0 || !need(5+n) {
			return lpElem{}, 0, errListpack
		}
		return lpElem{str: p[5 : 5+n]}, 5 + n, nil
	case c >= 0xF1 && c <= 0xF4:
		width := map[byte]int{0xF1: 2, 0xF2: 3, 0xF3: 4, 0xF4: 8}[c]
		if !need(1 + width) {
			return lpElem{}, 0, errListpack
		}
		var u uint64
		for i := width - 1; i >= 0; i-- {
			u = u<<8 | uint64(p[1+i])
		}
		return intOf(u, uint(8*width)), 1 + width, nil
	}
	return lpElem{}, 0, errListpack
}
