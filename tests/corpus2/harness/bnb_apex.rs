//! bitsandbytes (32-bit Adam, kfunc) and apex (fused Adam) kernels: filled by part B.
