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

// KV_GATHER_SCATTER defines kv_gather_<name> and its inverse
// kv_scatter_<name>: kernels with the same parameters (params, in
// parentheses) that call kv_copy with the same arguments (the rest), in
// either direction.
#define KV_GATHER_SCATTER(name, params, ...)                                  \
  __global__ void kv_gather_##name params { kv_copy<true>(__VA_ARGS__); }     \
  __global__ void kv_scatter_##name params { kv_copy<false>(__VA_ARGS__); }

extern "C" {

// kv_gather_2ltd gathers num_tokens tokens of gridDim.y layers into one
// KV_2LTD chunk [2, L, T, row]. layer_ptrs[l] is layer l's paged buffer.
KV_GATHER_SCATTER(2ltd,
                  (const u64 *__restrict__ layer_ptrs,
                   const i64 *__restrict__ slots, u8 *chunk, int num_tokens,
                   i64 block_size, i64 row_bytes, i64 paged_kv_stride,
                   i64 paged_block_stride),
                  (u8 *)layer_ptrs[blockIdx.y], slots, chunk, 2, block_size,
                  row_bytes, paged_kv_stride, paged_block_stride,
                  (i64)gridDim.y * num_tokens * row_bytes,
                  num_tokens * row_bytes, row_bytes)

// kv_gather_mla gathers an MLA chunk KV_MLA_FMT [1, L, T, row] from per-layer
// [num_blocks, block_size, row] buffers.
KV_GATHER_SCATTER(mla,
                  (const u64 *__restrict__ layer_ptrs,
                   const i64 *__restrict__ slots, u8 *chunk, int num_tokens,
                   i64 block_size, i64 row_bytes, i64 paged_block_stride),
                  (u8 *)layer_ptrs[blockIdx.y], slots, chunk, 1, block_size,
                  row_bytes, 0, paged_block_stride, 0, num_tokens * row_bytes,
                  row_bytes)

// kv_gather_t2d gathers one layer (gridDim.y == 1) into a KV_T2D chunk
// [T, 2, row], the layer-wise format.
KV_GATHER_SCATTER(t2d,
                  (u64 layer_ptr, const i64 *__restrict__ slots, u8 *chunk,
                   i64 block_size, i64 row_bytes, i64 paged_kv_stride,
                   i64 paged_block_stride),
                  (u8 *)layer_ptr, slots, chunk, 2, block_size, row_bytes,
                  paged_kv_stride, paged_block_stride, row_bytes, 0,
                  2 * row_bytes)

// kv_gather_strided is the general form every kernel above specialises: any
// number of layers (gridDim.y) and kv planes, any chunk strides (KV_2TD,
// or a chunk embedded in a larger buffer).
KV_GATHER_SCATTER(strided,
                  (const u64 *__restrict__ layer_ptrs,
                   const i64 *__restrict__ slots, u8 *chunk, int num_kv,
                   i64 block_size, i64 row_bytes, i64 paged_kv_stride,
                   i64 paged_block_stride, i64 chunk_kv_stride,
                   i64 chunk_layer_stride, i64 chunk_token_stride),
                  (u8 *)layer_ptrs[blockIdx.y], slots, chunk, num_kv,
                  block_size, row_bytes, paged_kv_stride, paged_block_stride,
                  chunk_kv_stride, chunk_layer_stride, chunk_token_stride)

// kv_gather_layer gathers one layer with explicit chunk strides, taking the
// layer's paged buffer by value (no pointer table): KV_2TD, KV_T2D or one
// layer of an MLA cache, as a layer-wise storer issues them. gridDim.y must be 1.
KV_GATHER_SCATTER(layer,
                  (u64 layer_ptr, const i64 *__restrict__ slots, u8 *chunk,
                   int num_kv, i64 block_size, i64 row_bytes,
                   i64 paged_kv_stride, i64 paged_block_stride,
                   i64 chunk_kv_stride, i64 chunk_token_stride),
                  (u8 *)layer_ptr, slots, chunk, num_kv, block_size, row_bytes,
                  paged_kv_stride, paged_block_stride, chunk_kv_stride, 0,
                  chunk_token_stride)

} // extern "C"

// ---------------------------------------------------------------------------
// int8 dequantisation fused into scatter.
//
// The input is the payload of a blob of package codec in int8 mode (the
// bytes after its 48-byte header), written for a chunk of L layers, T
// tokens and D elements per row whose original dtype was float16 or
// bfloat16. The payload holds, in this order:
//
//   key planes   (has_keys: KV_2LTD, KV_2TD, KV_T2D; one per layer), each
//                ceil(T/KB) blocks of: D float32 scales (one per channel),
//                then the int8 codes of the block's min(KB, rest) rows
//   value planes (one per layer; MLA latents are value planes), each
//                T rows of: ceil(D/G) float32 scales (one per G channels),
//                then the row's D int8 codes
//
// KB is the header's key block, G its value group; nothing is padded. A
// decoded element is float32(code) * scale rounded to the original dtype,
// nearest even, exactly as codec.Decode computes it (the multiplication is a
// single IEEE float32 product: no FMA contraction, no flushing of
// subnormals; the build flags in gen.go pin both), so the paged cache ends
// up bit for bit as codec.Decode followed by a scatter would leave it.
// Package gpuclient's CPUDevice.DequantScatter is the reference.
//
// Launch: grid (T, L), any block size. Negative slots are skipped. The
// kernel trusts the payload: the host checks the blob's header, size and
// scales (gpuclient does) before launching.

__device__ __forceinline__ unsigned f32_bits(float f) {
  return __builtin_bit_cast(unsigned, f);
}
__device__ __forceinline__ float bits_f32(unsigned b) {
  return __builtin_bit_cast(float, b);
}

// to_bf16 rounds f to bfloat16, nearest even (codec's r16: decoded values
// are never NaN, so there is no NaN case).
__device__ __forceinline__ unsigned to_bf16(float f) {
  const unsigned b = f32_bits(f);
  return (b + 0x7fffu + ((b >> 16) & 1u)) >> 16;
}

// to_fp16 rounds f to an IEEE half, nearest even; codec.Float32ToFP16
// step for step.
__device__ __forceinline__ unsigned to_fp16(float f) {
  const unsigned b = f32_bits(f);
  const unsigned sign = (b >> 16) & 0x8000u;
  unsigned a = b & 0x7fffffffu;
  if (a > 0x7f800000u) return sign | 0x7e00u | ((a >> 13) & 0x3ffu);
  if (a >= 0x477ff000u) return sign | 0x7c00u;
  if (a >= 0x38800000u) {
    a += 0x0fffu + ((a >> 13) & 1u);
    return sign | (((a - (112u << 23)) >> 13) & 0xffffu);
  }
  return sign | ((f32_bits(bits_f32(a) + 0.5f) - 0x3f000000u) & 0xffffu);
}

__device__ __forceinline__ unsigned dequant1(u8 code, float scale, int bf16) {
  const float x = (float)(signed char)code * scale;
  return bf16 ? to_bf16(x) : to_fp16(x);
}

// load_f32 reads a little-endian float32 at any alignment.
__device__ __forceinline__ float load_f32(const u8 *p) {
  return bits_f32((unsigned)p[0] | (unsigned)p[1] << 8 |
                  (unsigned)p[2] << 16 | (unsigned)p[3] << 24);
}

// dequant_row writes d decoded 16-bit elements at dst. group 0 means one
// scale per element (a key row); otherwise one scale per group elements (a
// value row). The aligned path handles 8 elements per thread and step: 8
// codes in one 8-byte load, the scales in two 16-byte loads (keys) or one
// 4-byte load (values, when the group is a multiple of 8), 16 bytes stored.
__device__ __forceinline__ void dequant_row(u8 *__restrict__ dst,
                                            const u8 *__restrict__ codes,
                                            const u8 *__restrict__ scales,
                                            i64 d, i64 group, int bf16) {
  const u64 align = ((u64)dst & 15) | ((u64)codes & 7) | (u64)(d & 7) |
                    (group == 0 ? ((u64)scales & 15)
                                : (((u64)scales & 3) | (u64)(group & 7)));
  if (align == 0) {
    for (i64 i = threadIdx.x; i < d / 8; i += blockDim.x) {
      const u64 c = ((const u64 *)codes)[i];
      float s[8];
      if (group == 0) {
        typedef float f4 __attribute__((ext_vector_type(4)));
        const f4 a = ((const f4 *)scales)[2 * i];
        const f4 b = ((const f4 *)scales)[2 * i + 1];
        s[0] = a.x, s[1] = a.y, s[2] = a.z, s[3] = a.w;
        s[4] = b.x, s[5] = b.y, s[6] = b.z, s[7] = b.w;
      } else {
        const float g = ((const float *)scales)[(8 * i) / group];
        for (int k = 0; k < 8; k++) s[k] = g;
      }
      unsigned h[8];
      for (int k = 0; k < 8; k++) h[k] = dequant1((u8)(c >> (8 * k)), s[k], bf16);
      vec16 v;
      v.x = h[0] | h[1] << 16;
      v.y = h[2] | h[3] << 16;
      v.z = h[4] | h[5] << 16;
      v.w = h[6] | h[7] << 16;
      ((vec16 *)dst)[i] = v;
    }
    return;
  }
  for (i64 e = threadIdx.x; e < d; e += blockDim.x) {
    const float s = load_f32(scales + 4 * (group == 0 ? e : e / group));
    const unsigned h = dequant1(codes[e], s, bf16);
    dst[2 * e] = (u8)h;
    dst[2 * e + 1] = (u8)(h >> 8);
  }
}

extern "C" {

// kv_dequant_scatter_int8 decodes an int8 codec payload (see above) and
// scatters it into gridDim.y layers' paged buffers in one pass. d is the
// elements per row (rows are 2*d bytes); has_keys is 1 when the payload has
// key planes (K/V layouts, paged planes 0 and 1) and 0 for MLA (value planes
// only, paged plane 0); bf16 selects the output dtype (0: float16).
__global__ void kv_dequant_scatter_int8(const u64 *__restrict__ layer_ptrs,
                                        const i64 *__restrict__ slots,
                                        const u8 *__restrict__ payload,
                                        int num_tokens, i64 block_size,
                                        i64 paged_kv_stride,
                                        i64 paged_block_stride, i64 d,
                                        i64 key_block, i64 value_group,
                                        int has_keys, int bf16) {
  const i64 token = blockIdx.x;
  const i64 layer = blockIdx.y;
  const i64 slot = slots[token];
  if (slot < 0) return;
  const i64 t = num_tokens;
  const i64 layers = gridDim.y;
  u8 *p = (u8 *)layer_ptrs[layer] + (slot / block_size) * paged_block_stride +
          (slot % block_size) * 2 * d;
  const i64 ng = (d + value_group - 1) / value_group;
  const i64 val_row = 4 * ng + d;
  const u8 *vals = payload;
  if (has_keys) {
    const i64 nb = (t + key_block - 1) / key_block;
    const i64 key_plane = nb * d * 4 + t * d;
    const u8 *blk = payload + layer * key_plane +
                    (token / key_block) * (4 * d + key_block * d);
    dequant_row(p, blk + 4 * d + (token % key_block) * d, blk, d, 0, bf16);
    p += paged_kv_stride;
    vals = payload + layers * key_plane;
  }
  const u8 *row = vals + layer * t * val_row + token * val_row;
  dequant_row(p, row + 4 * ng, row, d, value_group, bf16);
}

} // extern "C"
