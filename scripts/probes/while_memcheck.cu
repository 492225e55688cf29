// Probe: does compute-sanitizer memcheck misreport a correct program whose WHILE-node body
// kernel reads a stream-ordered allocation (cudaMallocAsync) made after earlier allocations of
// the same sizes were freed (cudaFreeAsync) on the same stream? The GPU suite's planned loop
// tests (tests/gpu/memory_plan.rs, `repeat` specs) pass bit for bit, and pass memcheck alone,
// but memcheck reports "Invalid __global__ read ... out of bounds and inside the nearest
// allocation" in the loop body's first kernel when they run after other tests in one process.
// This program does the same with no kgraph code: per round, allocate (stream-ordered) some
// padding, a 4-byte loop counter and an 8-byte state, build a graph with one WHILE node whose
// body kernel reads and advances the state (as ppo_minibatch_begin reads counters[0..2]),
// launch it, check the result, destroy the graph and free everything (stream-ordered). It is
// correct by construction, so any memcheck report on it is the tool's.
// A second argument `newstream` gives every round a stream of its own, destroyed at the end of
// the round after its frees (as each GPU test makes a Device, and so a stream, of its own): the
// pool then hands a round memory freed on a stream that no longer exists.
// Build and run (GPU machine):
//   nvcc -O3 -arch=sm_90 -o wm scripts/probes/while_memcheck.cu && ./wm && compute-sanitizer ./wm
//   compute-sanitizer ./wm 40 newstream
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CK(x)                                                                          \
    do {                                                                               \
        cudaError_t e_ = (x);                                                          \
        if (e_ != cudaSuccess) {                                                       \
            fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

// The body: state = [k, t]: k += 1, t += 1 (both read, as the PPO loop's first kernel reads its
// counters), then the loop's own counter decides whether another iteration runs.
__global__ void body(cudaGraphConditionalHandle handle, int* state, unsigned* counter, unsigned limit) {
    const int k = state[0];
    const int t = state[1];
    state[0] = k + 1;
    state[1] = t + 1;
    const unsigned done = *counter + 1u;
    const bool more = done < limit;
    *counter = more ? done : 0u;
    cudaGraphSetConditional(handle, more ? 1u : 0u);
}

int main(int argc, char** argv) {
    const int rounds = argc > 1 ? atoi(argv[1]) : 40;
    const bool new_stream = argc > 2 && strcmp(argv[2], "newstream") == 0;
    const unsigned limit = 32;
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    int bad = 0;
    for (int r = 0; r < rounds; ++r) {
        if (new_stream && r > 0) {
            CK(cudaStreamSynchronize(s));
            CK(cudaStreamDestroy(s));
            CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
        }
        // Padding of changing sizes, so the pool hands out shifted addresses each round.
        std::vector<void*> pad;
        for (int i = 0; i < (r % 5) + 1; ++i) {
            void* p;
            CK(cudaMallocAsync(&p, 4 * (1 + (r * 7 + i) % 13), s));
            pad.push_back(p);
        }
        unsigned* counter;
        int* state;
        if (r % 2 == 0) {
            CK(cudaMallocAsync((void**)&counter, 4, s));
            CK(cudaMallocAsync((void**)&state, 8, s));
        } else {
            CK(cudaMallocAsync((void**)&state, 8, s));
            CK(cudaMallocAsync((void**)&counter, 4, s));
        }
        CK(cudaMemsetAsync(counter, 0, 4, s));
        CK(cudaMemsetAsync(state, 0, 8, s));
        cudaGraph_t g;
        CK(cudaGraphCreate(&g, 0));
        cudaGraphConditionalHandle h;
        CK(cudaGraphConditionalHandleCreate(&h, g, 1, cudaGraphCondAssignDefault));
        cudaGraphNodeParams cp = {};
        cp.type = cudaGraphNodeTypeConditional;
        cp.conditional.handle = h;
        cp.conditional.type = cudaGraphCondTypeWhile;
        cp.conditional.size = 1;
        cudaGraphNode_t cn;
        CK(cudaGraphAddNode(&cn, g, nullptr, nullptr, 0, &cp));
        cudaGraph_t b = cp.conditional.phGraph_out[0];
        void* args[] = {&h, &state, &counter, (void*)&limit};
        cudaKernelNodeParams kp = {};
        kp.func = (void*)body;
        kp.gridDim = dim3(1);
        kp.blockDim = dim3(1);
        kp.kernelParams = args;
        cudaGraphNode_t kn;
        CK(cudaGraphAddKernelNode(&kn, b, nullptr, 0, &kp));
        cudaGraphExec_t ge;
        CK(cudaGraphInstantiate(&ge, g, 0));
        CK(cudaGraphLaunch(ge, s));
        int host[2];
        CK(cudaMemcpyAsync(host, state, 8, cudaMemcpyDeviceToHost, s));
        CK(cudaStreamSynchronize(s));
        if (host[0] != (int)limit || host[1] != (int)limit) ++bad;
        CK(cudaGraphExecDestroy(ge));
        CK(cudaGraphDestroy(g));
        CK(cudaFreeAsync(counter, s));
        CK(cudaFreeAsync(state, s));
        for (void* p : pad) CK(cudaFreeAsync(p, s));
    }
    CK(cudaStreamSynchronize(s));
    printf("while_memcheck_rounds %d\nwhile_memcheck_wrong_results %d\n", rounds, bad);
    return bad != 0;
}
