package cudadev

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"time"
	"unsafe"

	"github.com/kvserver/kvserver/cuda"
	"github.com/kvserver/kvserver/gpuclient"
)

// Options configure New and NewDevice. The zero value uses GPU 0.
type Options struct {
	// Ordinal is the GPU to use, as the driver numbers them.
	Ordinal int
	// Library is the driver library to load; DefaultLibrary when empty.
	Library string
	// StagingBytes is the size of each of the two pinned buffers that
	// copies from and to ordinary (pageable) host memory go through; 8 MiB
	// when zero.
	StagingBytes int
	// Logger receives NewDevice's reason for falling back to the CPU;
	// slog.Default() when nil.
	Logger *slog.Logger
}

const (
	defaultStaging = 8 << 20
	threadsPerCTA  = 128 // 128 x 16 B covers a 2 KiB row (8 heads x 128 x 2 B) in one pass
	maxParams      = 16
)

// ErrClosed is returned by every method of a closed Device.
var ErrClosed = errors.New("cudadev: device closed")

// Info describes the GPU a Device runs on.
type Info struct {
	Ordinal       int
	Name          string
	ComputeMajor  int
	ComputeMinor  int
	TotalMemory   int64  // bytes
	PCIBusID      string // "0000:41:00.0"
	DriverVersion int    // 12040 for CUDA 12.4
}

// Ptr is a device address (CUdeviceptr).
type Ptr uint64

// pinned is page-locked host memory from cuMemAllocHost: C memory, so
// slices of it may be handed to the driver for asynchronous copies.
type pinned struct {
	p unsafe.Pointer
	b []byte
}

// kernelSet chooses which of package cuda's kernels run a Gather or
// Scatter. The default picks the specialised kernel of each format; the
// others exist so that the GPU tests cover every kernel with every format.
type kernelSet uint8

const (
	kernelsSpecific kernelSet = iota // kv_*_2ltd, kv_*_mla, kv_*_t2d, kv_*_layer (KV_2TD)
	kernelsStrided                   // kv_*_strided for everything
	kernelsLayer                     // kv_*_layer, one launch per layer
)

// Device runs package cuda's kernels on one GPU through the CUDA driver.
//
// It implements gpuclient.Device and gpuclient.DequantScatterer for host
// paged buffers ([][]byte) by staging them through device memory: every
// layer is uploaded, the kernel runs, and the result comes back. That path
// exists to prove the kernels equal the CPU reference byte for byte; it
// moves whole layers and is not how an engine uses a GPU. An engine keeps
// its paged cache in device memory (AllocPaged, or its own buffers as
// Ptrs) and moves only chunks: GatherPaged and ScatterPaged (chunk in host
// memory), GatherOn and ScatterOn (chunk in device memory).
//
// Host memory is copied through two pinned staging buffers, so that
// copying one piece into (or out of) pinned memory overlaps the DMA of the
// other; host buffers from AllocHost are already pinned and go to the GPU
// directly. Transfers use a copy stream, kernels a compute stream, ordered
// with events. Every method returns when its work on the GPU is done. A
// Device is safe for concurrent use; calls run one at a time.
type Device struct {
	mu      sync.Mutex
	drv     *driver
	info    Info
	dev     int32
	ctx     uintptr // the primary context, retained
	mod     uintptr
	fn      map[string]uintptr
	copyS   uintptr // copy stream
	compS   uintptr // compute stream
	evCopy  uintptr // copy stream's work so far, for the compute stream to wait on
	evComp  uintptr // compute stream's work so far, for the copy stream to wait on
	evStart uintptr // around the timed step of the last call
	evStop  uintptr
	stage   [2]pinned
	stageEv [2]uintptr
	arena   pinned      // slot and layer tables, kernel parameters
	host    []pinned    // AllocHost's buffers
	allocs  map[Ptr]int // Alloc's buffers and their sizes
	// Device scratch, grown on demand: the chunk (or blob payload), the
	// slot and layer tables, and the paged layers of host-buffer calls.
	chunkBuf, tableBuf, layerBuf Ptr
	chunkCap, tableCap, layerCap int
	kernels                      kernelSet
	last                         time.Duration
	closed                       bool
	pieces                       int // parallel host copies per staging piece
}

var (
	_ gpuclient.Device           = (*Device)(nil)
	_ gpuclient.DequantScatterer = (*Device)(nil)
)

// NewDevice returns the CUDA device New opens when it can, and otherwise
// gpuclient.CPUDevice, logging why (no libcuda.so.1, no GPU, a GPU older
// than sm_80). The caller closes the result with CloseDevice.
func NewDevice(ctx context.Context, opts Options) gpuclient.Device {
	d, err := New(ctx, opts)
	if err != nil {
		log := opts.Logger
		if log == nil {
			log = slog.Default()
		}
		log.Info("gpuclient: no CUDA device, copying KV on the CPU", "reason", err)
		return gpuclient.CPUDevice{}
	}
	return d
}

// CloseDevice closes dev if it is a *Device; other devices need no closing.
func CloseDevice(dev gpuclient.Device) error {
	if d, ok := dev.(*Device); ok {
		return d.Close()
	}
	return nil
}

// New loads the CUDA driver, opens GPU opts.Ordinal (its primary context),
// JIT-compiles package cuda's PTX for it and sets up streams and staging.
// Errors wrap ErrUnavailable when there is no driver or no usable GPU.
func New(ctx context.Context, opts Options) (*Device, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	lib := opts.Library
	if lib == "" {
		lib = DefaultLibrary
	}
	drv, err := loadDriver(lib)
	if err != nil {
		return nil, err
	}
	staging := opts.StagingBytes
	if staging <= 0 {
		staging = defaultStaging
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	d := &Device{drv: drv, fn: map[string]uintptr{}, allocs: map[Ptr]int{}, pieces: max(1, min(runtime.GOMAXPROCS(0), 8))}
	if err := d.open(opts.Ordinal, staging); err != nil {
		d.release()
		return nil, err
	}
	return d, nil
}

// open does New's work on a locked thread; on error, release undoes it.
func (d *Device) open(ordinal, staging int) error {
	drv := d.drv
	if err := drv.check("cuInit", drv.cuInit(0)); err != nil {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	var n, v int32
	if err := drv.check("cuDeviceGetCount", drv.cuDeviceGetCount(&n)); err != nil {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	if ordinal < 0 || ordinal >= int(n) {
		return fmt.Errorf("%w: GPU %d asked for, the driver sees %d", ErrUnavailable, ordinal, n)
	}
	if err := drv.check("cuDeviceGet", drv.cuDeviceGet(&d.dev, int32(ordinal))); err != nil {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	d.info.Ordinal = ordinal
	if drv.cuDriverGetVersion(&v) == cudaSuccess {
		d.info.DriverVersion = int(v)
	}
	name := make([]byte, 256)
	if drv.cuDeviceGetName(&name[0], int32(len(name)), d.dev) == cudaSuccess {
		d.info.Name = goString(name)
	}
	if drv.cuDeviceGetPCIBusId(&name[0], int32(len(name)), d.dev) == cudaSuccess {
		d.info.PCIBusID = goString(name)
	}
	var mem uint64
	if drv.cuDeviceTotalMem(&mem, d.dev) == cudaSuccess {
		d.info.TotalMemory = int64(mem)
	}
	var major, minor int32
	drv.cuDeviceGetAttribute(&major, attrComputeMajor, d.dev)
	drv.cuDeviceGetAttribute(&minor, attrComputeMinor, d.dev)
	d.info.ComputeMajor, d.info.ComputeMinor = int(major), int(minor)
	if major < 8 {
		return fmt.Errorf("%w: %s is sm_%d%d, the kernels need %s or newer", ErrUnavailable, d.info.Name, major, minor, cuda.Arch)
	}
	if err := drv.check("cuDevicePrimaryCtxRetain", drv.cuDevicePrimaryCtxRetain(&d.ctx, d.dev)); err != nil {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	if err := drv.check("cuCtxSetCurrent", drv.cuCtxSetCurrent(d.ctx)); err != nil {
		return err
	}
	var err error
	if d.arena, err = d.allocHost(64 << 10); err != nil {
		return err
	}
	if err := d.loadModule(); err != nil {
		return err
	}
	for _, s := range []*uintptr{&d.copyS, &d.compS} {
		if err := drv.check("cuStreamCreate", drv.cuStreamCreate(s, cuStreamNonBlocking)); err != nil {
			return err
		}
	}
	for _, e := range []*uintptr{&d.evCopy, &d.evComp, &d.evStart, &d.evStop, &d.stageEv[0], &d.stageEv[1]} {
		if err := drv.check("cuEventCreate", drv.cuEventCreate(e, cuEventDefault)); err != nil {
			return err
		}
	}
	for i := range d.stage {
		if d.stage[i], err = d.allocHost(staging); err != nil {
			return err
		}
	}
	return nil
}

// loadModule JIT-compiles the embedded PTX, keeping the JIT's error log
// for the error message. The log buffer and option values live in the
// pinned arena: the driver writes the log through a pointer inside the
// option array, which must not point into Go memory.
func (d *Device) loadModule() error {
	const logSize = 16 << 10
	a := d.arena.b
	clear(a[:logSize+64])
	logBuf := unsafe.Pointer(&a[64])
	vals := (*[2]uintptr)(unsafe.Pointer(&a[0]))
	vals[0] = uintptr(logBuf)
	vals[1] = logSize
	opts := []int32{jitErrorLogBuffer, jitErrorLogBufferSize}
	image := append([]byte(cuda.PTX), 0)
	res := d.drv.cuModuleLoadDataEx(&d.mod, unsafe.Pointer(&image[0]), uint32(len(opts)), unsafe.Pointer(&opts[0]), unsafe.Pointer(&a[0]))
	if err := d.drv.check("cuModuleLoadDataEx", res); err != nil {
		return fmt.Errorf("%w: JIT of the %s PTX on %s: %w: %s", ErrUnavailable, cuda.Arch, d.info.Name, err, goString(a[64:64+logSize]))
	}
	for _, name := range cuda.Kernels() {
		var f uintptr
		if err := d.drv.check("cuModuleGetFunction("+name+")", d.drv.cuModuleGetFunction(&f, d.mod, name)); err != nil {
			return err
		}
		d.fn[name] = f
	}
	return nil
}

// Info describes the GPU.
func (d *Device) Info() Info { return d.info }

// LastGPUTime is the time, measured on the GPU with CUDA events, of the main
// step of the last call that had one: the kernel of a gather or scatter, or
// the transfer of Upload, Download and CopyOn.
func (d *Device) LastGPUTime() time.Duration {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.last
}

// Close waits for the GPU, frees everything the device allocated (device
// buffers from Alloc and AllocPaged, pinned buffers from AllocHost
// included) and releases the context. Later calls return ErrClosed.
func (d *Device) Close() error {
	return d.locked(nil, func(int32) error {
		err := d.syncAll()
		d.release()
		return err
	})
}

// release frees whatever open created, on a thread with the context
// current; each step tolerates what was never made.
func (d *Device) release() {
	drv := d.drv
	d.closed = true
	if d.ctx == 0 {
		return
	}
	drv.cuCtxSetCurrent(d.ctx)
	for _, e := range []uintptr{d.evCopy, d.evComp, d.evStart, d.evStop, d.stageEv[0], d.stageEv[1]} {
		if e != 0 {
			drv.cuEventDestroy(e)
		}
	}
	for _, s := range []uintptr{d.copyS, d.compS} {
		if s != 0 {
			drv.cuStreamDestroy(s)
		}
	}
	for _, p := range []Ptr{d.chunkBuf, d.tableBuf, d.layerBuf} {
		if p != 0 {
			drv.cuMemFree(uint64(p))
		}
	}
	for p := range d.allocs {
		drv.cuMemFree(uint64(p))
	}
	d.allocs = nil
	for _, p := range append([]pinned{d.arena, d.stage[0], d.stage[1]}, d.host...) {
		if p.p != nil {
			drv.cuMemFreeHost(p.p)
		}
	}
	d.host = nil
	if d.mod != 0 {
		drv.cuModuleUnload(d.mod)
	}
	drv.cuDevicePrimaryCtxRelease(d.dev)
	d.ctx = 0
}

// do runs fn with the device locked, on a locked OS thread with the
// context current. After an error it waits for both streams, so that no
// copy still reads or writes staging memory the next call reuses.
func (d *Device) do(fn func() error) error {
	return d.locked(ErrClosed, func(set int32) error {
		if err := d.drv.check("cuCtxSetCurrent", set); err != nil {
			return err
		}
		err := fn()
		if err != nil {
			d.syncAll()
		}
		return err
	})
}

// locked runs fn with the device locked, on a locked OS thread, after
// making the context current (CUDA's current context is per thread, and
// goroutines move between threads); fn gets cuCtxSetCurrent's result. On a
// closed device it returns ifClosed and does not run fn.
func (d *Device) locked(ifClosed error, fn func(set int32) error) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return ifClosed
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return fn(d.drv.cuCtxSetCurrent(d.ctx))
}

func (d *Device) syncAll() error {
	return errors.Join(
		d.drv.check("cuStreamSynchronize", d.drv.cuStreamSynchronize(d.copyS)),
		d.drv.check("cuStreamSynchronize", d.drv.cuStreamSynchronize(d.compS)))
}

// allocHost allocates n bytes of pinned host memory.
func (d *Device) allocHost(n int) (pinned, error) {
	var p unsafe.Pointer
	if err := d.drv.check("cuMemAllocHost_v2", d.drv.cuMemAllocHost(&p, uint64(n))); err != nil {
		return pinned{}, err
	}
	return pinned{p: p, b: unsafe.Slice((*byte)(p), n)}, nil
}
