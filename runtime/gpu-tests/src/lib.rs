//! Empty: this crate holds kgraph-runtime's GPU tests (`tests/gpu/`, the `runtime_gpu` test
//! binary) and their kernels (`kernels/`). A package needs a target of its own besides its tests.
