// A grid-wide resident body for the GPU suite (tests/gpu/resident_grid.rs): three kernels
// written as device functions of their block index, run on the resident grid one after another
// with grid barriers between them. Per step: every element of the state `x` gains the input's
// `delta` (n elements over ceil(n / threads) virtual blocks, rotated by the delta), each of `parts` blocks reduces a
// strided share of `x` to a sum, a minimum and a maximum, and block 0 combines the parts into
// the output. A missing barrier, a skipped or repeated virtual block, or a block that read an
// old input shows in the output: after deltas d1..dk every element is d1 + ... + dk, so the
// minimum equals the maximum and the sum is n times it (mod 2^32).
#include "../../kgraph-record/src/cuda/kg_resident_grid.cuh"

#define GRID_TEST_MAX_WARPS 32

// Node 1: thread tid of virtual block b adds `delta` to element (b * threads + tid + rotate) % n:
// every element once per step, but from a block that changes with the delta, so a step reads
// what other blocks wrote in the step before.
__device__ void grid_test_add(unsigned b, unsigned* x, unsigned n, unsigned delta, unsigned threads, unsigned tid) {
    const unsigned i = b * threads + tid;
    const unsigned rotate = (unsigned)(((unsigned long long)delta * 7919u) % n);
    if (i < n) x[(i + rotate) % n] += delta;
}

// Node 2: block b of `parts` reduces elements b * threads + tid, stepping by parts * threads,
// to partial[3b .. 3b + 3) = (sum, min, max).
__device__ void grid_test_partial(unsigned b, unsigned parts, const unsigned* x, unsigned n, unsigned* partial,
                                  unsigned threads, unsigned tid) {
    __shared__ unsigned s_sum[GRID_TEST_MAX_WARPS], s_min[GRID_TEST_MAX_WARPS], s_max[GRID_TEST_MAX_WARPS];
    unsigned sum = 0u, lo = 0xffffffffu, hi = 0u;
    for (unsigned i = b * threads + tid; i < n; i += parts * threads) {
        const unsigned v = x[i];
        sum += v;
        lo = min(lo, v);
        hi = max(hi, v);
    }
    for (unsigned off = 16; off > 0; off >>= 1) {
        sum += __shfl_xor_sync(KG_WARP_ALL, sum, off);
        lo = min(lo, __shfl_xor_sync(KG_WARP_ALL, lo, off));
        hi = max(hi, __shfl_xor_sync(KG_WARP_ALL, hi, off));
    }
    const unsigned warp = tid / 32u, lane = tid % 32u, warps = threads / 32u;
    if (lane == 0) {
        s_sum[warp] = sum;
        s_min[warp] = lo;
        s_max[warp] = hi;
    }
    __syncthreads();
    if (tid == 0) {
        for (unsigned w = 1; w < warps; ++w) {
            sum += s_sum[w];
            lo = min(lo, s_min[w]);
            hi = max(hi, s_max[w]);
        }
        partial[3 * b] = sum;
        partial[3 * b + 1] = lo;
        partial[3 * b + 2] = hi;
    }
    // The shared words are read again by the next virtual block of this block.
    __syncthreads();
}

struct GridStep : KgResidentStateless {
    struct In {
        unsigned delta;
    };
    struct Out {
        unsigned sum;
        unsigned min;
        unsigned max;
        unsigned blocks;
        unsigned parts;
        unsigned steps;
    };
    struct Params {
        unsigned* x;
        unsigned* partial;  // 3 words per part
        unsigned* steps;
        unsigned n;
        unsigned max_parts;
    };
    __device__ static void run(const In& in, Out& out, const Params& p, Local&, const KgResidentGrid& g) {
        const unsigned threads = blockDim.x * blockDim.y * blockDim.z;
        const unsigned tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
        g.for_each_block((p.n + threads - 1u) / threads,
                         [&](unsigned b) { grid_test_add(b, p.x, p.n, in.delta, threads, tid); });
        g.sync();
        const unsigned parts = min(g.blocks, p.max_parts);
        g.for_each_block(parts, [&](unsigned b) { grid_test_partial(b, parts, p.x, p.n, p.partial, threads, tid); });
        g.sync();
        if (g.block == 0 && tid == 0) {
            unsigned sum = 0u, lo = 0xffffffffu, hi = 0u;
            for (unsigned b = 0; b < parts; ++b) {
                sum += p.partial[3 * b];
                lo = min(lo, p.partial[3 * b + 1]);
                hi = max(hi, p.partial[3 * b + 2]);
            }
            const unsigned steps = *p.steps + 1u;
            *p.steps = steps;
            out.sum = sum;
            out.min = lo;
            out.max = hi;
            out.blocks = g.blocks;
            out.parts = parts;
            out.steps = steps;
        }
    }
};

extern "C" __global__ void __launch_bounds__(1024)
    test_resident_grid(KgResidentBell* bell, const KgResidentPair* in, KgResidentPair* out, unsigned* scratch,
                       GridStep::Params params) {
    kg_resident_grid_loop<GridStep>(bell, in, out, scratch, params);
}
