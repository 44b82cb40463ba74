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
	c      *Connector
	ctx    context.Context
	cancel context.CancelFunc
	opts   LayerOptions

	mu   sync.Mutex
	next int // the layer LayerDone expects

	signals  chan int
	stored   []chan struct{} // closed once layer l is acknowledged
	finished chan struct{}

	errOnce sync.Once
	err     error
	res     StoreResult // valid after finished
}

// StoreLayers finds with one KVC.PROBE how many leading chunks of tokens
// are already stored in every layer (those are skipped) and starts a
// storer for the rest, reading the paged cache at slotMapping. ctx bounds
// the whole store, not only this call.
func (c *Connector) StoreLayers(ctx context.Context, tokens []uint32, slotMapping []int64, opts LayerOptions) (*LayerStorer, error) {
	hashes, err := c.plan(tokens, slotMapping)
	if err != nil {
		return nil, err
	}
	L := c.cfg.Layers
	data, meta := c.layerKeys(hashes)
	cn, err := c.client.get(ctx)
	if err != nil {
		return nil, fmt.Errorf("gpuclient: store layers: %w", err)
	}
	sctx, cancel := context.WithCancel(ctx)
	stop := cn.watch(sctx)
	present := 0
	if len(meta) > 0 {
		n, err := cn.probe(0, meta)
		if err != nil {
			stop()
			cancel()
			c.client.put(cn)
			return nil, fmt.Errorf("gpuclient: store layers: %w", err)
		}
		present = int(n) / L
	}
	s := &LayerStorer{
		c: c, ctx: sctx, cancel: cancel, opts: opts,
		signals:  make(chan int, L),
		stored:   make([]chan struct{}, L),
		finished: make(chan struct{}),
		res:      StoreResult{Chunks: len(hashes), Present: present},
	}
	for l := range s.stored {
		s.stored[l] = make(chan struct{})
	}
	todo := len(hashes) - present
	free := make(chan []byte, opts.buffers())
	if todo > 0 {
		for range opts.buffers() {
			free <- c.bufs.get(todo * c.layer.Size())
		}
	}
	go func() {
		snd := newSender(cn, free, len(hashes), L)
		gatherErr := s.gather(snd, free, slotMapping, data, meta, present)
		stored, bytes, sendErr := snd.close()
		s.res.Stored, s.res.Bytes = stored, bytes
		stop()
		if sctx.Err() != nil {
			cn.broken.Store(true)
		}
		c.client.put(cn)
		for len(free) > 0 {
			c.bufs.put(<-free)
		}
		switch {
		case gatherErr != nil:
			s.fail(gatherErr)
		case sendErr != nil:
			s.fail(sendErr)
		}
		close(s.finished)
		cancel()
	}()
	return s, nil
}

// fail records the store's first error and stops it.
func (s *LayerStorer) fail(err error) {
	s.errOnce.Do(func() { s.err = err })
	s.cancel()
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
			close(s.stored[l])
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
		done := s.stored[l]
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
	if l < 0 || l >= len(s.stored) {
		return fmt.Errorf("gpuclient: WaitLayer(%d): the model has %d layers", l, len(s.stored))
	}
	select {
	case <-s.stored[l]:
		return nil
	case <-s.finished:
		select {
		case <-s.stored[l]:
			return nil
		default:
		}
		return fmt.Errorf("gpuclient: layer %d not stored: %w", l, s.err)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Wait waits until every layer is signalled, gathered and acknowledged,
// and returns what was stored.
func (s *LayerStorer) Wait(ctx context.Context) (StoreResult, error) {
	select {
	case <-s.finished:
	case <-ctx.Done():
		return StoreResult{}, ctx.Err()
	}
	if s.err != nil {
		return s.res, fmt.Errorf("gpuclient: store layers: %w", s.err)
	}
	return s.res, nil
}

// Close abandons the store if it is still running and waits for its
// goroutine; layers not acknowledged may or may not be on the server.
func (s *LayerStorer) Close() {
	s.cancel()
	<-s.finished
}
