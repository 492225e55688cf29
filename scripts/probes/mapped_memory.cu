// Probe (not run yet) for the mapped-memory soundness review: what the driver does with the waits
// kgraph's MappedBuffer relies on. Driver API; kernels launched through cuLaunchKernel with a
// CUkernel (loaded into whichever context is current).
// Build and run (GPU machine): nvcc -O2 -arch=sm_90 -o mm scripts/probes/mapped_memory.cu -lcuda && ./mm
#include <cuda.h>
#include <cuda_runtime.h>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdint>
#include <thread>
#include <vector>

static const char* nm(CUresult r) {
  const char* s = "?";
  cuGetErrorName(r, &s);
  return s;
}
#define CK(x)                                                                         \
  do {                                                                                \
    CUresult r_ = (x);                                                                \
    if (r_ != CUDA_SUCCESS) printf("  [line %d] %s -> %s\n", __LINE__, #x, nm(r_)); \
  } while (0)

__global__ void spin(unsigned long long ns, volatile int* flag) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < ns);
  __threadfence_system();
  *flag = 1;
}

static CUfunction g_spin;
static double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

static void launch_spin(CUstream s, unsigned long long ms, CUdeviceptr flag) {
  unsigned long long ns = ms * 1000000ull;
  void* args[] = {&ns, &flag};
  CK(cuLaunchKernel(g_spin, 1, 1, 1, 1, 1, 1, 0, s, args, nullptr));
}

struct Flag {
  volatile int* h;
  CUdeviceptr d;
};
static Flag new_flag() {
  void* p = nullptr;
  CK(cuMemHostAlloc(&p, 4, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE));
  Flag f{(volatile int*)p, 0};
  CK(cuMemHostGetDevicePointer(&f.d, p, 0));
  *f.h = 0;
  return f;
}

static void report(const char* what, CUresult r, double t0, volatile int* flag) {
  printf("%-72s -> %-40s %7.1f ms, kernel done: %d\n", what, nm(r), now_ms() - t0, *flag);
}

int main() {
  CK(cuInit(0));
  CUdevice dev;
  CK(cuDeviceGet(&dev, 0));
  CUcontext primary;
  CK(cuDevicePrimaryCtxRetain(&primary, dev));
  CK(cuCtxSetCurrent(primary));
  cudaSetDevice(0);
  cudaKernel_t k;
  if (cudaGetKernel(&k, spin) != cudaSuccess) {
    printf("cudaGetKernel failed\n");
    return 1;
  }
  g_spin = (CUfunction)k;
  CUstream S, T;
  CK(cuStreamCreate(&S, CU_STREAM_NON_BLOCKING));
  CK(cuStreamCreate(&T, CU_STREAM_NON_BLOCKING));

  // E1: alignment of cuMemHostAlloc (DEVICEMAP | PORTABLE), many small sizes kept alive.
  {
    std::vector<void*> keep;
    uintptr_t host_bits = 0, dev_bits = 0;
    size_t sizes[] = {1, 3, 4, 8, 12, 16, 100, 255, 256, 257, 512, 1000, 2048, 4095, 4096, 4097, 65536};
    for (int rep = 0; rep < 16; ++rep)
      for (size_t sz : sizes) {
        void* p = nullptr;
        CUresult r = cuMemHostAlloc(&p, sz, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE);
        if (r != CUDA_SUCCESS) { printf("alloc %zu: %s\n", sz, nm(r)); continue; }
        CUdeviceptr d = 0;
        CK(cuMemHostGetDevicePointer(&d, p, 0));
        host_bits |= (uintptr_t)p;
        dev_bits |= (uintptr_t)d;
        keep.push_back(p);
      }
    auto low = [](uintptr_t b) { return b ? (b & (~b + 1)) : 0; };
    printf("E1 %zu allocations: smallest host alignment %zu, device %zu\n", keep.size(), (size_t)low(host_bits),
           (size_t)low(dev_bits));
    for (void* p : keep) CK(cuMemFreeHost(p));
  }

  Flag f = new_flag();

  // E2: another thread's cuCtxSynchronize while stream S, holding a running pre-capture kernel,
  // is capturing (thread-local mode) on the main thread.
  {
    *f.h = 0;
    launch_spin(S, 400, f.d);
    CK(cuStreamBeginCapture(S, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    std::thread b([&] {
      CK(cuCtxSetCurrent(primary));
      double t0 = now_ms();
      CUresult r = cuCtxSynchronize();
      report("E2 other thread cuCtxSynchronize, S capturing w/ running work", r, t0, f.h);
      double t1 = now_ms();
      CUresult r2 = cuStreamSynchronize(T);
      report("E2b other thread cuStreamSynchronize(T idle), S capturing", r2, t1, f.h);
    });
    b.join();
    CUgraph g = nullptr;
    CUresult r = cuStreamEndCapture(S, &g);
    printf("E2 end capture -> %s\n", nm(r));
    if (g) cuGraphDestroy(g);
    CK(cuStreamSynchronize(S));
    CK(cuCtxSynchronize());
  }

  // E3: the capturing thread itself synchronizes another stream / the context.
  for (int which = 0; which < 3; ++which) {
    *f.h = 0;
    launch_spin(T, 400, f.d);
    CK(cuStreamBeginCapture(S, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    double t0 = now_ms();
    CUresult r;
    const char* what;
    if (which == 0) {
      r = cuStreamSynchronize(T);
      what = "E3a capturing thread cuStreamSynchronize(T busy, not capturing)";
    } else if (which == 1) {
      r = cuCtxSynchronize();
      what = "E3b capturing thread cuCtxSynchronize (T busy)";
    } else {
      CUevent ev;
      CK(cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING));
      CK(cuEventRecord(ev, T));
      t0 = now_ms();
      r = cuEventSynchronize(ev);
      what = "E3c capturing thread cuEventSynchronize(event on T busy)";
    }
    report(what, r, t0, f.h);
    CUgraph g = nullptr;
    CUresult re = cuStreamEndCapture(S, &g);
    printf("    end capture -> %s\n", nm(re));
    if (g) cuGraphDestroy(g);
    CK(cuCtxSynchronize());
  }

  // E4: green contexts.
  {
    CUdevResource res;
    CK(cuDeviceGetDevResource(dev, &res, CU_DEV_RESOURCE_TYPE_SM));
    CUdevResource groups[1];
    unsigned n = 1;
    CUdevResource rem;
    CK(cuDevSmResourceSplitByCount(groups, &n, &res, &rem, 0, 16));
    CUdevResourceDesc desc;
    CK(cuDevResourceGenerateDesc(&desc, &groups[0], 1));
    CUgreenCtx gctx;
    CK(cuGreenCtxCreate(&gctx, desc, dev, CU_GREEN_CTX_DEFAULT_STREAM));
    CUcontext gc;
    CK(cuCtxFromGreenCtx(&gc, gctx));
    printf("E4 green ctx %p, primary %p\n", (void*)gc, (void*)primary);
    CK(cuCtxSetCurrent(gc));
    CUstream gs;
    CK(cuStreamCreate(&gs, CU_STREAM_NON_BLOCKING));
    CUgreenCtx of = nullptr;
    CK(cuStreamGetGreenCtx(gs, &of));
    printf("   stream made with green ctx current belongs to green ctx: %d\n", of == gctx);
    // A mapped buffer allocated with the green context current.
    CK(cuCtxSetCurrent(gc));
    Flag gf = new_flag();
    struct Case { const char* what; CUstream s; CUcontext sync; };
    Case cases[] = {
        {"E4a kernel on green stream, cuCtxSynchronize(green)", gs, gc},
        {"E4b kernel on green stream, cuCtxSynchronize(primary)", gs, primary},
        {"E4c kernel on primary stream S, cuCtxSynchronize(green)", S, gc},
    };
    for (auto& c : cases) {
      *gf.h = 0;
      CK(cuCtxSetCurrent(c.s == gs ? gc : primary));
      launch_spin(c.s, 400, gf.d);
      CK(cuCtxSetCurrent(c.sync));
      double t0 = now_ms();
      CUresult r = cuCtxSynchronize();
      report(c.what, r, t0, gf.h);
      CK(cuCtxSetCurrent(gc));
      CK(cuCtxSynchronize());
      CK(cuCtxSetCurrent(primary));
      CK(cuCtxSynchronize());
    }
  }

  // E5: cuMemFreeHost with no current context.
  {
    CK(cuCtxSetCurrent(primary));
    void* p = nullptr;
    CK(cuMemHostAlloc(&p, 64, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE));
    CK(cuCtxSetCurrent(nullptr));
    CUresult r = cuMemFreeHost(p);
    printf("E5 cuMemFreeHost with no current context -> %s\n", nm(r));
    CK(cuCtxSetCurrent(primary));
    if (r != CUDA_SUCCESS) CK(cuMemFreeHost(p));
  }

  // E6 (last: may fault the context): cuMemFreeHost of memory a running kernel will write.
  {
    CK(cuCtxSetCurrent(primary));
    Flag x = new_flag();
    launch_spin(T, 400, x.d);
    double t0 = now_ms();
    CUresult r = cuMemFreeHost((void*)x.h);
    printf("E6 cuMemFreeHost while a kernel will still write it -> %s after %.1f ms\n", nm(r), now_ms() - t0);
    CUresult r2 = cuCtxSynchronize();
    printf("   then cuCtxSynchronize -> %s\n", nm(r2));
  }
  return 0;
}
