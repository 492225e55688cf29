// kgraph's built-in control kernels: they set the condition of a graph's conditional (WHILE/IF)
// node from device memory. Compiled once to PTX (control.ptx, checked in; `scripts/control-ptx`
// regenerates it and a test checks it is current) and JIT-loaded by the runtime, so a user's
// build needs no nvcc for them. Each runs as one thread.
#include <cuda_runtime.h>

// End of a `repeat = K` loop's body: one more iteration done; continue while fewer than
// `limit`. The counter is reset to 0 when the loop exits, so every launch starts from 0.
extern "C" __global__ void kgraph_loop_repeat(cudaGraphConditionalHandle handle, unsigned* counter,
                                             unsigned limit) {
  unsigned done = *counter + 1u;
  bool more = done < limit;
  *counter = more ? done : 0u;
  cudaGraphSetConditional(handle, more ? 1u : 0u);
}

// End of an `until = { buffer, below }` loop's body: continue while `*value >= threshold` (a NaN
// stops the loop) and fewer than `limit` iterations ran. The counter is reset on exit.
extern "C" __global__ void kgraph_loop_until_below(cudaGraphConditionalHandle handle, const float* value,
                                                  float threshold, unsigned* counter, unsigned limit) {
  unsigned done = *counter + 1u;
  bool more = done < limit && *value >= threshold;
  *counter = more ? done : 0u;
  cudaGraphSetConditional(handle, more ? 1u : 0u);
}

// Before an `if` node: its body runs when `*flag != 0`.
extern "C" __global__ void kgraph_if_nonzero(cudaGraphConditionalHandle handle, const int* flag) {
  cudaGraphSetConditional(handle, *flag != 0 ? 1u : 0u);
}

// The last node of a graph replayed with the done-word wait (kgraph_runtime::resident::DoneWait):
// counts the replay in `*count` (device memory, only this node touches it) and publishes the
// count into the mapped host word the host spins on. Full edges from every other sink make every
// write of the graph complete before it; the system-scope fence orders this thread's count
// before the published word, which the host then reads with an acquire load.
extern "C" __global__ void kgraph_done_word(unsigned* count, volatile unsigned* done) {
  unsigned n = *count + 1u;
  *count = n;
  __threadfence_system();
  *done = n;
}
