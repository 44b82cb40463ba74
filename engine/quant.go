package engine

import (
	"context"
	"time"

	"github.com/kvserver/kvserver/codec"
	"github.com/kvserver/kvserver/grouping"
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
		case grouping.IsData(it.key) && it.key != g.name:
			data = it
		}
	}
	if data == nil || meta == nil || len(meta.meta.Groups) != 1 {
		return nil, nil
	}
	m := meta.meta.Groups[0]
	if !m.IsKV() || !m.IsHalf() || !data.resident || data.obj != nil || data.quantized || data.length != meta.bytes {
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
	e.quantWake.Notify()
}

// runQuantizer encodes queued chunks until ctx ends. The encoding runs
// without the engine lock; a chunk changed meanwhile is left as it is.
func (e *Engine) runQuantizer(ctx context.Context) {
	for e.quantWake.Wait(ctx) {
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
			data.private = false // read below without the lock
			e.mu.Unlock()

			blob, err := codec.Encode(e.opts.KVQuant, meta.meta.Groups[0], raw)
			if err != nil {
				e.opts.Logger.Debug("chunk not quantized", "key", data.key, "err", err)
				continue
			}
			e.mu.Lock()
			if data.keyspace().items[data.key] == data && data.version == version && data.resident && !data.quantized {
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
	it.value, it.private = blob, false
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

// decodedValue is a quantized item's value decoded by predecode without the
// lock, for the commands that asked for it.
type decodedValue struct {
	version uint64
	raw     []byte
	// refs counts the commands yet to read it; at is when it was made, so
	// that one no command read (an aborted command) goes after
	// decodedMaxAge.
	refs int
	at   time.Time
}

// decodedMaxAge bounds how long an unread decodedValue is kept.
const decodedMaxAge = 10 * time.Second

// predecode decodes, without the engine lock, the resident quantized values
// of keys, so that the command that follows reads them without decoding
// under it (tens of milliseconds for a large chunk).
func (e *Engine) predecode(db int, keys [][]byte) {
	for _, key := range keys {
		e.mu.Lock()
		it := e.dbs[db].items[string(key)]
		if it == nil || !it.quantized || !it.resident {
			e.mu.Unlock()
			continue
		}
		if d := e.decoded[it]; d != nil && d.version == it.version {
			d.refs++
			e.mu.Unlock()
			continue
		}
		stored, version := it.value, it.version
		it.private = false // read below without the lock
		e.mu.Unlock()
		raw, _, err := codec.Decode(stored)
		if err != nil {
			continue // reported by the command's own decode
		}
		now := time.Now()
		e.mu.Lock()
		for old, d := range e.decoded {
			if now.Sub(d.at) > decodedMaxAge {
				delete(e.decoded, old)
			}
		}
		if e.dbs[db].items[string(key)] == it && it.version == version {
			if d := e.decoded[it]; d != nil && d.version == version {
				d.refs++
			} else {
				e.decoded[it] = &decodedValue{version: version, raw: raw, refs: 1, at: now}
			}
		}
		e.mu.Unlock()
	}
}

// decodeValue returns the client's view of an item's stored value: as
// predecode left it when it did, else decoded here, under the lock.
func (e *Engine) decodeValue(it *item, stored []byte) ([]byte, bool) {
	if !it.quantized {
		return stored, true
	}
	if d := e.decoded[it]; d != nil {
		if d.version == it.version {
			if d.refs--; d.refs <= 0 {
				delete(e.decoded, it)
			}
			return d.raw, true
		}
		delete(e.decoded, it)
	}
	raw, _, err := codec.Decode(stored)
	if err != nil {
		e.opts.Logger.Error("undecodable quantized value", "key", it.key, "err", err)
		return nil, false
	}
	return raw, true
}
