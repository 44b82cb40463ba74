package gpuclient

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
)

// DefaultLayerBuffers is how many layers' staging buffers a layer-wise
// operation cycles through: one being transferred, one being copied by the
// device, one ready in between.
const DefaultLayerBuffers = 3

// LayerOptions tunes a layer-wise retrieval or store.
type LayerOptions struct {
	// Buffers is the number of layer staging buffers (each one layer of
	// every chunk); default DefaultLayerBuffers, at least 2. It bounds how
	// far the transfer runs ahead of the device copy.
	Buffers int
	// Sequential turns the pipelining off, for comparison: a retriever
	// fetches layer l only once WaitLayer(l) is called and scatters it
	// before WaitLayer returns; a storer's LayerDone(l) returns only once
	// layer l is on the server.
	Sequential bool
}

func (o LayerOptions) buffers() int {
	if o.Buffers <= 0 {
		return DefaultLayerBuffers
	}
	return max(o.Buffers, 2)
}

// LayerRetriever loads a prefix layer by layer, so that the engine can run
// layer l's attention while layer l+1 is still on its way. It fetches
// layer l+1 (every found chunk's key for that layer; all layers' GETs are
// pipelined on one connection) while the device scatters layer l and
// while the caller computes; WaitLayer(l) returns once layer l is in the
// paged cache.
//
// Layers are fetched and scattered in order, 0 to Layers-1. A chunk layer
// that fails validation is not scattered, and that chunk and every later
// one are dropped from the layers that follow; layers of those chunks
// scattered before the failure hold valid data of their own layer, which
// the engine overwrites when it recomputes the chunk. Result tells how many
// tokens were loaded in every layer. The failed chunk layers' keys are
// deleted, as Retrieve does.
//
// Every goroutine it starts ends when the retrieval does: after the last
// layer, on an error, or on Close. Result or Close must be called.
type LayerRetriever struct {
	layerRun // done[l] is closed once layer l is scattered

	c     *Connector
	ctx   context.Context
	cn    *conn
	opts  LayerOptions
	slots []int64
	data  []string // chunk-major layer keys of the found chunks
	meta  []string
	found int

	waited atomic.Int64 // highest layer asked for (Sequential)
	kick   chan struct{}

	// Written by the pipeline's goroutines, read after finished.
	failed []ChunkError
	loaded int
	bytes  int64
	res    RetrieveResult
}

// layerItem is one fetched layer: its staging buffer (found chunks of one
// layer each, nil if none was read) and how many leading chunks are valid.
type layerItem struct {
	layer int
	buf   []byte
	limit int
}

// RetrieveLayers probes the stored prefix of tokens (every layer of a
// chunk must be there for the chunk to count) with a lease, and starts
// loading it layer by layer into the paged cache at slotMapping. ctx
// bounds the whole retrieval, not only this call.
func (c *Connector) RetrieveLayers(ctx context.Context, tokens []uint32, slotMapping []int64, opts LayerOptions) (*LayerRetriever, error) {
	lc, err := c.openLayers(ctx, tokens, slotMapping, c.leaseMs(), "retrieve layers")
	if err != nil {
		return nil, err
	}
	L, found := c.cfg.Layers, lc.found
	r := &LayerRetriever{
		c: c, ctx: lc.ctx, cn: lc.cn, opts: opts, slots: slotMapping,
		kick: make(chan struct{}, 1),
		res:  RetrieveResult{Chunks: len(lc.hashes)},
	}
	r.init(lc.cancel, L)
	r.waited.Store(-1)
	r.found, r.loaded = found, found
	r.data, r.meta = lc.data[:found*L], lc.meta[:found*L]
	r.res.Found = found
	ready := make(chan layerItem, r.opts.buffers())
	free := c.layerBuffers(opts, found)
	var fetcher sync.WaitGroup
	fetcher.Add(1)
	go func() {
		defer fetcher.Done()
		defer close(ready)
		r.fetch(ready, free)
	}()
	go func() {
		r.scatter(ready, free)
		fetcher.Wait()
		c.closeLayers(lc, free)
		r.finish()
		if r.err == nil {
			r.err = c.dropFailed(r.ctx, r.res.Failed)
		}
		close(r.finished)
		r.cancel()
	}()
	return r, nil
}

// Tokens is the number of tokens the probe found: what the retrieval loads
// unless a chunk fails.
func (r *LayerRetriever) Tokens() int { return r.found * r.c.cfg.ChunkTokens }

// fetch is the fetching goroutine. Pipelined, it sends the GETs of every
// layer at once, so that the server streams layer after layer with no
// round trip in between (TCP and the staging buffers bound how far ahead
// it runs); sequential, it sends a layer's GETs only when the caller asks
// for that layer. Either way the replies are read layer by layer, each
// layer's into one staging buffer, and handed to the scatter goroutine.
func (r *LayerRetriever) fetch(ready chan<- layerItem, free chan []byte) {
	c, cn, L := r.c, r.cn, r.c.cfg.Layers
	size := c.layer.Size()
	var sent <-chan error // the requests being written
	defer func() {
		if sent != nil {
			if r.ctx.Err() != nil {
				cn.interrupt()
			}
			if err := <-sent; err != nil {
				r.fail(err)
			}
		}
	}()
	if !r.opts.Sequential && r.found > 0 {
		for l := range L {
			r.queueLayer(l, r.found)
		}
		sent = cn.flushAsync()
	}
	limit := r.found // chunks still valid
	for l := range L {
		requested := r.found
		if r.opts.Sequential {
			for r.waited.Load() < int64(l) {
				select {
				case <-r.kick:
				case <-r.ctx.Done():
					return
				}
			}
			requested = limit
			if limit > 0 {
				if sent != nil {
					// All of the previous layer's replies were read, so
					// its requests are all out.
					if err := <-sent; err != nil {
						sent = nil
						r.fail(fmt.Errorf("layer %d: %w", l-1, err))
						return
					}
				}
				r.queueLayer(l, limit)
				sent = cn.flushAsync()
			}
		}
		item := layerItem{layer: l}
		newLimit := limit
		for i := range requested {
			_, fail, err := cn.readPair(c.lmeta, size, func() ([]byte, error) {
				if item.buf == nil {
					select {
					case item.buf = <-free:
					case <-r.ctx.Done():
						return nil, r.ctx.Err()
					}
				}
				return item.buf[i*size : (i+1)*size], nil
			})
			if err != nil {
				r.fail(fmt.Errorf("layer %d: %w", l, err))
				if item.buf != nil {
					free <- item.buf
				}
				return
			}
			// A chunk past an earlier failure is read (it was requested)
			// but neither checked nor scattered.
			if fail != nil && i < newLimit {
				r.failed = append(r.failed, ChunkError{Chunk: i, Layer: l, Key: r.data[i*L+l], Err: fail})
				newLimit = i
			}
		}
		limit = newLimit
		item.limit = limit
		select {
		case ready <- item:
		case <-r.ctx.Done():
			if item.buf != nil {
				free <- item.buf
			}
			return
		}
	}
}

// queueLayer queues the GETs of layer l of the first n chunks.
func (r *LayerRetriever) queueLayer(l, n int) {
	L := r.c.cfg.Layers
	for i := range n {
		r.cn.out.Add("GET", r.meta[i*L+l])
		r.cn.out.Add("GET", r.data[i*L+l])
	}
}

// scatter is the device goroutine: it scatters each fetched layer's valid
// chunks and then marks the layer done. After an error it only drains.
func (r *LayerRetriever) scatter(ready <-chan layerItem, free chan<- []byte) {
	c := r.c
	size := c.layer.Size()
	for item := range ready {
		if r.ctx.Err() == nil {
			l := item.layer
			for i := range item.limit {
				err := c.cfg.Device.Scatter(r.ctx, c.layer, c.kv[l:l+1], c.chunkSlots(r.slots, i), item.buf[i*size:(i+1)*size])
				if err != nil {
					r.fail(fmt.Errorf("scatter layer %d chunk %d: %w", l, i, err))
					break
				}
			}
			if r.ctx.Err() == nil {
				r.bytes += int64(item.limit * size)
				r.loaded = item.limit
				close(r.done[l])
			}
		}
		if item.buf != nil {
			free <- item.buf
		}
	}
}

// finish fills in the result once both goroutines are done.
func (r *LayerRetriever) finish() {
	if r.err == nil && r.ctx.Err() != nil {
		r.err = r.ctx.Err()
	}
	r.res.Failed = r.failed
	r.res.Bytes = r.bytes
	if r.err == nil {
		r.res.Loaded = r.loaded
		r.res.Tokens = r.loaded * r.c.cfg.ChunkTokens
	}
}

// ask tells a sequential fetcher that the caller now waits for layer l.
func (r *LayerRetriever) ask(l int) {
	for {
		w := r.waited.Load()
		if int64(l) <= w || r.waited.CompareAndSwap(w, int64(l)) {
			break
		}
	}
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// WaitLayer blocks until layer l is in the paged cache (for the chunks
// still valid at that layer), the retrieval failed, or ctx is done.
func (r *LayerRetriever) WaitLayer(ctx context.Context, l int) error {
	if err := r.checkLayer(l); err != nil {
		return err
	}
	r.ask(l)
	return r.waitLayer(ctx, l, "loaded")
}

// Result waits for every layer and returns what was loaded. Tokens is 0
// when the retrieval failed (err set): layers after the failure were not
// loaded.
func (r *LayerRetriever) Result(ctx context.Context) (RetrieveResult, error) {
	r.ask(len(r.done) - 1)
	return runResult(ctx, &r.layerRun, &r.res, "retrieve layers")
}

// Close abandons the retrieval if it is still running and waits for its
// goroutines. Layers not yet done are left partly written.
func (r *LayerRetriever) Close() { r.close() }
