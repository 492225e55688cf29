// kgraph's grid-wide resident loop: kg_resident_loop (kg_resident.cuh) over a whole cooperative
// grid, for steps too large for one block: several kernels' work run one after another inside
// one step, separated by grid-wide barriers. The host side is `kgraph::resident::Resident::new_grid`,
// which launches it cooperatively with the grid sized to co-residency (every block resident at
// once, or the launch is refused: a grid barrier never waits for a block that cannot start).
//
//   #include "kg_resident_grid.cuh"         // kgraph::resident::GRID_HEADER holds the same text
//   struct MyStep : KgResidentStateless {
//     struct In { float dt; };  struct Out { float loss; };
//     struct Params { float* x; float* partial; unsigned n; };
//     __device__ static void run(const In& in, Out& out, const Params& p, Local&, const KgResidentGrid& g) {
//       g.for_each_block((p.n + 255) / 256, [&](unsigned b) { advance_block(b, p.x, p.n, in.dt); });
//       g.sync();                                   // every block's writes visible to every block
//       g.for_each_block(g.blocks, [&](unsigned b) { partial_sum_block(b, p.x, p.n, p.partial); });
//       g.sync();
//       if (g.block == 0) finish(p.partial, g.blocks, &out.loss);   // any block may write `out`
//     }
//   };
//   extern "C" __global__ void __launch_bounds__(256)
//   my_grid_resident(KgResidentBell* bell, const KgResidentPair* in, KgResidentPair* out, unsigned* scratch,
//                    MyStep::Params p) {
//     kg_resident_grid_loop<MyStep>(bell, in, out, scratch, p);
//   }
//
// The protocol is kg_resident_loop's (pairs carrying the step's sequence number), run by block 0;
// per step:
//   block 0, warp 0: polls the input pairs (kg_resident_poll), then puts the sequence number
//                    (0: exit) and the input's words into `scratch` (device memory);
//   grid barrier;    every block reads the sequence number (0: every block returns) and copies
//                    the input's words into its shared memory;
//   every block:     Body::run(in, out, params, local, grid), `out` in `scratch`;
//   grid barrier;    block 0 sends `out`'s words as pairs (kg_resident_send), then polls again.
// Block 0 writes `scratch` only between the step's second barrier and the next step's first, and
// the other blocks read it only between the first and the second, so no step reads a word the next
// one is writing.
// Two grid barriers rather than a one-way publication word (block 0 releases (n, seq), the other
// blocks spin on it) and an arrival count (block 0 waits for n * blocks): that form measured no
// better on the H200 (an empty step's round trip 4.5 / 5.4 / 5.4 us on 1 / 8 / 132 blocks; the
// barriers 3.9 / 4.0 / 4.0 in one call and 4.4 / 5.1 / 5.2 in another; the bench's
// `resident_grid` section), so the simpler form stays.
//
// The body contract is kg_resident_loop's, with these differences:
//   - Every block of the grid calls Body::run, the same number of times; every thread of a block
//     the same number of times. The grid has `grid.blocks` blocks (at least 1, at most what is
//     co-resident; the host decides, so never assume a count): `grid.for_each_block(n, f)` runs a
//     kernel written for n blocks as a device function of its block index on any grid.
//   - `grid.sync()` is a grid-wide barrier: every thread of every block must call it, the same
//     number of times per step (as `cooperative_groups::this_grid().sync()`, which it is; on a
//     grid of one block, `__syncthreads()`). Writes
//     to device memory before it are visible to every block after it; without it, one block's
//     writes are not ordered before another block's reads within the step.
//   - `in` is this block's shared-memory copy of the step's input; `out` is in device memory,
//     shared by the grid: write every element every step (any block may write any element; two
//     writes of one element in one step give either value). Its words are sent after the call.
//   - Between steps the loop's barriers order every write of one step before every read of the
//     next, in every block.
#pragma once
// A guard as well: `#pragma once` goes by file, and a generated resident step includes a copy of
// this header beside kernel files that may include the original.
#ifndef KGRAPH_KG_RESIDENT_GRID_CUH
#define KGRAPH_KG_RESIDENT_GRID_CUH
#include <cooperative_groups.h>

#include "kg_resident.cuh"

// What a grid-wide body knows of the grid.
struct KgResidentGrid {
    // This block's index (linear over the grid) and the grid's blocks.
    unsigned block;
    unsigned blocks;
    // The step's input in device memory (the words `in` is this block's shared-memory copy of),
    // valid during the step: for a body that passes it on as a global pointer (a generated
    // step does, so its device functions see the addresses their kernels did).
    const void* input;
    // A grid-wide barrier (every thread of every block). A grid of one block needs only the
    // block's barrier, which orders its threads' global memory accesses too.
    __device__ __forceinline__ void sync() const {
        if (blocks == 1u) __syncthreads();
        else cooperative_groups::this_grid().sync();
    }
    // f(v) for the virtual blocks v of a grid of n: this block takes block, block + blocks, ...
    // Every thread of a block makes the same calls, so f may use __syncthreads.
    template <class F>
    __device__ __forceinline__ void for_each_block(unsigned n, F&& f) const {
        for (unsigned v = block; v < n; v += blocks) f(v);
    }
    // This thread's index over the grid and the grid's threads (for grid-stride loops).
    __device__ __forceinline__ unsigned long long thread_rank() const {
        const unsigned threads = blockDim.x * blockDim.y * blockDim.z;
        return (unsigned long long)block * threads + threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    }
    __device__ __forceinline__ unsigned long long num_threads() const {
        return (unsigned long long)blocks * blockDim.x * blockDim.y * blockDim.z;
    }
    // `bytes` bytes from `src` to `dst` (not overlapping), spread over the grid: a spec's memcpy
    // node in a generated resident step. Words where both ends and the length allow.
    __device__ void copy(void* dst, const void* src, unsigned long long bytes) const {
        if ((((unsigned long long)dst | (unsigned long long)src | bytes) & 3ull) == 0ull) {
            for (unsigned long long i = thread_rank(); i < bytes / 4u; i += num_threads())
                static_cast<unsigned*>(dst)[i] = static_cast<const unsigned*>(src)[i];
        } else {
            for (unsigned long long i = thread_rank(); i < bytes; i += num_threads())
                static_cast<unsigned char*>(dst)[i] = static_cast<const unsigned char*>(src)[i];
        }
    }
    // `count` elements of `elem_size` bytes (1, 2 or 4) at `dst` set to `pattern`'s low bytes:
    // a spec's memset node.
    __device__ void fill(void* dst, unsigned pattern, unsigned elem_size, unsigned long long count) const {
        for (unsigned long long i = thread_rank(); i < count; i += num_threads()) {
            if (elem_size == 4u) static_cast<unsigned*>(dst)[i] = pattern;
            else if (elem_size == 2u) static_cast<unsigned short*>(dst)[i] = (unsigned short)pattern;
            else static_cast<unsigned char*>(dst)[i] = (unsigned char)pattern;
        }
    }
};

// Converts to any pointer type: what a generated resident step passes for a buffer, so the call
// takes the device function's own parameter types. `#[kernel]` checked the kernel's types and the
// device function's arity, not its types: that they are the kernel's is the `device_fn` promise.
struct KgAnyPtr {
    void* p;
    template <class T>
    __device__ __forceinline__ operator T*() const { return static_cast<T*>(p); }
};

// Where the step's sequence number, input words and output words sit in `scratch` (u32 words);
// the host allocates KG_GRID_SCRATCH_WORDS(in, out) of them (runtime/src/resident/grid.rs computes
// the same).
#define KG_GRID_IN_OFFSET 4u
#define KG_GRID_OUT_OFFSET(in_words) (KG_GRID_IN_OFFSET + (((in_words) + 3u) / 4u) * 4u)
#define KG_GRID_SCRATCH_WORDS(in_words, out_words) (KG_GRID_OUT_OFFSET(in_words) + (out_words))

template <class Body>
__device__ void kg_resident_grid_loop(KgResidentBell* bell, const KgResidentPair* in, KgResidentPair* out,
                                      unsigned* scratch, const typename Body::Params& params) {
    typedef typename Body::In In;
    typedef typename Body::Out Out;
    constexpr unsigned IN_WORDS = KgResidentWords<Body>::IN;
    constexpr unsigned OUT_WORDS = KgResidentWords<Body>::OUT;
    __shared__ __align__(16) unsigned in_words[IN_WORDS];
    cooperative_groups::grid_group grid = cooperative_groups::this_grid();
    const KgResidentGrid g = {blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z),
                              gridDim.x * gridDim.y * gridDim.z, scratch + KG_GRID_IN_OFFSET};
    const unsigned threads = blockDim.x * blockDim.y * blockDim.z;
    const unsigned tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    // Whole warps (warp 0 polls with full-warp votes), launched cooperatively (else a grid
    // barrier could wait for a block that never starts): every block sees the same answer.
    if (threads % 32u != 0u || !grid.is_valid()) {
        if (tid == 0 && g.block == 0) kg_store_release_sys(&bell->words[KG_BELL_EXIT], KG_RESIDENT_EXIT_SHAPE);
        return;
    }
    unsigned* const seq_word = scratch;
    unsigned* const in_scratch = scratch + KG_GRID_IN_OFFSET;
    unsigned* const out_scratch = scratch + KG_GRID_OUT_OFFSET(IN_WORDS);
    typename Body::Local local = Body::load(params);
    unsigned last = 0u;
    unsigned long long idle_ns = 0ull;
    const bool poller = g.block == 0 && tid < 32u;
    if (poller) kg_resident_begin(bell, tid, &last, &idle_ns);
    for (;;) {
        if (poller) {
            const unsigned seq = kg_resident_poll<IN_WORDS>(bell, in, last, idle_ns, tid, in_words);
            for (unsigned k = tid; k < IN_WORDS; k += 32u) in_scratch[k] = in_words[k];
            if (tid == 0) *seq_word = seq;
            last = seq;
        }
        g.sync();
        // Past the L1 (__ldcg): block 0 rewrote these words since this block last read them.
        const unsigned seq = __ldcg(seq_word);
        if (seq == 0u) return;
        if (g.block != 0)
            for (unsigned k = tid; k < IN_WORDS; k += threads) in_words[k] = __ldcg(in_scratch + k);
        __syncthreads();
        Body::run(*reinterpret_cast<const In*>(in_words), *reinterpret_cast<Out*>(out_scratch), params, local, g);
        g.sync();
        if (g.block == 0) kg_resident_send<OUT_WORDS>(bell, out, out_scratch, seq, tid, threads);
    }
}

#endif  // KGRAPH_KG_RESIDENT_GRID_CUH
