// Probe: where the resident protocol's round trip (an empty body: 2.9 us p50 with 1 input and 1
// output word, resident_latency.cu's e1) goes above the anchor's persistent ping-pong (1 thread,
// a 4-byte volatile doorbell, 1.6-1.8 us p50). One binary, one variant per run, each adding one
// thing of kg_resident_loop's to the anchor's loop:
//   anchor  1 thread, 4-byte volatile doorbell, 4-byte done word, __threadfence_system
//   pair1   1 thread, one (data | seq << 32) pair in, one out (relaxed.sys 8-byte accesses)
//   pair1f  pair1 with __threadfence_system() after the output's store
//   loop[+block][+stop|+adj][+timer][+done][+fence]  warp 0 polls (lane 0 loads), __all_sync,
//           one pair out from thread 0, with the flags of `looped` below (all of them but +adj
//           and +fence: the loop's empty step as shipped)
// Build: nvcc -O3 -arch=sm_90 -o protocol_floor scripts/probes/protocol_floor.cu
// Run:   ./protocol_floor VARIANT [steps]
#include <cuda_runtime.h>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

// The loop's own accessors (relaxed system-scope 8- and 4-byte loads and stores, globaltimer).
#include "../../kgraph-record/src/cuda/kg_resident.cuh"

typedef KgResidentPair Pair;

__global__ void anchor(volatile unsigned* in, volatile unsigned* out, int n) {
    for (int k = 1; k <= n; k++) {
        while (*in != (unsigned)k) {
        }
        *out = k;
        __threadfence_system();
    }
}

// pair1 (fence = false) and pair1f (fence = true).
__global__ void pair1(const Pair* in, Pair* out, int n, bool fence) {
    for (unsigned k = 1; k <= (unsigned)n; k++) {
        Pair v;
        do v = kg_load_relaxed_sys64(in);
        while ((unsigned)(v >> 32) != k);
        kg_store_relaxed_sys64(out, (Pair)(unsigned)v | ((Pair)k << 32));
        if (fence) __threadfence_system();
    }
}

// The looped variants: warp 0 polls (lane 0 loads), __all_sync, tid 0 answers, plus the flags.
enum : unsigned {
    F_BLOCK = 1,   // a 1024-thread block with the loop's two __syncthreads (else 32 threads)
    F_STOP = 2,    // the stop word (bell word 1, another line) loaded beside the input
    F_ADJ = 4,     // ... from the input's own line instead (the word after its pair)
    F_TIMER = 8,   // the idle check (globaltimer) per poll
    F_DONE = 16,   // the done word written after the output
    F_FENCE = 32,  // __threadfence_system() after the output's stores
};
__global__ void looped(const Pair* in, Pair* out, unsigned* bell, int n, unsigned flags) {
    __shared__ unsigned word, seq_s;
    const unsigned tid = threadIdx.x, lane = tid & 31u;
    const unsigned long long since = kg_globaltimer();
    const unsigned* stop_at = flags & F_ADJ ? (const unsigned*)(in + 1) : bell + 1;
    for (unsigned k = 1; k <= (unsigned)n; k++) {
        if (tid < 32u) {
            for (;;) {
                const Pair v = lane == 0u ? kg_load_relaxed_sys64(in) : ((Pair)k << 32);
                const unsigned stop = (flags & (F_STOP | F_ADJ)) && lane == 0u ? kg_load_relaxed_sys(stop_at) : 0u;
                const bool ok = (unsigned)(v >> 32) == k;
                if (__all_sync(0xffffffffu, ok)) {
                    if (lane == 0u) word = (unsigned)v;
                    break;
                }
                if (__shfl_sync(0xffffffffu, stop, 0) != 0u) return;
                if (flags & F_TIMER) {
                    const unsigned idle = kg_globaltimer() - since > 500000000000ull ? 1u : 0u;
                    if (__shfl_sync(0xffffffffu, idle, 0) != 0u) return;
                }
            }
            if (tid == 0) seq_s = k;
        }
        if (flags & F_BLOCK) __syncthreads();
        if (flags & F_BLOCK) __syncthreads();
        if (tid == 0) {
            kg_store_relaxed_sys64(out, (Pair)word | ((Pair)k << 32));
            if (flags & F_DONE) kg_store_relaxed_sys(bell + 16, seq_s);
            if (flags & F_FENCE) __threadfence_system();
        }
    }
}

int main(int argc, char** argv) {
    const char* v = argc > 1 ? argv[1] : "anchor";
    const int steps = argc > 2 ? atoi(argv[2]) : 200000;
    cudaSetDeviceFlags(cudaDeviceMapHost);
    Pair *in, *out, *d_in, *d_out;
    unsigned *bell, *d_bell;
    cudaHostAlloc(&in, 64, cudaHostAllocMapped);
    cudaHostAlloc(&out, 64, cudaHostAllocMapped);
    cudaHostAlloc(&bell, 128, cudaHostAllocMapped);
    memset(in, 0, 64);
    memset(out, 0, 64);
    memset(bell, 0, 128);
    cudaHostGetDevicePointer((void**)&d_in, in, 0);
    cudaHostGetDevicePointer((void**)&d_out, out, 0);
    cudaHostGetDevicePointer((void**)&d_bell, bell, 0);
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    const bool a = !strcmp(v, "anchor");
    unsigned* in32 = (unsigned*)in;
    unsigned* out32 = (unsigned*)out;
    if (a)
        anchor<<<1, 1, 0, s>>>((volatile unsigned*)d_in, (volatile unsigned*)d_out, steps);
    else if (!strcmp(v, "pair1"))
        pair1<<<1, 1, 0, s>>>(d_in, d_out, steps, false);
    else if (!strcmp(v, "pair1f"))
        pair1<<<1, 1, 0, s>>>(d_in, d_out, steps, true);
    else if (!strncmp(v, "loop", 4)) {
        // loop[+block][+stop|+adj][+timer][+done][+fence]
        unsigned f = 0;
        f |= strstr(v, "+block") ? F_BLOCK : 0u;
        f |= strstr(v, "+stop") ? F_STOP : 0u;
        f |= strstr(v, "+adj") ? F_ADJ : 0u;
        f |= strstr(v, "+timer") ? F_TIMER : 0u;
        f |= strstr(v, "+done") ? F_DONE : 0u;
        f |= strstr(v, "+fence") ? F_FENCE : 0u;
        looped<<<1, f & F_BLOCK ? 1024 : 32, 0, s>>>(d_in, d_out, d_bell, steps, f);
    }
    else {
        fprintf(stderr, "unknown variant %s\n", v);
        return 2;
    }
    std::vector<double> t;
    t.reserve(steps);
    for (unsigned k = 1; k <= (unsigned)steps; ++k) {
        auto t0 = std::chrono::steady_clock::now();
        if (a) {
            reinterpret_cast<std::atomic<unsigned>*>(in32)->store(k, std::memory_order_relaxed);
            while (reinterpret_cast<std::atomic<unsigned>*>(out32)->load(std::memory_order_acquire) != k) {
            }
        } else {
            reinterpret_cast<std::atomic<Pair>*>(in)->store((Pair)7u | ((Pair)k << 32), std::memory_order_relaxed);
            while ((unsigned)(reinterpret_cast<std::atomic<Pair>*>(out)->load(std::memory_order_acquire) >> 32) != k) {
            }
        }
        t.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    }
    cudaStreamSynchronize(s);
    std::vector<double> u(t.begin() + steps / 10, t.end());
    std::sort(u.begin(), u.end());
    auto pct = [&](double p) { return u[(size_t)(p / 100.0 * (u.size() - 1))]; };
    printf("%-6s p50 %.2f  p99 %.2f  p99.9 %.2f us  (%s)\n", v, pct(50), pct(99), pct(99.9),
           cudaGetErrorString(cudaGetLastError()));
    return 0;
}
