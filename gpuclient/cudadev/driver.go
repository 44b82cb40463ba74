package cudadev

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/ebitengine/purego"
)

// DefaultLibrary is the CUDA driver library the NVIDIA driver installs.
// Only the driver is needed at run time, never the CUDA toolkit.
const DefaultLibrary = "libcuda.so.1"

// ErrUnavailable is wrapped by New's error when the CUDA driver cannot be
// loaded or offers no usable GPU; NewDevice then falls back to the CPU.
var ErrUnavailable = errors.New("cudadev: no usable CUDA GPU")

// Error is an error the CUDA driver returned.
type Error struct {
	Op   string // the driver call, "cuMemAlloc_v2"
	Code int32  // its CUresult
	Name string // "CUDA_ERROR_OUT_OF_MEMORY", when the driver names it
	Msg  string // the driver's description
}

func (e *Error) Error() string {
	return fmt.Sprintf("cudadev: %s: %s (%s, %d)", e.Op, e.Msg, e.Name, e.Code)
}

// CUresult codes the package looks at.
const (
	cudaSuccess         = 0
	cudaErrorNoDevice   = 100
	cudaErrorNotReady   = 600
	cuStreamNonBlocking = 1
	cuEventDefault      = 0
)

// CUdevice_attribute values.
const (
	attrComputeMajor = 75
	attrComputeMinor = 76
)

// CUjit_option values for cuModuleLoadDataEx.
const (
	jitErrorLogBuffer     = 5
	jitErrorLogBufferSize = 6
)

// driver is the part of the CUDA driver API this package calls, bound at
// run time with purego (no cgo, no CUDA headers). Handles (contexts,
// modules, functions, streams, events) are opaque pointers the driver owns,
// kept as uintptr; device addresses are uint64 (CUdeviceptr).
type driver struct {
	cuInit                    func(flags uint32) int32
	cuDriverGetVersion        func(v *int32) int32
	cuDeviceGetCount          func(n *int32) int32
	cuDeviceGet               func(dev *int32, ordinal int32) int32
	cuDeviceGetName           func(name *byte, n int32, dev int32) int32
	cuDeviceGetAttribute      func(v *int32, attr int32, dev int32) int32
	cuDeviceTotalMem          func(bytes *uint64, dev int32) int32
	cuDeviceGetPCIBusId       func(id *byte, n int32, dev int32) int32
	cuDevicePrimaryCtxRetain  func(ctx *uintptr, dev int32) int32
	cuDevicePrimaryCtxRelease func(dev int32) int32
	cuCtxSetCurrent           func(ctx uintptr) int32
	cuModuleLoadDataEx        func(mod *uintptr, image unsafe.Pointer, n uint32, opts unsafe.Pointer, vals unsafe.Pointer) int32
	cuModuleGetFunction       func(fn *uintptr, mod uintptr, name string) int32
	cuModuleUnload            func(mod uintptr) int32
	cuMemAlloc                func(p *uint64, n uint64) int32
	cuMemFree                 func(p uint64) int32
	cuMemAllocHost            func(p *unsafe.Pointer, n uint64) int32
	cuMemFreeHost             func(p unsafe.Pointer) int32
	cuMemcpyHtoDAsync         func(dst uint64, src unsafe.Pointer, n uint64, stream uintptr) int32
	cuMemcpyDtoHAsync         func(dst unsafe.Pointer, src uint64, n uint64, stream uintptr) int32
	cuMemcpyDtoDAsync         func(dst, src uint64, n uint64, stream uintptr) int32
	cuMemsetD8Async           func(dst uint64, v uint8, n uint64, stream uintptr) int32
	cuStreamCreate            func(s *uintptr, flags uint32) int32
	cuStreamDestroy           func(s uintptr) int32
	cuStreamSynchronize       func(s uintptr) int32
	cuStreamWaitEvent         func(s, ev uintptr, flags uint32) int32
	cuEventCreate             func(ev *uintptr, flags uint32) int32
	cuEventRecord             func(ev, s uintptr) int32
	cuEventSynchronize        func(ev uintptr) int32
	cuEventElapsedTime        func(ms *float32, start, end uintptr) int32
	cuEventDestroy            func(ev uintptr) int32
	cuLaunchKernel            func(fn uintptr, gx, gy, gz, bx, by, bz, shmem uint32, s uintptr, params, extra unsafe.Pointer) int32
	cuGetErrorString          func(res int32, s **byte) int32
	cuGetErrorName            func(res int32, s **byte) int32
}

// symbols maps each field of driver to its exported name. The _v2 names
// are the ones cuda.h's macros select since CUDA 4 (64-bit sizes).
func (d *driver) symbols() map[string]any {
	return map[string]any{
		"cuInit":                       &d.cuInit,
		"cuDriverGetVersion":           &d.cuDriverGetVersion,
		"cuDeviceGetCount":             &d.cuDeviceGetCount,
		"cuDeviceGet":                  &d.cuDeviceGet,
		"cuDeviceGetName":              &d.cuDeviceGetName,
		"cuDeviceGetAttribute":         &d.cuDeviceGetAttribute,
		"cuDeviceTotalMem_v2":          &d.cuDeviceTotalMem,
		"cuDeviceGetPCIBusId":          &d.cuDeviceGetPCIBusId,
		"cuDevicePrimaryCtxRetain":     &d.cuDevicePrimaryCtxRetain,
		"cuDevicePrimaryCtxRelease_v2": &d.cuDevicePrimaryCtxRelease,
		"cuCtxSetCurrent":              &d.cuCtxSetCurrent,
		"cuModuleLoadDataEx":           &d.cuModuleLoadDataEx,
		"cuModuleGetFunction":          &d.cuModuleGetFunction,
		"cuModuleUnload":               &d.cuModuleUnload,
		"cuMemAlloc_v2":                &d.cuMemAlloc,
		"cuMemFree_v2":                 &d.cuMemFree,
		"cuMemAllocHost_v2":            &d.cuMemAllocHost,
		"cuMemFreeHost":                &d.cuMemFreeHost,
		"cuMemcpyHtoDAsync_v2":         &d.cuMemcpyHtoDAsync,
		"cuMemcpyDtoHAsync_v2":         &d.cuMemcpyDtoHAsync,
		"cuMemcpyDtoDAsync_v2":         &d.cuMemcpyDtoDAsync,
		"cuMemsetD8Async":              &d.cuMemsetD8Async,
		"cuStreamCreate":               &d.cuStreamCreate,
		"cuStreamDestroy_v2":           &d.cuStreamDestroy,
		"cuStreamSynchronize":          &d.cuStreamSynchronize,
		"cuStreamWaitEvent":            &d.cuStreamWaitEvent,
		"cuEventCreate":                &d.cuEventCreate,
		"cuEventRecord":                &d.cuEventRecord,
		"cuEventSynchronize":           &d.cuEventSynchronize,
		"cuEventElapsedTime":           &d.cuEventElapsedTime,
		"cuEventDestroy_v2":            &d.cuEventDestroy,
		"cuLaunchKernel":               &d.cuLaunchKernel,
		"cuGetErrorString":             &d.cuGetErrorString,
		"cuGetErrorName":               &d.cuGetErrorName,
	}
}

// loadDriver opens the driver library and binds every symbol, or explains
// (wrapping ErrUnavailable) why it cannot. The library stays loaded for the
// life of the process: the driver does not support being unloaded.
func loadDriver(path string) (*driver, error) {
	lib, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	d := &driver{}
	for name, fptr := range d.symbols() {
		sym, err := purego.Dlsym(lib, name)
		if err != nil {
			return nil, fmt.Errorf("%w: %s has no %s (driver too old?): %w", ErrUnavailable, path, name, err)
		}
		purego.RegisterFunc(fptr, sym)
	}
	return d, nil
}

// check turns a CUresult into nil or an *Error naming op.
func (d *driver) check(op string, res int32) error {
	if res == cudaSuccess {
		return nil
	}
	e := &Error{Op: op, Code: res, Name: "?", Msg: "unknown error"}
	var s *byte
	if d.cuGetErrorName(res, &s) == cudaSuccess && s != nil {
		e.Name = cString(s)
	}
	if d.cuGetErrorString(res, &s) == cudaSuccess && s != nil {
		e.Msg = cString(s)
	}
	return e
}

// cString copies the NUL-terminated string at p, which the driver owns.
func cString(p *byte) string {
	n := 0
	for *(*byte)(unsafe.Add(unsafe.Pointer(p), n)) != 0 {
		n++
	}
	return string(unsafe.Slice(p, n))
}

// goString is the NUL-terminated prefix of b.
func goString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}
