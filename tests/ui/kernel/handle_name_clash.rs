//! Must fail to compile with one error, on the user's struct: the handle `#[kernel]` generates for
//! `saxpy` is named `Saxpy` too (no cascade of duplicate-definition and type errors).
#[kgraph::kernels]
mod k {
    pub struct Saxpy;

    #[kernel("saxpy.cu")]
    pub fn saxpy(a: f32, x: &[f32], y: &mut [f32], n: i32);
}

fn main() {}
