// `tile_copy<float, 128>` is instantiated in templates.cu and binds by name; `tile_copy<double,
// 64>` is not, so nvcc compiled no such kernel: the message shows the line to add.
#[kgraph::kernels]
pub mod kernels {
    #[kernel("templates.cu", name = "tile_copy<float, 128>", unsafe(extents))]
    pub fn tile_copy_f32(src: &[f32; n], dst: &mut [f32; n], n: i32);

    #[kernel("templates.cu", name = "tile_copy<double, 64>", unsafe(extents))]
    pub fn tile_copy_f64(src: &[f64; n], dst: &mut [f64; n], n: i32);
}

fn main() {}
