// Probe: where Graph A fused's round trip goes above the one-kernel zero-copy floor.
// The round trip of the fused latency step (B = 1, as PerceptionFused: one graph node, block
// 1024, snap/dt/probs/y mapped pinned, state and weights on the device), timed as the C++ anchor
// times it (write the inputs, graph launch, stream sync, read the outputs), in variants
// interleaved in rounds, with CUDA-event GPU times:
//   0: the kernel before its weights were preloaded (strided global loads after each level)
//   1: the same, stopped after level 1 (the features, the old state and dt loaded)
//   2: the same, stopped after level 2 (the CfC step)
//   3: the floor: read snap[0] and dt, write probs[0] (no compute)
//   4: kernels/perception_fused.cu as it is, with clock64 stamps per level (its KG_FUSED_STAMP hook)
//   5: variant 0 with the same stamps
// The stamps are thread 0's cycles from entry to each level, averaged over every replay.
// Build (repository root): nvcc -O3 -arch=sm_90 -Ikernels -diag-suppress 128,177,550 \
//                            -o fused_latency scripts/probes/fused_latency.cu
#include <cuda_runtime.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "cfc.cuh"
#include "snap_features.cuh"
__device__ unsigned long long ts_now[8];
#define KG_FUSED_STAMP(i)                                                                      \
    const long long kg_c##i = clock64();                                                        \
    if (threadIdx.x == 0) atomicAdd(&ts_now[i], i == 0 ? 1ull : (unsigned long long)(kg_c##i - kg_c0));
#include "perception_fused.cu"  // the kernel as it is now (weights preloaded), stamped

#define CK(x)                                                                          \
    do {                                                                               \
        cudaError_t e_ = (x);                                                          \
        if (e_ != cudaSuccess) {                                                       \
            fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

#define MAX_HID 1024
#define NV 6

// Stamps: thread 0's clock64 at each level, summed over every replay (slot 0 counts them).
__device__ unsigned long long ts[8];
#define STAMP(i)                                                                               \
    const long long kg_c##i = clock64();                                                        \
    if (V == 5 && threadIdx.x == 0)                                                            \
        atomicAdd(&ts[i], i == 0 ? 1ull : (unsigned long long)(kg_c##i - kg_c0));

template <int V>
__global__ void __launch_bounds__(1024)
    fused(const float* __restrict__ snap, const float* __restrict__ dt, float* __restrict__ h,
          const float* __restrict__ w_g, const float* __restrict__ b_g,
          const float* __restrict__ w_t, const float* __restrict__ b_t,
          const float* __restrict__ w_h, const float* __restrict__ b_h,
          const float* __restrict__ p, const float* __restrict__ c, int batch, int n_hid,
          float* __restrict__ probs, float* __restrict__ y) {
    kg_pdl_enter();
    STAMP(0)
    if (V == 3) {
        if (threadIdx.x == 0) probs[0] = snap[0] + dt[0];
        return;
    }
    __shared__ float feat[N_FEAT];
    __shared__ float h_old[MAX_HID];
    __shared__ float h_new[MAX_HID];
    __shared__ float dt_row;
    const int b = blockIdx.x;
    if (kg_not_whole_warps()) return;
    if (b >= batch || n_hid < 1 || n_hid > MAX_HID) return;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, warps = blockDim.x >> 5;
    const int helper0 = warps > 1 ? KG_WARP : 0;
    if (threadIdx.x == blockDim.x - 1) dt_row = dt[b];
    if (warp == 0) kg_snap_features_row(snap + b * SNAP_LEN, feat);
    STAMP(1)
    if ((int)threadIdx.x >= helper0)
        for (int k = threadIdx.x - helper0; k < n_hid; k += blockDim.x - helper0)
            h_old[k] = h[b * n_hid + k];
    __syncthreads();
    STAMP(2)
    if (V == 1) {
        if (threadIdx.x == 0) probs[0] = feat[44] + feat[0] + dt_row + h_old[0];
        return;
    }
    for (int j = warp; j < n_hid; j += warps) {
        float pg, pt;
        cfc_preacts(feat, h_old, w_g, w_t, 0, j, N_FEAT, n_hid, &pg, &pt);
        STAMP(3)
        if (lane == 0) h_new[j] = cfc_new_state(pg + b_g[j], pt + b_t[j], dt_row, h_old[j]);
    }
    STAMP(4)
    __syncthreads();
    STAMP(5)
    if (V == 2) {
        if (threadIdx.x == 0) probs[0] = h_new[0] + h_new[31];
        return;
    }
    for (int k = threadIdx.x; k < n_hid; k += blockDim.x) h[b * n_hid + k] = h_new[k];
    for (int o = warp; o < N_HORIZONS + N_PROJ; o += warps) {
        if (o < N_HORIZONS) {
            const float logit = kg_dot_warp(h_new, w_h + o * n_hid, n_hid) + b_h[o];
            if (lane == 0) probs[b * N_HORIZONS + o] = kg_sigmoid(logit);
        } else {
            const int q = o - N_HORIZONS;
            const float v = kg_dot_warp(h_new, p + q * n_hid, n_hid) + c[q];
            if (lane == 0) y[b * N_PROJ + q] = v;
        }
    }
    STAMP(6)
}

using clk = std::chrono::steady_clock;
static double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

int main() {
    const int H = 32, K = N_FEAT + H;
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    float *h_snap, *h_dt, *h_probs, *h_y, *d_snap, *d_dt, *d_probs, *d_y;
    CK(cudaHostAlloc(&h_snap, SNAP_LEN * 4, cudaHostAllocMapped));
    CK(cudaHostAlloc(&h_dt, 4, cudaHostAllocMapped));
    CK(cudaHostAlloc(&h_probs, N_HORIZONS * 4, cudaHostAllocMapped));
    CK(cudaHostAlloc(&h_y, N_PROJ * 4, cudaHostAllocMapped));
    CK(cudaHostGetDevicePointer(&d_snap, h_snap, 0));
    CK(cudaHostGetDevicePointer(&d_dt, h_dt, 0));
    CK(cudaHostGetDevicePointer(&d_probs, h_probs, 0));
    CK(cudaHostGetDevicePointer(&d_y, h_y, 0));
    auto dev = [](size_t n, float v) {
        std::vector<float> x(n);
        for (size_t i = 0; i < n; ++i) x[i] = v * (float)((i * 37) % 11) / 11.f - v / 2;
        float* d;
        CK(cudaMalloc(&d, n * 4));
        CK(cudaMemcpy(d, x.data(), n * 4, cudaMemcpyHostToDevice));
        return d;
    };
    float *h = dev(H, 0.f), *w_g = dev(H * K, 0.2f), *b_g = dev(H, 0.1f), *w_t = dev(H * K, 0.2f),
          *b_t = dev(H, 0.1f), *w_h = dev(N_HORIZONS * H, 0.3f), *b_h = dev(N_HORIZONS, 0.1f),
          *p = dev(N_PROJ * H, 0.3f), *c = dev(N_PROJ, 0.1f);
    float snap[SNAP_LEN];
    for (int i = 0; i < N_LEVELS; ++i) {
        snap[SNAP_BID_PX + i] = 100.f - 0.01f * i;
        snap[SNAP_ASK_PX + i] = 100.01f + 0.01f * i;
        snap[SNAP_BID_SZ + i] = 5.f + i;
        snap[SNAP_ASK_SZ + i] = 6.f + i;
    }
    void (*kernels[NV])(const float*, const float*, float*, const float*, const float*,
                        const float*, const float*, const float*, const float*, const float*,
                        const float*, int, int, float*, float*) = {
        fused<0>, fused<1>, fused<2>, fused<3>, perception_fused, fused<5>};
    cudaGraphExec_t ge[NV];
    for (int v = 0; v < NV; ++v) {
        cudaGraph_t g;
        CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
        kernels[v]<<<1, 1024, 0, s>>>(d_snap, d_dt, h, w_g, b_g, w_t, b_t, w_h, b_h, p, c, 1, H,
                                      d_probs, d_y);
        CK(cudaStreamEndCapture(s, &g));
        CK(cudaGraphInstantiate(&ge[v], g, 0));
        CK(cudaGraphUpload(ge[v], s));
    }
    const char* names[NV] = {"strided loads (before)", "features only", "through level 2",
                             "floor (no compute)", "kernels/perception_fused.cu, stamped",
                             "before, clock64 stamps"};
    std::vector<double> rounds[NV], gpu[NV];
    float probs[N_HORIZONS], yv[N_PROJ];
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    for (int round = 0; round < 6; ++round) {
        for (int v = 0; v < NV; ++v) {
            std::vector<double> r;
            for (int i = 0; i < 2000; ++i) {
                snap[0] = 100.f - 0.001f * (i % 7);
                const float dt = 0.001f * (1 + i % 5);
                auto t0 = clk::now();
                memcpy(h_snap, snap, sizeof snap);
                *(volatile float*)h_dt = dt;
                CK(cudaGraphLaunch(ge[v], s));
                CK(cudaStreamSynchronize(s));
                memcpy(probs, h_probs, sizeof probs);
                memcpy(yv, h_y, sizeof yv);
                r.push_back(std::chrono::duration<double, std::micro>(clk::now() - t0).count());
            }
            r.erase(r.begin(), r.begin() + r.size() / 6);
            if (round > 0) rounds[v].push_back(median(r));
            std::vector<double> t;
            for (int i = 0; i < 300; ++i) {
                CK(cudaEventRecord(e0, s));
                CK(cudaGraphLaunch(ge[v], s));
                CK(cudaEventRecord(e1, s));
                CK(cudaEventSynchronize(e1));
                float ms;
                CK(cudaEventElapsedTime(&ms, e0, e1));
                t.push_back(ms * 1e3);
            }
            if (round > 0) gpu[v].push_back(median(t));
        }
    }
    for (int v = 0; v < NV; ++v) {
        std::sort(rounds[v].begin(), rounds[v].end());
        printf("fused_probe %-30s round trip p50 %.2f us (rounds %.2f-%.2f), GPU %.2f us\n",
               names[v], median(rounds[v]), rounds[v].front(), rounds[v].back(), median(gpu[v]));
    }
    unsigned long long t[8];
    CK(cudaMemcpyFromSymbol(t, ts, sizeof t));
    int khz;
    CK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
    printf("fused_probe stamps (mean cycles from entry over %llu replays; clock %d MHz):", t[0],
           khz / 1000);
    const char* at[7] = {"entry", "features", "sync1", "preacts", "state", "sync2", "end"};
    for (int i = 1; i < 7; ++i) printf(" %s %llu", at[i], t[i] / t[0]);
    printf("\n");
    CK(cudaMemcpyFromSymbol(t, ts_now, sizeof t));
    printf("fused_probe stamps of kernels/perception_fused.cu (%llu replays):", t[0]);
    for (int i = 1; i < 7; ++i) printf(" %s %llu", at[i], t[i] / t[0]);
    printf("\n");
    CK(cudaGetLastError());
    return 0;
}
