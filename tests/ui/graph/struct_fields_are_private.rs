//! Must fail to compile: a graph struct's fields are private to the generated code, also in
//! the module `graph!` is called in. Swapping a buffer under the built graph would leave it
//! writing the old allocation after its free, and replaying `captured` directly would run
//! behind the struct's bookkeeping of launches in flight.

#[allow(dead_code)]
#[path = "../../gpu/graph/kernels.rs"]
mod kernels;

// The spec itself is valid (in `valid/`, which the spec-error tests do not read).
kgraph::graph!("tests/ui/graph/valid/struct_fields_are_private.toml");

fn swap(g: &mut StructFieldsArePrivate, fresh: kgraph::DeviceBuffer<f32>) {
    g.buf_y = fresh;
    g.captured.as_ref().unwrap().replay().unwrap();
}

fn main() {}
