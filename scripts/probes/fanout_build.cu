// Probe: why kgraph's 1 -> 8 -> 1 fan-out graph replays slower than the C++ anchor's
// (shared/anchors/graph_bench.cu). kgraph builds its graph node by node (cuGraphAddNode with
// edge data) and its join takes nine pointers; the anchor captures over eight streams and its
// join takes one pointer array. This times each difference alone, tiny branches (no work),
// in rounds, first in a process with one stream and then after the capture streams exist. Given
// kgraph's compiled `bench.cubin` (from the build's OUT_DIR), it also builds the graph of its
// `bench_work` / `bench_join8` through the driver API; and it repeats the runtime-API build over
// buffers from the stream-ordered pool (`cudaMallocAsync`, as cudarc allocates).
//
//   nvcc -O3 -arch=sm_90 -o /tmp/fanout_build scripts/probes/fanout_build.cu -lcuda
//   [FANOUT_ROUNDS=11] [FANOUT_ONE_STREAM=1] /tmp/fanout_build [path/to/bench.cubin]
#include <cuda.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x)                                                                    \
  do {                                                                           \
    cudaError_t e_ = (x);                                                        \
    if (e_ != cudaSuccess) {                                                     \
      fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
      exit(1);                                                                   \
    }                                                                            \
  } while (0)

using clk = std::chrono::steady_clock;
static const int N = 256;

__global__ void work(const float* __restrict__ x, float* __restrict__ y, int n, int iters) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  for (int k = 0; k < iters; ++k) v = v * 0.999f + 0.001f;
  y[i] = v;
}

__global__ void join_array(float* const* __restrict__ ins, float* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float s = 0.f;
  for (int k = 0; k < 8; ++k) s += ins[k][i];
  out[i] = s;
}

__global__ void join_args(const float* __restrict__ y0, const float* __restrict__ y1, const float* __restrict__ y2,
                          const float* __restrict__ y3, const float* __restrict__ y4, const float* __restrict__ y5,
                          const float* __restrict__ y6, const float* __restrict__ y7, float* __restrict__ out,
                          int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[i] = ((y0[i] + y1[i]) + (y2[i] + y3[i])) + ((y4[i] + y5[i]) + (y6[i] + y7[i]));
}

struct Bufs {
  float *x, *root, *outs[8], *joined, **d_ins;
};
static int g_iters = 0, g_n = N;

static double time_graph(cudaStream_t s, cudaGraphExec_t ge, int iters = 3000) {
  std::vector<double> r;
  for (int i = 0; i < iters; ++i) {
    auto t0 = clk::now();
    CK(cudaGraphLaunch(ge, s));
    CK(cudaStreamSynchronize(s));
    r.push_back(std::chrono::duration<double, std::micro>(clk::now() - t0).count());
  }
  r.erase(r.begin(), r.begin() + r.size() / 6);
  std::sort(r.begin(), r.end());
  return r[r.size() / 2];
}

// One kernel node: `deps` incoming plain edges, through cudaGraphAddNode (edge data, as kgraph)
// or cudaGraphAddKernelNode.
static cudaGraphNode_t add(cudaGraph_t g, bool edge_data, std::vector<cudaGraphNode_t> deps, void* func,
                           void** args) {
  cudaGraphNode_t node;
  if (edge_data) {
    cudaGraphNodeParams p = {};
    p.type = cudaGraphNodeTypeKernel;
    p.kernel.func = func;
    p.kernel.gridDim = dim3((N + 127) / 128);
    p.kernel.blockDim = dim3(128);
    p.kernel.kernelParams = args;
    std::vector<cudaGraphEdgeData> data(deps.size());
    for (auto& d : data) d = {};
    CK(cudaGraphAddNode(&node, g, deps.data(), deps.empty() ? nullptr : data.data(), deps.size(), &p));
  } else {
    cudaKernelNodeParams p = {};
    p.func = func;
    p.gridDim = dim3((N + 127) / 128);
    p.blockDim = dim3(128);
    p.kernelParams = args;
    CK(cudaGraphAddKernelNode(&node, g, deps.data(), deps.size(), &p));
  }
  return node;
}

// The fan-out built node by node; `serial` chains the ten nodes instead.
static cudaGraphExec_t build(Bufs& b, bool edge_data, bool join9, bool serial) {
  cudaGraph_t g;
  CK(cudaGraphCreate(&g, 0));
  int zero = 0;
  void* root_args[] = {&b.x, &b.root, &g_n, &zero};
  cudaGraphNode_t root = add(g, edge_data, {}, (void*)work, root_args);
  std::vector<cudaGraphNode_t> branches;
  void* br_args[8][4];
  cudaGraphNode_t prev = root;
  for (int k = 0; k < 8; ++k) {
    br_args[k][0] = &b.root;
    br_args[k][1] = &b.outs[k];
    br_args[k][2] = &g_n;
    br_args[k][3] = &g_iters;
    prev = add(g, edge_data, {serial ? prev : root}, (void*)work, br_args[k]);
    branches.push_back(prev);
  }
  std::vector<cudaGraphNode_t> join_deps = serial ? std::vector<cudaGraphNode_t>{prev} : branches;
  if (join9) {
    void* args[] = {&b.outs[0], &b.outs[1], &b.outs[2], &b.outs[3], &b.outs[4],
                    &b.outs[5], &b.outs[6], &b.outs[7], &b.joined, &g_n};
    add(g, edge_data, join_deps, (void*)join_args, args);
  } else {
    void* args[] = {&b.d_ins, &b.joined, &g_n};
    add(g, edge_data, join_deps, (void*)join_array, args);
  }
  cudaGraphExec_t ge;
  CK(cudaGraphInstantiate(&ge, g, 0));
  CK(cudaGraphDestroy(g));
  return ge;
}

// The anchor's capture: the branches forked over eight streams with events.
static cudaGraphExec_t capture(cudaStream_t s, cudaStream_t* br, Bufs& b, bool join9, bool serial) {
  cudaEvent_t fork, done[8];
  CK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
  for (auto& e : done) CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  work<<<2, 128, 0, s>>>(b.x, b.root, N, 0);
  CK(cudaEventRecord(fork, s));
  for (int k = 0; k < 8; ++k) {
    cudaStream_t t = serial ? s : br[k];
    if (!serial) CK(cudaStreamWaitEvent(t, fork, 0));
    work<<<2, 128, 0, t>>>(b.root, b.outs[k], N, g_iters);
    if (!serial) {
      CK(cudaEventRecord(done[k], t));
      CK(cudaStreamWaitEvent(s, done[k], 0));
    }
  }
  if (join9)
    join_args<<<2, 128, 0, s>>>(b.outs[0], b.outs[1], b.outs[2], b.outs[3], b.outs[4], b.outs[5], b.outs[6],
                                b.outs[7], b.joined, N);
  else
    join_array<<<2, 128, 0, s>>>(b.d_ins, b.joined, N);
  cudaGraph_t g;
  CK(cudaStreamEndCapture(s, &g));
  cudaGraphExec_t ge;
  CK(cudaGraphInstantiate(&ge, g, 0));
  CK(cudaGraphDestroy(g));
  return ge;
}

// The same built fan-out over kernels of a loaded cubin (kgraph's), through the driver API.
static cudaGraphExec_t build_cubin(Bufs& b, CUfunction work_fn, CUfunction join_fn, bool serial) {
  CUgraph g;
  if (cuGraphCreate(&g, 0) != CUDA_SUCCESS) exit(2);
  auto add = [&](std::vector<CUgraphNode> deps, CUfunction f, void** args) {
    CUDA_KERNEL_NODE_PARAMS p = {};
    p.func = f;
    p.gridDimX = (N + 127) / 128, p.gridDimY = 1, p.gridDimZ = 1;
    p.blockDimX = 128, p.blockDimY = 1, p.blockDimZ = 1;
    p.kernelParams = args;
    CUgraphNode node;
    if (cuGraphAddKernelNode(&node, g, deps.data(), deps.size(), &p) != CUDA_SUCCESS) exit(3);
    return node;
  };
  int zero = 0;
  void* root_args[] = {&b.x, &b.root, &g_n, &zero};
  CUgraphNode root = add({}, work_fn, root_args), prev = root;
  std::vector<CUgraphNode> branches;
  void* br_args[8][4];
  for (int k = 0; k < 8; ++k) {
    br_args[k][0] = &b.root, br_args[k][1] = &b.outs[k], br_args[k][2] = &g_n, br_args[k][3] = &g_iters;
    prev = add({serial ? prev : root}, work_fn, br_args[k]);
    branches.push_back(prev);
  }
  void* args[] = {&b.outs[0], &b.outs[1], &b.outs[2], &b.outs[3], &b.outs[4],
                  &b.outs[5], &b.outs[6], &b.outs[7], &b.joined, &g_n};
  add(serial ? std::vector<CUgraphNode>{prev} : branches, join_fn, args);
  CUgraphExec ge;
  if (cuGraphInstantiate(&ge, g, 0) != CUDA_SUCCESS) exit(4);
  cuGraphDestroy(g);
  return (cudaGraphExec_t)ge;
}

static Bufs alloc(cudaStream_t s, bool pool) {
  Bufs b;
  auto get = [&](float** p, size_t bytes) {
    if (pool) CK(cudaMallocAsync((void**)p, bytes, s));
    else CK(cudaMalloc((void**)p, bytes));
  };
  get(&b.x, N * 4);
  get(&b.root, N * 4);
  for (auto& o : b.outs) get(&o, N * 4);
  get(&b.joined, N * 4);
  CK(cudaMalloc(&b.d_ins, sizeof(b.outs)));
  CK(cudaMemsetAsync(b.x, 0, N * 4, s));
  CK(cudaMemcpyAsync(b.d_ins, b.outs, sizeof(b.outs), cudaMemcpyHostToDevice, s));
  CK(cudaStreamSynchronize(s));
  return b;
}

struct Variant {
  const char* name;
  cudaGraphExec_t ge;
  std::vector<double> t;
};

// Rounds per variant (FANOUT_ROUNDS, default 5), interleaved; the median round is printed.
static int g_rounds = 5;

static void rounds(cudaStream_t s, std::vector<Variant>& vs, const char* phase) {
  for (int r = 0; r < g_rounds; ++r)
    for (auto& v : vs) v.t.push_back(time_graph(s, v.ge));
  for (auto& v : vs) {
    std::sort(v.t.begin(), v.t.end());
    printf("fanout_probe %-10s %-32s %.2f us (rounds %.2f-%.2f)\n", phase, v.name, v.t[g_rounds / 2], v.t[0],
           v.t[g_rounds - 1]);
    v.t.clear();
  }
}

int main(int argc, char** argv) {
  if (const char* r = getenv("FANOUT_ROUNDS")) g_rounds = std::max(1, atoi(r));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  Bufs b = alloc(s, false), pooled = alloc(s, true);
  std::vector<Variant> built = {
      {"built edge-data join9 branched", build(b, true, true, false), {}},
      {"built edge-data join9 serial", build(b, true, true, true), {}},
      {"built classic join9 branched", build(b, false, true, false), {}},
      {"built classic join9 serial", build(b, false, true, true), {}},
      {"built classic array branched", build(b, false, false, false), {}},
      {"built classic array serial", build(b, false, false, true), {}},
      {"built pool-memory join9 branched", build(pooled, true, true, false), {}},
      {"built pool-memory join9 serial", build(pooled, true, true, true), {}},
  };
  if (argc > 1) {
    CUmodule m;
    CUfunction work_fn, join_fn;
    if (cuModuleLoad(&m, argv[1]) != CUDA_SUCCESS || cuModuleGetFunction(&work_fn, m, "bench_work") != CUDA_SUCCESS ||
        cuModuleGetFunction(&join_fn, m, "bench_join8") != CUDA_SUCCESS) {
      fprintf(stderr, "cannot load bench_work / bench_join8 from %s\n", argv[1]);
      return 1;
    }
    built.push_back({"built kgraph-cubin branched", build_cubin(b, work_fn, join_fn, false), {}});
    built.push_back({"built kgraph-cubin serial", build_cubin(b, work_fn, join_fn, true), {}});
    built.push_back({"built kgraph-cubin pool branched", build_cubin(pooled, work_fn, join_fn, false), {}});
    built.push_back({"built kgraph-cubin pool serial", build_cubin(pooled, work_fn, join_fn, true), {}});
  }
  rounds(s, built, "1 stream");
  if (getenv("FANOUT_ONE_STREAM")) return 0;  // only the phase without further streams
  cudaStream_t br[8];
  for (auto& t : br) CK(cudaStreamCreateWithFlags(&t, cudaStreamNonBlocking));
  std::vector<Variant> all = built;
  all.push_back({"captured join9 branched", capture(s, br, b, true, false), {}});
  all.push_back({"captured join9 serial", capture(s, br, b, true, true), {}});
  all.push_back({"captured array branched", capture(s, br, b, false, false), {}});
  all.push_back({"captured array serial", capture(s, br, b, false, true), {}});
  rounds(s, all, "9 streams");
  return 0;
}
