// Struct layouts kgraph refuses to mirror, each with its reason at the parameter: a packed
// struct (attribute, pragma), an enum that C++ may make wider than an `int`, and a struct name
// the file defines twice in different scopes.
#[kgraph::kernels]
mod k {
    #[kernel("types_ui.cu")]
    pub fn packed_attr(p: f32, out: &mut [f32]);
    #[kernel("packed_ui.cu")]
    pub fn packed_pragma(p: f32, out: &mut [f32]);
    #[kernel("types_ui.cu")]
    pub fn wide_enum(w: i32, out: &mut [f32]);
    #[kernel("types_ui.cu")]
    pub fn name_twice(t: f32, out: &mut [f32]);
}

fn main() {}
