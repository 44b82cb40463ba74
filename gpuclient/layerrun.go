package gpuclient

import (
	"context"
	"fmt"
	"sync"
)

// layerRun is what a LayerStorer and a LayerRetriever share: a channel per
// layer, closed once that layer is done; finished, closed once the
// pipeline's goroutines are; and the run's first error, read after
// finished.
type layerRun struct {
	cancel   context.CancelFunc
	done     []chan struct{} // closed once layer l is done
	finished chan struct{}

	errOnce sync.Once
	err     error
}

// init makes the channels of a run of layers layers that cancel stops.
func (p *layerRun) init(cancel context.CancelFunc, layers int) {
	p.cancel = cancel
	p.done = make([]chan struct{}, layers)
	for l := range p.done {
		p.done[l] = make(chan struct{})
	}
	p.finished = make(chan struct{})
}

// fail records the run's first error and stops it.
func (p *layerRun) fail(err error) {
	p.errOnce.Do(func() { p.err = err })
	p.cancel()
}

// waitLayer blocks until layer l is done, the run failed, or ctx is done;
// what says what a layer not done was not ("stored", "loaded").
func (p *layerRun) waitLayer(ctx context.Context, l int, what string) error {
	select {
	case <-p.done[l]:
		return nil
	case <-p.finished:
		select {
		case <-p.done[l]:
			return nil
		default:
		}
		if p.err != nil {
			return fmt.Errorf("gpuclient: layer %d not %s: %w", l, what, p.err)
		}
		return fmt.Errorf("gpuclient: layer %d not %s", l, what)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// checkLayer reports a layer l the run does not have.
func (p *layerRun) checkLayer(l int) error {
	if l < 0 || l >= len(p.done) {
		return fmt.Errorf("gpuclient: WaitLayer(%d): the model has %d layers", l, len(p.done))
	}
	return nil
}

// close stops the run if it is still going and waits for its goroutines.
func (p *layerRun) close() {
	p.cancel()
	<-p.finished
}

// runResult waits until run p has finished and returns *res, which its
// goroutines write, with p's error wrapped as op's; if ctx is done first,
// it returns the zero R and ctx's error.
func runResult[R any](ctx context.Context, p *layerRun, res *R, op string) (R, error) {
	select {
	case <-p.finished:
	case <-ctx.Done():
		var zero R
		return zero, ctx.Err()
	}
	if p.err != nil {
		return *res, fmt.Errorf("gpuclient: %s: %w", op, p.err)
	}
	return *res, nil
}

// layerConn is what StoreLayers and RetrieveLayers set up before their
// goroutines start: the chunks' layer keys, a connection watched under a
// context of its own, and how many leading chunks the probe found in every
// layer.
type layerConn struct {
	hashes     []Hash
	data, meta []string // chunk-major layer keys
	cn         *conn
	ctx        context.Context
	cancel     context.CancelFunc
	stop       func() // ends the watch
	found      int
}

// openLayers plans tokens, takes a connection watched under a cancellable
// child of ctx and probes every layer key with KVC.PROBE (a lease of
// leaseMs, 0 for none). op names the operation in errors.
func (c *Connector) openLayers(ctx context.Context, tokens []uint32, slotMapping []int64, leaseMs int64, op string) (*layerConn, error) {
	hashes, err := c.plan(tokens, slotMapping)
	if err != nil {
		return nil, err
	}
	L := c.cfg.Layers
	data, meta := c.layerKeys(hashes)
	cn, err := c.client.get(ctx)
	if err != nil {
		return nil, fmt.Errorf("gpuclient: %s: %w", op, err)
	}
	lctx, cancel := context.WithCancel(ctx)
	lc := &layerConn{hashes: hashes, data: data, meta: meta, cn: cn, ctx: lctx, cancel: cancel, stop: cn.watch(lctx)}
	if len(meta) > 0 {
		n, err := cn.probe(leaseMs, meta)
		if err != nil {
			lc.stop()
			cancel()
			c.client.put(cn)
			return nil, fmt.Errorf("gpuclient: %s: %w", op, err)
		}
		lc.found = int(n) / L
	}
	return lc, nil
}

// layerBuffers returns a channel holding opts.buffers() staging buffers of
// chunks layer chunks each (none when chunks is 0).
func (c *Connector) layerBuffers(opts LayerOptions, chunks int) chan []byte {
	free := make(chan []byte, opts.buffers())
	if chunks > 0 {
		for range opts.buffers() {
			free <- c.bufs.get(chunks * c.layer.Size())
		}
	}
	return free
}

// closeLayers ends the watch and returns the connection (marked broken if
// lc.ctx ended) and the staging buffers in free.
func (c *Connector) closeLayers(lc *layerConn, free chan []byte) {
	lc.stop()
	if lc.ctx.Err() != nil {
		lc.cn.broken.Store(true)
	}
	c.client.put(lc.cn)
	for len(free) > 0 {
		c.bufs.put(<-free)
	}
}
