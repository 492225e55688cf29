// Probe: kgraph's `graph_control::profile` test fails under compute-sanitizer racecheck only
// (CUDA_ERROR_ILLEGAL_ADDRESS at `replay_timed: elapsed time`, about one process in four),
// never in plain runs, memcheck, initcheck or synccheck. This rebuilds that test's two graphs in
// plain CUDA C++, with no kgraph code but kgraph's control PTX, and replays them as the test
// does, so a failure here is not in kgraph's Rust.
//
// `tests/graphs/test_control.toml` built from its dataflow (the struct's `capture`):
//   zero_acc (memset acc) -> WHILE repeat_add { add: acc += x -> kgraph_loop_repeat(10) }
//   WHILE halve_until { halve: w = v / 2 -> keep: memcpy v <- w -> kgraph_loop_until_below(w, 0.01, 100) }
//   kgraph_if_nonzero(flag) -> IF maybe_scale { scale: y = 3x + 1 } -> copy_y (memcpy y_copy <- y)
// and serialized with an event-record node between consecutive units (`profile`):
//   e0 zero_acc e1 repeat_add e2 halve_until e3 [if_nonzero -> maybe_scale] e4 copy_y e5
// Modes (argv[1]):
//   profile:  the serialized graph 20 times (each waited, its 5 spans read), then the branched
//             graph 20 times between two timing events: the test's sequence
//   branched: the branched graph 40 times between timing events, no second graph
//   twice:    two instantiations of the branched graph, 20 timed replays each
//   serial:   the serialized graph 40 times, no branched graph
// argv[2] (branched graph only, default 7) keeps some of its three branches: 1 repeat_add,
// 2 halve_until, 4 the IF (copy_y always; it follows the IF when there is one).
// Build (repository root): nvcc -O3 -arch=sm_90 -o /tmp/pr scripts/probes/profile_racecheck.cu -lcuda
// Run:   [PROBE_OWN_CONTROL=1] /tmp/pr MODE [MASK]; the same under compute-sanitizer --tool racecheck
#include <cuda.h>
#include <cuda_runtime.h>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CK(x)                                                                                 \
    do {                                                                                      \
        cudaError_t e_ = (x);                                                                 \
        if (e_ != cudaSuccess) {                                                              \
            printf("%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));        \
            exit(1);                                                                          \
        }                                                                                     \
    } while (0)
#define CU(x)                                                                                 \
    do {                                                                                      \
        CUresult r_ = (x);                                                                    \
        if (r_ != CUDA_SUCCESS) {                                                             \
            printf("%s:%d %s: CUresult %d\n", __FILE__, __LINE__, #x, (int)r_);              \
            exit(1);                                                                          \
        }                                                                                     \
    } while (0)

static const int N = 1024;

__global__ void accumulate(float* acc, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) acc[i] += x[i];
}
__global__ void affine(const float* x, float* y, float a, float b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + b;
}

// The control kernels of runtime/src/control/control.cu, compiled here by nvcc (PROBE_OWN_CONTROL=1)
// instead of JIT-loaded from kgraph's control.ptx: then the probe holds no kgraph code at all.
__global__ void own_repeat(cudaGraphConditionalHandle handle, unsigned* counter, unsigned limit) {
    unsigned done = *counter + 1u;
    bool more = done < limit;
    *counter = more ? done : 0u;
    cudaGraphSetConditional(handle, more ? 1u : 0u);
}
__global__ void own_until_below(cudaGraphConditionalHandle handle, const float* value, float threshold,
                                unsigned* counter, unsigned limit) {
    unsigned done = *counter + 1u;
    bool more = done < limit && *value >= threshold;
    *counter = more ? done : 0u;
    cudaGraphSetConditional(handle, more ? 1u : 0u);
}
__global__ void own_if_nonzero(cudaGraphConditionalHandle handle, const int* flag) {
    cudaGraphSetConditional(handle, *flag != 0 ? 1u : 0u);
}

struct Bufs {
    float *x, *acc, *v, *w, *y, *y_copy;
    int* flag;
    unsigned* counters;
};
struct Control {
    CUfunction repeat, until_below, if_nonzero;
};

// A graph under construction: nodes are added after `last` (or after nothing).
struct Builder {
    cudaGraph_t g;
    std::vector<cudaGraphNode_t> deps;
    cudaGraphNode_t add(cudaGraphNode_t n) {
        deps.assign(1, n);
        return n;
    }
};

static cudaGraphNode_t kernel(Builder& b, void* fn, void** args, int grid, int block) {
    cudaKernelNodeParams p = {};
    p.func = fn;
    p.gridDim = dim3(grid);
    p.blockDim = dim3(block);
    p.kernelParams = args;
    cudaGraphNode_t n;
    CK(cudaGraphAddKernelNode(&n, b.g, b.deps.data(), b.deps.size(), &p));
    return b.add(n);
}
static cudaGraphNode_t control(Builder& b, CUfunction f, void** args) {
    CUDA_KERNEL_NODE_PARAMS p = {};
    p.func = f;
    p.gridDimX = p.gridDimY = p.gridDimZ = 1;
    p.blockDimX = p.blockDimY = p.blockDimZ = 1;
    p.kernelParams = args;
    CUgraphNode n;
    CU(cuGraphAddKernelNode(&n, (CUgraph)b.g, (CUgraphNode*)b.deps.data(), b.deps.size(), &p));
    return b.add((cudaGraphNode_t)n);
}
static cudaGraphNode_t memcpy_node(Builder& b, void* dst, const void* src, size_t bytes) {
    cudaGraphNode_t n;
    CK(cudaGraphAddMemcpyNode1D(&n, b.g, b.deps.data(), b.deps.size(), dst, src, bytes, cudaMemcpyDeviceToDevice));
    return b.add(n);
}
static cudaGraphNode_t event_node(Builder& b, cudaEvent_t e) {
    cudaGraphNode_t n;
    CK(cudaGraphAddEventRecordNode(&n, b.g, b.deps.data(), b.deps.size(), e));
    return b.add(n);
}
// A conditional node after b's deps; returns its body's builder.
static Builder conditional(Builder& b, cudaGraphConditionalHandle h, cudaGraphConditionalNodeType type) {
    cudaGraphNodeParams cp = {};
    cp.type = cudaGraphNodeTypeConditional;
    cp.conditional.handle = h;
    cp.conditional.type = type;
    cp.conditional.size = 1;
    cudaGraphNode_t n;
    CK(cudaGraphAddNode(&n, b.g, b.deps.data(), nullptr, b.deps.size(), &cp));
    b.add(n);
    return Builder{cp.conditional.phGraph_out[0], {}};
}

// Kernel parameters must outlive the build only (they are copied into the nodes).
static cudaGraphExec_t build(const Bufs& d, const Control& c, bool serialized, cudaEvent_t* ev, int mask = 7) {
    Builder root{nullptr, {}};
    CK(cudaGraphCreate(&root.g, 0));
    int n = N, one = 1;
    float half = 0.5f, zero = 0.f, three = 3.f, onef = 1.f, threshold = 0.01f;
    unsigned k = 10, max = 100;
    int e = 0;
    auto unit_boundary = [&] {
        if (serialized && ev) event_node(root, ev[e++]);
    };
    unit_boundary();
    cudaMemsetParams zero_acc = {};
    zero_acc.dst = d.acc;
    zero_acc.elementSize = 4;
    zero_acc.width = N;
    zero_acc.height = 1;
    cudaGraphNode_t n0;
    CK(cudaGraphAddMemsetNode(&n0, root.g, root.deps.data(), root.deps.size(), &zero_acc));
    root.add(n0);
    unit_boundary();
    if (mask & 1) {  // WHILE repeat_add
        cudaGraphConditionalHandle h;
        CK(cudaGraphConditionalHandleCreate(&h, root.g, 1, cudaGraphCondAssignDefault));
        Builder body = conditional(root, h, cudaGraphCondTypeWhile);
        void* add_args[] = {(void*)&d.acc, (void*)&d.x, &n};
        kernel(body, (void*)accumulate, add_args, N / 256, 256);
        unsigned* counter = d.counters;
        void* args[] = {&h, &counter, &k};
        control(body, c.repeat, args);
    }
    unit_boundary();
    if (!serialized) root.deps.clear();
    if (mask & 2) {  // WHILE halve_until
        cudaGraphConditionalHandle h;
        CK(cudaGraphConditionalHandleCreate(&h, root.g, 1, cudaGraphCondAssignDefault));
        Builder body = conditional(root, h, cudaGraphCondTypeWhile);
        void* halve_args[] = {(void*)&d.v, (void*)&d.w, &half, &zero, &one};
        kernel(body, (void*)affine, halve_args, 1, 32);
        memcpy_node(body, d.v, d.w, sizeof(float));
        unsigned* counter = d.counters + 1;
        void* args[] = {&h, (void*)&d.w, &threshold, &counter, &max};
        control(body, c.until_below, args);
    }
    unit_boundary();
    if (!serialized) root.deps.clear();
    if (mask & 4) {  // if_nonzero -> IF maybe_scale
        cudaGraphConditionalHandle h;
        CK(cudaGraphConditionalHandleCreate(&h, root.g, 0, cudaGraphCondAssignDefault));
        void* args[] = {&h, (void*)&d.flag};
        control(root, c.if_nonzero, args);
        Builder body = conditional(root, h, cudaGraphCondTypeIf);
        void* scale_args[] = {(void*)&d.x, (void*)&d.y, &three, &onef, &n};
        kernel(body, (void*)affine, scale_args, N / 256, 256);
    }
    unit_boundary();
    memcpy_node(root, d.y_copy, d.y, N * sizeof(float));
    unit_boundary();
    cudaGraphExec_t exec;
    CK(cudaGraphInstantiate(&exec, root.g, 0));
    CK(cudaGraphDestroy(root.g));
    return exec;
}

static void timed(cudaGraphExec_t g, cudaStream_t s, cudaEvent_t t0, cudaEvent_t t1) {
    CK(cudaEventRecord(t0, s));
    CK(cudaGraphLaunch(g, s));
    CK(cudaEventRecord(t1, s));
    float ms;
    CK(cudaEventSynchronize(t1));
    CK(cudaEventElapsedTime(&ms, t0, t1));
}

int main(int argc, char** argv) {
    const char* mode = argc > 1 ? argv[1] : "profile";
    const int mask = argc > 2 ? atoi(argv[2]) : 7;  // branched mode: 1 repeat_add, 2 halve_until, 4 the IF
    CK(cudaFree(nullptr));
    Control c;
    const char* own = getenv("PROBE_OWN_CONTROL");
    if (own && *own == '1') {
        cudaFunction_t f;
        CK(cudaGetFuncBySymbol(&f, (const void*)own_repeat));
        c.repeat = (CUfunction)f;
        CK(cudaGetFuncBySymbol(&f, (const void*)own_until_below));
        c.until_below = (CUfunction)f;
        CK(cudaGetFuncBySymbol(&f, (const void*)own_if_nonzero));
        c.if_nonzero = (CUfunction)f;
    } else {
        CUmodule m;
        CU(cuModuleLoad(&m, "runtime/src/control/control.ptx"));
        CU(cuModuleGetFunction(&c.repeat, m, "kgraph_loop_repeat"));
        CU(cuModuleGetFunction(&c.until_below, m, "kgraph_loop_until_below"));
        CU(cuModuleGetFunction(&c.if_nonzero, m, "kgraph_if_nonzero"));
    }
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    Bufs d;
    for (float** p : {&d.x, &d.acc, &d.y, &d.y_copy}) CK(cudaMalloc(p, N * sizeof(float)));
    CK(cudaMalloc(&d.v, 4));
    CK(cudaMalloc(&d.w, 4));
    CK(cudaMalloc(&d.flag, 4));
    CK(cudaMalloc(&d.counters, 8));
    std::vector<float> x(N);
    for (int i = 0; i < N; ++i) x[i] = 0.001f * i - 0.5f;
    const float v0 = 1.f;
    const int flag = 1;
    CK(cudaMemcpy(d.x, x.data(), N * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d.v, &v0, 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d.flag, &flag, 4, cudaMemcpyHostToDevice));
    CK(cudaMemset(d.counters, 0, 8));
    CK(cudaMemset(d.y, 0, N * 4));
    cudaEvent_t ev[6], t0, t1;
    for (auto& e : ev) CK(cudaEventCreate(&e));
    CK(cudaEventCreate(&t0));
    CK(cudaEventCreate(&t1));
    const bool profile = !strcmp(mode, "profile"), twice = !strcmp(mode, "twice"), serial = !strcmp(mode, "serial");
    if (!profile && !twice && !serial && strcmp(mode, "branched")) {
        printf("mode: profile | branched | twice | serial\n");
        return 2;
    }
    cudaGraphExec_t branched = serial ? nullptr : build(d, c, false, nullptr, mask);
    if (branched) CK(cudaGraphUpload(branched, s));
    cudaGraphExec_t second = nullptr;
    if (profile || serial) second = build(d, c, true, ev);
    if (twice) second = build(d, c, false, nullptr);
    if (second) CK(cudaGraphUpload(second, s));
    for (int i = 0; i < 20; ++i) {
        if (profile || serial) {
            CK(cudaGraphLaunch(second, s));
            CK(cudaStreamSynchronize(s));
            float ms;
            for (int k = 0; k < 5; ++k) CK(cudaEventElapsedTime(&ms, ev[k], ev[k + 1]));
        } else {
            timed(twice ? second : branched, s, t0, t1);
        }
    }
    for (int i = 0; i < 20; ++i) timed(serial ? second : branched, s, t0, t1);
    CK(cudaStreamSynchronize(s));
    std::vector<float> acc(N), y(N), yc(N);
    float v;
    CK(cudaMemcpy(acc.data(), d.acc, N * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(y.data(), d.y, N * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(yc.data(), d.y_copy, N * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(&v, d.v, 4, cudaMemcpyDeviceToHost));
    // Closed forms: acc = 10 x after every launch; v halved 7 times on the first launch, then
    // once per launch (40 launches: 2^-46); y = 3x + 1 (flag set) and its copy.
    bool ok = !(mask & 2) || v == std::ldexp(1.f, -46);
    for (int i = 0; i < N; ++i)
        ok &= (!(mask & 1) || std::fabs(acc[i] - 10.f * x[i]) <= 1e-5f * std::fmax(std::fabs(x[i]), 1.f)) &&
              (!(mask & 4) || y[i] == std::fma(3.f, x[i], 1.f)) && yc[i] == y[i];
    printf("probe %s %d: 40 launches, v = 2^%g: %s\n", mode, mask, std::log2(v), ok ? "ok" : "WRONG");
    return ok ? 0 : 1;
}
