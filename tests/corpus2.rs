//! Corpus2 on the GPU (issue #28, "Must show"): 56 real kernels from public projects
//! (warp-drive, llama.cpp, vLLM, bitsandbytes, apex, NVIDIA's developer-blog samples), each with
//! a truthful safe declaration launched at three shapes with buffers of exactly the declared
//! extents, one output invariant asserted, and the kernel in a graph spec
//! (`tests/corpus2/graphs/*.toml`). `tests/corpus2/README.md` and `MANIFEST.toml` say which
//! kernels, why the others have no safe declaration, and where each file comes from.
//!
//! The `.cu` sources are third-party code and are not in git: they live in the ignored
//! `tests/corpus2/src/`, rebuilt from the upstream commits the README's Files table names. The
//! build script compiles them and sets `cfg(kgraph_corpus2)` only where that folder holds `.cu`
//! files; without them (CI, a fresh clone) this target compiles to nothing. To run it elsewhere,
//! copy the folder in (for the GPU machine: `carry: ["tests/corpus2/src"]`) before building.
//! Every test is `#[ignore = "needs a CUDA GPU"]` (`cargo test --test corpus2 -- --ignored`).
#![cfg(kgraph_corpus2)]

#[path = "corpus2/harness/common.rs"]
mod common;

#[path = "corpus2/harness/warpdrive.rs"]
mod warpdrive;

#[path = "corpus2/harness/warpdrive_requires.rs"]
mod warpdrive_requires;

#[path = "corpus2/harness/llamacpp.rs"]
mod llamacpp;

#[path = "corpus2/harness/llamacpp_requires.rs"]
mod llamacpp_requires;

#[path = "corpus2/harness/vllm.rs"]
mod vllm;

#[path = "corpus2/harness/devblog.rs"]
mod devblog;

#[path = "corpus2/harness/bnb_apex.rs"]
mod bnb_apex;
