package engine

import (
	"strings"

	"github.com/kvserver/kvserver/grouping"
	"github.com/kvserver/kvserver/kvmeta"
)

// The engine recognises LMCache chunks by their metadata key: a key named
// as a chunk's metadata (grouping.IsMetadata) whose value parses as LMCache
// metadata. It counts chunks
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
	return grouping.IsMetadata(key) && len(key) > len(grouping.MetadataSuffix)
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
