//! The `.cu` reader's types: CUDA built-ins, typedefs and `using`, enums by underlying type,
//! and struct layouts with C's rules (checked against what nvcc lays out for x86-64 / CUDA).

use kgraph_codegen::cuda::signature::{find_kernel, CuBase};
use kgraph_codegen::cuda::types::{CFieldType, CStruct};
use kgraph_codegen::syntax::model::{Elem, Vector};

/// The base type of the single parameter of `k(<decl>)` after the definitions `defs`.
fn base(defs: &str, param: &str) -> CuBase {
    let src = format!("{defs}\nextern \"C\" __global__ void k({param}) {{}}");
    let k = find_kernel(&src, "k").unwrap_or_else(|e| panic!("{param}: {e:?}"));
    k.params[0].ty.base.clone()
}

fn layout(defs: &str, name: &str) -> CStruct {
    match base(defs, &format!("{name} p")) {
        CuBase::Struct(s) => *s,
        other => panic!("{name}: {other:?}"),
    }
}

/// (name, offset, size) of each field.
fn fields(s: &CStruct) -> Vec<(&str, usize, usize)> {
    s.fields.iter().map(|f| (f.name.as_str(), f.offset, f.size)).collect()
}

#[test]
fn cuda_builtins_have_their_rust_twins() {
    let cases = [
        ("__half", Elem::F16),
        ("half", Elem::F16),
        ("__nv_bfloat16", Elem::Bf16),
        ("nv_bfloat16", Elem::Bf16),
        ("half2", Elem::Vector(Vector::Half2)),
        ("__half2", Elem::Vector(Vector::Half2)),
        ("__nv_bfloat162", Elem::Vector(Vector::Bf16x2)),
        ("float4", Elem::Vector(Vector::Float4)),
        ("uchar4", Elem::Vector(Vector::UChar4)),
        ("double2", Elem::Vector(Vector::Double2)),
        ("cudaTextureObject_t", Elem::U64),
        ("CUsurfObject", Elem::U64),
        ("char", Elem::I8),
        ("bool", Elem::Bool),
        ("unsigned long", Elem::U64),
    ];
    for (c, elem) in cases {
        assert_eq!(base("", &format!("{c} v")), CuBase::Elem(elem), "{c}");
    }
    assert_eq!(base("", "const void* v"), CuBase::Void);
    for v in Vector::all() {
        assert_eq!(base("", &format!("{} v", v.c_name())), CuBase::Elem(Elem::Vector(v)));
    }
}

#[test]
fn typedefs_usings_and_enums_resolve() {
    let defs = "typedef float dfloat;\nusing index_t = unsigned int;\ntypedef dfloat real;\n\
                enum Mode { A, B };\nenum class Small : uint8_t { X };\nenum struct Wide : long long { Y };\n\
                typedef enum { P, Q } Anon;";
    let cases = [
        ("dfloat x", Elem::F32),
        ("const real* x", Elem::F32),
        ("index_t n", Elem::U32),
        ("Mode m", Elem::I32),
        ("enum Mode m", Elem::I32),
        ("Small s", Elem::U8),
        ("Wide w", Elem::I64),
        ("Anon a", Elem::I32),
    ];
    for (param, elem) in cases {
        assert_eq!(base(defs, param), CuBase::Elem(elem), "{param}");
    }
    assert_eq!(base("", "Mystery m"), CuBase::Unknown);
    assert!(matches!(base("typedef float* fptr;", "fptr p"), CuBase::Unreadable(_)));
}

#[test]
fn struct_layouts_follow_c_rules() {
    let s = layout("struct S { char a; int b; short c; };", "S");
    assert_eq!((s.size, s.align), (12, 4));
    assert_eq!(fields(&s), [("a", 0, 1), ("b", 4, 4), ("c", 8, 2)]);

    let s = layout("struct __align__(16) P { float a; double b; float w[4]; short tag; };", "P");
    assert_eq!((s.size, s.align), (48, 16));
    assert_eq!(fields(&s), [("a", 0, 4), ("b", 8, 8), ("w", 16, 16), ("tag", 32, 2)]);

    let s = layout("struct alignas(32) A { float x; };", "A");
    assert_eq!((s.size, s.align), (32, 32));

    let s = layout("struct F { char c; alignas(8) int x; float m[3][2]; };", "F");
    assert_eq!(fields(&s), [("c", 0, 1), ("x", 8, 4), ("m", 12, 24)]);
    assert_eq!((s.size, s.align), (40, 8));
    assert_eq!(s.fields[2].dims, [3, 2]);

    // Vector fields take their CUDA alignment; pointers are 8 bytes.
    let s = layout("typedef struct { float x; float4 v; half h; const float* p; } V;", "V");
    assert_eq!(fields(&s), [("x", 0, 4), ("v", 16, 16), ("h", 32, 2), ("p", 40, 8)]);
    assert_eq!((s.size, s.align), (48, 16));
    assert_eq!(s.fields[3].ty, CFieldType::Pointer);
}

#[test]
fn nested_structs_members_and_declarators() {
    let defs = "struct Inner { int id; short kind; };\n\
                struct Outer {\n  float a, b;\n  Inner in;\n  static const int K = 3;\n\
                  __device__ float sum() const { return a + b; }\n  Outer() = default;\n  int n = 4;\n};";
    let s = layout(defs, "Outer");
    assert_eq!(fields(&s), [("a", 0, 4), ("b", 4, 4), ("in", 8, 8), ("n", 16, 4)]);
    assert_eq!((s.size, s.align), (20, 4));
    match &s.fields[2].ty {
        CFieldType::Struct(inner) => assert_eq!((inner.name.as_str(), inner.size), ("Inner", 8)),
        other => panic!("{other:?}"),
    }
}

#[test]
fn unreadable_structs_say_why() {
    let cases = [
        ("struct E {};", "E", "has no fields"),
        ("union U { float f; int i; };", "U", "is a union"),
        ("struct B { int a : 3; };", "B", "bit-field"),
        ("struct N { float w[LEN]; };", "N", "array length `LEN`"),
        ("struct D : Base { int a; };", "D", "base class"),
        ("#pragma pack(1)\nstruct P { char a; int b; };", "P", "#pragma pack"),
        ("struct X { Unknown u; };", "X", "does not define"),
        ("struct V { virtual void f(); int a; };", "V", "virtual"),
    ];
    for (defs, name, why) in cases {
        match base(defs, &format!("{name} p")) {
            CuBase::Unreadable(msg) => assert!(msg.contains(why), "{name}: {msg}"),
            other => panic!("{name}: {other:?}"),
        }
    }
}

#[test]
fn builtins_win_over_header_definitions_and_functions_are_not_definitions() {
    // A preprocessed file defines float4 and __half as structs of the CUDA headers.
    let defs = "struct __attribute__((aligned(16))) float4 { float x, y, z, w; };\n\
                struct __half { unsigned short __x; };\n\
                struct Params { float a; };\n\
                struct Params make() { return Params{}; }";
    assert_eq!(base(defs, "float4 v"), CuBase::Elem(Elem::Vector(Vector::Float4)));
    assert_eq!(base(defs, "__half v"), CuBase::Elem(Elem::F16));
    assert_eq!(layout(defs, "Params").size, 4);
}

#[test]
fn a_define_is_named_as_such() {
    match base("#define REAL float", "REAL* x") {
        CuBase::Unreadable(msg) => assert!(msg.contains("`REAL` is a `#define` (line 1)"), "{msg}"),
        other => panic!("{other:?}"),
    }
}
