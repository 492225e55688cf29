// Why kgraph's (and raw cudarc's) chain64 graph replay is slower than the C++ anchor's:
// the same 64-node chain captured four ways — kernel compiled into this program (runtime
// registration) or kgraph's own cubin loaded with cuModuleLoad (as kgraph/cudarc do), buffers
// from cudaMalloc or from the stream-ordered pool (cudaMallocAsync, as cudarc allocates).
//   nvcc -O3 -arch=sm_90 -o /tmp/gv graph_variants.cu -lcuda && /tmp/gv path/to/bench.cubin
#include <cuda.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); exit(1); } } while (0)
#define CU(x) do { CUresult e_ = (x); if (e_ != CUDA_SUCCESS) { const char* m; cuGetErrorString(e_, &m); fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, m); exit(1); } } while (0)

__global__ void axpb(const float* __restrict__ x, float* __restrict__ y, float a, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + b;
}

using clk = std::chrono::steady_clock;
static const int N = 256;

int main(int argc, char** argv) {
  if (argc < 2) { fprintf(stderr, "usage: gv bench.cubin\n"); return 2; }
  CK(cudaSetDevice(0));
  CK(cudaFree(0));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CUmodule mod;
  CUfunction fn;
  CU(cuModuleLoad(&mod, argv[1]));
  CU(cuModuleGetFunction(&fn, mod, "bench_axpb"));
  float *ma, *mb, *pa, *pb;
  CK(cudaMalloc(&ma, N * 4));
  CK(cudaMalloc(&mb, N * 4));
  CK(cudaMallocAsync(&pa, N * 4, s));
  CK(cudaMallocAsync(&pb, N * 4, s));
  CK(cudaMemsetAsync(ma, 0, N * 4, s)); CK(cudaMemsetAsync(mb, 0, N * 4, s));
  CK(cudaMemsetAsync(pa, 0, N * 4, s)); CK(cudaMemsetAsync(pb, 0, N * 4, s));
  CK(cudaStreamSynchronize(s));
  for (int use_cubin = 0; use_cubin < 2; ++use_cubin) {
    for (int pool = 0; pool < 2; ++pool) {
      float* a = pool ? pa : ma;
      float* b = pool ? pb : mb;
      cudaGraph_t g;
      cudaGraphExec_t ge;
      CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
      for (int k = 0; k < 64; ++k) {
        float* src = (k & 1) ? b : a;
        float* dst = (k & 1) ? a : b;
        float av = 1.0001f, bv = 0.5f;
        int n = N;
        if (use_cubin) {
          void* args[] = {&src, &dst, &av, &bv, &n};
          CU(cuLaunchKernel(fn, 2, 1, 1, 128, 1, 1, 0, (CUstream)s, args, nullptr));
        } else {
          axpb<<<2, 128, 0, s>>>(src, dst, av, bv, n);
        }
      }
      CK(cudaStreamEndCapture(s, &g));
      CK(cudaGraphInstantiate(&ge, g, 0));
      CK(cudaGraphUpload(ge, s));
      std::vector<double> r;
      for (int i = 0; i < 3000; ++i) {
        auto t0 = clk::now();
        CK(cudaGraphLaunch(ge, s));
        CK(cudaStreamSynchronize(s));
        r.push_back(std::chrono::duration<double, std::micro>(clk::now() - t0).count());
      }
      r.erase(r.begin(), r.begin() + 500);
      std::sort(r.begin(), r.end());
      printf("variant_chain64_graph_%s_%s %.2f us\n", use_cubin ? "cubin" : "registered",
             pool ? "pool_alloc" : "cudamalloc", r[r.size() / 2]);
      CK(cudaGraphExecDestroy(ge));
      CK(cudaGraphDestroy(g));
    }
  }
  return 0;
}
