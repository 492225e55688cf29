//! vllm-project/vllm kernels (activations, RMSNorm, rotary embedding): filled by part B.
