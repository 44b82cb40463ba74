package gpuclient

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"strconv"
	"strings"

	"github.com/kvserver/kvserver/grouping"
)

// DefaultChunkTokens is LMCache's default chunk size in tokens.
const DefaultChunkTokens = 256

// Suffixes of the two keys of a chunk, appended with no separator; the
// server groups keys by the same rule (package grouping).
const (
	DataSuffix     = grouping.DataSuffix
	MetadataSuffix = grouping.MetadataSuffix
)

// Hash is the chained hash of a chunk: SHA-256 over the previous chunk's
// hash (nothing for the first chunk) followed by the chunk's token ids as
// little-endian uint32. Two prompts get the same hash for chunk i exactly
// when their first i+1 chunks hold the same tokens, which is what makes a
// left-to-right lookup of a shared prefix work.
type Hash [sha256.Size]byte

// String is the lower-case hex form used in keys.
func (h Hash) String() string { return hex.EncodeToString(h[:]) }

// ChunkHashes returns the chained hash of each chunk of tokens, chunkTokens
// tokens per chunk (DefaultChunkTokens if chunkTokens <= 0). A last partial
// chunk gets a hash too; callers that store only full chunks drop it.
func ChunkHashes(tokens []uint32, chunkTokens int) []Hash {
	if chunkTokens <= 0 {
		chunkTokens = DefaultChunkTokens
	}
	hashes := make([]Hash, 0, (len(tokens)+chunkTokens-1)/chunkTokens)
	buf := make([]byte, 0, sha256.Size+4*chunkTokens)
	for start := 0; start < len(tokens); start += chunkTokens {
		buf = buf[:0]
		if n := len(hashes); n > 0 {
			buf = append(buf, hashes[n-1][:]...)
		}
		for _, tok := range tokens[start:min(start+chunkTokens, len(tokens))] {
			buf = binary.LittleEndian.AppendUint32(buf, tok)
		}
		hashes = append(hashes, sha256.Sum256(buf))
	}
	return hashes
}

// KeyName is the name LMCache puts in keys for d (its
// TORCH_DTYPE_TO_STR_DTYPE table): "half", "bfloat16", "fp8_e4m3", "fp8_e5m2".
func (d DType) KeyName() string {
	switch d {
	case FP16:
		return "half"
	case BF16:
		return "bfloat16"
	case FP8E4M3:
		return "fp8_e4m3"
	case FP8E5M2:
		return "fp8_e5m2"
	}
	return d.String()
}

// KeyPrefix is what every key of one engine worker shares.
type KeyPrefix struct {
	Model     string
	WorldSize int
	WorkerID  int
	DType     DType
}

// ChunkKey is the key of a chunk without its suffix:
// model@world_size@worker_id@<hash hex>@<dtype>. Append DataSuffix or
// MetadataSuffix to get the two keys the chunk is stored under.
func (p KeyPrefix) ChunkKey(h Hash) string {
	var b strings.Builder
	b.Grow(len(p.Model) + 2*len(h) + 32)
	b.WriteString(p.Model)
	b.WriteByte('@')
	b.WriteString(strconv.Itoa(p.WorldSize))
	b.WriteByte('@')
	b.WriteString(strconv.Itoa(p.WorkerID))
	b.WriteByte('@')
	b.WriteString(h.String())
	b.WriteByte('@')
	b.WriteString(p.DType.KeyName())
	return b.String()
}

// LayerKey is the key of one layer of a chunk in layer-wise mode:
// ChunkKey(h)@<layer>.
func (p KeyPrefix) LayerKey(h Hash, layer int) string {
	return p.ChunkKey(h) + "@" + strconv.Itoa(layer)
}

// ChunkKeys returns ChunkKey of every chunk of tokens (see ChunkHashes).
func (p KeyPrefix) ChunkKeys(tokens []uint32, chunkTokens int) []string {
	hs := ChunkHashes(tokens, chunkTokens)
	keys := make([]string, len(hs))
	for i, h := range hs {
		keys[i] = p.ChunkKey(h)
	}
	return keys
}
