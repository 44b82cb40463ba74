package disktier

import (
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
)

// Compression names a value codec. It is both the Options setting
// (--disk-compression) and the codec id stored in each record header, so a
// store written with one setting stays readable under any other.
type Compression uint8

const (
	// CompressionDefault selects the package default, DefaultCompression.
	// It is never stored in a record.
	CompressionDefault Compression = iota
	// CompressionNone stores values as they are.
	CompressionNone
	// CompressionS2 is klauspost/compress's S2 block format (a faster
	// Snappy successor).
	CompressionS2
	// CompressionZstd is Zstandard at its fastest level.
	CompressionZstd
)

// DefaultCompression is what CompressionDefault resolves to: none. The
// measurements in doc.go decide it: S2 does not compress bf16 KV data at all
// (it has no entropy coder), and zstd on byte-plane shuffled bf16 stores 71%
// of the bytes but encodes at about 150 MB/s and decodes at about 400 MB/s
// per core, which on the measured machine halves Put throughput and cuts Get
// throughput by 2-4x. A cache tier that exists to load KV faster than it can
// be recomputed is better served by full-speed reads; zstd is the choice when
// disk capacity, not bandwidth, is what runs out.
const DefaultCompression = CompressionNone

// ParseCompression maps a --disk-compression value ("none", "s2", "zstd";
// "" means the default) to a Compression.
func ParseCompression(s string) (Compression, error) {
	switch s {
	case "":
		return CompressionDefault, nil
	case "none":
		return CompressionNone, nil
	case "s2":
		return CompressionS2, nil
	case "zstd":
		return CompressionZstd, nil
	}
	return 0, fmt.Errorf("disktier: unknown compression %q (want none, s2 or zstd)", s)
}

// String returns the name ParseCompression accepts.
func (c Compression) String() string {
	switch c {
	case CompressionDefault:
		return "default"
	case CompressionNone:
		return "none"
	case CompressionS2:
		return "s2"
	case CompressionZstd:
		return "zstd"
	}
	return fmt.Sprintf("Compression(%d)", uint8(c))
}

// valid reports whether c may appear in a record header.
func (c Compression) valid() bool {
	return c == CompressionNone || c == CompressionS2 || c == CompressionZstd
}

// minSaving is the fraction (1/minSaving) of a value that compression has to
// save for the compressed form to be kept. Below it the value is stored raw:
// reading it back then costs a copy instead of a decode, and incompressible
// data (already-quantized KV, encrypted blobs) never grows.
const minSaving = 32

// codecs holds the reusable compression state of one Store. The zstd encoder
// and decoder are created on first use and shared by all goroutines
// (EncodeAll and DecodeAll are safe for concurrent use and keep internal
// pools); S2's block functions need no state beyond the output buffer.
type codecs struct {
	maxRaw int

	zencOnce sync.Once
	zenc     *zstd.Encoder
	zencErr  error

	zdecOnce sync.Once
	zdec     *zstd.Decoder
	zdecErr  error
}

func newCodecs(maxRaw int) *codecs { return &codecs{maxRaw: maxRaw} }

func (c *codecs) encoder() (*zstd.Encoder, error) {
	c.zencOnce.Do(func() {
		c.zenc, c.zencErr = zstd.NewWriter(nil,
			zstd.WithEncoderLevel(zstd.SpeedFastest),
			// The record checksum covers the value end to end.
			zstd.WithEncoderCRC(false),
			zstd.WithZeroFrames(true),
		)
	})
	return c.zenc, c.zencErr
}

func (c *codecs) decoder() (*zstd.Decoder, error) {
	c.zdecOnce.Do(func() {
		c.zdec, c.zdecErr = zstd.NewReader(nil,
			zstd.WithDecoderConcurrency(0),
			zstd.WithDecoderMaxMemory(uint64(c.maxRaw)),
			zstd.IgnoreChecksum(true),
		)
	})
	return c.zdec, c.zdecErr
}

// close releases the zstd goroutines, if any were started.
func (c *codecs) close() {
	if c.zenc != nil {
		_ = c.zenc.Close()
	}
	if c.zdec != nil {
		c.zdec.Close()
	}
}

// compress encodes src with codec into dst[:0] (reusing dst's capacity) and
// returns the payload and the codec actually used: CompressionNone, with src
// itself as the payload, when the codec is none or saves less than
// 1/minSaving of the value.
func (c *codecs) compress(codec Compression, dst, src []byte) ([]byte, Compression, error) {
	if len(src) == 0 || codec == CompressionNone {
		return src, CompressionNone, nil
	}
	out, err := c.encode(codec, dst, src)
	if err != nil {
		return nil, 0, err
	}
	if out == nil || len(out) >= len(src)-len(src)/minSaving {
		return src, CompressionNone, nil
	}
	return out, codec, nil
}

// encode runs the codec (s2 or zstd) whatever the outcome; nil means src is
// too large for it.
func (c *codecs) encode(codec Compression, dst, src []byte) ([]byte, error) {
	switch codec {
	case CompressionS2:
		n := s2.MaxEncodedLen(len(src))
		if n < 0 {
			return nil, nil
		}
		if cap(dst) < n {
			dst = make([]byte, n)
		}
		return s2.Encode(dst[:cap(dst)], src), nil
	case CompressionZstd:
		enc, err := c.encoder()
		if err != nil {
			return nil, err
		}
		return enc.EncodeAll(src, dst[:0]), nil
	}
	return nil, fmt.Errorf("disktier: cannot compress with %v", codec)
}

// decompress decodes payload, which must decode to exactly len(dst) bytes,
// into dst. A payload that does not is an errBadRecord.
func (c *codecs) decompress(codec Compression, dst, payload []byte) error {
	switch codec {
	case CompressionNone:
		if len(payload) != len(dst) {
			return badRecord("payload is %d bytes, want %d", len(payload), len(dst))
		}
		copy(dst, payload)
		return nil
	case CompressionS2:
		n, err := s2.DecodedLen(payload)
		if err != nil || n != len(dst) {
			return badRecord("s2 payload decodes to %d bytes (%v), want %d", n, err, len(dst))
		}
		out, err := s2.Decode(dst, payload)
		if err != nil {
			return badRecord("s2: %v", err)
		}
		if len(out) != len(dst) || (len(out) > 0 && &out[0] != &dst[0]) {
			return badRecord("s2 decoded to %d bytes, want %d", len(out), len(dst))
		}
		return nil
	case CompressionZstd:
		dec, err := c.decoder()
		if err != nil {
			return err
		}
		out, err := dec.DecodeAll(payload, dst[:0])
		if err != nil {
			return badRecord("zstd: %v", err)
		}
		if len(out) != len(dst) || (len(out) > 0 && &out[0] != &dst[0]) {
			return badRecord("zstd decoded to %d bytes, want %d", len(out), len(dst))
		}
		return nil
	}
	return badRecord("unknown codec %d", codec)
}

// shuffle2 writes src to dst as two byte planes: the first byte of every
// 2-byte element, then the second byte. For little-endian fp16/bf16 that puts
// the sign/exponent bytes, which take few distinct values within a KV tensor,
// together, where an entropy coder can shrink them; interleaved with the
// noisy mantissa bytes they look random. An odd trailing byte is copied as
// is. len(dst) must be len(src).
func shuffle2(dst, src []byte) {
	n := len(src) / 2
	lo, hi := dst[:n], dst[n:2*n]
	i := 0
	// Eight elements at a time: two little-endian words hold four elements
	// each; gather their even and odd bytes.
	for ; i+8 <= n; i += 8 {
		s := src[2*i : 2*i+16]
		x0 := binary.LittleEndian.Uint64(s[0:8])
		x1 := binary.LittleEndian.Uint64(s[8:16])
		binary.LittleEndian.PutUint64(lo[i:i+8], evenBytes(x0)|evenBytes(x1)<<32)
		binary.LittleEndian.PutUint64(hi[i:i+8], evenBytes(x0>>8)|evenBytes(x1>>8)<<32)
	}
	for ; i < n; i++ {
		lo[i] = src[2*i]
		hi[i] = src[2*i+1]
	}
	if len(src)%2 == 1 {
		dst[len(dst)-1] = src[len(src)-1]
	}
}

// evenBytes packs bytes 0, 2, 4 and 6 of x into the low 32 bits.
func evenBytes(x uint64) uint64 {
	x &= 0x00ff00ff00ff00ff
	x = (x | x>>8) & 0x0000ffff0000ffff
	return (x | x>>16) & 0x00000000ffffffff
}

// spreadBytes is the inverse of evenBytes: the low 4 bytes of x go to bytes
// 0, 2, 4 and 6.
func spreadBytes(x uint64) uint64 {
	x &= 0x00000000ffffffff
	x = (x | x<<16) & 0x0000ffff0000ffff
	return (x | x<<8) & 0x00ff00ff00ff00ff
}

// unshuffle2 is the inverse of shuffle2.
func unshuffle2(dst, src []byte) {
	n := len(src) / 2
	lo, hi := src[:n], src[n:2*n]
	i := 0
	for ; i+8 <= n; i += 8 {
		l := binary.LittleEndian.Uint64(lo[i : i+8])
		h := binary.LittleEndian.Uint64(hi[i : i+8])
		d := dst[2*i : 2*i+16]
		binary.LittleEndian.PutUint64(d[0:8], spreadBytes(l)|spreadBytes(h)<<8)
		binary.LittleEndian.PutUint64(d[8:16], spreadBytes(l>>32)|spreadBytes(h>>32)<<8)
	}
	for ; i < n; i++ {
		dst[2*i] = lo[i]
		dst[2*i+1] = hi[i]
	}
	if len(src)%2 == 1 {
		dst[len(dst)-1] = src[len(src)-1]
	}
}
