// `shared = <bytes>` (dynamic shared memory): part of the extents promise, over integer scalars
// and the launch's shape (`grid.x` ... `block.z`), as pointer extents are; only those six axes exist.
#[kgraph::kernels]
mod k {
    #[kernel("ui.cu", shared = block.x * 4)]
    pub fn axpb(x: &[f32], y: &mut [f32], a: f32, b: f32, n: i32);
}

#[kgraph::kernels]
mod float_scalar {
    #[kernel("ui.cu", unsafe(extents), shared = a * 4)]
    pub fn axpb(x: &[f32; n], y: &mut [f32; n], a: f32, b: f32, n: i32);
}

#[kgraph::kernels]
mod bad_grid_axis {
    #[kernel("ui.cu", unsafe(extents))]
    pub fn axpb(x: &[f32; grid.w], y: &mut [f32; n], a: f32, b: f32, n: i32);
}

#[kgraph::kernels]
mod bad_axis {
    #[kernel("ui.cu", unsafe(extents), shared = block.w)]
    pub fn axpb(x: &[f32; n], y: &mut [f32; n], a: f32, b: f32, n: i32);
}

fn main() {}
