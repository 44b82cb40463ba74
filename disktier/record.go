package disktier

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/cespare/xxhash/v2"
	"github.com/kvserver/kvserver/grouping"
	"github.com/zeebo/xxh3"
)

// Pebble key layout. Every record has a header key; records whose stored
// payload is larger than inlineMax also have a value key. Both are written in
// the same batch, so a reader never sees one without the other.
//
//	'h' db(uint32 big-endian) userkey -> header [+ payload when inline]
//	'v' db(uint32 big-endian) userkey -> payload
//	'm' "format"                      -> store format version, grouping version (one byte each)
//
// Headers live in their own key range so that a full scan (Iterate, the
// accounting scan in Open) reads only small sstable blocks and never touches
// the blob files that hold the large payloads. The database number is part of
// the key so that FlushDB is two range deletions.
const (
	prefixHeader = 'h'
	prefixValue  = 'v'
	prefixMeta   = 'm'

	// keyPrefixLen is the prefix byte plus the database number.
	keyPrefixLen = 1 + 4

	// inlineMax is the largest payload stored inside the header value. LMCache's
	// 28-byte metadata values then cost one Pebble key instead of two.
	inlineMax = 256
)

var formatKey = []byte{prefixMeta, 'f', 'o', 'r', 'm', 'a', 't'}

// storeFormat is the first byte stored under formatKey; Open refuses a
// directory written in a format it does not know. Format 2 stores may hold
// value-log records whose pieces are hashed with XXH3 (flagXXH3), which a
// build that knows only format 1 would take for damaged records and
// delete; it refuses a format 2 store instead. Format 1 stores hold none:
// Open takes them and marks them format 2 before it writes to them.
const (
	storeFormat       = 2
	legacyStoreFormat = 1
)

// legacyGroupingVersion is the grouping version of a store whose format key
// holds storeFormat alone: it was written before the version was recorded,
// by code that grouped keys by rule 1.
const legacyGroupingVersion = 1

// formatValue is what a new store writes under formatKey: the store format,
// then the version of the rule that decides each record's group length
// (grouping.Version), since a record read under another rule fails its
// group check.
func formatValue() []byte { return []byte{storeFormat, grouping.Version} }

// parseFormat reads the value under formatKey: the store format and the
// grouping version it was written under.
func parseFormat(v []byte) (format, groupingVersion int, ok bool) {
	switch len(v) {
	case 1:
		return int(v[0]), legacyGroupingVersion, true
	case 2:
		return int(v[0]), int(v[1]), true
	}
	return 0, 0, false
}

// Header layout, version 1, little-endian, headerLen bytes:
//
//	off size field
//	  0    1 version (1)
//	  1    1 codec (Compression: 1 none, 2 s2, 3 zstd)
//	  2    1 flags (bit 0: payload is byte-plane shuffled; bit 1: payload inline;
//	         bit 2: the value is quantized by the caller, RecordMeta.Quantized;
//	         bit 3: the payload is in the value log; bit 4: its pieces are
//	         hashed with XXH3-64, not xxhash64)
//	  3    1 value kind, stored for the caller (RecordMeta.Kind; 0 = string)
//	  4    4 logical database number
//	  8    4 group length: the group is key[:groupLen] (see grouping.Of)
//	 12    8 expiry, unix milliseconds, 0 = none
//	 20    8 raw (uncompressed) value length
//	 28    8 stored payload length
//	 36    8 xxhash64 over header[0:36] || key || raw value
//
// The checksum covers the uncompressed value rather than the payload, so it
// also catches a codec or shuffle bug, and it covers the header fields and the
// key, so a record moved to another key or with a flipped expiry is rejected
// too. Pebble checksums its own blocks; this one is end to end.
const (
	headerVersion = 1
	headerLen     = 44
	checksumOff   = 36

	flagShuffled = 1 << 0
	// flagQuantized marks a value the caller stored in an encoded form of
	// its own (kvserver's quantized KV chunks); disktier only carries the bit.
	flagQuantized = 1 << 2
	flagInline    = 1 << 1
	knownFlags    = flagShuffled | flagInline | flagQuantized | flagVlog | flagXXH3
)

// header is the decoded form of a record header.
type header struct {
	codec     Compression
	flags     uint8
	kind      uint8
	db        uint32
	groupLen  uint32
	expireAt  int64
	rawLen    uint64
	storedLen uint64
	checksum  uint64
}

func (h *header) shuffled() bool { return h.flags&flagShuffled != 0 }
func (h *header) inline() bool   { return h.flags&flagInline != 0 }

// errBadRecord is wrapped by every decoding failure; Store turns it into
// ErrCorrupt.
var errBadRecord = errors.New("disktier: bad record")

func badRecord(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errBadRecord, fmt.Sprintf(format, args...))
}

// appendHeader appends the encoded header to dst; the checksum field is
// written as h.checksum.
func appendHeader(dst []byte, h *header) []byte {
	var b [headerLen]byte
	b[0] = headerVersion
	b[1] = byte(h.codec)
	b[2] = h.flags
	b[3] = h.kind
	binary.LittleEndian.PutUint32(b[4:], h.db)
	binary.LittleEndian.PutUint32(b[8:], h.groupLen)
	binary.LittleEndian.PutUint64(b[12:], uint64(h.expireAt))
	binary.LittleEndian.PutUint64(b[20:], h.rawLen)
	binary.LittleEndian.PutUint64(b[28:], h.storedLen)
	binary.LittleEndian.PutUint64(b[36:], h.checksum)
	return append(dst, b[:]...)
}

// decodeHeader parses and validates the fixed part of a header value. It does
// not verify the checksum, which needs the value. maxRaw bounds the raw
// length a record may claim, so that a damaged header cannot make a reader
// allocate gigabytes.
func decodeHeader(b []byte, maxRaw uint64) (header, error) {
	var h header
	if len(b) < headerLen {
		return h, badRecord("header is %d bytes, want at least %d", len(b), headerLen)
	}
	if b[0] != headerVersion {
		return h, badRecord("unknown header version %d", b[0])
	}
	h.codec = Compression(b[1])
	if !h.codec.valid() {
		return h, badRecord("unknown codec %d", b[1])
	}
	h.flags = b[2]
	if h.flags&^knownFlags != 0 {
		return h, badRecord("unknown flags %#x", b[2])
	}
	h.kind = b[3]
	h.db = binary.LittleEndian.Uint32(b[4:])
	h.groupLen = binary.LittleEndian.Uint32(b[8:])
	h.expireAt = int64(binary.LittleEndian.Uint64(b[12:]))
	h.rawLen = binary.LittleEndian.Uint64(b[20:])
	h.storedLen = binary.LittleEndian.Uint64(b[28:])
	h.checksum = binary.LittleEndian.Uint64(b[36:])
	if h.expireAt < 0 {
		return h, badRecord("negative expiry %d", h.expireAt)
	}
	if h.rawLen > maxRaw {
		return h, badRecord("raw length %d over limit %d", h.rawLen, maxRaw)
	}
	if h.codec == CompressionNone && h.storedLen != h.rawLen {
		return h, badRecord("uncompressed record stores %d bytes for %d", h.storedLen, h.rawLen)
	}
	if h.codec != CompressionNone && h.storedLen >= h.rawLen {
		// A compressed payload is kept only when it is smaller than the value;
		// otherwise the value is stored with codec none.
		return h, badRecord("compressed payload of %d bytes for %d raw", h.storedLen, h.rawLen)
	}
	rest := uint64(len(b) - headerLen)
	switch {
	case h.inline() && rest != h.storedLen:
		return h, badRecord("inline payload is %d bytes, header says %d", rest, h.storedLen)
	case !h.inline() && rest != 0:
		return h, badRecord("%d trailing bytes after header", rest)
	}
	return h, nil
}

// recordChecksum hashes the header's first checksumOff bytes, the key and the
// raw value.
func recordChecksum(hdr []byte, key, raw []byte) uint64 {
	d := xxhash.New()
	_, _ = d.Write(hdr[:checksumOff])
	_, _ = d.Write(key)
	_, _ = d.Write(raw)
	return d.Sum64()
}

// vlogHashPiece is the piece size of a value-log record's checksum.
const vlogHashPiece = 4 << 20

// pieceHash is the hash of a value-log record's pieces for a header's
// flags: XXH3-64 where flagXXH3 says so, xxhash64 for older records.
func pieceHash(flags uint8) func([]byte) uint64 {
	if flags&flagXXH3 != 0 {
		return xxh3.Hash
	}
	return xxhash.Sum64
}

// pieceSums hashes value in vlogHashPiece-byte pieces with hash.
func pieceSums(value []byte, hash func([]byte) uint64) []uint64 {
	sums := make([]uint64, 0, len(value)/vlogHashPiece+1)
	for off := 0; off < len(value) || off == 0; off += vlogHashPiece {
		sums = append(sums, hash(value[off:min(off+vlogHashPiece, len(value))]))
		if len(value) == 0 {
			break
		}
	}
	return sums
}

// vlogChecksum is the checksum of a value-log record: like recordChecksum,
// but over the hashes of the value's pieces instead of the value, so that a
// reader can hash the pieces as they arrive, concurrently.
func vlogChecksum(hdr []byte, key []byte, sums []uint64) uint64 {
	d := xxhash.New()
	_, _ = d.Write(hdr[:checksumOff])
	_, _ = d.Write(key)
	var b [8]byte
	for _, s := range sums {
		binary.LittleEndian.PutUint64(b[:], s)
		_, _ = d.Write(b[:])
	}
	return d.Sum64()
}

// valueChecksum is the checksum a record with header h carries.
func valueChecksum(h *header, hdr, key, value []byte) uint64 {
	if h.flags&flagVlog != 0 {
		return vlogChecksum(hdr, key, pieceSums(value, pieceHash(h.flags)))
	}
	return recordChecksum(hdr, key, value)
}

// encodeKey appends the Pebble key for (prefix, db, key) to dst.
func encodeKey(dst []byte, prefix byte, db uint32, key []byte) []byte {
	dst = append(dst, prefix, 0, 0, 0, 0)
	binary.BigEndian.PutUint32(dst[len(dst)-4:], db)
	return append(dst, key...)
}

// dbBounds returns the [lower, upper) Pebble key range of one database within
// the given key space.
func dbBounds(prefix byte, db uint32) (lower, upper []byte) {
	lower = encodeKey(nil, prefix, db, nil)
	if db == math.MaxUint32 {
		return lower, []byte{prefix + 1}
	}
	return lower, encodeKey(nil, prefix, db+1, nil)
}

// decodeKey splits a Pebble key into the database number and user key.
func decodeKey(k []byte) (db uint32, key []byte, ok bool) {
	if len(k) < keyPrefixLen {
		return 0, nil, false
	}
	return binary.BigEndian.Uint32(k[1:keyPrefixLen]), k[keyPrefixLen:], true
}
