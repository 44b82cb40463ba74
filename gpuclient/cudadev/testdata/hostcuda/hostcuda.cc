// hostcuda.cc: a host emulation of the part of the CUDA driver API that
// package cudadev binds, for testing cudadev on machines without a GPU.
//
// It is built as libcuda.so.1 by the tests (clang++-16 -shared) and runs the
// real kernel source: cuda/kvcopy.cu is compiled here as host C++, and
// cuLaunchKernel calls the kernel once per block and thread, in order
// (the kernels share no memory between threads and never synchronise, so
// sequential execution is one valid schedule). Device memory is host
// memory.
//
// Streams are lazy, as a GPU may be: asynchronous copies, memsets and
// kernel launches are queued on their stream and run only when something
// waits for them (cuStreamSynchronize, cuEventSynchronize, or a stream that
// waits on an event of this one when it runs itself). A host buffer
// reused before the copy out of it was waited for, or a kernel queued
// without waiting for the upload it reads, therefore gives wrong bytes here
// too. Kernel parameters are read at launch, as the driver does.
//
// What it proves: the purego bindings, the kernel parameter blocks, the
// slot and layer tables, the staging pipeline and its ordering, and the
// kernels' indexing and arithmetic. What it cannot: the PTX JIT, alignment
// faults, true concurrency and speed; those need a GPU
// (KVSERVER_GPU_TESTS=1).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "../../../../cuda/kvcopy.cu"

hostcuda_dim3 threadIdx, blockIdx, blockDim, gridDim;

namespace {

typedef int CUresult;
const CUresult kSuccess = 0, kInvalidValue = 1, kNotFound = 500;

// Kernel turns a launch's parameter block into a job that runs the kernel
// over a grid later: the parameters are copied now.
struct Kernel {
  const char *name;
  std::function<void()> (*bind)(void **p, unsigned gx, unsigned gy, unsigned bx);
};

template <typename... A> struct Bind {
  template <void (*K)(A...), std::size_t... I>
  static std::function<void()> make(void **p, unsigned gx, unsigned gy, unsigned bx,
                                    std::index_sequence<I...>) {
    std::tuple<std::remove_cv_t<std::remove_reference_t<A>>...> args(
        *static_cast<std::remove_reference_t<A> *>(p[I])...);
    return [args, gx, gy, bx] {
      gridDim = {gx, gy, 1};
      blockDim = {bx, 1, 1};
      for (unsigned y = 0; y < gy; y++)
        for (unsigned x = 0; x < gx; x++)
          for (unsigned t = 0; t < bx; t++) {
            blockIdx = {x, y, 0};
            threadIdx = {t, 0, 0};
            std::apply(K, args);
          }
    };
  }
  template <void (*K)(A...)>
  static std::function<void()> bind(void **p, unsigned gx, unsigned gy, unsigned bx) {
    return make<K>(p, gx, gy, bx, std::index_sequence_for<A...>{});
  }
};

template <typename... A>
constexpr Bind<A...> bind(void (*)(A...)) {
  return {};
}

#define KERNEL(k) {#k, &decltype(bind(k))::template bind<k>}

const Kernel kernels[] = {
    KERNEL(kv_gather_2ltd),    KERNEL(kv_scatter_2ltd),
    KERNEL(kv_gather_mla),     KERNEL(kv_scatter_mla),
    KERNEL(kv_gather_t2d),     KERNEL(kv_scatter_t2d),
    KERNEL(kv_gather_strided), KERNEL(kv_scatter_strided),
    KERNEL(kv_gather_layer),   KERNEL(kv_scatter_layer),
    KERNEL(kv_dequant_scatter_int8),
};

int token; // the address of this is the context, module and device handle

// Stream is a queue of jobs; done counts the jobs run so far.
struct Stream {
  std::deque<std::function<void()>> jobs;
  size_t queued = 0, done = 0;
};

// Event marks a point in a stream: the jobs before it.
struct Event {
  Stream *s = nullptr;
  size_t seq = 0;
};

std::vector<Stream *> streams;

// run_until runs s's jobs until seq of them have run.
void run_until(Stream *s, size_t seq) {
  while (s->done < seq) {
    std::function<void()> job = std::move(s->jobs.front());
    s->jobs.pop_front();
    s->done++;
    job();
  }
}

void run_all() {
  for (Stream *s : streams) run_until(s, s->queued);
}

CUresult enqueue(void *stream, std::function<void()> job) {
  Stream *s = static_cast<Stream *>(stream);
  if (!s) return kInvalidValue;
  s->jobs.push_back(std::move(job));
  s->queued++;
  return kSuccess;
}

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
CUresult cuMemFree_v2(unsigned long long p) {
  run_all(); // freeing waits for the device, as cuMemFree does
  free(reinterpret_cast<void *>(p));
  return kSuccess;
}
CUresult cuMemAllocHost_v2(void **p, size_t n) {
  *p = aligned_alloc(4096, (n + 4095) & ~size_t(4095));
  return *p ? kSuccess : 2;
}
CUresult cuMemFreeHost(void *p) {
  run_all();
  free(p);
  return kSuccess;
}
CUresult cuMemcpyHtoDAsync_v2(unsigned long long dst, const void *src, size_t n, void *s) {
  return enqueue(s, [=] { memcpy(reinterpret_cast<void *>(dst), src, n); });
}
CUresult cuMemcpyDtoHAsync_v2(void *dst, unsigned long long src, size_t n, void *s) {
  return enqueue(s, [=] { memcpy(dst, reinterpret_cast<void *>(src), n); });
}
CUresult cuMemcpyDtoDAsync_v2(unsigned long long dst, unsigned long long src, size_t n, void *s) {
  return enqueue(s, [=] { memmove(reinterpret_cast<void *>(dst), reinterpret_cast<void *>(src), n); });
}
CUresult cuMemsetD8Async(unsigned long long dst, unsigned char v, size_t n, void *s) {
  return enqueue(s, [=] { memset(reinterpret_cast<void *>(dst), v, n); });
}

CUresult cuStreamCreate(void **s, unsigned) {
  streams.push_back(new Stream);
  *s = streams.back();
  return kSuccess;
}
CUresult cuStreamDestroy_v2(void *s) {
  Stream *st = static_cast<Stream *>(s);
  run_until(st, st->queued);
  for (size_t i = 0; i < streams.size(); i++)
    if (streams[i] == st) streams.erase(streams.begin() + i);
  delete st;
  return kSuccess;
}
CUresult cuStreamSynchronize(void *s) {
  Stream *st = static_cast<Stream *>(s);
  run_until(st, st->queued);
  return kSuccess;
}
CUresult cuStreamWaitEvent(void *s, void *e, unsigned) {
  Event ev = *static_cast<Event *>(e); // the event as recorded now
  if (!ev.s) return kSuccess;
  return enqueue(s, [ev] { run_until(ev.s, ev.seq); });
}
CUresult cuEventCreate(void **e, unsigned) {
  *e = new Event;
  return kSuccess;
}
CUresult cuEventRecord(void *e, void *s) {
  Event *ev = static_cast<Event *>(e);
  ev->s = static_cast<Stream *>(s);
  ev->seq = ev->s->queued;
  return kSuccess;
}
CUresult cuEventSynchronize(void *e) {
  Event *ev = static_cast<Event *>(e);
  if (ev->s) run_until(ev->s, ev->seq);
  return kSuccess;
}
CUresult cuEventElapsedTime(float *ms, void *, void *) { *ms = 0.001f; return kSuccess; }
CUresult cuEventDestroy_v2(void *e) {
  delete static_cast<Event *>(e);
  return kSuccess;
}

CUresult cuLaunchKernel(void *fn, unsigned gx, unsigned gy, unsigned gz,
                        unsigned bx, unsigned by, unsigned bz, unsigned shmem,
                        void *s, void **params, void **extra) {
  if (gz != 1 || by != 1 || bz != 1 || shmem != 0 || extra != nullptr || bx == 0) return kInvalidValue;
  const Kernel *k = static_cast<const Kernel *>(fn);
  launches++;
  return enqueue(s, k->bind(params, gx, gy, bx));
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
