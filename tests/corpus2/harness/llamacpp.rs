//! ggml-org/llama.cpp ggml-cuda kernels (cross-entropy, norms, AdamW): declarations, GPU tests at three shapes, graph spec `tests/corpus2/graphs/llamacpp.toml`.
