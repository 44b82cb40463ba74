// kvcopy.cu: KV-cache copies between an engine's paged GPU memory and the
// contiguous chunk buffers kvserver stores (LMCache memory formats).
//
// Built without the CUDA SDK (see gen.go):
//
//   clang++-16 -x cuda --cuda-device-only -nocudainc -nocudalib \
//     --cuda-gpu-arch=sm_80 -O3 -S -o cuda/kvcopy.ptx cuda/kvcopy.cu
//
// so this file takes nothing from cuda.h or cuda_runtime.h: the builtin
// variables come from clang's own header and the attribute macros are
// defined below.
//
// Addressing. Every offset and stride is in bytes, so one kernel serves every
// element type (fp16/bf16 rows are 2-byte elements, fp8 rows 1-byte ones).
// A "row" is one token's keys (or values) in one layer: heads*head_size
// elements, row_bytes bytes. A slot is block_id*block_size + offset; the
// paged row of (kv, slot) in one layer starts at
//
//   kv*paged_kv_stride + (slot/block_size)*paged_block_stride
//                      + (slot%block_size)*row_bytes
//
// which covers vLLM flash-attention [2, num_blocks, block_size, H, D]
// (kv stride = num_blocks*block_size*row, block stride = block_size*row),
// flashinfer [num_blocks, 2, block_size, H, D] (kv stride = block_size*row,
// block stride = 2*block_size*row) and MLA [num_blocks, block_size, D]
// (one kv plane). The chunk row of (kv, layer, token) starts at
//
//   kv*chunk_kv_stride + layer*chunk_layer_stride + token*chunk_token_stride
//
// KV_2LTD [2, L, T, row]: kv stride L*T*row, layer stride T*row, token row.
// KV_T2D  [T, 2, row] (one layer): kv stride row, token stride 2*row.
// KV_2TD  [2, T, row] (one layer): kv stride T*row, token stride row.
// KV_MLA_FMT [1, L, T, row]: one kv plane, layer stride T*row, token row.
//
// Launch: grid (num_tokens, num_layers), any block size (128 or 256 is
// right for 1-4 KiB rows). Each thread block copies one token of one layer.
//
// Negative slots (padding tokens, or tokens the engine did not keep) are
// skipped: scatter never touches paged memory for them, and gather writes
// zeros to their chunk rows so that a chunk's bytes never depend on stale
// memory. The CPU reference in package gpuclient does the same.
//
// Rows are copied as 16-byte vectors when row_bytes and both row addresses
// are 16-byte aligned (the usual case: a 128-dim fp16 head is 256 bytes),
// else as 2-byte elements when even, else bytewise.

#include <__clang_cuda_builtin_vars.h>

#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __forceinline__ __inline__ __attribute__((always_inline))

typedef unsigned long long u64;
typedef long long i64;
typedef unsigned short u16;
typedef unsigned char u8;

// vec16 is a 16-byte vector: loads and stores of it become ld/st .v4.u32.
typedef unsigned int vec16 __attribute__((ext_vector_type(4)));

// copy_row copies n bytes from src to dst with the widest access both
// addresses and n allow. The threads of the block share the work.
__device__ __forceinline__ void copy_row(u8 *__restrict__ dst,
                                         const u8 *__restrict__ src, i64 n) {
  const u64 align = (u64)dst | (u64)src | (u64)n;
  if ((align & 15) == 0) {
    vec16 *d = (vec16 *)dst;
    const vec16 *s = (const vec16 *)src;
    for (i64 i = threadIdx.x; i < n / 16; i += blockDim.x) d[i] = s[i];
  } else if ((align & 1) == 0) {
    u16 *d = (u16 *)dst;
    const u16 *s = (const u16 *)src;
    for (i64 i = threadIdx.x; i < n / 2; i += blockDim.x) d[i] = s[i];
  } else {
    for (i64 i = threadIdx.x; i < n; i += blockDim.x) dst[i] = src[i];
  }
}

// zero_row writes n zero bytes at dst.
__device__ __forceinline__ void zero_row(u8 *__restrict__ dst, i64 n) {
  const u64 align = (u64)dst | (u64)n;
  if ((align & 15) == 0) {
    vec16 *d = (vec16 *)dst;
    const vec16 z = 0;
    for (i64 i = threadIdx.x; i < n / 16; i += blockDim.x) d[i] = z;
  } else if ((align & 1) == 0) {
    u16 *d = (u16 *)dst;
    for (i64 i = threadIdx.x; i < n / 2; i += blockDim.x) d[i] = 0;
  } else {
    for (i64 i = threadIdx.x; i < n; i += blockDim.x) dst[i] = 0;
  }
}

// kv_copy is the one implementation behind every kernel: token blockIdx.x
// of layer blockIdx.y, num_kv planes (2 for K/V, 1 for MLA). layer_base is
// that layer's paged buffer.
template <bool Gather>
__device__ __forceinline__ void
kv_copy(u8 *layer_base, const i64 *__restrict__ slots, u8 *chunk, int num_kv,
        i64 block_size, i64 row_bytes, i64 paged_kv_stride,
        i64 paged_block_stride, i64 chunk_kv_stride, i64 chunk_layer_stride,
        i64 chunk_token_stride) {
  const i64 token = blockIdx.x;
  const i64 layer = blockIdx.y;
  const i64 slot = slots[token];
  u8 *c = chunk + layer * chunk_layer_stride + token * chunk_token_stride;
  if (slot < 0) {
    if (Gather) {
      for (int kv = 0; kv < num_kv; kv++) zero_row(c + kv * chunk_kv_stride, row_bytes);
    }
    return;
  }
  u8 *p = layer_base + (slot / block_size) * paged_block_stride +
          (slot % block_size) * row_bytes;
  for (int kv = 0; kv < num_kv; kv++) {
    u8 *pr = p + kv * paged_kv_stride;
    u8 *cr = c + kv * chunk_kv_stride;
    if (Gather) {
      copy_row(cr, pr, row_bytes);
    } else {
      copy_row(pr, cr, row_bytes);
    }
  }
}

extern "C" {

// kv_gather_2ltd gathers num_tokens tokens of gridDim.y layers into one
// KV_2LTD chunk [2, L, T, row]. layer_ptrs[l] is layer l's paged buffer.
__global__ void kv_gather_2ltd(const u64 *__restrict__ layer_ptrs,
                               const i64 *__restrict__ slots, u8 *chunk,
                               int num_tokens, i64 block_size, i64 row_bytes,
                               i64 paged_kv_stride, i64 paged_block_stride) {
  const i64 layers = gridDim.y;
  kv_copy<true>((u8 *)layer_ptrs[blockIdx.y], slots, chunk, 2, block_size,
                row_bytes, paged_kv_stride, paged_block_stride,
                layers * num_tokens * row_bytes, num_tokens * row_bytes,
                row_bytes);
}

// kv_scatter_2ltd is the inverse of kv_gather_2ltd.
__global__ void kv_scatter_2ltd(const u64 *__restrict__ layer_ptrs,
                                const i64 *__restrict__ slots, u8 *chunk,
                                int num_tokens, i64 block_size, i64 row_bytes,
                                i64 paged_kv_stride, i64 paged_block_stride) {
  const i64 layers = gridDim.y;
  kv_copy<false>((u8 *)layer_ptrs[blockIdx.y], slots, chunk, 2, block_size,
                 row_bytes, paged_kv_stride, paged_block_stride,
                 layers * num_tokens * row_bytes, num_tokens * row_bytes,
                 row_bytes);
}

// kv_gather_mla gathers an MLA chunk KV_MLA_FMT [1, L, T, row] from per-layer
// [num_blocks, block_size, row] buffers.
__global__ void kv_gather_mla(const u64 *__restrict__ layer_ptrs,
                              const i64 *__restrict__ slots, u8 *chunk,
                              int num_tokens, i64 block_size, i64 row_bytes,
                              i64 paged_block_stride) {
  kv_copy<true>((u8 *)layer_ptrs[blockIdx.y], slots, chunk, 1, block_size,
                row_bytes, 0, paged_block_stride, 0, num_tokens * row_bytes,
                row_bytes);
}

// kv_scatter_mla is the inverse of kv_gather_mla.
__global__ void kv_scatter_mla(const u64 *__restrict__ layer_ptrs,
                               const i64 *__restrict__ slots, u8 *chunk,
                               int num_tokens, i64 block_size, i64 row_bytes,
                               i64 paged_block_stride) {
  kv_copy<false>((u8 *)layer_ptrs[blockIdx.y], slots, chunk, 1, block_size,
                 row_bytes, 0, paged_block_stride, 0, num_tokens * row_bytes,
                 row_bytes);
}

// kv_gather_t2d gathers one layer (gridDim.y == 1) into a KV_T2D chunk
// [T, 2, row], the layer-wise format.
__global__ void kv_gather_t2d(u64 layer_ptr, const i64 *__restrict__ slots,
                              u8 *chunk, i64 block_size, i64 row_bytes,
                              i64 paged_kv_stride, i64 paged_block_stride) {
  kv_copy<true>((u8 *)layer_ptr, slots, chunk, 2, block_size, row_bytes,
                paged_kv_stride, paged_block_stride, row_bytes, 0,
                2 * row_bytes);
}

// kv_scatter_t2d is the inverse of kv_gather_t2d.
__global__ void kv_scatter_t2d(u64 layer_ptr, const i64 *__restrict__ slots,
                               u8 *chunk, i64 block_size, i64 row_bytes,
                               i64 paged_kv_stride, i64 paged_block_stride) {
  kv_copy<false>((u8 *)layer_ptr, slots, chunk, 2, block_size, row_bytes,
                 paged_kv_stride, paged_block_stride, row_bytes, 0,
                 2 * row_bytes);
}

// kv_gather_strided is the general form every kernel above specialises: any
// number of layers (gridDim.y) and kv planes, any chunk strides (KV_2TD,
// or a chunk embedded in a larger buffer).
__global__ void kv_gather_strided(const u64 *__restrict__ layer_ptrs,
                                  const i64 *__restrict__ slots, u8 *chunk,
                                  int num_kv, i64 block_size, i64 row_bytes,
                                  i64 paged_kv_stride, i64 paged_block_stride,
                                  i64 chunk_kv_stride, i64 chunk_layer_stride,
                                  i64 chunk_token_stride) {
  kv_copy<true>((u8 *)layer_ptrs[blockIdx.y], slots, chunk, num_kv, block_size,
                row_bytes, paged_kv_stride, paged_block_stride,
                chunk_kv_stride, chunk_layer_stride, chunk_token_stride);
}

// kv_scatter_strided is the inverse of kv_gather_strided.
__global__ void kv_scatter_strided(const u64 *__restrict__ layer_ptrs,
                                   const i64 *__restrict__ slots, u8 *chunk,
                                   int num_kv, i64 block_size, i64 row_bytes,
                                   i64 paged_kv_stride, i64 paged_block_stride,
                                   i64 chunk_kv_stride, i64 chunk_layer_stride,
                                   i64 chunk_token_stride) {
  kv_copy<false>((u8 *)layer_ptrs[blockIdx.y], slots, chunk, num_kv,
                 block_size, row_bytes, paged_kv_stride, paged_block_stride,
                 chunk_kv_stride, chunk_layer_stride, chunk_token_stride);
}

} // extern "C"
