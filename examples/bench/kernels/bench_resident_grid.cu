// The grid-wide resident loop's own cost (examples/bench/resident_grid.rs): a step that does
// nothing but `syncs` grid barriers beyond the loop's two, then block 0 answers value + blocks.
// Timed on grids of one block, a few and one per multiprocessor, it gives the round trip of the
// loop itself and the price of one grid barrier on this GPU.
#include "../../../kgraph-record/src/cuda/kg_resident_grid.cuh"

struct BarrierStep : KgResidentStateless {
    struct In {
        unsigned value;
        unsigned syncs;
    };
    struct Out {
        unsigned answer;
    };
    struct Params {
        unsigned unused;
    };
    __device__ static void run(const In& in, Out& out, const Params&, Local&, const KgResidentGrid& g) {
        for (unsigned s = 0; s < in.syncs; ++s) g.sync();
        if (g.block == 0 && threadIdx.x == 0) out.answer = in.value + g.blocks;
    }
};

extern "C" __global__ void __launch_bounds__(256)
    bench_resident_grid(KgResidentBell* bell, const KgResidentPair* in, KgResidentPair* out, unsigned* scratch,
                        BarrierStep::Params params) {
    kg_resident_grid_loop<BarrierStep>(bell, in, out, scratch, params);
}

// The same step in the one-block loop (kg_resident_loop, launched plainly): beside the grid
// loop on one block, the difference is the grid loop's own cost (its scratch hand-offs and the
// cooperative launch), not the bus's.
struct BlockBarrierStep : KgResidentStateless {
    typedef BarrierStep::In In;
    typedef BarrierStep::Out Out;
    typedef BarrierStep::Params Params;
    __device__ static void run(const In& in, Out& out, const Params&, Local&) {
        for (unsigned s = 0; s < in.syncs; ++s) __syncthreads();
        if (threadIdx.x == 0) out.answer = in.value + 1u;
    }
};

extern "C" __global__ void __launch_bounds__(256)
    bench_resident_block(KgResidentBell* bell, const KgResidentPair* in, KgResidentPair* out,
                         BlockBarrierStep::Params params) {
    kg_resident_loop<BlockBarrierStep>(bell, in, out, params);
}
