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
func appendListpackEntry(b []byte, s []byte) []byte {
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
	b = append(b, 0xFF)
	binary.LittleEndian.PutUint32(b, uint32(len(b)))
	count := len(elems)
	if count > 65535 {
		count = 65535
	}
	binary.LittleEndian.PutUint16(b[4:], uint16(count))
	return b
}

var errListpack = errors.New("rdb: bad listpack")

// parseListpack decodes a listpack's elements.
func parseListpack(lp []byte) ([]string, error) {
	if len(lp) < lpHeaderSize+1 || int(binary.LittleEndian.Uint32(lp)) != len(lp) || lp[len(lp)-1] != 0xFF {
		return nil, errListpack
	}
	var out []string
	p := lp[lpHeaderSize : len(lp)-1]
	for len(p) > 0 {
		s, size, err := listpackEntry(p)
		if err != nil {
			return nil, err
		}
		// Skip the backlen, checking it.
		n := backlenSize(uint64(size))
		if size+n > len(p) {
			return nil, errListpack
		}
		out = append(out, s)
		p = p[size+n:]
	}
	if count := binary.LittleEndian.Uint16(lp[4:]); count != 65535 && int(count) != len(out) {
		return nil, errListpack
	}
	return out, nil
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
func listpackEntry(p []byte) (string, int, error) {
	c := p[0]
	need := func(n int) bool { return len(p) >= n }
	intOf := func(u uint64, bits uint) string {
		v := int64(u<<(64-bits)) >> (64 - bits)
		return strconv.FormatInt(v, 10)
	}
	switch {
	case c&0x80 == 0:
		return strconv.Itoa(int(c)), 1, nil
	case c&0xC0 == 0x80:
		n := int(c & 0x3F)
		if !need(1 + n) {
			return "", 0, errListpack
		}
		return string(p[1 : 1+n]), 1 + n, nil
	case c&0xE0 == 0xC0:
		if !need(2) {
			return "", 0, errListpack
		}
		return intOf(uint64(c&0x1F)<<8|uint64(p[1]), 13), 2, nil
	case c&0xF0 == 0xE0:
		if !need(2) {
			return "", 0, errListpack
		}
		n := int(c&0x0F)<<8 | int(p[1])
		if !need(2 + n) {
			return "", 0, errListpack
		}
		return string(p[2 : 2+n]), 2 + n, nil
	case c == 0xF0:
		if !need(5) {
			return "", 0, errListpack
		}
		n := int(binary.LittleEndian.Uint32(p[1:]))
		if n < 0 || !need(5+n) {
			return "", 0, errListpack
		}
		return string(p[5 : 5+n]), 5 + n, nil
	case c >= 0xF1 && c <= 0xF4:
		width := map[byte]int{0xF1: 2, 0xF2: 3, 0xF3: 4, 0xF4: 8}[c]
		if !need(1 + width) {
			return "", 0, errListpack
		}
		var u uint64
		for i := width - 1; i >= 0; i-- {
			u = u<<8 | uint64(p[1+i])
		}
		return intOf(u, uint(8*width)), 1 + width, nil
	}
	return "", 0, errListpack
}
