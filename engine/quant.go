package engine

import (
	"context"
	"strings"

	"github.com/kvserver/kvserver/codec"
)

// Opt-in quantized storage (Options.KVQuant). LMCache writes a chunk's data
// before its metadata, so a chunk can only be recognised once both keys are
// present: each write queues its group, and a background quantizer encodes
// the data value of every group whose metadata names a fp16/bf16 KV format,
// replacing it in memory (and, through the next write-behind or demotion,
// on disk). Reads decode, so clients get the original dtype and length
// back. Anything not recognised is stored untouched.

// dataItemForQuant returns the group's data item when the group is a
// single-tensor half-precision KV chunk whose data is in memory, raw, and
// of exactly the length the metadata states; nil otherwise.
func (g *group) dataItemForQuant() (*item, *chunkInfo) {
	var data *item
	var meta *chunkInfo
	for _, it := range g.items {
		switch {
		case it.chunk != nil:
			meta = it.chunk
		case strings.HasSuffix(it.key, "kv_bytes") && it.key != g.name:
			data = it
		}
	}
	if data == nil || meta == nil || len(meta.meta.Groups) != 1 {
		return nil, nil
	}
	m := meta.meta.Groups[0]
	if !m.IsKV() || !m.IsHalf() || !data.resident || data.quantized || data.length != meta.bytes {
		return nil, nil
	}
	return data, meta
}

// queueQuantLocked notes that g may have become quantizable.
func (e *Engine) queueQuantLocked(g *group) {
	if e.opts.KVQuant == codec.Off {
		return
	}
	if data, _ := g.dataItemForQuant(); data == nil {
		return
	}
	e.quantQueue[g] = struct{}{}
	select {
	case e.quantCh <- struct{}{}:
	default:
	}
}

// runQuantizer encodes queued chunks until ctx ends. The encoding runs
// without the engine lock; a chunk changed meanwhile is left as it is.
func (e *Engine) runQuantizer(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-e.quantCh:
		}
		for ctx.Err() == nil {
			e.mu.Lock()
			var g *group
			for cand := range e.quantQueue {
				g = cand
				break
			}
			if g == nil {
				e.mu.Unlock()
				break
			}
			delete(e.quantQueue, g)
			data, meta := g.dataItemForQuant()
			if data == nil {
				e.mu.Unlock()
				continue
			}
			raw, version := data.value, data.version
			e.mu.Unlock()

			blob, err := codec.Encode(e.opts.KVQuant, meta.meta.Groups[0], raw)
			if err != nil {
				e.opts.Logger.Debug("chunk not quantized", "key", data.key, "err", err)
				continue
			}
			e.mu.Lock()
			if data.ks.items[data.key] == data && data.version == version && data.resident && !data.quantized {
				e.setQuantizedLocked(data, blob)
				e.quantized.Add(1)
			}
			e.publishLocked()
			e.mu.Unlock()
		}
	}
}

// setQuantizedLocked replaces a resident raw value by its encoding. A disk
// copy of the raw value is replaced by the next write-back so the disk holds
// the same form.
func (e *Engine) setQuantizedLocked(it *item, blob []byte) {
	e.uncharge(it)
	e.residentBytes += int64(len(blob)) - int64(len(it.value))
	it.value = blob
	it.quantized = true
	e.charge(it)
	it.version = e.bumpVersion()
	if it.onDisk {
		// The raw record stays until the write-back replaces it.
		it.onDisk = false
		it.diskOld = true
	}
	e.markDirtyLocked(it.grp)
}

// decodeValue returns the client's view of an item's stored value.
func (e *Engine) decodeValue(it *item, stored []byte) ([]byte, bool) {
	if !it.quantized {
		return stored, true
	}
	raw, _, err := codec.Decode(stored)
	if err != nil {
		e.opts.Logger.Error("undecodable quantized value", "key", it.key, "err", err)
		return nil, false
	}
	return raw, true
}
