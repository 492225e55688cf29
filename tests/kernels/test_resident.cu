// A resident loop body for the GPU suite's Resident tests (tests/gpu/resident.rs): each step
// echoes the input's `value`, counts the steps in device memory, and first spins for the
// input's `spin_ns` nanoseconds (globaltimer), so a test can make a step outlast a wait's
// timeout without a body that never returns.
#include "../../kgraph-record/src/cuda/kg_resident.cuh"

struct SpinStep : KgResidentStateless {
    struct In {
        unsigned value;
        unsigned spin_ns;
    };
    struct Out {
        unsigned echo;
        unsigned steps;
    };
    struct Params {
        unsigned* count;
    };
    __device__ static void run(const In& in, Out& out, const Params& p, Local&) {
        if (threadIdx.x != 0) return;
        const unsigned long long start = kg_globaltimer();
        while (kg_globaltimer() - start < in.spin_ns) {
        }
        const unsigned steps = *p.count + 1u;
        *p.count = steps;
        out.echo = in.value;
        out.steps = steps;
    }
};

extern "C" __global__ void test_resident_spin(KgResidentBell* bell, const KgResidentPair* in, KgResidentPair* out,
                                              SpinStep::Params params) {
    kg_resident_loop<SpinStep>(bell, in, out, params);
}
