// perception_resident: Graph A fused (perception_fused.cu) as a resident kernel. One block of
// 1024 threads stays on the GPU and runs kg_resident_loop (runtime/src/resident/kg_resident.cuh):
// it waits for the host's doorbell in mapped pinned memory, runs perception_fused_row on the
// snapshot and dt the host submitted (copied into shared memory by the loop), writes probs and
// y into mapped host memory, publishes the step's sequence number, and waits again. No launch
// per step; the same device function as the fused graph's kernel, so the same bits.
//
// Layout: the step's input is PerceptionIn { snap [40], dt } (kgraph_model::resident's
// `PerceptionIn`), its output PerceptionOut { probs [5], y [8] }; the parameters are the fused
// kernel's device buffers (h updated in place, carried from step to step) at batch = 1.
// Launch: one block of 1024 threads (kgraph::resident::Resident launches it).
#include "perception_fused.cuh"
#include "../runtime/src/resident/kg_resident.cuh"

struct PerceptionStep {
    struct In {
        float snap[SNAP_LEN];
        float dt;
    };
    struct Out {
        float probs[N_HORIZONS];
        float y[N_PROJ];
    };
    struct Params {
        float* h;
        const float *w_g, *b_g, *w_t, *b_t, *w_h, *b_h, *p, *c;
        int n_hid;
    };
    __device__ static void run(const In& in, Out* out, const Params& q) {
        perception_fused_row(in.snap, &in.dt, q.h, q.w_g, q.b_g, q.w_t, q.b_t, q.w_h, q.b_h, q.p,
                             q.c, 1, q.n_hid, out->probs, out->y);
    }
};

static_assert(sizeof(PerceptionStep::In) == 41 * 4, "PerceptionIn: 40 + 1 floats");
static_assert(sizeof(PerceptionStep::Out) == 13 * 4, "PerceptionOut: 5 + 8 floats");
static_assert(sizeof(PerceptionStep::Params) == 80, "PerceptionParams: 9 pointers, an int, padding");

extern "C" __global__ void __launch_bounds__(1024)
    perception_resident(KgResidentBell* bell, const PerceptionStep::In* in, PerceptionStep::Out* out,
                        PerceptionStep::Params params) {
    kg_resident_loop<PerceptionStep>(bell, in, out, params);
}
