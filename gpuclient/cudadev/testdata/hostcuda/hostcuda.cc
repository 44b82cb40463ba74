// hostcuda.cc: a host emulation of the part of the CUDA driver API that
// package cudadev binds, for testing cudadev on machines without a GPU.
//
// It is built as libcuda.so.1 by the tests (clang++-16 -shared) and runs the
// real kernel source: cuda/kvcopy.cu is compiled here as host C++, and
// cuLaunchKernel calls the kernel once per block and thread, in order
// (the kernels share no memory between threads and never synchronise, so
// sequential execution is one valid schedule). Device memory is host
// memory, copies are synchronous, streams and events are tokens.
//
// What it proves: the purego bindings, the kernel parameter blocks, the
// slot and layer tables, the staging pipeline and the kernels' indexing
// and arithmetic. What it cannot: the PTX JIT, alignment faults, real
// asynchrony and speed; those need a GPU (KVSERVER_GPU_TESTS=1).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <utility>

#include "../../../../cuda/kvcopy.cu"

hostcuda_dim3 threadIdx, blockIdx, blockDim, gridDim;

namespace {

typedef int CUresult;
const CUresult kSuccess = 0, kInvalidValue = 1, kNotFound = 500;

template <typename... A, std::size_t... I>
void call(void (*k)(A...), void **p, std::index_sequence<I...>) {
  k(*static_cast<std::remove_reference_t<A> *>(p[I])...);
}

// Launcher runs kernel k over the grid with the parameters p.
struct Kernel {
  const char *name;
  void (*launch)(void **p);
};

template <typename... A> struct Bind {
  template <void (*K)(A...)> static void launch(void **p) {
    // Parameters are read once, as the driver copies them at launch.
    call(K, p, std::index_sequence_for<A...>{});
  }
};

template <typename... A>
constexpr Bind<A...> bind(void (*)(A...)) {
  return {};
}

#define KERNEL(k) {#k, &decltype(bind(k))::template launch<k>}

const Kernel kernels[] = {
    KERNEL(kv_gather_2ltd),    KERNEL(kv_scatter_2ltd),
    KERNEL(kv_gather_mla),     KERNEL(kv_scatter_mla),
    KERNEL(kv_gather_t2d),     KERNEL(kv_scatter_t2d),
    KERNEL(kv_gather_strided), KERNEL(kv_scatter_strided),
    KERNEL(kv_gather_layer),   KERNEL(kv_scatter_layer),
    KERNEL(kv_dequant_scatter_int8),
};

int token; // the address of this is every opaque handle
long launches;

} // namespace

extern "C" {

CUresult cuInit(unsigned) { return kSuccess; }
CUresult cuDriverGetVersion(int *v) { *v = 12040; return kSuccess; }
CUresult cuDeviceGetCount(int *n) { *n = 1; return kSuccess; }
CUresult cuDeviceGet(int *d, int ordinal) {
  if (ordinal != 0) return kInvalidValue;
  *d = 0;
  return kSuccess;
}
CUresult cuDeviceGetName(char *name, int n, int) {
  strncpy(name, "host emulation", n);
  return kSuccess;
}
CUresult cuDeviceGetAttribute(int *v, int attr, int) {
  *v = attr == 75 ? 8 : 0; // compute capability 8.0
  return kSuccess;
}
CUresult cuDeviceTotalMem_v2(size_t *b, int) { *b = size_t(1) << 30; return kSuccess; }
CUresult cuDeviceGetPCIBusId(char *id, int n, int) {
  strncpy(id, "0000:00:00.0", n);
  return kSuccess;
}
CUresult cuDevicePrimaryCtxRetain(void **ctx, int) { *ctx = &token; return kSuccess; }
CUresult cuDevicePrimaryCtxRelease_v2(int) { return kSuccess; }
CUresult cuCtxSetCurrent(void *ctx) { return ctx == &token ? kSuccess : kInvalidValue; }

CUresult cuModuleLoadDataEx(void **mod, const void *image, unsigned n, int *opts, void **vals) {
  // The image must be the PTX of kvcopy.cu: check it names every kernel.
  const char *ptx = static_cast<const char *>(image);
  for (const Kernel &k : kernels) {
    char entry[128];
    snprintf(entry, sizeof entry, ".entry %s(", k.name);
    if (!strstr(ptx, entry)) return kNotFound;
  }
  for (unsigned i = 0; i < n; i++) { // CU_JIT_ERROR_LOG_BUFFER gets an empty log
    if (opts[i] == 5) *static_cast<char *>(vals[i]) = 0;
  }
  *mod = &token;
  return kSuccess;
}
CUresult cuModuleGetFunction(void **fn, void *, const char *name) {
  for (const Kernel &k : kernels) {
    if (strcmp(k.name, name) == 0) {
      *fn = const_cast<Kernel *>(&k);
      return kSuccess;
    }
  }
  return kNotFound;
}
CUresult cuModuleUnload(void *) { return kSuccess; }

CUresult cuMemAlloc_v2(unsigned long long *p, size_t n) {
  void *m = aligned_alloc(256, (n + 255) & ~size_t(255));
  if (!m) return 2; // CUDA_ERROR_OUT_OF_MEMORY
  // Device memory is not cleared: fill it with garbage so that a test that
  // relies on zeroed memory fails here as it would on a GPU.
  memset(m, 0xA5, n);
  *p = reinterpret_cast<unsigned long long>(m);
  return kSuccess;
}
CUresult cuMemFree_v2(unsigned long long p) { free(reinterpret_cast<void *>(p)); return kSuccess; }
CUresult cuMemAllocHost_v2(void **p, size_t n) {
  *p = aligned_alloc(4096, (n + 4095) & ~size_t(4095));
  return *p ? kSuccess : 2;
}
CUresult cuMemFreeHost(void *p) { free(p); return kSuccess; }
CUresult cuMemcpyHtoDAsync_v2(unsigned long long dst, const void *src, size_t n, void *) {
  memcpy(reinterpret_cast<void *>(dst), src, n);
  return kSuccess;
}
CUresult cuMemcpyDtoHAsync_v2(void *dst, unsigned long long src, size_t n, void *) {
  memcpy(dst, reinterpret_cast<void *>(src), n);
  return kSuccess;
}
CUresult cuMemcpyDtoDAsync_v2(unsigned long long dst, unsigned long long src, size_t n, void *) {
  memmove(reinterpret_cast<void *>(dst), reinterpret_cast<void *>(src), n);
  return kSuccess;
}
CUresult cuMemsetD8Async(unsigned long long dst, unsigned char v, size_t n, void *) {
  memset(reinterpret_cast<void *>(dst), v, n);
  return kSuccess;
}

CUresult cuStreamCreate(void **s, unsigned) { *s = &token; return kSuccess; }
CUresult cuStreamDestroy_v2(void *) { return kSuccess; }
CUresult cuStreamSynchronize(void *) { return kSuccess; }
CUresult cuStreamWaitEvent(void *, void *, unsigned) { return kSuccess; }
CUresult cuEventCreate(void **e, unsigned) { *e = &token; return kSuccess; }
CUresult cuEventRecord(void *, void *) { return kSuccess; }
CUresult cuEventSynchronize(void *) { return kSuccess; }
CUresult cuEventElapsedTime(float *ms, void *, void *) { *ms = 0.001f; return kSuccess; }
CUresult cuEventDestroy_v2(void *) { return kSuccess; }

CUresult cuLaunchKernel(void *fn, unsigned gx, unsigned gy, unsigned gz,
                        unsigned bx, unsigned by, unsigned bz, unsigned shmem,
                        void *, void **params, void **extra) {
  if (gz != 1 || by != 1 || bz != 1 || shmem != 0 || extra != nullptr || bx == 0) return kInvalidValue;
  const Kernel *k = static_cast<const Kernel *>(fn);
  gridDim = {gx, gy, 1};
  blockDim = {bx, 1, 1};
  for (unsigned y = 0; y < gy; y++) {
    for (unsigned x = 0; x < gx; x++) {
      for (unsigned t = 0; t < bx; t++) {
        blockIdx = {x, y, 0};
        threadIdx = {t, 0, 0};
        k->launch(params);
      }
    }
  }
  launches++;
  return kSuccess;
}

// hostcudaLaunches counts kernel launches, for tests that check which
// path ran.
long hostcudaLaunches() { return launches; }

CUresult cuGetErrorString(CUresult r, const char **s) {
  *s = r == kSuccess ? "no error" : r == kNotFound ? "named symbol not found" : "emulated error";
  return kSuccess;
}
CUresult cuGetErrorName(CUresult r, const char **s) {
  *s = r == kSuccess ? "CUDA_SUCCESS" : r == kNotFound ? "CUDA_ERROR_NOT_FOUND" : "CUDA_ERROR_INVALID_VALUE";
  return kSuccess;
}

} // extern "C"
