#[kgraph::kernel(ui.cu)]
pub fn axpb(x: &[f32], y: &mut [f32], a: f32, b: f32, n: i32);

#[kgraph::kernels]
mod more {
    #[kernel]
    pub fn axpb(x: &[f32], y: &mut [f32], a: f32, b: f32, n: i32);

    #[kernel("ui.cu", nmae = "axpb")]
    pub fn axpb2(x: &[f32], y: &mut [f32], a: f32, b: f32, n: i32);

    #[kernel("kernels/ui.cu")]
    pub fn axpb3(x: &[f32], y: &mut [f32], a: f32, b: f32, n: i32);

    #[kernel("ui.cuh")]
    pub fn axpb4(x: &[f32], y: &mut [f32], a: f32, b: f32, n: i32);
}

fn main() {}
