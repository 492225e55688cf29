// `requires(<cond>, ...)` and `align(<param> = <bytes>)`: a condition is over integer scalar
// parameters, the launch's shape and integer constants, without `!`; `align` names a pointer
// parameter; both qualify the `unsafe(extents)` promise. One error per declaration.
#[kgraph::kernel("ui.cu", name = "axpb", unsafe(extents), requires(x > 0))]
pub fn names_a_pointer(x: &[f32; n], y: &mut [f32; n], a: f32, b: f32, n: i32);

#[kgraph::kernel("ui.cu", name = "axpb", unsafe(extents), requires(a > 0))]
pub fn names_a_float(x: &[f32; n], y: &mut [f32; n], a: f32, b: f32, n: i32);

#[kgraph::kernel("ui.cu", name = "axpb", unsafe(extents), requires(!(n < 0)))]
pub fn negated(x: &[f32; n], y: &mut [f32; n], a: f32, b: f32, n: i32);

#[kgraph::kernel("ui.cu", name = "axpb", unsafe(extents), requires(n <= i32::MAX - grid.w))]
pub fn wrong_axis(x: &[f32; n], y: &mut [f32; n], a: f32, b: f32, n: i32);

#[kgraph::kernel("ui.cu", name = "axpb", requires(n >= 0))]
pub fn without_promise(x: &[f32], y: &mut [f32], a: f32, b: f32, n: i32);

#[kgraph::kernel("ui.cu", name = "axpb", unsafe(extents), align(n = 16))]
pub fn aligns_a_scalar(x: &[f32; n], y: &mut [f32; n], a: f32, b: f32, n: i32);

#[kgraph::kernel("ui.cu", name = "axpb", unsafe(extents), align(x = 24))]
pub fn not_a_power_of_two(x: &[f32; n], y: &mut [f32; n], a: f32, b: f32, n: i32);

fn main() {}
