// Kernels for the parameter-name compile-fail tests (tests/ui/kernel/swapped_parameters.rs).
// An RMSNorm launched one block per token: `num_tokens` and `d` have one type, so only their
// names tell them apart.
extern "C" __global__ void rms_norm(float* out, const float* input, int num_tokens, int d) {}
