// kgraph's resident loop: a persistent kernel that waits for a doorbell in mapped pinned memory,
// runs one step of a user's body, publishes a done sequence number, and loops until stopped.
// The host side is `kgraph::resident::Resident` (runtime/src/resident/); this header is its
// device side. Include it from the .cu that instantiates the loop:
//
//   #include "kg_resident.cuh"          // kgraph::resident::HEADER holds the same text
//   struct MyStep : KgResidentStateless {
//     struct In { float x[40]; float dt; };        // what the host submits (the Rust `I`)
//     struct Out { float probs[5]; };              // what the host reads back (the Rust `O`)
//     struct Params { const float* w; float* h; }; // the device buffers (the Rust `P`)
//     __device__ static void run(const In& in, Out& out, const Params& p, Local&);
//   };
//   extern "C" __global__ void __launch_bounds__(1024)
//   my_resident(KgResidentBell* bell, const KgResidentPair* in, KgResidentPair* out, MyStep::Params p) {
//     kg_resident_loop<MyStep>(bell, in, out, p);
//   }
//
// The protocol (sequence numbers in every word, never a flag that can be missed):
//   The input and the output travel as pairs: one 8-byte word per 4-byte word of In / Out,
//   (data | seq << 32), written and read as single 8-byte accesses. A pair is valid for step
//   `seq` when its high half is `seq`, so a reader that sees every pair of a record carry the
//   same sequence number has the whole record of that step, whatever order the writes landed in
//   (the LL protocol of NCCL). No separate doorbell word, no fence for ordering and no second
//   bus round trip: the poll that sees the doorbell has the input.
//   host:   writes In's pairs for seq = last + 1 (only while no step is in flight).
//   device: warp 0 reads every input pair (and the stop word) with relaxed system-scope loads
//           until every pair carries the next sequence number;
//           the data halves go into shared memory, the block runs Body::run on them (Out in
//           shared memory too), waits at a barrier, and writes Out's pairs for seq into mapped
//           host memory, then the done word (bookkeeping for a relaunch; nobody waits on it).
//   host:   spins on the output pairs until every one carries seq, then takes their data.
//   stop:   the host stores stop = 1; the loop exits at its next poll (a step in progress ends
//           first). The loop also exits after `idle_ns` nanoseconds (globaltimer) without a
//           doorbell, so a context-wide synchronize on the host never waits forever; the host
//           relaunches it when the next step finds it gone.
//
// The body contract (what Body::run may assume and must not do):
//   - A body is a struct with In, Out, Params (the Rust I, O, P: plain data of 4-byte multiples,
//     no padding), a Local type (per-thread state kept in registers for as long as the kernel
//     runs) with `static Local load(const Params&)` (called once per launch by every thread,
//     before the first step; inherit KgResidentStateless for none), and
//     `static void run(const In&, Out&, const Params&, Local&)`.
//   - One block of whole warps runs the loop (gridDim = 1, a multiple of 32 threads): the host
//     launches it so; any other shape exits at once with KG_RESIDENT_EXIT_SHAPE. Body::run is called by every thread of the block, the
//     same number of times, and must reach the same barriers in every thread (as any
//     __syncthreads code).
//   - `in` is a shared-memory copy of this step's input, valid during the call; `out` is in
//     shared memory: write every element in every step (its pairs are sent after the call).
//   - Shared memory a body declares itself keeps its contents from one step to the next within
//     one launch (nothing else writes it), not across launches: after an idle exit the loop is
//     launched again and `load` runs again, so state carried there must be re-read when `load`
//     says so (a flag in Local).
//   - Device memory written in one step is read in the next through ordinary loads: the loop's
//     barriers make a step's writes visible to the whole block. Never read memory the host
//     writes while the kernel runs (other than through `in`): a cached or read-only load could
//     return an old value.
//   - It must return: a body that loops forever holds the kernel, and the host's wait times
//     out (a typed error) and its drop leaks every buffer rather than free them under it.
//   - No grid-wide barrier (a step spread over many blocks runs in kg_resident_grid_loop of
//     kg_resident_grid.cuh, launched cooperatively by Resident::new_grid), no device-side
//     launch, no trap on bad input (a trap is a device fault: the host's wait returns it as an
//     error and the resident kernel is gone).
#pragma once
// A guard as well: `#pragma once` goes by file, and a generated resident step includes a copy of
// this header beside kernel files that may include the original.
#ifndef KGRAPH_KG_RESIDENT_CUH
#define KGRAPH_KG_RESIDENT_CUH

// Word indices of the doorbell (u32 words; host-written and device-written words sit in
// different 64-byte lines). The Rust side (runtime/src/resident/bell.rs) uses the same values.
#define KG_BELL_STOP 1
#define KG_BELL_IDLE_LO 2
#define KG_BELL_IDLE_HI 3
#define KG_BELL_DONE 16
#define KG_BELL_EXIT 17
#define KG_BELL_WORDS 32

// Why the loop exited (the KG_BELL_EXIT word; 0 while running).
#define KG_RESIDENT_EXIT_STOP 1
#define KG_RESIDENT_EXIT_IDLE 2
#define KG_RESIDENT_EXIT_SHAPE 3

struct KgResidentBell {
    unsigned words[KG_BELL_WORDS];
};

__device__ __forceinline__ unsigned kg_load_acquire_sys(const unsigned* p) {
    unsigned v;
    asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ void kg_store_release_sys(unsigned* p, unsigned v) {
    asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

// One pair of the input or the output: (data | seq << 32).
typedef unsigned long long KgResidentPair;

__device__ __forceinline__ KgResidentPair kg_load_relaxed_sys64(const KgResidentPair* p) {
    KgResidentPair v;
    asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ void kg_store_relaxed_sys64(KgResidentPair* p, KgResidentPair v) {
    asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

__device__ __forceinline__ void kg_store_relaxed_sys(unsigned* p, unsigned v) {
    asm volatile("st.relaxed.sys.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

__device__ __forceinline__ unsigned kg_load_relaxed_sys(const unsigned* p) {
    unsigned v;
    asm volatile("ld.relaxed.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ unsigned long long kg_globaltimer() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// A body without per-thread state between steps.
struct KgResidentStateless {
    struct Local {};
    template <class Params>
    __device__ static Local load(const Params&) {
        return Local();
    }
};

// The sequence number after `seq` (0 is skipped: it means "none").
__device__ __forceinline__ unsigned kg_resident_next(unsigned seq) { return seq + 1u == 0u ? 1u : seq + 1u; }

#define KG_WARP_ALL 0xffffffffu

// A probe's hook (scripts/probes/resident_latency.cu defines it to record clock64 at the
// loop's stages); empty in every build of kgraph.
#ifndef KG_RESIDENT_STAMP
#define KG_RESIDENT_STAMP(i)
#endif

// One poll of warp 0: lane l loads pairs l, l + 32, ... of the input (N pairs), lane 0 also the
// stop word. The loads are issued here and used by kg_resident_check, so a second poll can be
// in flight while the first is checked.
template <unsigned N>
struct KgResidentPoll {
    static constexpr unsigned PER_LANE = (N + 31u) / 32u;
    KgResidentPair pairs[PER_LANE];
    unsigned stop;
    __device__ __forceinline__ void issue(const KgResidentBell* bell, const KgResidentPair* in, unsigned lane) {
#pragma unroll
        for (unsigned r = 0; r < PER_LANE; ++r) {
            const unsigned k = lane + 32u * r;
            pairs[r] = k < N ? kg_load_relaxed_sys64(in + k) : 0ull;
        }
        stop = lane == 0u ? kg_load_relaxed_sys(&bell->words[KG_BELL_STOP]) : 0u;
    }
    // Whether every lane's pairs carry `want` (the whole warp agrees); the data halves go to
    // `words` either way (used only when the answer is yes).
    __device__ __forceinline__ bool complete(unsigned want, unsigned lane, unsigned* words) const {
        bool ok = true;
#pragma unroll
        for (unsigned r = 0; r < PER_LANE; ++r) {
            const unsigned k = lane + 32u * r;
            if (k < N) {
                ok = ok && (unsigned)(pairs[r] >> 32) == want;
                words[k] = (unsigned)pairs[r];
            }
        }
        return __all_sync(KG_WARP_ALL, ok);
    }
};

// What one look at a poll found.
enum KgResidentLook { KG_LOOK_AGAIN, KG_LOOK_STEP, KG_LOOK_EXIT };

// Looks at a completed poll: a complete input (step), the stop word (exit), the idle limit
// (exit); the exit reason is published first.
template <unsigned N>
__device__ __forceinline__ KgResidentLook kg_resident_look(const KgResidentPoll<N>& poll, KgResidentBell* bell,
                                                           unsigned want, unsigned lane, unsigned* words,
                                                           unsigned long long since, unsigned long long idle_ns) {
    // A step whose whole input arrived runs even with the stop word set beside it: the stop
    // takes effect at the next poll, so a submitted step the kernel has seen is never dropped.
    if (poll.complete(want, lane, words)) return KG_LOOK_STEP;
    if (__shfl_sync(KG_WARP_ALL, poll.stop, 0) != 0u) {
        if (lane == 0u) kg_store_release_sys(&bell->words[KG_BELL_EXIT], KG_RESIDENT_EXIT_STOP);
        return KG_LOOK_EXIT;
    }
    const unsigned idle = kg_globaltimer() - since > idle_ns ? 1u : 0u;
    if (__shfl_sync(KG_WARP_ALL, idle, 0) != 0u) {
        if (lane == 0u) kg_store_release_sys(&bell->words[KG_BELL_EXIT], KG_RESIDENT_EXIT_IDLE);
        // A doorbell that rang meanwhile is run by the next launch (it starts from done).
        return KG_LOOK_EXIT;
    }
    return KG_LOOK_AGAIN;
}

// Warp 0's wait for the next step's input: the new sequence number with the input's words in
// `words` (shared memory), or 0 to exit (stop or idle). One poll at a time: a second one kept
// in flight saw the doorbell sooner, but its loads were still outstanding when the step began,
// and the first reuse of their registers waited a whole bus round trip for them (about 2000
// cycles measured by scripts/probes/resident_latency.cu).
template <unsigned N>
__device__ unsigned kg_resident_poll(KgResidentBell* bell, const KgResidentPair* in, unsigned last,
                                     unsigned long long idle_ns, unsigned lane, unsigned* words) {
    const unsigned want = kg_resident_next(last);
    const unsigned long long since = kg_globaltimer();
    for (;;) {
        KgResidentPoll<N> poll;
        poll.issue(bell, in, lane);
        const KgResidentLook look = kg_resident_look(poll, bell, want, lane, words, since, idle_ns);
        if (look != KG_LOOK_AGAIN) return look == KG_LOOK_STEP ? want : 0u;
    }
}

// Warp 0's start of a launch: the last step done (the next one to wait for follows it), the idle
// limit, and the exit word cleared.
__device__ __forceinline__ void kg_resident_begin(KgResidentBell* bell, unsigned lane, unsigned* last,
                                                  unsigned long long* idle_ns) {
    *last = kg_load_acquire_sys(&bell->words[KG_BELL_DONE]);
    *idle_ns = (unsigned long long)kg_load_acquire_sys(&bell->words[KG_BELL_IDLE_LO]) |
               ((unsigned long long)kg_load_acquire_sys(&bell->words[KG_BELL_IDLE_HI]) << 32);
    if (lane == 0) kg_store_release_sys(&bell->words[KG_BELL_EXIT], 0u);
}

// Sends step `seq`'s output (`words`, N of them, readable by every thread of the block) as pairs,
// thread `tid` of `threads` taking words tid, tid + threads, ...; then the done word.
template <unsigned N>
__device__ __forceinline__ void kg_resident_send(KgResidentBell* bell, KgResidentPair* out, const unsigned* words,
                                                 unsigned seq, unsigned tid, unsigned threads) {
    for (unsigned k = tid; k < N; k += threads)
        kg_store_relaxed_sys64(out + k, (KgResidentPair)words[k] | ((KgResidentPair)seq << 32));
    // Relaxed: only a relaunch reads it (after this launch ended, which makes every write
    // visible).
    if (tid == 0) kg_store_relaxed_sys(&bell->words[KG_BELL_DONE], seq);
    // Not for ordering (each pair carries its sequence number) but for speed: without a
    // system fence the pairs reach host memory about 1 us later (measured on the H200:
    // an empty step's round trip 3.0 us p50 without, 1.9 us with, against 1.7 us for the
    // anchor's ping-pong; scripts/probes/protocol_floor.cu). The fence holds the storing
    // threads (warp 0's included) until the writes are out; the next input cannot arrive
    // before the host has read them anyway.
    if (tid < N || tid == 0) __threadfence_system();
}

// The words of a body's input and output records (both loops send them as 4-byte words and keep
// them in 16-byte aligned memory).
template <class Body>
struct KgResidentWords {
    typedef typename Body::In In;
    typedef typename Body::Out Out;
    static_assert(sizeof(In) % sizeof(unsigned) == 0, "the input travels as 4-byte words");
    static_assert(sizeof(Out) % sizeof(unsigned) == 0, "the output travels as 4-byte words");
    static_assert(alignof(In) <= 16 && alignof(Out) <= 16, "In and Out live in 16-byte aligned memory");
    static constexpr unsigned IN = sizeof(In) / sizeof(unsigned);
    static constexpr unsigned OUT = sizeof(Out) / sizeof(unsigned);
};

template <class Body>
__device__ void kg_resident_loop(KgResidentBell* bell, const KgResidentPair* in, KgResidentPair* out,
                                 const typename Body::Params& params) {
    typedef typename Body::In In;
    typedef typename Body::Out Out;
    constexpr unsigned IN_WORDS = KgResidentWords<Body>::IN;
    constexpr unsigned OUT_WORDS = KgResidentWords<Body>::OUT;
    __shared__ __align__(16) unsigned in_words[IN_WORDS];
    __shared__ __align__(16) unsigned out_words[OUT_WORDS];
    __shared__ unsigned seq_shared;
    const unsigned threads = blockDim.x * blockDim.y * blockDim.z;
    const unsigned tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    // One block of whole warps (warp 0 polls with full-warp votes).
    if (gridDim.x * gridDim.y * gridDim.z != 1u || threads % 32u != 0u) {
        if (tid == 0 && blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0)
            kg_store_release_sys(&bell->words[KG_BELL_EXIT], KG_RESIDENT_EXIT_SHAPE);
        return;
    }
    typename Body::Local local = Body::load(params);
    unsigned last = 0u;
    unsigned long long idle_ns = 0ull;
    if (tid < 32u) kg_resident_begin(bell, tid, &last, &idle_ns);
    for (;;) {
        if (tid < 32u) {
            const unsigned seq = kg_resident_poll<IN_WORDS>(bell, in, last, idle_ns, tid, in_words);
            if (tid == 0) seq_shared = seq;
            last = seq;
        }
        KG_RESIDENT_STAMP(0)
        __syncthreads();
        KG_RESIDENT_STAMP(1)
        const unsigned seq = seq_shared;
        if (seq == 0u) return;
        Body::run(*reinterpret_cast<const In*>(in_words), *reinterpret_cast<Out*>(out_words), params, local);
        KG_RESIDENT_STAMP(2)
        // Every thread's writes of this step (Out in shared memory, device state) happen before
        // the pairs go out; each pair carries its own sequence number, so no fence orders them.
        __syncthreads();
        KG_RESIDENT_STAMP(3)
        kg_resident_send<OUT_WORDS>(bell, out, out_words, seq, tid, threads);
        KG_RESIDENT_STAMP(4)
    }
}

#endif  // KGRAPH_KG_RESIDENT_CUH
