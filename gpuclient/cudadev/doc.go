// Package cudadev is gpuclient's CUDA device: it runs package cuda's
// kernels (gather, scatter and the fused int8 dequantise-scatter) on an
// NVIDIA GPU and gives the same bytes as gpuclient.CPUDevice.
//
// It needs no CUDA SDK to build or test, and no cgo: the driver library
// (libcuda.so.1, installed with the NVIDIA driver) is opened at run time
// with purego, the embedded PTX is JIT-compiled by the driver
// (cuModuleLoadDataEx), and only the driver API is used (cuInit, primary
// context, cuMemAlloc, cuMemAllocHost for pinned staging, asynchronous
// copies on a copy stream, cuLaunchKernel on a compute stream, events for
// ordering and timing). On a machine without the driver, New fails with an
// error wrapping ErrUnavailable and NewDevice falls back to
// gpuclient.CPUDevice, logging why.
//
// It is a package of its own, not part of gpuclient, because loading a C
// library, even through purego, links the program against the C runtime
// (runtime/cgo, or purego's fakecgo when CGO_ENABLED=0) and makes it a
// dynamically linked binary; programs that only store and load chunks with
// the CPU device (the server's tests, kvbench) keep a pure Go gpuclient.
//
// An engine keeps its paged cache in device memory: AllocPaged (or its own
// buffers, passed as Ptr) and GatherPaged/ScatterPaged/DequantScatterPaged
// to move chunks between it and host memory, or GatherOn/ScatterOn on
// chunks already in device memory. Device also implements gpuclient.Device
// on host paged buffers, by uploading them whole; that exists for the
// bit-for-bit tests against the CPU reference, not for speed.
//
// The tests that need a GPU run only with KVSERVER_GPU_TESTS=1; see
// scripts/gpu-test.sh and DEVELOPERS.md.
package cudadev
