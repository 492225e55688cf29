// perception_resident: Graph A fused (perception_fused.cu) as a resident kernel. One block of
// 1024 threads stays on the GPU and runs kg_resident_loop (kgraph-record/src/cuda/kg_resident.cuh):
// it waits for the host's input in mapped pinned memory (pairs carrying the step's sequence
// number), runs perception_fused_row on the snapshot and dt (in shared memory), sends probs and
// y back as pairs, and waits again. No launch per step; the same device function as the fused
// graph's kernel, so the same bits. The weights live in registers and the state in shared
// memory between steps (loaded once per launch).
//
// Layout: the step's input is PerceptionIn { snap [40], dt } (kgraph_model::resident's
// `PerceptionIn`), its output PerceptionOut { probs [5], y [8] }; the parameters are the fused
// kernel's device buffers (h updated in place, carried from step to step) at batch = 1.
// Launch: one block of 1024 threads (kgraph::resident::Resident launches it).
#include "perception_fused.cuh"
#include "../kgraph-record/src/cuda/kg_resident.cuh"

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
    // The weights stay in registers for as long as the kernel runs, and the state in shared
    // memory from one step to the next (it is still written to `h` every step).
    typedef FusedCache Local;
    __device__ static Local load(const Params& q) {
        const int warp = (int)(threadIdx.x >> 5), lane = (int)(threadIdx.x & 31), warps = (int)(blockDim.x >> 5);
        Local l;
        l.preloaded = q.n_hid >= 1 && fused_preloads(q.n_hid, warps);
        l.h_in_shared = false;
        l.w = FusedWarpWeights{};
        if (l.preloaded)
            l.w = fused_load_weights(warp, lane, q.n_hid, q.w_g, q.b_g, q.w_t, q.b_t, q.w_h, q.b_h, q.p, q.c);
        return l;
    }
    __device__ static void run(const In& in, Out& out, const Params& q, Local& local) {
        perception_fused_row(in.snap, &in.dt, q.h, q.w_g, q.b_g, q.w_t, q.b_t, q.w_h, q.b_h, q.p,
                             q.c, 1, q.n_hid, out.probs, out.y, &local);
        local.h_in_shared = q.n_hid >= 1 && q.n_hid <= FUSED_MAX_HID;
    }
};

static_assert(sizeof(PerceptionStep::In) == 41 * 4, "PerceptionIn: 40 + 1 floats");
static_assert(sizeof(PerceptionStep::Out) == 13 * 4, "PerceptionOut: 5 + 8 floats");
static_assert(sizeof(PerceptionStep::Params) == 80, "PerceptionParams: 9 pointers, an int, padding");

extern "C" __global__ void __launch_bounds__(1024)
    perception_resident(KgResidentBell* bell, const KgResidentPair* in, KgResidentPair* out,
                        PerceptionStep::Params params) {
    kg_resident_loop<PerceptionStep>(bell, in, out, params);
}
