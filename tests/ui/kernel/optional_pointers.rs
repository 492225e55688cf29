// `Option<..>` marks a device pointer the kernel accepts as NULL: only `&[T]` and `&mut [T]`
// may be optional (not a pinned pointer, not a value), and `Option` takes one type.
#[kgraph::kernels]
mod pinned {
    #[kernel("ui.cu", unsafe(extents))]
    pub fn axpb(x: Option<Pinned<[f32; n]>>, y: &mut [f32; n], a: f32, b: f32, n: i32);
}

#[kgraph::kernels]
mod value {
    #[kernel("ui.cu", unsafe(extents))]
    pub fn axpb(x: &[f32; n], y: &mut [f32; n], a: Option<f32>, b: f32, n: i32);
}

#[kgraph::kernels]
mod bare {
    #[kernel("ui.cu", unsafe(extents))]
    pub fn axpb(x: Option, y: &mut [f32; n], a: f32, b: f32, n: i32);
}

fn main() {}
