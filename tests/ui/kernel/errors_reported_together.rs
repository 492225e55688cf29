// Two mismatches in one declaration: both are reported, and the stub handle keeps the use
// below from adding errors of its own.
#[kgraph::kernel("ui.cu")]
pub fn axpb(x: &[f64], y: &mut [f32], a: f32, b: i32, n: i32);

fn main() {
    let _uses_the_stub = Axpb::NAME;
}
