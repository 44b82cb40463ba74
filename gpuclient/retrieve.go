package gpuclient

import (
	"context"
	"errors"
	"fmt"
)

// Retrieve loads the longest stored prefix of tokens into the paged cache
// at slotMapping (slot of each token; negative: leave that token's slot
// alone, as for tokens the engine already has). Only full chunks are
// looked up.
//
// One KVC.PROBE with a lease (Config.Lease) counts the leading chunks the
// server has and protects them from eviction until they are read; their
// GETs (metadata, then data, per chunk) go out in one write, and each
// chunk is read into a staging buffer, checked, and scattered by the
// Device while the next one arrives. A chunk whose metadata or data is
// missing, of the wrong length, or whose metadata is not exactly the one
// expected for the connector's shape is reported in Failed and never
// scattered; the loaded prefix ends before it, and the chunks after it are
// not loaded either (only a contiguous prefix is of use). Paged memory of
// slots of chunks that were not loaded is left untouched. Like LMCache,
// Retrieve then deletes the failed chunk's two keys, so that the next Store
// writes it again rather than skipping it as present.
//
// The error is for the operation itself (connection, device, ctx); the
// result then still tells what was loaded before it.
func (c *Connector) Retrieve(ctx context.Context, tokens []uint32, slotMapping []int64) (RetrieveResult, error) {
	hashes, err := c.plan(tokens, slotMapping)
	if err != nil {
		return RetrieveResult{}, err
	}
	res := RetrieveResult{Chunks: len(hashes)}
	if len(hashes) == 0 {
		return res, nil
	}
	data, meta := c.chunkKeys(hashes)
	err = c.client.with(ctx, func(cn *conn) error {
		found, err := cn.probe(c.leaseMs(), meta)
		if err != nil {
			return err
		}
		res.Found = int(found)
		if found == 0 {
			return nil
		}
		cn.queueGets(meta[:found], data[:found])
		sent := cn.flushAsync()
		err = c.loadChunks(ctx, cn, slotMapping, data[:found], &res)
		if err != nil || cn.broken.Load() {
			// The reading stopped early (an error, or a bad chunk before
			// the last): requests may still be on their way, and the
			// connection is given up anyway.
			cn.interrupt()
		}
		if werr := <-sent; err == nil && !cn.broken.Load() {
			err = werr
		}
		return err
	})
	if err == nil {
		err = c.dropFailed(ctx, res.Failed)
	}
	if err != nil {
		return res, fmt.Errorf("gpuclient: retrieve: %w", err)
	}
	return res, nil
}

// fetched is one chunk read by loadChunks's reader: its staging buffer, or
// why it cannot be loaded.
type fetched struct {
	chunk int
	buf   []byte
	fail  error
}

// errHalted stops loadChunks's reader when the scattering side gave up.
var errHalted = errors.New("gpuclient: retrieval halted")

// loadChunks reads the replies to the queued GETs of data's chunks on a
// reader goroutine and scatters them in order on the calling one.
func (c *Connector) loadChunks(ctx context.Context, cn *conn, slots []int64, data []string, res *RetrieveResult) error {
	size := c.chunk.Size()
	free := make(chan []byte, c.cfg.Staging)
	for range c.cfg.Staging {
		free <- c.bufs.get(size)
	}
	ready := make(chan fetched, c.cfg.Staging)
	halt := make(chan struct{})
	var readErr error
	go func() { // owned by loadChunks, which drains ready until it is closed
		defer close(ready)
		for i := range data {
			buf, fail, err := cn.readPair(c.meta, size, func() ([]byte, error) {
				select {
				case b := <-free:
					return b, nil
				case <-halt:
					return nil, errHalted
				}
			})
			if err != nil {
				readErr = err
				return
			}
			ready <- fetched{chunk: i, buf: buf, fail: fail}
			if fail != nil {
				if i < len(data)-1 {
					cn.broken.Store(true) // later replies are left unread
				}
				return
			}
		}
	}()
	var opErr error
	halted := false
	for f := range ready {
		switch {
		case halted:
		case f.fail != nil:
			res.Failed = append(res.Failed, ChunkError{Chunk: f.chunk, Layer: -1, Key: data[f.chunk], Err: f.fail})
		default:
			err := c.cfg.Device.Scatter(ctx, c.chunk, c.kv, c.chunkSlots(slots, f.chunk), f.buf)
			if err != nil {
				opErr = fmt.Errorf("scatter chunk %d: %w", f.chunk, err)
				halted = true
				close(halt)
				cn.interrupt()
				break
			}
			res.Loaded++
			res.Tokens += c.cfg.ChunkTokens
			res.Bytes += int64(size)
		}
		if f.buf != nil {
			free <- f.buf
		}
	}
	for len(free) > 0 {
		c.bufs.put(<-free)
	}
	if opErr == nil && !errors.Is(readErr, errHalted) {
		opErr = readErr
	}
	return opErr
}
