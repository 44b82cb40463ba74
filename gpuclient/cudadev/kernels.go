package cudadev

import (
	"context"
	"encoding/binary"
	"fmt"
	"unsafe"

	"github.com/kvserver/kvserver/cuda"
	"github.com/kvserver/kvserver/gpuclient"
	"github.com/kvserver/kvserver/kvmeta"
)

// params builds a kernel's argument block in pinned memory: maxParams
// pointers (the void** cuLaunchKernel takes), then the values they point
// to, 8 bytes apart. The driver copies the values at launch, so the block
// can be rebuilt for the next launch as soon as cuLaunchKernel returns.
type params struct {
	mem []byte
	n   int
}

func (p *params) slot() []byte {
	if p.n == maxParams {
		panic("cudadev: too many kernel parameters")
	}
	off := 8*maxParams + 8*p.n
	binary.NativeEndian.PutUint64(p.mem[8*p.n:], uint64(uintptr(unsafe.Pointer(&p.mem[off]))))
	p.n++
	return p.mem[off : off+8]
}

func (p *params) u64(v uint64) { binary.NativeEndian.PutUint64(p.slot(), v) }

// i32 appends int32 parameters, in order.
func (p *params) i32(vs ...int32) {
	for _, v := range vs {
		binary.NativeEndian.PutUint32(p.slot(), uint32(v))
	}
}

// i64 appends int64 parameters, in order.
func (p *params) i64(vs ...int64) {
	for _, v := range vs {
		p.u64(uint64(v))
	}
}

// ptr appends pointer parameters, in order.
func (p *params) ptr(vs ...Ptr) {
	for _, v := range vs {
		p.u64(uint64(v))
	}
}

const paramBytes = 16 * maxParams

// tables uploads the per-layer base pointers and the slots to device
// memory on the compute stream, ahead of the kernel that reads them, and
// returns their device addresses and an empty parameter block.
func (d *Device) tables(layers []Ptr, slots []int64) (table, slotPtr Ptr, p *params, err error) {
	n := 8 * (len(layers) + len(slots))
	if err := d.growArena(n + paramBytes); err != nil {
		return 0, 0, nil, err
	}
	if err := d.grow(&d.tableBuf, &d.tableCap, n); err != nil {
		return 0, 0, nil, err
	}
	a := d.arena.b
	for i, l := range layers {
		binary.LittleEndian.PutUint64(a[8*i:], uint64(l))
	}
	for i, s := range slots {
		binary.LittleEndian.PutUint64(a[8*(len(layers)+i):], uint64(s))
	}
	if err := d.drv.check("cuMemcpyHtoDAsync_v2", d.drv.cuMemcpyHtoDAsync(uint64(d.tableBuf), d.arena.p, uint64(n), d.compS)); err != nil {
		return 0, 0, nil, err
	}
	return d.tableBuf, d.tableBuf + Ptr(8*len(layers)), &params{mem: a[n : n+paramBytes]}, nil
}

// launch starts kernel name on the compute stream over grid (gx, gy).
func (d *Device) launch(name string, gx, gy int, p *params) error {
	f, ok := d.fn[name]
	if !ok {
		return fmt.Errorf("cudadev: no kernel %s in the module", name)
	}
	res := d.drv.cuLaunchKernel(f, uint32(gx), uint32(gy), 1, threadsPerCTA, 1, 1, 0, d.compS, unsafe.Pointer(&p.mem[0]), nil)
	return d.drv.check("cuLaunchKernel("+name+")", res)
}

// copyKernel queues the gather (or scatter) of chunk c between the layers
// at layers and the chunk at chunk, timed, and waits for it.
func (d *Device) copyKernel(c gpuclient.Chunk, layers []Ptr, slots []int64, chunk Ptr, gather bool) error {
	table, slotPtr, p, err := d.tables(layers, slots)
	if err != nil {
		return err
	}
	s := c.Strides()
	pick := func(g, sc string) string {
		if gather {
			return g
		}
		return sc
	}
	t, l := c.Tokens, c.Layers
	// layerLaunch runs the single-layer kernel on layer i.
	layerLaunch := func(i int) error {
		q := &params{mem: p.mem}
		q.ptr(layers[i], slotPtr, chunk+Ptr(int64(i)*s.ChunkLayer))
		q.i32(int32(s.Planes))
		q.i64(s.BlockSize, s.Row, s.PagedKV, s.PagedBlock, s.ChunkKV, s.ChunkToken)
		return d.launch(pick(cuda.KernelGatherLayer, cuda.KernelScatterLayer), t, 1, q)
	}
	return d.timed(d.compS, func() error {
		set := d.kernels
		if set == kernelsSpecific && c.Format == kvmeta.FormatKV2TD {
			set = kernelsLayer
		}
		switch set {
		case kernelsLayer:
			for i := range l {
				if err := layerLaunch(i); err != nil {
					return err
				}
			}
			return nil
		case kernelsStrided:
			p.ptr(table, slotPtr, chunk)
			p.i32(int32(s.Planes))
			p.i64(s.BlockSize, s.Row, s.PagedKV, s.PagedBlock, s.ChunkKV, s.ChunkLayer, s.ChunkToken)
			return d.launch(pick(cuda.KernelGatherStrided, cuda.KernelScatterStrided), t, l, p)
		}
		switch c.Format {
		case kvmeta.FormatKV2LTD:
			p.ptr(table, slotPtr, chunk)
			p.i32(int32(t))
			p.i64(s.BlockSize, s.Row, s.PagedKV, s.PagedBlock)
			return d.launch(pick(cuda.KernelGather2LTD, cuda.KernelScatter2LTD), t, l, p)
		case kvmeta.FormatKVMLA:
			p.ptr(table, slotPtr, chunk)
			p.i32(int32(t))
			p.i64(s.BlockSize, s.Row, s.PagedBlock)
			return d.launch(pick(cuda.KernelGatherMLA, cuda.KernelScatterMLA), t, l, p)
		case kvmeta.FormatKVT2D:
			p.ptr(layers[0], slotPtr, chunk)
			p.i64(s.BlockSize, s.Row, s.PagedKV, s.PagedBlock)
			return d.launch(pick(cuda.KernelGatherT2D, cuda.KernelScatterT2D), t, 1, p)
		}
		return fmt.Errorf("%w: no kernel for %s", gpuclient.ErrLayout, c.Format)
	})
}

// dequantKernel queues kv_dequant_scatter_int8 over the payload at payload,
// timed, and waits for it.
func (d *Device) dequantKernel(c gpuclient.Chunk, b gpuclient.Int8Blob, layers []Ptr, slots []int64, payload Ptr) error {
	table, slotPtr, p, err := d.tables(layers, slots)
	if err != nil {
		return err
	}
	pl := c.Paged
	bool32 := func(v bool) int32 {
		if v {
			return 1
		}
		return 0
	}
	p.ptr(table, slotPtr, payload)
	p.i32(int32(c.Tokens))
	p.i64(int64(pl.BlockSize), int64(pl.KVStride()), int64(pl.BlockStride()),
		int64(pl.RowElems()), int64(b.KeyBlock), int64(b.ValueGroup))
	p.i32(bool32(b.HasKeys), bool32(b.BF16))
	return d.timed(d.compS, func() error {
		return d.launch(cuda.KernelDequantScatterInt8, c.Tokens, c.Layers, p)
	})
}

// checkOn validates a call on device pointers: what can be checked without
// knowing the buffers' sizes.
func checkOn(c gpuclient.Chunk, layers []Ptr, slots []int64, chunk Ptr) error {
	if err := gpuclient.CheckSlots(c, slots); err != nil {
		return err
	}
	if len(layers) != c.Layers {
		return fmt.Errorf("%w: %d layer pointers for a chunk of %d layers", gpuclient.ErrLayout, len(layers), c.Layers)
	}
	for i, l := range layers {
		if l == 0 {
			return fmt.Errorf("%w: layer %d pointer is null", gpuclient.ErrLayout, i)
		}
	}
	if chunk == 0 {
		return fmt.Errorf("%w: chunk pointer is null", gpuclient.ErrLayout)
	}
	return nil
}

// GatherOn gathers chunk c from paged layers in device memory (layers[l]
// is the chunk's layer l, c.Paged.LayerBytes() long) into device memory at
// chunk (c.Size() bytes), with the rules of gpuclient.Device: negative slots
// give zero rows. The slot mapping is a host slice; it is copied to the GPU
// with the call.
func (d *Device) GatherOn(ctx context.Context, c gpuclient.Chunk, layers []Ptr, slots []int64, chunk Ptr) error {
	return d.copyOn(ctx, c, layers, slots, chunk, true)
}

// ScatterOn is the inverse of GatherOn: negative slots are skipped.
func (d *Device) ScatterOn(ctx context.Context, c gpuclient.Chunk, layers []Ptr, slots []int64, chunk Ptr) error {
	return d.copyOn(ctx, c, layers, slots, chunk, false)
}

// copyOn is GatherOn (gather) or ScatterOn.
func (d *Device) copyOn(ctx context.Context, c gpuclient.Chunk, layers []Ptr, slots []int64, chunk Ptr, gather bool) error {
	if err := checkOn(c, layers, slots, chunk); err != nil {
		return err
	}
	return d.doCtx(ctx, func() error { return d.copyKernel(c, layers, slots, chunk, gather) })
}

// doCtx is do, but returns ctx's error instead of running fn once ctx is
// done.
func (d *Device) doCtx(ctx context.Context, fn func() error) error {
	return d.do(func() error {
		if err := ctx.Err(); err != nil {
			return err
		}
		return fn()
	})
}

// DequantScatterOn decodes the payload of an int8 blob already in device
// memory at payload (b.Payload's bytes, as ParseInt8Blob checked them on the
// host: the kernel trusts them) into paged layers in device memory.
func (d *Device) DequantScatterOn(ctx context.Context, c gpuclient.Chunk, b gpuclient.Int8Blob, layers []Ptr, slots []int64, payload Ptr) error {
	if err := checkOn(c, layers, slots, payload); err != nil {
		return err
	}
	if c.Paged.DType != gpuclient.FP16 && c.Paged.DType != gpuclient.BF16 || b.KeyBlock <= 0 || b.ValueGroup <= 0 {
		return fmt.Errorf("%w: int8 blob geometry %+v for %v", gpuclient.ErrLayout, b, c.Paged)
	}
	return d.doCtx(ctx, func() error { return d.dequantKernel(c, b, layers, slots, payload) })
}

// Paged is a paged KV cache in device memory, as an engine holds it: one
// buffer of Layout.LayerBytes() per layer.
type Paged struct {
	Layout gpuclient.PagedLayout
	Layers []Ptr
	base   Ptr
}

// AllocPaged allocates a zeroed paged cache of layers layers.
func (d *Device) AllocPaged(ctx context.Context, p gpuclient.PagedLayout, layers int) (*Paged, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if layers <= 0 {
		return nil, fmt.Errorf("%w: %d layers", gpuclient.ErrLayout, layers)
	}
	lb := p.LayerBytes()
	base, err := d.Alloc(layers * lb)
	if err != nil {
		return nil, err
	}
	pc := &Paged{Layout: p, base: base}
	for l := range layers {
		pc.Layers = append(pc.Layers, base+Ptr(l*lb))
	}
	err = d.do(func() error {
		if err := d.drv.check("cuMemsetD8Async", d.drv.cuMemsetD8Async(uint64(base), 0, uint64(layers*lb), d.compS)); err != nil {
			return err
		}
		return d.syncAll()
	})
	if err != nil {
		d.Free(base)
		return nil, err
	}
	return pc, nil
}

// FreePaged releases a cache from AllocPaged.
func (d *Device) FreePaged(pc *Paged) error { return d.Free(pc.base) }

// UploadPaged copies host layers (len(layers) == len(pc.Layers), each
// LayerBytes long) into the cache.
func (d *Device) UploadPaged(ctx context.Context, pc *Paged, layers [][]byte) error {
	if err := pc.checkHost(layers); err != nil {
		return err
	}
	return d.do(func() error {
		for l, b := range layers {
			if err := d.upload(ctx, pc.Layers[l], b); err != nil {
				return err
			}
		}
		return d.syncAll()
	})
}

// DownloadPaged copies the cache into host layers.
func (d *Device) DownloadPaged(ctx context.Context, pc *Paged, layers [][]byte) error {
	if err := pc.checkHost(layers); err != nil {
		return err
	}
	return d.do(func() error {
		for l, b := range layers {
			if err := d.download(ctx, b, pc.Layers[l]); err != nil {
				return err
			}
		}
		return nil
	})
}

func (pc *Paged) checkHost(layers [][]byte) error {
	if len(layers) != len(pc.Layers) {
		return fmt.Errorf("%w: %d host layers for a cache of %d", gpuclient.ErrLayout, len(layers), len(pc.Layers))
	}
	for l, b := range layers {
		if len(b) != pc.Layout.LayerBytes() {
			return fmt.Errorf("%w: host layer %d is %d bytes, %v needs %d", gpuclient.ErrLayout, l, len(b), pc.Layout, pc.Layout.LayerBytes())
		}
	}
	return nil
}

// layersFor returns the cache layers a chunk starting at layer first
// covers, after checking that c fits the cache.
func (pc *Paged) layersFor(c gpuclient.Chunk, first int, slots []int64) ([]Ptr, error) {
	if err := gpuclient.CheckSlots(c, slots); err != nil {
		return nil, err
	}
	if c.Paged != pc.Layout {
		return nil, fmt.Errorf("%w: chunk of %v, cache is %v", gpuclient.ErrLayout, c.Paged, pc.Layout)
	}
	if first < 0 || first+c.Layers > len(pc.Layers) {
		return nil, fmt.Errorf("%w: layers %d..%d of a cache of %d", gpuclient.ErrLayout, first, first+c.Layers-1, len(pc.Layers))
	}
	return pc.Layers[first : first+c.Layers], nil
}

// layersForBuf is layersFor, with b checked to be the size of chunk c.
func (pc *Paged) layersForBuf(c gpuclient.Chunk, first int, slots []int64, b []byte) ([]Ptr, error) {
	layers, err := pc.layersFor(c, first, slots)
	if err != nil {
		return nil, err
	}
	if len(b) != c.Size() {
		return nil, fmt.Errorf("%w: chunk buffer is %d bytes, %s of %d layers and %d tokens needs %d",
			gpuclient.ErrLayout, len(b), c.Format, c.Layers, c.Tokens, c.Size())
	}
	return layers, nil
}

// GatherPaged gathers chunk c, whose layer 0 is the cache's layer first,
// into host memory dst (c.Size() bytes): the store path.
func (d *Device) GatherPaged(ctx context.Context, c gpuclient.Chunk, pc *Paged, first int, slots []int64, dst []byte) error {
	layers, err := pc.layersForBuf(c, first, slots, dst)
	if err != nil {
		return err
	}
	return d.do(func() error { return d.gatherToHost(ctx, c, layers, slots, dst) })
}

// ScatterPaged scatters chunk c from host memory src into the cache from
// layer first on: the load path.
func (d *Device) ScatterPaged(ctx context.Context, c gpuclient.Chunk, pc *Paged, first int, slots []int64, src []byte) error {
	layers, err := pc.layersForBuf(c, first, slots, src)
	if err != nil {
		return err
	}
	return d.do(func() error { return d.scatterFromHost(ctx, c, layers, slots, src) })
}

// DequantScatterPaged decodes an int8 blob of package codec (checked on the
// host first, see gpuclient.ParseInt8Blob) into the cache from layer first
// on. Only the blob's payload crosses PCIe: about half the bytes of the
// decoded chunk.
func (d *Device) DequantScatterPaged(ctx context.Context, c gpuclient.Chunk, pc *Paged, first int, slots []int64, blob []byte) error {
	layers, err := pc.layersFor(c, first, slots)
	if err != nil {
		return err
	}
	b, err := gpuclient.ParseInt8Blob(c, blob)
	if err != nil {
		return err
	}
	return d.do(func() error { return d.dequantFromHost(ctx, c, b, layers, slots) })
}

func (d *Device) gatherToHost(ctx context.Context, c gpuclient.Chunk, layers []Ptr, slots []int64, dst []byte) error {
	if err := d.grow(&d.chunkBuf, &d.chunkCap, c.Size()); err != nil {
		return err
	}
	if err := d.copyKernel(c, layers, slots, d.chunkBuf, true); err != nil {
		return err
	}
	return d.download(ctx, dst, d.chunkBuf)
}

// scatterFromHost scatters chunk c, host memory src (c.Size() bytes), into
// layers.
func (d *Device) scatterFromHost(ctx context.Context, c gpuclient.Chunk, layers []Ptr, slots []int64, src []byte) error {
	return d.runOnUpload(ctx, src, func(buf Ptr) error {
		return d.copyKernel(c, layers, slots, buf, false)
	})
}

// dequantFromHost decodes blob b, in host memory, into layers.
func (d *Device) dequantFromHost(ctx context.Context, c gpuclient.Chunk, b gpuclient.Int8Blob, layers []Ptr, slots []int64) error {
	return d.runOnUpload(ctx, b.Payload, func(buf Ptr) error {
		return d.dequantKernel(c, b, layers, slots, buf)
	})
}

// runOnUpload uploads src into the chunk scratch buffer, runs launch on
// that buffer and waits for the GPU.
func (d *Device) runOnUpload(ctx context.Context, src []byte, launch func(buf Ptr) error) error {
	if err := d.grow(&d.chunkBuf, &d.chunkCap, len(src)); err != nil {
		return err
	}
	if err := d.upload(ctx, d.chunkBuf, src); err != nil {
		return err
	}
	if err := launch(d.chunkBuf); err != nil {
		return err
	}
	return d.syncAll()
}

// stageLayers uploads host paged layers into device scratch and returns
// their device addresses, for the gpuclient.Device methods.
func (d *Device) stageLayers(ctx context.Context, c gpuclient.Chunk, layers [][]byte) ([]Ptr, error) {
	lb := c.Paged.LayerBytes()
	if err := d.grow(&d.layerBuf, &d.layerCap, len(layers)*lb); err != nil {
		return nil, err
	}
	ptrs := make([]Ptr, len(layers))
	for l, b := range layers {
		ptrs[l] = d.layerBuf + Ptr(l*lb)
		if err := d.upload(ctx, ptrs[l], b); err != nil {
			return nil, err
		}
	}
	return ptrs, nil
}

// onHostLayers runs fn, on the device, with host paged layers uploaded into
// device scratch (ptrs are their addresses); if writeBack, it then copies
// the scratch layers back into layers.
func (d *Device) onHostLayers(ctx context.Context, c gpuclient.Chunk, layers [][]byte, writeBack bool, fn func(ptrs []Ptr) error) error {
	return d.do(func() error {
		ptrs, err := d.stageLayers(ctx, c, layers)
		if err != nil {
			return err
		}
		if err := fn(ptrs); err != nil || !writeBack {
			return err
		}
		return d.unstageLayers(ctx, ptrs, layers)
	})
}

// unstageLayers copies the device scratch layers back into host layers.
func (d *Device) unstageLayers(ctx context.Context, ptrs []Ptr, layers [][]byte) error {
	for l, b := range layers {
		if err := d.download(ctx, b, ptrs[l]); err != nil {
			return err
		}
	}
	return nil
}

// Gather implements gpuclient.Device for host paged buffers: it uploads
// every layer, gathers on the GPU and downloads the chunk.
func (d *Device) Gather(ctx context.Context, c gpuclient.Chunk, layers [][]byte, slots []int64, dst []byte) error {
	if err := gpuclient.CheckCopy(c, layers, slots, dst); err != nil {
		return err
	}
	return d.onHostLayers(ctx, c, layers, false, func(ptrs []Ptr) error {
		return d.gatherToHost(ctx, c, ptrs, slots, dst)
	})
}

// Scatter implements gpuclient.Device for host paged buffers: it uploads
// every layer and the chunk, scatters on the GPU and downloads the layers.
func (d *Device) Scatter(ctx context.Context, c gpuclient.Chunk, layers [][]byte, slots []int64, src []byte) error {
	if err := gpuclient.CheckCopy(c, layers, slots, src); err != nil {
		return err
	}
	return d.onHostLayers(ctx, c, layers, true, func(ptrs []Ptr) error {
		return d.scatterFromHost(ctx, c, ptrs, slots, src)
	})
}

// DequantScatter implements gpuclient.DequantScatterer for host paged
// buffers, like Scatter.
func (d *Device) DequantScatter(ctx context.Context, c gpuclient.Chunk, layers [][]byte, slots []int64, blob []byte) error {
	if err := gpuclient.CheckPaged(c, layers, slots); err != nil {
		return err
	}
	b, err := gpuclient.ParseInt8Blob(c, blob)
	if err != nil {
		return err
	}
	return d.onHostLayers(ctx, c, layers, true, func(ptrs []Ptr) error {
		return d.dequantFromHost(ctx, c, b, ptrs, slots)
	})
}
