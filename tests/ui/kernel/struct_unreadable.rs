// C types kgraph cannot pass as structs, each with its reason; and a C struct declared as a
// number, and a `bool*` declared as `&[i8]` (it is `&[bool]`, over `kgraph::Bool` buffers).
#[kgraph::kernels]
mod k {
    #[kernel("types_ui.cu")]
    pub fn empty_struct(e: u8);
    #[kernel("types_ui.cu")]
    pub fn union_param(u: f32);
    #[kernel("types_ui.cu")]
    pub fn bit_fields(b: i32);
    #[kernel("types_ui.cu")]
    pub fn pair_by_value(p: f32, out: &mut [f32]);
    #[kernel("types_ui.cu")]
    pub fn flags_ptr(flags: &[i8], n: i32);
}

fn main() {}
