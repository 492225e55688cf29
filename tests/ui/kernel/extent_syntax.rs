// What an extent may be: integer expressions with `+ - * / %`, `min`, `max`; literals fit the
// type the extent is computed in (`i32` here, from `n: i32`); the promise is `unsafe(extents)`.
#[kgraph::kernels]
mod shapes {
    #[kernel("ui.cu", unsafe(extents))]
    pub fn shifted(x: &[f32; n << 1], y: &mut [f32; n], a: f32, b: f32, n: i32);

    #[kernel("ui.cu", name = "axpb", unsafe(extents))]
    pub fn called(x: &[f32; len(n)], y: &mut [f32; n], a: f32, b: f32, n: i32);

    #[kernel("ui.cu", name = "axpb", unsafe(extents))]
    pub fn too_big(x: &[f32; n * 3000000000], y: &mut [f32; n], a: f32, b: f32, n: i32);

    #[kernel("ui.cu", name = "axpb", unsafe(promise))]
    pub fn wrong_promise(x: &[f32; n], y: &mut [f32; n], a: f32, b: f32, n: i32);
}

fn main() {}
