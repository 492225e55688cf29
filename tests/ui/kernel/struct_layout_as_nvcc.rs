// kgraph reads a C struct's layout as nvcc compiles it: `Vec3A`'s `__attribute__((aligned(16)))`
// after its closing brace makes it 16 bytes (the error names the twin to write), and a
// function-pointer member is refused with its reason rather than skipped.
#[kgraph::kernels]
mod k {
    #[kernel("types_ui.cu")]
    pub fn vec3a_by_value(v: f32, out: &mut [f32]);
    #[kernel("types_ui.cu")]
    pub fn with_callback(w: f32, out: &mut [f32]);
}

fn main() {}
