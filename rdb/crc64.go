package rdb

import "hash/crc64"

// Redis's CRC64 is Jones's polynomial, reflected, starting at 0 with no
// final inversion (crc64.c); hash/crc64 inverts before and after, which
// crc64Jones undoes.
var jonesTable = crc64.MakeTable(0x95ac9329ac4bc9b5)

// crc64Jones continues Redis's crc64(crc, p).
func crc64Jones(crc uint64, p []byte) uint64 {
	return ^crc64.Update(^crc, jonesTable, p)
}
