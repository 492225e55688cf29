//! `#[kernel]` declarations of `tests/kernels/test_graph.cu`: the kernels of the test graph specs
//! (`tests/graphs/test_*.toml`, `[kernels] source = "tests/gpu/graph/kernels.rs"`, module
//! `crate::graph::kernels`) and of the graph compile-fail cases (`tests/ui/graph/`).

/// `y = a * x + b`.
#[kgraph::kernel("test_graph.cu", unsafe(extents))]
pub fn tg_affine(x: &[f32; n], y: &mut [f32; n], a: f32, b: f32, n: i32);

/// `s[i] = x[i] * x[(i + 1) % n] + 0.5`.
#[kgraph::kernel("test_graph.cu", unsafe(extents))]
pub fn tg_prep(x: &[f32; n], s: &mut [f32; n], n: i32);

/// `y = sin(k * s) + k`.
#[kgraph::kernel("test_graph.cu", unsafe(extents))]
pub fn tg_branch(s: &[f32; n], y: &mut [f32; n], k: f32, n: i32);

/// `out = a + 2b + 3c + 4d`.
#[kgraph::kernel("test_graph.cu", unsafe(extents))]
pub fn tg_join4(a: &[f32; n], b: &[f32; n], c: &[f32; n], d: &[f32; n], out: &mut [f32; n], n: i32);

/// `y = frame + bias[0]`, both read zero-copy from mapped pinned host memory.
#[kgraph::kernel("test_graph.cu", unsafe(extents))]
pub fn tg_read_pinned(frame: Pinned<[f32; n]>, bias: Pinned<[f32; 1]>, y: &mut [f32; n], n: i32);

/// `host = x * k`, written straight into mapped pinned host memory.
#[kgraph::kernel("test_graph.cu", unsafe(extents))]
pub fn tg_publish(x: &[f32; n], k: f32, host: PinnedMut<[f32; n]>, n: i32);

/// `y = x * w`.
#[kgraph::kernel("test_graph.cu", unsafe(extents))]
pub fn tg_mul(x: &[f32; n], w: &[f32; n], y: &mut [f32; n], n: i32);

/// `acc += x`.
#[kgraph::kernel("test_graph.cu", unsafe(extents))]
pub fn tg_accumulate(acc: &mut [f32; n], x: &[f32; n], n: i32);

// PDL-aware kernels (graphs/test_pdl_*.toml): each executes `griddepcontrol.launch_dependents`
// and `griddepcontrol.wait` in every thread before touching memory, so it may be launched with
// programmatic dependent launch.

/// `y = a * x + b`, PDL-aware.
#[kgraph::kernel("test_graph.cu", unsafe(extents))]
pub fn tg_pdl_affine(x: &[f32; n], y: &mut [f32; n], a: f32, b: f32, n: i32);

/// `y[i] = x[i] * x[(i + 1) % n] + 0.5`, PDL-aware.
#[kgraph::kernel("test_graph.cu", unsafe(extents))]
pub fn tg_pdl_mix(x: &[f32; n], y: &mut [f32; n], n: i32);

/// `y = sin(k * s) + k`, PDL-aware.
#[kgraph::kernel("test_graph.cu", unsafe(extents))]
pub fn tg_pdl_branch(s: &[f32; n], y: &mut [f32; n], k: f32, n: i32);

/// `out = a + 2b + 3c + 4d`, PDL-aware.
#[kgraph::kernel("test_graph.cu", unsafe(extents))]
pub fn tg_pdl_join4(a: &[f32; n], b: &[f32; n], c: &[f32; n], d: &[f32; n], out: &mut [f32; n], n: i32);

/// `acc += x`, PDL-aware.
#[kgraph::kernel("test_graph.cu", unsafe(extents))]
pub fn tg_pdl_accumulate(acc: &mut [f32; n], x: &[f32; n], n: i32);

/// `y = 2 x`, rewritten on disk by the hot-reload test (`graph_reload.rs`).
#[kgraph::kernel("test_reload.cu", unsafe(extents))]
pub fn hr_scale(x: &[f32; n], y: &mut [f32; n], n: i32);
