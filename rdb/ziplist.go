package rdb

import (
	"encoding/binary"
	"errors"
	"strconv"
)

// Ziplists (ziplist.c), which RDB files and DUMP payloads of Redis before
// 7.0 hold: zlbytes, zltail, zllen, entries (previous length, encoding,
// data), 0xFF.

var errZiplist = errors.New("rdb: bad ziplist")

// parseZiplist decodes a ziplist's elements.
func parseZiplist(zl []byte) ([]string, error) {
	if len(zl) < 11 || int(binary.LittleEndian.Uint32(zl)) != len(zl) || zl[len(zl)-1] != 0xFF {
		return nil, errZiplist
	}
	var out []string
	p := zl[10 : len(zl)-1]
	for len(p) > 0 {
		// previous entry length: 1 byte, or 0xFE and 4 bytes.
		if p[0] == 0xFE {
			if len(p) < 5 {
				return nil, errZiplist
			}
			p = p[5:]
		} else {
			p = p[1:]
		}
		if len(p) == 0 {
			return nil, errZiplist
		}
		s, n, err := ziplistEntry(p)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
		p = p[n:]
	}
	return out, nil
}

// ziplistEntry decodes the encoding and data at the start of p.
func ziplistEntry(p []byte) (string, int, error) {
	c := p[0]
	str := func(hdr, n int) (string, int, error) {
		if n < 0 || len(p) < hdr+n {
			return "", 0, errZiplist
		}
		return string(p[hdr : hdr+n]), hdr + n, nil
	}
	integer := func(width int) (string, int, error) {
		if len(p) < 1+width {
			return "", 0, errZiplist
		}
		var u uint64
		for i := width - 1; i >= 0; i-- {
			u = u<<8 | uint64(p[1+i])
		}
		bits := uint(8 * width)
		return strconv.FormatInt(int64(u<<(64-bits))>>(64-bits), 10), 1 + width, nil
	}
	switch {
	case c>>6 == 0:
		return str(1, int(c&0x3F))
	case c>>6 == 1:
		if len(p) < 2 {
			return "", 0, errZiplist
		}
		return str(2, int(c&0x3F)<<8|int(p[1]))
	case c == 0x80:
		if len(p) < 5 {
			return "", 0, errZiplist
		}
		return str(5, int(binary.BigEndian.Uint32(p[1:])))
	case c == 0xC0:
		return integer(2)
	case c == 0xD0:
		return integer(4)
	case c == 0xE0:
		return integer(8)
	case c == 0xF0:
		return integer(3)
	case c == 0xFE:
		return integer(1)
	case c >= 0xF1 && c <= 0xFD:
		return strconv.Itoa(int(c&0x0F) - 1), 1, nil
	}
	return "", 0, errZiplist
}
