// Package cuda holds kvserver's GPU kernels and their compiled PTX: the
// copies between an engine's paged KV cache (one buffer per layer, tokens at
// scattered slots) and the contiguous chunk buffers kvserver stores in
// LMCache's memory formats (KV_2LTD, KV_T2D, KV_2TD, KV_MLA_FMT).
//
// kvcopy.cu is the source; kvcopy.ptx is generated from it by `go generate`
// (clang++-16 in CUDA device-only mode, sm_80, no CUDA SDK needed; see
// DEVELOPERS.md) and
// embedded as PTX, so that a loader can hand it to the driver
// (cuModuleLoadData) without a compiler on the engine's machine; the driver
// JIT-compiles it for whatever GPU it finds (sm_80 or newer). The kernels
// are declared extern "C", so their names in Kernels are stable.
//
// One launch covers all layers of a chunk: the kernels take a device table of
// per-layer base pointers (uint64) and the slot mapping (int64 per token,
// slot = block_id*block_size + offset). Negative slots are skipped: scatter
// never writes paged memory for them; gather writes zero rows for them. The
// parameter conventions are in the comment at the top of kvcopy.cu, and
// package gpuclient's CPUDevice is the reference implementation the kernels
// must agree with.
//
// Single-layer variants (kv_*_t2d, kv_*_layer) take the layer's buffer by
// value, for layer-wise transfers. kv_dequant_scatter_int8 decodes a chunk
// stored int8-quantized by package codec while scattering it, bit for bit as
// codec.Decode followed by a scatter (gpuclient.CPUDevice.DequantScatter is
// its reference); the flags in gen.go keep its float32 products exact (no
// FMA contraction, no flushed subnormals).
//
// This package is not a CUDA binding: it neither loads modules nor launches
// kernels (package gpuclient/cudadev does), and it builds and tests on
// machines without a GPU. TestPTXIsCurrent
// checks that the embedded PTX matches the source when clang++-16 is on PATH.
package cuda
