package cudadev

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
	"unsafe"
)

// Alloc allocates n bytes of device memory (not cleared). Free or Close
// releases it.
func (d *Device) Alloc(n int) (Ptr, error) {
	var p Ptr
	err := d.do(func() error {
		var err error
		p, err = d.alloc(n)
		if err == nil {
			d.allocs[p] = n
		}
		return err
	})
	return p, err
}

// Free releases memory from Alloc.
func (d *Device) Free(p Ptr) error {
	return d.do(func() error {
		if _, ok := d.allocs[p]; !ok {
			return fmt.Errorf("cudadev: Free(%#x): not from Alloc", uint64(p))
		}
		delete(d.allocs, p)
		if err := d.syncAll(); err != nil {
			return err
		}
		return d.drv.check("cuMemFree_v2", d.drv.cuMemFree(uint64(p)))
	})
}

func (d *Device) alloc(n int) (Ptr, error) {
	var p uint64
	if err := d.drv.check("cuMemAlloc_v2", d.drv.cuMemAlloc(&p, uint64(max(n, 1)))); err != nil {
		return 0, fmt.Errorf("allocating %d bytes on %s: %w", n, d.info.Name, err)
	}
	return Ptr(p), nil
}

// AllocHost allocates n bytes of pinned (page-locked) host memory. Copies
// between it and the GPU skip the staging buffers and run at the PCIe
// link's speed: a client that receives chunks straight into such a buffer
// saves a host copy. FreeHost or Close releases it; the slice must not be
// used after that.
func (d *Device) AllocHost(n int) ([]byte, error) {
	var b []byte
	err := d.do(func() error {
		p, err := d.allocHost(n)
		if err == nil {
			d.host = append(d.host, p)
			b = p.b
		}
		return err
	})
	return b, err
}

// FreeHost releases a buffer from AllocHost.
func (d *Device) FreeHost(b []byte) error {
	return d.do(func() error {
		i := slices.IndexFunc(d.host, func(p pinned) bool { return unsafe.SliceData(p.b) == unsafe.SliceData(b) })
		if i < 0 {
			return fmt.Errorf("cudadev: FreeHost: not a buffer from AllocHost")
		}
		p := d.host[i]
		d.host = slices.Delete(d.host, i, i+1)
		if err := d.syncAll(); err != nil {
			return err
		}
		return d.drv.check("cuMemFreeHost", d.drv.cuMemFreeHost(p.p))
	})
}

// isPinned reports whether b lies inside one of AllocHost's buffers.
func (d *Device) isPinned(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	s := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	for _, p := range d.host {
		ps := uintptr(p.p)
		if s >= ps && s+uintptr(len(b)) <= ps+uintptr(len(p.b)) {
			return true
		}
	}
	return false
}

// Upload copies src to device memory at dst (len(src) bytes).
func (d *Device) Upload(ctx context.Context, dst Ptr, src []byte) error {
	return d.do(func() error {
		if err := d.timed(d.copyS, func() error { return d.upload(ctx, dst, src) }); err != nil {
			return err
		}
		return d.syncAll()
	})
}

// Download copies len(dst) bytes from device memory at src into dst.
func (d *Device) Download(ctx context.Context, dst []byte, src Ptr) error {
	return d.do(func() error {
		return d.timed(d.copyS, func() error { return d.download(ctx, dst, src) })
	})
}

// CopyOn copies n bytes between device buffers (cuMemcpyDtoD), the yardstick
// for the kernels' bandwidth.
func (d *Device) CopyOn(ctx context.Context, dst, src Ptr, n int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return d.do(func() error {
		err := d.timed(d.compS, func() error {
			return d.drv.check("cuMemcpyDtoDAsync_v2", d.drv.cuMemcpyDtoDAsync(uint64(dst), uint64(src), uint64(n), d.compS))
		})
		if err != nil {
			return err
		}
		return d.syncAll()
	})
}

// timed runs fn between two events recorded on stream s and keeps the time
// between them in d.last (it waits for the second event).
func (d *Device) timed(s uintptr, fn func() error) error {
	drv := d.drv
	if err := drv.check("cuEventRecord", drv.cuEventRecord(d.evStart, s)); err != nil {
		return err
	}
	if err := fn(); err != nil {
		return err
	}
	if err := drv.check("cuEventRecord", drv.cuEventRecord(d.evStop, s)); err != nil {
		return err
	}
	if err := drv.check("cuEventSynchronize", drv.cuEventSynchronize(d.evStop)); err != nil {
		return err
	}
	var ms float32
	if err := drv.check("cuEventElapsedTime", drv.cuEventElapsedTime(&ms, d.evStart, d.evStop)); err != nil {
		return err
	}
	d.last = time.Duration(float64(ms) * float64(time.Millisecond))
	return nil
}

// after makes stream s wait for the work queued so far on stream on,
// through event ev.
func (d *Device) after(s, on, ev uintptr) error {
	if err := d.drv.check("cuEventRecord", d.drv.cuEventRecord(ev, on)); err != nil {
		return err
	}
	return d.drv.check("cuStreamWaitEvent", d.drv.cuStreamWaitEvent(s, ev, 0))
}

// beginCopy orders a copy of n bytes on the copy stream after the work
// queued so far on the compute stream: the copy must not overwrite what
// queued kernels still read, nor read what they have not written yet. It
// reports false, with no error, when n is 0 and there is nothing to copy.
func (d *Device) beginCopy(n int) (bool, error) {
	if n == 0 {
		return false, nil
	}
	return true, d.after(d.copyS, d.compS, d.evComp)
}

// upload queues the copy of src to dst on the copy stream and makes the
// compute stream wait for it. Pageable memory goes through the two staging
// buffers: while the GPU pulls one piece, the CPU fills the other. It
// returns once src may be reused (its last piece is in pinned memory or,
// for pinned src, on the GPU).
func (d *Device) upload(ctx context.Context, dst Ptr, src []byte) error {
	drv := d.drv
	if ok, err := d.beginCopy(len(src)); !ok || err != nil {
		return err
	}
	if d.isPinned(src) {
		if err := d.waitCopy("cuMemcpyHtoDAsync_v2", drv.cuMemcpyHtoDAsync(uint64(dst), unsafe.Pointer(unsafe.SliceData(src)), uint64(len(src)), d.copyS)); err != nil {
			return err
		}
		return d.after(d.compS, d.copyS, d.evCopy)
	}
	piece := len(d.stage[0].b)
	for i, off := 0, 0; off < len(src); i, off = i+1, off+piece {
		if err := ctx.Err(); err != nil {
			return err
		}
		// The last DMA out of this buffer (piece i-2, or a piece of the
		// previous upload of the same call) must be done. An event never
		// recorded counts as done.
		s := i % 2
		if err := drv.check("cuEventSynchronize", drv.cuEventSynchronize(d.stageEv[s])); err != nil {
			return err
		}
		n := min(piece, len(src)-off)
		d.hostCopy(d.stage[s].b[:n], src[off:off+n])
		if err := drv.check("cuMemcpyHtoDAsync_v2", drv.cuMemcpyHtoDAsync(uint64(dst)+uint64(off), d.stage[s].p, uint64(n), d.copyS)); err != nil {
			return err
		}
		if err := drv.check("cuEventRecord", drv.cuEventRecord(d.stageEv[s], d.copyS)); err != nil {
			return err
		}
	}
	return d.after(d.compS, d.copyS, d.evCopy)
}

// download copies len(dst) bytes at src into dst once the work queued on
// the compute stream is done, and returns when dst holds them. Pageable
// memory goes through the staging buffers: the CPU empties one while the
// GPU fills the other.
func (d *Device) download(ctx context.Context, dst []byte, src Ptr) error {
	drv := d.drv
	if ok, err := d.beginCopy(len(dst)); !ok || err != nil {
		return err
	}
	if d.isPinned(dst) {
		return d.waitCopy("cuMemcpyDtoHAsync_v2", drv.cuMemcpyDtoHAsync(unsafe.Pointer(unsafe.SliceData(dst)), uint64(src), uint64(len(dst)), d.copyS))
	}
	piece := len(d.stage[0].b)
	n := (len(dst) + piece - 1) / piece
	size := func(i int) int { return min(piece, len(dst)-i*piece) }
	issue := func(i int) error {
		s := i % 2
		if err := drv.check("cuMemcpyDtoHAsync_v2", drv.cuMemcpyDtoHAsync(d.stage[s].p, uint64(src)+uint64(i*piece), uint64(size(i)), d.copyS)); err != nil {
			return err
		}
		return drv.check("cuEventRecord", drv.cuEventRecord(d.stageEv[s], d.copyS))
	}
	if err := issue(0); err != nil {
		return err
	}
	for i := range n {
		// Buffer (i+1)%2 held piece i-1, copied out in the last round.
		if i+1 < n {
			if err := issue(i + 1); err != nil {
				return err
			}
		}
		s := i % 2
		if err := drv.check("cuEventSynchronize", drv.cuEventSynchronize(d.stageEv[s])); err != nil {
			return err
		}
		d.hostCopy(dst[i*piece:i*piece+size(i)], d.stage[s].b[:size(i)])
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return nil
}

// waitCopy checks res, the result of queueing copy op on the copy stream,
// and waits for that stream.
func (d *Device) waitCopy(op string, res int32) error {
	if err := d.drv.check(op, res); err != nil {
		return err
	}
	return d.drv.check("cuStreamSynchronize", d.drv.cuStreamSynchronize(d.copyS))
}

// hostCopy copies between host buffers in up to d.pieces goroutines: one
// core's memmove (about 10 GB/s) is slower than a PCIe 5 x16 link.
func (d *Device) hostCopy(dst, src []byte) {
	const minPart = 1 << 20
	parts := min(d.pieces, len(src)/minPart)
	if parts <= 1 {
		copy(dst, src)
		return
	}
	var wg sync.WaitGroup
	step := (len(src) + parts - 1) / parts
	for off := 0; off < len(src); off += step {
		end := min(off+step, len(src))
		wg.Go(func() { copy(dst[off:end], src[off:end]) })
	}
	wg.Wait()
}

// grow makes the scratch buffer *p hold at least n bytes.
func (d *Device) grow(p *Ptr, capacity *int, n int) error {
	if *capacity >= n && *p != 0 {
		return nil
	}
	if *p != 0 {
		if err := d.syncAll(); err != nil {
			return err
		}
		d.drv.cuMemFree(uint64(*p))
		*p, *capacity = 0, 0
	}
	q, err := d.alloc(n)
	if err != nil {
		return err
	}
	*p, *capacity = q, n
	return nil
}

// growArena makes the pinned arena hold at least n bytes.
func (d *Device) growArena(n int) error {
	if len(d.arena.b) >= n {
		return nil
	}
	if err := d.syncAll(); err != nil {
		return err
	}
	a, err := d.allocHost(max(n, 2*len(d.arena.b)))
	if err != nil {
		return err
	}
	d.drv.cuMemFreeHost(d.arena.p)
	d.arena = a
	return nil
}
