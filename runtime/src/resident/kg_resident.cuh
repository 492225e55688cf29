// kgraph's resident loop: a persistent kernel that waits for a doorbell in mapped pinned memory,
// runs one step of a user's body, publishes a done sequence number, and loops until stopped.
// The host side is `kgraph::resident::Resident` (runtime/src/resident/); this header is its
// device side. Include it from the .cu that instantiates the loop:
//
//   #include "kg_resident.cuh"          // kgraph::resident::HEADER holds the same text
//   struct MyStep {
//     struct In { float x[40]; float dt; };        // what the host submits (the Rust `I`)
//     struct Out { float probs[5]; };              // what the host reads back (the Rust `O`)
//     struct Params { const float* w; float* h; }; // the device buffers (the Rust `P`)
//     __device__ static void run(const In& in, Out* out, const Params& p);
//   };
//   extern "C" __global__ void __launch_bounds__(1024)
//   my_resident(KgResidentBell* bell, const MyStep::In* in, MyStep::Out* out, MyStep::Params p) {
//     kg_resident_loop<MyStep>(bell, in, out, p);
//   }
//
// The protocol (sequence numbers, never a flag that can be missed):
//   host:   writes In (only while no step is in flight), then stores submit = seq (release).
//   device: thread 0 polls submit with an acquire load at system scope until it differs from
//           the last sequence it ran; the block copies In into shared memory (volatile loads,
//           so no read-only cache keeps an old value), runs Body::run, waits at a barrier,
//           then thread 0 fences at system scope and stores done = seq (release).
//   host:   spins on done (acquire) until it reaches seq, then reads Out.
//   stop:   the host stores stop = 1; the loop exits at its next poll (a step in progress ends
//           first). The loop also exits after `idle_ns` nanoseconds (globaltimer) without a
//           doorbell, so a context-wide synchronize on the host never waits forever; the host
//           relaunches it when the next step finds it gone.
//
// The body contract (what Body::run may assume and must not do):
//   - One block runs the loop (gridDim = 1): the host launches it so; any other grid exits at
//     once with KG_RESIDENT_EXIT_SHAPE. Body::run is called by every thread of the block, the
//     same number of times, and must reach the same barriers in every thread (as any
//     __syncthreads code); it may use static shared memory, and its shared memory holds
//     nothing from one step to the next unless it writes it first in that step.
//   - `in` is a shared-memory copy of this step's input, valid during the call. `out` is mapped
//     host memory: write every output in the step (the host reads it after done).
//   - Device memory written in one step is read in the next through ordinary loads: the loop's
//     barriers make a step's writes visible to the whole block. Never read memory the host
//     writes while the kernel runs (other than through `in`): a cached or read-only load could
//     return an old value.
//   - It must return: a body that loops forever holds the kernel, and the host's wait times
//     out (a typed error) and its drop leaks every buffer rather than free them under it.
//   - No grid-wide barrier, no device-side launch, no trap on bad input (a trap is a device
//     fault: the host's wait returns it as an error and the resident kernel is gone).
#pragma once

// Word indices of the doorbell (u32 words; host-written and device-written words sit in
// different 64-byte lines; SUBMIT and STOP form one 8-byte aligned pair). The Rust side (runtime/src/resident/bell.rs) uses the same values.
#define KG_BELL_SUBMIT 0
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

__device__ __forceinline__ unsigned long long kg_load_acquire_sys64(const unsigned* p) {
    unsigned long long v;
    asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ unsigned long long kg_globaltimer() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// Thread 0's wait for the next doorbell: the new sequence number, or 0 to exit (stop or idle;
// the exit reason is published first). Submit and stop are read in one 8-byte load (one bus
// round trip per look). Sequence numbers start at 1 and never return to 0: the host skips 0
// when they wrap.
__device__ __forceinline__ unsigned kg_resident_poll(KgResidentBell* bell, unsigned last,
                                                     unsigned long long idle_ns) {
    const unsigned long long since = kg_globaltimer();
    for (;;) {
        const unsigned long long both = kg_load_acquire_sys64(&bell->words[KG_BELL_SUBMIT]);
        const unsigned seq = (unsigned)both, stop = (unsigned)(both >> 32);
        if (stop != 0u) {
            kg_store_release_sys(&bell->words[KG_BELL_EXIT], KG_RESIDENT_EXIT_STOP);
            return 0u;
        }
        if (seq != last && seq != 0u) return seq;
        if (kg_globaltimer() - since > idle_ns) {
            kg_store_release_sys(&bell->words[KG_BELL_EXIT], KG_RESIDENT_EXIT_IDLE);
            // A doorbell that rang meanwhile is run by the next launch (it starts from done).
            return 0u;
        }
    }
}

template <class Body>
__device__ void kg_resident_loop(KgResidentBell* bell, const typename Body::In* in,
                                 typename Body::Out* out, const typename Body::Params& params) {
    typedef typename Body::In In;
    static_assert(sizeof(In) % sizeof(unsigned) == 0, "the input is copied as 4-byte words");
    __shared__ __align__(16) unsigned in_words[sizeof(In) / sizeof(unsigned)];
    __shared__ unsigned seq_shared;
    if (gridDim.x * gridDim.y * gridDim.z != 1u) {
        if (threadIdx.x == 0 && blockIdx.x == 0)
            kg_store_release_sys(&bell->words[KG_BELL_EXIT], KG_RESIDENT_EXIT_SHAPE);
        return;
    }
    const unsigned threads = blockDim.x * blockDim.y * blockDim.z;
    const unsigned tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    unsigned last = 0u;
    unsigned long long idle_ns = 0ull;
    if (tid == 0) {
        last = kg_load_acquire_sys(&bell->words[KG_BELL_DONE]);
        idle_ns = (unsigned long long)kg_load_acquire_sys(&bell->words[KG_BELL_IDLE_LO]) |
                  ((unsigned long long)kg_load_acquire_sys(&bell->words[KG_BELL_IDLE_HI]) << 32);
        kg_store_release_sys(&bell->words[KG_BELL_EXIT], 0u);
    }
    for (;;) {
        if (tid == 0) {
            seq_shared = kg_resident_poll(bell, last, idle_ns);
            last = seq_shared;
        }
        __syncthreads();
        const unsigned seq = seq_shared;
        if (seq == 0u) return;
        // The input, copied with volatile loads after thread 0's acquire and the barrier.
        const volatile unsigned* src = reinterpret_cast<const volatile unsigned*>(in);
        for (unsigned k = tid; k < sizeof(In) / sizeof(unsigned); k += threads) in_words[k] = src[k];
        __syncthreads();
        Body::run(*reinterpret_cast<const In*>(in_words), out, params);
        // Every thread's writes of this step (outputs in host memory, device state) happen
        // before thread 0's fence, and the fence before the published sequence number.
        __syncthreads();
        if (tid == 0) {
            __threadfence_system();
            kg_store_release_sys(&bell->words[KG_BELL_DONE], seq);
        }
    }
}
