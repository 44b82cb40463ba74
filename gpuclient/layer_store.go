package gpuclient

import (
	"context"
	"fmt"
	"sync"
)

// LayerStorer stores a prefix layer by layer, mirroring LayerRetriever:
// the engine calls LayerDone(l) as soon as layer l's KV is in the paged
// cache, and the storer gathers that layer of every chunk and sends it
// (SET <key>@<l>kv_bytes, SET <key>@<l>metadata per chunk, pipelined) in
// the background while the engine computes the next layer.
//
// Layers must be signalled in order, 0 to Layers-1, and the paged cache
// must not change under the stored slots of a signalled layer until
// WaitLayer for it (or Wait) returns. Wait or Close must be called.
type LayerStorer struct {
	layerRun // done[l] is closed once layer l is acknowledged

	c    *Connector
	ctx  context.Context
	opts LayerOptions

	mu   sync.Mutex
	next int // the layer LayerDone expects

	signals chan int
	res     StoreResult // valid after finished
}

// StoreLayers finds with one KVC.PROBE how many leading chunks of tokens
// are already stored in every layer (those are skipped) and starts a
// storer for the rest, reading the paged cache at slotMapping. ctx bounds
// the whole store, not only this call.
func (c *Connector) StoreLayers(ctx context.Context, tokens []uint32, slotMapping []int64, opts LayerOptions) (*LayerStorer, error) {
	lc, err := c.openLayers(ctx, tokens, slotMapping, 0, "store layers")
	if err != nil {
		return nil, err
	}
	L, hashes, present := c.cfg.Layers, lc.hashes, lc.found
	s := &LayerStorer{
		c: c, ctx: lc.ctx, opts: opts,
		signals: make(chan int, L),
		res:     StoreResult{Chunks: len(hashes), Present: present},
	}
	s.init(lc.cancel, L)
	todo := len(hashes) - present
	free := c.layerBuffers(opts, todo)
	go func() {
		snd := newSender(lc.cn, free, len(hashes), L)
		gatherErr := s.gather(snd, free, slotMapping, lc.data, lc.meta, present)
		stored, bytes, sendErr := snd.close()
		s.res.Stored, s.res.Bytes = stored, bytes
		c.closeLayers(lc, free)
		switch {
		case gatherErr != nil:
			s.fail(gatherErr)
		case sendErr != nil:
			s.fail(sendErr)
		}
		close(s.finished)
		lc.cancel()
	}()
	return s, nil
}

// gather is the storer's goroutine: for each signalled layer, the device
// gathers that layer of every chunk to store into a staging buffer, and
// the sender writes it.
func (s *LayerStorer) gather(snd *sender, free chan []byte, slots []int64, data, meta []string, present int) error {
	c, L := s.c, s.c.cfg.Layers
	size := c.layer.Size()
	n := len(data) / L
	for l := range L {
		select {
		case <-s.signals:
		case <-s.ctx.Done():
			return s.ctx.Err()
		}
		if present == n {
			close(s.done[l])
			continue
		}
		var buf []byte
		select {
		case buf = <-free:
		case <-s.ctx.Done():
			return s.ctx.Err()
		}
		pairs := make([]pair, 0, n-present)
		for i := present; i < n; i++ {
			dst := buf[(i-present)*size : (i-present+1)*size]
			if err := c.cfg.Device.Gather(s.ctx, c.layer, c.kv[l:l+1], c.chunkSlots(slots, i), dst); err != nil {
				free <- buf
				return fmt.Errorf("gather layer %d chunk %d: %w", l, i, err)
			}
			pairs = append(pairs, pair{chunk: i, data: data[i*L+l], meta: meta[i*L+l], value: dst, metaValue: c.lmeta})
		}
		done := s.done[l]
		snd.send(sendJob{pairs: pairs, buf: buf, acked: func(err error) {
			if err != nil {
				s.fail(fmt.Errorf("layer %d: %w", l, err))
				return
			}
			close(done)
		}})
	}
	return nil
}

// LayerDone tells the storer that layer l is complete in the paged cache.
// Layers must come in order. It returns at once, unless the storer is
// Sequential: then it returns once layer l is stored.
func (s *LayerStorer) LayerDone(ctx context.Context, l int) error {
	s.mu.Lock()
	if l != s.next {
		s.mu.Unlock()
		return fmt.Errorf("gpuclient: LayerDone(%d): layers must be signalled in order, expected %d", l, s.next)
	}
	s.next++
	s.mu.Unlock()
	s.signals <- l // room for every layer: never blocks
	if s.opts.Sequential {
		return s.WaitLayer(ctx, l)
	}
	return nil
}

// WaitLayer blocks until layer l has been acknowledged by the server, the
// store failed, or ctx is done. Then the caller may reuse the layer's
// slots.
func (s *LayerStorer) WaitLayer(ctx context.Context, l int) error {
	if err := s.checkLayer(l); err != nil {
		return err
	}
	return s.waitLayer(ctx, l, "stored")
}

// Wait waits until every layer is signalled, gathered and acknowledged,
// and returns what was stored.
func (s *LayerStorer) Wait(ctx context.Context) (StoreResult, error) {
	return runResult(ctx, &s.layerRun, &s.res, "store layers")
}

// Close abandons the store if it is still running and waits for its
// goroutine; layers not acknowledged may or may not be on the server.
func (s *LayerStorer) Close() { s.close() }
