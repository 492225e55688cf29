//! `#[kernel]` declarations of `tests/kernels/test_graph.cu`: the kernels of the test graph specs
//! (`graphs/test_*.toml`, `[kernels] source = "tests/gpu/graph/kernels.rs"`, module
//! `crate::graph::kernels`) and of the graph compile-fail cases (`tests/ui/graph/`).

/// `y = a * x + b`.
#[kgraph::kernel("test_graph.cu")]
pub fn tg_affine(x: &[f32], y: &mut [f32], a: f32, b: f32, n: i32);

/// `s[i] = x[i] * x[(i + 1) % n] + 0.5`.
#[kgraph::kernel("test_graph.cu")]
pub fn tg_prep(x: &[f32], s: &mut [f32], n: i32);

/// `y = sin(k * s) + k`.
#[kgraph::kernel("test_graph.cu")]
pub fn tg_branch(s: &[f32], y: &mut [f32], k: f32, n: i32);

/// `out = a + 2b + 3c + 4d`.
#[kgraph::kernel("test_graph.cu")]
pub fn tg_join4(a: &[f32], b: &[f32], c: &[f32], d: &[f32], out: &mut [f32], n: i32);

/// `y = frame + bias[0]`, both read zero-copy from mapped pinned host memory.
#[kgraph::kernel("test_graph.cu")]
pub fn tg_read_pinned(frame: Pinned<f32>, bias: Pinned<f32>, y: &mut [f32], n: i32);

/// `host = x * k`, written straight into mapped pinned host memory.
#[kgraph::kernel("test_graph.cu")]
pub fn tg_publish(x: &[f32], k: f32, host: PinnedMut<f32>, n: i32);

/// `y = x * w`.
#[kgraph::kernel("test_graph.cu")]
pub fn tg_mul(x: &[f32], w: &[f32], y: &mut [f32], n: i32);

/// `acc += x`.
#[kgraph::kernel("test_graph.cu")]
pub fn tg_accumulate(acc: &mut [f32], x: &[f32], n: i32);

// PDL-aware kernels (graphs/test_pdl_*.toml): each executes `griddepcontrol.launch_dependents`
// and `griddepcontrol.wait` in every thread before touching memory, so it may be launched with
// programmatic dependent launch.

/// `y = a * x + b`, PDL-aware.
#[kgraph::kernel("test_graph.cu")]
pub fn tg_pdl_affine(x: &[f32], y: &mut [f32], a: f32, b: f32, n: i32);

/// `y[i] = x[i] * x[(i + 1) % n] + 0.5`, PDL-aware.
#[kgraph::kernel("test_graph.cu")]
pub fn tg_pdl_mix(x: &[f32], y: &mut [f32], n: i32);

/// `y = sin(k * s) + k`, PDL-aware.
#[kgraph::kernel("test_graph.cu")]
pub fn tg_pdl_branch(s: &[f32], y: &mut [f32], k: f32, n: i32);

/// `out = a + 2b + 3c + 4d`, PDL-aware.
#[kgraph::kernel("test_graph.cu")]
pub fn tg_pdl_join4(a: &[f32], b: &[f32], c: &[f32], d: &[f32], out: &mut [f32], n: i32);

/// `acc += x`, PDL-aware.
#[kgraph::kernel("test_graph.cu")]
pub fn tg_pdl_accumulate(acc: &mut [f32], x: &[f32], n: i32);
