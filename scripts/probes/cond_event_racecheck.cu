// Probe: does compute-sanitizer racecheck replay a graph that has event-record nodes around a
// conditional WHILE node? kgraph's `profile` builds exactly that shape (an event before and
// after every unit); under racecheck only, its replay failed with an illegal address.
// This is the same shape in plain CUDA C++, with no kgraph code, in four variants:
//   0: kernel -> WHILE(body kernel)                      (no events)
//   1: event -> kernel -> event -> WHILE -> event        (kgraph's profile shape)
//   2: event -> kernel -> event -> kernel -> event       (events, no conditional)
//   3: kernel -> event -> WHILE                          (one event before the conditional)
//   4: kernel -> set(0) -> IF(body kernel)               (an IF whose condition is false)
//   5: kernel -> set(1) -> IF(body kernel)               (an IF whose condition is true)
//   6, 7: 4 and 5, each replay followed by an eager kernel on the same stream
//   8: memset -> WHILE(body: kernel -> memcpy node -> count_down)   (copy nodes in a body, as
//      kgraph's test_control.toml `halve_until`)
//   9: kernel -> WHILE(body: kernel -> kgraph_loop_repeat), the condition kernel JIT-loaded from
//      kgraph's own runtime/src/control/control.ptx (run from the repository root), as kgraph does
//   10: variant 1, each launch followed by a launch of a second instantiated graph (variant 0's
//      shape, the same counter) between two timing events, as kgraph's `profile` does with the
//      struct's own graph (`replay_timed`)
// Build: nvcc -arch=sm_90 -o cond_event_racecheck cond_event_racecheck.cu -lcuda
// Run:   ./cond_event_racecheck [variant [repetitions]]; the same under
//        compute-sanitizer --tool racecheck
#include <cuda.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>

#define CK(x)                                                                                 \
    do {                                                                                      \
        cudaError_t e_ = (x);                                                                 \
        if (e_ != cudaSuccess) {                                                              \
            printf("variant %d: %s:%d %s: %s\n", variant, __FILE__, __LINE__, #x,            \
                   cudaGetErrorString(e_));                                                   \
            return 1;                                                                         \
        }                                                                                     \
    } while (0)

__global__ void reset(int* counter, float* x) {
    *counter = 0;
    x[threadIdx.x] = 0.f;
}
__global__ void add_one(float* x) { x[threadIdx.x] += 1.f; }
// Before an IF node: its body runs when `value != 0`.
__global__ void set_if(cudaGraphConditionalHandle h, int value) { cudaGraphSetConditional(h, value); }
// The WHILE body's last node: keep looping until the body ran `n` times.
__global__ void count_down(cudaGraphConditionalHandle h, int* counter, int n) {
    const int c = ++*counter;
    cudaGraphSetConditional(h, c < n ? 1 : 0);
}

static cudaGraphNode_t kernel_node(cudaGraph_t g, const cudaGraphNode_t* deps, size_t n, void* fn,
                                   void** args, unsigned threads) {
    cudaKernelNodeParams p = {};
    p.func = fn;
    p.gridDim = dim3(1);
    p.blockDim = dim3(threads);
    p.kernelParams = args;
    cudaGraphNode_t node;
    if (cudaGraphAddKernelNode(&node, g, deps, n, &p) != cudaSuccess) return nullptr;
    return node;
}

// Variant 0's graph, instantiated: reset -> WHILE(add_one -> count_down).
static cudaGraphExec_t build_while(int* counter, float* x, int n) {
    cudaGraph_t g;
    if (cudaGraphCreate(&g, 0) != cudaSuccess) return nullptr;
    void* reset_args[] = {&counter, &x};
    cudaGraphNode_t last = kernel_node(g, nullptr, 0, (void*)reset, reset_args, 32), node;
    cudaGraphConditionalHandle h;
    if (cudaGraphConditionalHandleCreate(&h, g, 1, cudaGraphCondAssignDefault) != cudaSuccess) return nullptr;
    cudaGraphNodeParams cp = {};
    cp.type = cudaGraphNodeTypeConditional;
    cp.conditional.handle = h;
    cp.conditional.type = cudaGraphCondTypeWhile;
    cp.conditional.size = 1;
    if (cudaGraphAddNode(&node, g, &last, nullptr, 1, &cp) != cudaSuccess) return nullptr;
    void* add_args[] = {&x};
    cudaGraphNode_t a = kernel_node(cp.conditional.phGraph_out[0], nullptr, 0, (void*)add_one, add_args, 32);
    void* cd_args[] = {&h, &counter, (void*)&n};
    kernel_node(cp.conditional.phGraph_out[0], &a, 1, (void*)count_down, cd_args, 1);
    cudaGraphExec_t exec;
    if (cudaGraphInstantiate(&exec, g, 0) != cudaSuccess) return nullptr;
    return exec;
}

static int run(int variant, cudaStream_t s, int* counter, float* x) {
    static cudaGraphExec_t companion = nullptr;
    static cudaEvent_t t0, t1;
    const bool timed_companion = variant == 10;
    if (timed_companion) {
        variant = 1;
        if (!companion) {
            companion = build_while(counter, x, 10);
            if (!companion || cudaEventCreate(&t0) != cudaSuccess || cudaEventCreate(&t1) != cudaSuccess) {
                printf("variant 10: cannot build the companion graph\n");
                return 1;
            }
        }
    }
    const int n = 10;
    cudaGraph_t g;
    CK(cudaGraphCreate(&g, 0));
    cudaEvent_t ev[3];
    for (auto& e : ev) CK(cudaEventCreate(&e));
    cudaGraphNode_t last = nullptr, node;
    auto dep = [&](cudaGraphNode_t n) { last = n; };
    auto event = [&](int i) -> cudaError_t {
        cudaError_t e = cudaGraphAddEventRecordNode(&node, g, last ? &last : nullptr, last ? 1 : 0, ev[i]);
        dep(node);
        return e;
    };
    if (variant == 1 || variant == 2) CK(event(0));
    if (variant == 8) {
        cudaMemsetParams m = {};
        m.dst = x + 32;
        m.value = 0;
        m.elementSize = 4;
        m.width = 32;
        m.height = 1;
        CK(cudaGraphAddMemsetNode(&node, g, nullptr, 0, &m));
        dep(node);
    }
    void* reset_args[] = {&counter, &x};
    dep(kernel_node(g, last ? &last : nullptr, last ? 1 : 0, (void*)reset, reset_args, 32));
    if (variant != 0 && variant < 4) CK(event(1));
    const bool eager_tail = variant == 6 || variant == 7;
    if (eager_tail) variant -= 2;
    if (variant == 4 || variant == 5) {
        cudaGraphConditionalHandle h;
        CK(cudaGraphConditionalHandleCreate(&h, g, 0, 0));
        int value = variant == 5;
        void* set_args[] = {&h, &value};
        dep(kernel_node(g, &last, 1, (void*)set_if, set_args, 1));
        cudaGraphNodeParams cp = {};
        cp.type = cudaGraphNodeTypeConditional;
        cp.conditional.handle = h;
        cp.conditional.type = cudaGraphCondTypeIf;
        cp.conditional.size = 1;
        CK(cudaGraphAddNode(&node, g, &last, nullptr, 1, &cp));
        dep(node);
        void* add_args[] = {&x};
        kernel_node(cp.conditional.phGraph_out[0], nullptr, 0, (void*)add_one, add_args, 32);
    } else if (variant == 2) {
        void* add_args[] = {&x};
        dep(kernel_node(g, &last, 1, (void*)add_one, add_args, 32));
    } else {
        cudaGraphConditionalHandle h;
        CK(cudaGraphConditionalHandleCreate(&h, g, 1, cudaGraphCondAssignDefault));
        cudaGraphNodeParams cp = {};
        cp.type = cudaGraphNodeTypeConditional;
        cp.conditional.handle = h;
        cp.conditional.type = cudaGraphCondTypeWhile;
        cp.conditional.size = 1;
        CK(cudaGraphAddNode(&node, g, &last, nullptr, 1, &cp));
        dep(node);
        cudaGraph_t body = cp.conditional.phGraph_out[0];
        void* add_args[] = {&x};
        cudaGraphNode_t a = kernel_node(body, nullptr, 0, (void*)add_one, add_args, 32);
        if (variant == 8) {
            // x[32..64) <- x[0..32) inside the body: a device-to-device memcpy node.
            cudaGraphNode_t copy;
            CK(cudaGraphAddMemcpyNode1D(&copy, body, &a, 1, x + 32, x, 32 * sizeof(float),
                                        cudaMemcpyDeviceToDevice));
            a = copy;
        }
        if (variant == 9) {
            static CUfunction repeat = nullptr;
            if (!repeat) {
                CUmodule m;
                if (cuModuleLoad(&m, "runtime/src/control/control.ptx") != CUDA_SUCCESS ||
                    cuModuleGetFunction(&repeat, m, "kgraph_loop_repeat") != CUDA_SUCCESS) {
                    printf("variant 9: cannot load runtime/src/control/control.ptx\n");
                    return 1;
                }
            }
            unsigned limit = n;
            void* args[] = {&h, &counter, &limit};
            CUDA_KERNEL_NODE_PARAMS kp = {};
            kp.func = repeat;
            kp.gridDimX = kp.gridDimY = kp.gridDimZ = 1;
            kp.blockDimX = kp.blockDimY = kp.blockDimZ = 1;
            kp.kernelParams = args;
            CUgraphNode k;
            if (cuGraphAddKernelNode(&k, body, &a, 1, &kp) != CUDA_SUCCESS) {
                printf("variant 9: cuGraphAddKernelNode failed\n");
                return 1;
            }
        } else {
            void* cd_args[] = {&h, &counter, (void*)&n};
            kernel_node(body, &a, 1, (void*)count_down, cd_args, 1);
        }
    }
    if (variant == 1 || variant == 2) CK(event(2));
    cudaGraphExec_t exec;
    CK(cudaGraphInstantiate(&exec, g, 0));
    for (int rep = 0; rep < 3; ++rep) {
        CK(cudaGraphLaunch(exec, s));
        if (eager_tail) add_one<<<1, 32, 0, s>>>(x);
        if (timed_companion) {
            CK(cudaStreamSynchronize(s));
            CK(cudaEventRecord(t0, s));
            CK(cudaGraphLaunch(companion, s));
            CK(cudaEventRecord(t1, s));
            CK(cudaEventSynchronize(t1));
            float ms;
            CK(cudaEventElapsedTime(&ms, t0, t1));
        }
    }
    CK(cudaStreamSynchronize(s));
    float h[32];
    CK(cudaMemcpy(h, x, sizeof h, cudaMemcpyDeviceToHost));
    const float want = (variant == 2 || variant == 5 ? 1.f : variant == 4 ? 0.f : (float)n) +
                       (eager_tail ? 1.f : 0.f);
    bool ok = true;
    for (float v : h) ok &= v == want;
    if (eager_tail) variant += 2;
    if (timed_companion) variant = 10;
    printf("variant %d: replayed 3 times, x = %g (want %g): %s\n", variant, h[0], want, ok ? "ok" : "WRONG");
    CK(cudaGraphExecDestroy(exec));
    CK(cudaGraphDestroy(g));
    for (auto& e : ev) CK(cudaEventDestroy(e));
    return ok ? 0 : 1;
}

int main(int argc, char** argv) {
    int variant = -1;
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    int* counter;
    float* x;
    CK(cudaMalloc(&counter, sizeof(int)));
    CK(cudaMalloc(&x, 64 * sizeof(float)));
    int failed = 0;
    const int only = argc > 1 ? atoi(argv[1]) : -1;
    const int reps = argc > 2 ? atoi(argv[2]) : 1;  // each variant's graph built and replayed anew
    for (int rep = 0; rep < reps; ++rep)
        for (int v = 0; v < 11; ++v)
            if (only < 0 || only == v) failed += run(v, s, counter, x);
    printf("%s\n", failed ? "probe: FAILED" : "probe: all variants ok");
    return failed != 0;
}
