package gpuclient

import (
	"context"
	"fmt"
)

// Store saves the KV of tokens, found in the paged cache at slotMapping
// (slot of each token; negative: not in the cache, stored as zeros), as
// whole chunks of Config.ChunkTokens tokens. A trailing partial chunk is
// not stored.
//
// One KVC.PROBE finds how many leading chunks the server already has; they
// are skipped. Each remaining chunk is gathered into a staging buffer by
// the Device and sent as SET <key>kv_bytes then SET <key>metadata; the
// writes are pipelined, and the next chunk is gathered while the previous
// one is on the wire. The paged cache must not change under those slots
// until Store returns.
func (c *Connector) Store(ctx context.Context, tokens []uint32, slotMapping []int64) (StoreResult, error) {
	hashes, err := c.plan(tokens, slotMapping)
	if err != nil {
		return StoreResult{}, err
	}
	res := StoreResult{Chunks: len(hashes)}
	if len(hashes) == 0 {
		return res, nil
	}
	data, meta := c.chunkKeys(hashes)
	err = c.client.with(ctx, func(cn *conn) error {
		present, err := cn.probe(0, meta)
		if err != nil {
			return err
		}
		res.Present = int(present)
		if res.Present == len(hashes) {
			return nil
		}
		stored, bytes, err := c.sendChunks(ctx, cn, slotMapping, data, meta, res.Present)
		res.Stored, res.Bytes = stored, bytes
		return err
	})
	if err != nil {
		return res, fmt.Errorf("gpuclient: store: %w", err)
	}
	return res, nil
}

// sendChunks gathers chunks from..len(data)-1 and writes them through a
// sender.
func (c *Connector) sendChunks(ctx context.Context, cn *conn, slots []int64, data, meta []string, from int) (int, int64, error) {
	size := c.chunk.Size()
	free := make(chan []byte, c.cfg.Staging)
	for range c.cfg.Staging {
		free <- c.bufs.get(size)
	}
	s := newSender(cn, free, len(data), 1)
	var gatherErr error
	for i := from; i < len(data); i++ {
		var buf []byte
		select {
		case buf = <-free:
		case <-ctx.Done():
			gatherErr = ctx.Err()
		}
		if gatherErr != nil {
			break
		}
		if err := c.cfg.Device.Gather(ctx, c.chunk, c.kv, c.chunkSlots(slots, i), buf); err != nil {
			free <- buf
			gatherErr = fmt.Errorf("gather chunk %d: %w", i, err)
			break
		}
		s.send(sendJob{pairs: []pair{{chunk: i, data: data[i], meta: meta[i], value: buf, metaValue: c.meta}}, buf: buf})
	}
	stored, bytes, err := s.close()
	for len(free) > 0 {
		c.bufs.put(<-free)
	}
	if gatherErr != nil {
		return stored, bytes, gatherErr
	}
	return stored, bytes, err
}
