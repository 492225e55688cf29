// What a kernel declaration cannot have: generics, a return type, `self`, patterns, a body.
#[kgraph::kernels]
mod bad {
    #[kernel("ui.cu")]
    pub fn axpb<T>(x: &[T], y: &mut [f32], a: f32, b: f32, n: i32);

    #[kernel("ui.cu", name = "axpb")]
    pub fn with_return(x: &[f32], y: &mut [f32], a: f32, b: f32, n: i32) -> f32;

    #[kernel("ui.cu", name = "axpb")]
    pub fn with_pattern((x, y): (&[f32], &mut [f32]), mut a: f32, b: f32, n: i32);

    #[kernel("ui.cu", name = "axpb")]
    pub fn with_body(x: &[f32], y: &mut [f32], a: f32, b: f32, n: i32) {
        let _ = n;
    }

    #[kernel("ui.cu", name = "axpb")]
    pub unsafe fn reserved(x: &[f32], y: &mut [f32], a: f32, b: f32, stream: i32);
}

fn main() {}
