package rdb

import (
	"encoding/binary"

	"github.com/kvserver/kvserver/listpack"
)

// RDB object types and string encodings (rdb.h).
const (
	typeString       = 0
	typeList         = 1
	typeSet          = 2
	typeZSet         = 3
	typeHash         = 4
	typeZSet2        = 5
	typeZSetZiplist  = 12
	typeSetIntset    = 11
	typeListQuick    = 14
	typeListQuick2   = 18
	typeHashZiplist  = 13
	typeHashListpack = 16
	typeZSetListpack = 17
	// Streams: Redis 5 and 6's, then 7.0's.
	typeStreamListpacks  = 15
	typeStreamListpacks2 = 19

	encInt8  = 0
	encInt16 = 1
	encInt32 = 2
	encLZF   = 3

	// rdbVersion is the RDB version Redis 7.0 writes (RDB_VERSION).
	rdbVersion = 10
)

// appendLen is rdbSaveLen.
func appendLen(b []byte, n uint64) []byte {
	switch {
	case n < 1<<6:
		return append(b, byte(n))
	case n < 1<<14:
		return append(b, byte(n>>8)|0x40, byte(n))
	case n <= 0xffffffff:
		b = append(b, 0x80)
		return binary.BigEndian.AppendUint32(b, uint32(n))
	}
	b = append(b, 0x81)
	return binary.BigEndian.AppendUint64(b, n)
}

// appendEncodedInt is rdbEncodeInteger: false when v needs more than 32
// bits.
func appendEncodedInt(b []byte, v int64) ([]byte, bool) {
	switch {
	case v >= -1<<7 && v < 1<<7:
		return append(b, 0xC0|encInt8, byte(v)), true
	case v >= -1<<15 && v < 1<<15:
		return append(b, 0xC0|encInt16, byte(v), byte(v>>8)), true
	case v >= -1<<31 && v < 1<<31:
		return binary.LittleEndian.AppendUint32(append(b, 0xC0|encInt32), uint32(v)), true
	}
	return b, false
}

// appendString is rdbSaveRawString with rdbcompression on: a short
// integer as an integer, a string over 20 bytes LZF-compressed when that
// saves at least four bytes, otherwise as it is.
func appendString(b []byte, s []byte) []byte {
	if len(s) <= 11 {
		if v, ok := listpack.CanonicalInt(s); ok {
			if out, ok := appendEncodedInt(b, v); ok {
				return out
			}
		}
	}
	if len(s) > 20 {
		if c := lzfCompress(s, len(s)-4); c != nil {
			b = append(b, 0xC0|encLZF)
			b = appendLen(b, uint64(len(c)))
			b = appendLen(b, uint64(len(s)))
			return append(b, c...)
		}
	}
	b = appendLen(b, uint64(len(s)))
	return append(b, s...)
}

// AppendFooter adds a DUMP payload's footer to a serialized value: the
// RDB version and the CRC64 of everything before.
func AppendFooter(b []byte) []byte {
	b = binary.LittleEndian.AppendUint16(b, rdbVersion)
	return binary.LittleEndian.AppendUint64(b, crc64Jones(0, b))
}
