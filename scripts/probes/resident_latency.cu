// Probe: where the resident round trip (kernels/perception_resident.cu's body in
// kg_resident_loop, input and output as (data | seq << 32) pairs in mapped memory) goes above
// the persistent-kernel floor (shared/anchors/doorbell_probe.cu: 1.6-1.8 us p50). The host loop
// is the Rust `Resident`'s: write the input's pairs, spin until every output pair carries the
// step's number. Prints host p50/p99/p99.9 and, built with -DKG_PROBE_STAMPS, thread 0's mean
// cycles from the poll that saw the input to each stage (KG_RESIDENT_STAMP: 0 poll done, 1 after
// the barrier, 2 body done, 3 barrier, 4 pairs written; KG_FUSED_STAMP inside the body: 10 + its
// levels; KG_SNAP_STAMP inside the features: 17 + its points). The stamps go to shared memory
// and are summed into global memory after the step's output is sent, so they cost a few cycles
// on the path they measure (a global read per stamp, as the first version did, added an L2
// round trip to warp 0 at every stamp).
// -DKG_PROBE_ECHO_IN=N -DKG_PROBE_ECHO_OUT=M: an empty body (the first input word copied to
// every output word) with N input and M output words, so the protocol's own cost is measured.
// Build (repository root): nvcc -O3 -arch=sm_90 -Ikernels -diag-suppress 128,177,550 \
//                            [-DKG_PROBE_STAMPS] -o resident_latency scripts/probes/resident_latency.cu
#include <cuda_runtime.h>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

__device__ unsigned long long ts[24];
#ifdef KG_PROBE_STAMPS
__shared__ long long stamp_s[24];
#define KG_STAMP_AT(i) \
    if (threadIdx.x == 0) stamp_s[i] = clock64();
#define KG_RESIDENT_STAMP(i)                                                                  \
    KG_STAMP_AT(i)                                                                            \
    if (i == 4 && threadIdx.x == 0) {                                                         \
        atomicAdd(&ts[23], 1ull);                                                             \
        for (int k_ = 1; k_ < 23; ++k_)                                                       \
            if (stamp_s[k_] != 0) atomicAdd(&ts[k_], (unsigned long long)(stamp_s[k_] - stamp_s[0])); \
    }
#define KG_FUSED_STAMP(i) KG_STAMP_AT(10 + i)
#define KG_SNAP_STAMP(i) KG_STAMP_AT(17 + i)
#endif
#include "perception_resident.cu"


#ifdef KG_PROBE_ECHO_IN
struct EchoStep : KgResidentStateless {
    struct In {
        unsigned w[KG_PROBE_ECHO_IN];
    };
    struct Out {
        unsigned w[KG_PROBE_ECHO_OUT];
    };
    struct Params {
        int unused;
    };
    __device__ static void run(const In& in, Out& out, const Params&, Local&) {
        for (int k = threadIdx.x; k < KG_PROBE_ECHO_OUT; k += blockDim.x) out.w[k] = in.w[0];
    }
};
extern "C" __global__ void __launch_bounds__(1024)
    echo_resident(KgResidentBell* bell, const KgResidentPair* in, KgResidentPair* out, EchoStep::Params params) {
    kg_resident_loop<EchoStep>(bell, in, out, params);
}
#endif

#define CK(x)                                                                          \
    do {                                                                               \
        cudaError_t e_ = (x);                                                          \
        if (e_ != cudaSuccess) {                                                       \
            fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

static float* dev_upload(int n, unsigned seed, float scale) {
    std::vector<float> v(n);
    for (int i = 0; i < n; ++i) {
        seed = seed * 1664525u + 1013904223u;
        v[i] = scale * ((seed >> 8) / 16777216.0f - 0.5f);
    }
    float* d;
    CK(cudaMalloc(&d, n * 4));
    CK(cudaMemcpy(d, v.data(), n * 4, cudaMemcpyHostToDevice));
    return d;
}

int main(int argc, char** argv) {
    const int steps = argc > 1 ? atoi(argv[1]) : 200000;
    const int n_hid = 32;
    CK(cudaSetDeviceFlags(cudaDeviceMapHost));
#ifdef KG_PROBE_ECHO_IN
    const int in_words = KG_PROBE_ECHO_IN, out_words = KG_PROBE_ECHO_OUT;
#else
    const int in_words = sizeof(PerceptionStep::In) / 4, out_words = sizeof(PerceptionStep::Out) / 4;
#endif
    KgResidentBell* bell;
    unsigned long long *in, *out;
    CK(cudaHostAlloc(&bell, sizeof(KgResidentBell), cudaHostAllocMapped));
    CK(cudaHostAlloc(&in, in_words * 8, cudaHostAllocMapped));
    CK(cudaHostAlloc(&out, out_words * 8, cudaHostAllocMapped));
    memset(bell, 0, sizeof(KgResidentBell));
    memset(in, 0, in_words * 8);
    memset(out, 0, out_words * 8);
    const unsigned long long idle = 5000000000ull;
    bell->words[KG_BELL_IDLE_LO] = (unsigned)idle;
    bell->words[KG_BELL_IDLE_HI] = (unsigned)(idle >> 32);
    PerceptionStep::Params q;
    q.h = dev_upload(n_hid, 1, 0.f);
    q.w_g = dev_upload(n_hid * (N_FEAT + n_hid), 2, 0.2f);
    q.b_g = dev_upload(n_hid, 3, 0.1f);
    q.w_t = dev_upload(n_hid * (N_FEAT + n_hid), 4, 0.2f);
    q.b_t = dev_upload(n_hid, 5, 0.1f);
    q.w_h = dev_upload(N_HORIZONS * n_hid, 6, 0.2f);
    q.b_h = dev_upload(N_HORIZONS, 7, 0.1f);
    q.p = dev_upload(N_PROJ * n_hid, 8, 0.2f);
    q.c = dev_upload(N_PROJ, 9, 0.1f);
    q.n_hid = n_hid;
    KgResidentBell* d_bell;
    unsigned long long *d_in, *d_out;
    CK(cudaHostGetDevicePointer((void**)&d_bell, bell, 0));
    CK(cudaHostGetDevicePointer((void**)&d_in, in, 0));
    CK(cudaHostGetDevicePointer((void**)&d_out, out, 0));
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
#ifdef KG_PROBE_ECHO_IN
    echo_resident<<<1, 1024, 0, s>>>(d_bell, (const KgResidentPair*)d_in, d_out, EchoStep::Params{0});
#else
    perception_resident<<<1, 1024, 0, s>>>(d_bell, (const KgResidentPair*)d_in, d_out, q);
#endif
    CK(cudaGetLastError());
    std::vector<double> t;
    t.reserve(steps);
    std::vector<unsigned> snap_bits(in_words > 41 ? in_words : 41, 0u);
    for (int k = 0; k < 41; ++k) {
        float f = k < 10 ? 100.f - 0.01f * k : k < 20 ? 5.f : k < 30 ? 100.01f + 0.01f * (k - 20) : k < 40 ? 4.f : 0.1f;
        memcpy(&snap_bits[k], &f, 4);
    }
    // FNV-1a over every step's output words: equal for two builds that compute the same bits.
    unsigned long long hash = 1469598103934665603ull;
    for (unsigned seq = 1; seq <= (unsigned)steps; ++seq) {
        // The bid sizes change from step to step, so the state and the outputs do too.
        const float bid_sz = 5.f + 0.25f * (float)(seq % 7u);
        for (int k = 10; k < 20 && k < in_words; ++k) memcpy(&snap_bits[k], &bid_sz, 4);
        auto t0 = std::chrono::steady_clock::now();
        for (int k = 0; k < in_words; ++k)
            reinterpret_cast<std::atomic<unsigned long long>*>(in)[k].store(
                (unsigned long long)snap_bits[k] | ((unsigned long long)seq << 32), std::memory_order_relaxed);
        for (;;) {
            bool all = true;
            for (int k = 0; k < out_words && all; ++k)
                all = (unsigned)(reinterpret_cast<std::atomic<unsigned long long>*>(out)[k].load(std::memory_order_acquire) >> 32) == seq;
            if (all) break;
        }
        for (int k = 0; k < out_words; ++k) {
            hash ^= (unsigned)reinterpret_cast<std::atomic<unsigned long long>*>(out)[k].load(std::memory_order_relaxed);
            hash *= 1099511628211ull;
        }
        t.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    }
    bell->words[KG_BELL_STOP] = 1;
    CK(cudaStreamSynchronize(s));
    std::vector<double> u(t.begin() + steps / 10, t.end());
    std::sort(u.begin(), u.end());
    auto pct = [&](double p) { return u[(size_t)(p / 100.0 * (u.size() - 1))]; };
    printf("output_hash %016llx\n", hash);
    printf("resident_probe_p50 %.2f us\nresident_probe_p99 %.2f us\nresident_probe_p999 %.2f us\n", pct(50), pct(99), pct(99.9));
    unsigned long long h[24];
    CK(cudaMemcpyFromSymbol(h, ts, sizeof(h)));
    const double n = (double)h[23];
    if (n > 0) {
        for (int i = 1; i <= 4; ++i) printf("loop_stage_%d %.0f cycles\n", i, h[i] / n);
        for (int i = 0; i <= 6; ++i) printf("body_level_%d %.0f cycles\n", i, h[10 + i] / n);
        for (int i = 0; i <= 5; ++i) printf("features_point_%d %.0f cycles\n", i, h[17 + i] / n);
    }
    int clk;
    CK(cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, 0));
    printf("sm_clock %.0f MHz\n", clk / 1e3);
    return 0;
}
