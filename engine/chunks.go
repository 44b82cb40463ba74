package engine

import (
	"strings"

	"github.com/kvserver/kvserver/kvmeta"
)

// The engine recognises LMCache chunks by their metadata key: a key ending
// in "metadata" whose value parses as LMCache metadata. It counts chunks
// and their data bytes by model, dtype and format for INFO and metrics.

// ChunkClass groups chunks for reporting.
type ChunkClass struct {
	// Model is the first '@'-separated field of the key (LMCache's
	// model@world_size@worker_id@hash@dtype layout), "unknown" otherwise.
	Model  string
	DType  string
	Format string
}

// ChunkCount is how many chunks of a class are stored and their data bytes
// (the metadata's length field).
type ChunkCount struct {
	Chunks, Bytes int64
}

// chunkInfo is what an item remembers of the metadata it holds, so that
// removing it needs no second parse.
type chunkInfo struct {
	class ChunkClass
	bytes int64
	meta  kvmeta.Chunk
}

// isMetadataKey reports whether key is a chunk's metadata key.
func isMetadataKey(key string) bool {
	return strings.HasSuffix(key, "metadata") && len(key) > len("metadata")
}

// isChunkKeyName reports whether a group name (a key without its kv_bytes
// or metadata suffix, see lsm.GroupOf) has the shape of LMCache's chunk
// keys: model@world_size@worker_id@hash@dtype, optionally followed by
// @layer (layer-wise mode). The model may itself contain '@'.
func isChunkKeyName(name string) bool {
	f := strings.Split(name, "@")
	if n := len(f); n >= 6 && isDecimal(f[n-1]) {
		f = f[:n-1] // @layer
	}
	n := len(f)
	if n < 5 {
		return false
	}
	model := strings.Join(f[:n-4], "@")
	return model != "" && isDecimal(f[n-4]) && isDecimal(strings.TrimPrefix(f[n-3], "-")) &&
		f[n-2] != "" && isWord(f[n-1])
}

func isDecimal(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// isWord reports whether s is a non-empty run of letters, digits and '_'
// (a dtype name such as bfloat16 or fp8_e4m3).
func isWord(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// parseChunkInfo reads a metadata value; nil when it is not LMCache's.
func parseChunkInfo(key string, value []byte) *chunkInfo {
	if !isMetadataKey(key) || len(value) == 0 || len(value)%28 != 0 {
		return nil
	}
	chunk, err := kvmeta.Parse(value)
	if err != nil || len(chunk.Groups) == 0 {
		return nil
	}
	model, _, found := strings.Cut(key, "@")
	if !found || model == "" {
		model = "unknown"
	}
	g := chunk.Groups[0]
	return &chunkInfo{
		class: ChunkClass{Model: model, DType: g.DType.String(), Format: g.Format.String()},
		bytes: chunk.Length(),
		meta:  chunk,
	}
}

// noteChunkLocked records it's metadata (on insert or overwrite) and
// forgets what it held before.
func (e *Engine) noteChunkLocked(it *item, value []byte) {
	e.forgetChunkLocked(it)
	if ci := parseChunkInfo(it.key, value); ci != nil {
		it.chunk = ci
		c := e.chunks[ci.class]
		c.Chunks++
		c.Bytes += ci.bytes
		e.chunks[ci.class] = c
	}
}

// forgetChunkLocked drops it's metadata from the counts.
func (e *Engine) forgetChunkLocked(it *item) {
	ci := it.chunk
	if ci == nil {
		return
	}
	it.chunk = nil
	c := e.chunks[ci.class]
	c.Chunks--
	c.Bytes -= ci.bytes
	if c.Chunks <= 0 {
		delete(e.chunks, ci.class)
	} else {
		e.chunks[ci.class] = c
	}
}

// ChunkStats returns the stored chunks by class.
func (e *Engine) ChunkStats() map[ChunkClass]ChunkCount {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make(map[ChunkClass]ChunkCount, len(e.chunks))
	for k, v := range e.chunks {
		out[k] = v
	}
	return out
}
