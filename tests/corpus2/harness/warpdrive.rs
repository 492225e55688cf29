//! salesforce/warp-drive kernels (reset, log): declarations, GPU tests at three shapes, graph spec `tests/corpus2/graphs/warpdrive.toml`.
