//! Layout review: C structs whose layout kgraph's reader got wrong, so that a Rust twin matching
//! the computed layout passed `#[kernel]`'s checks while nvcc compiled another one. Each case
//! where the real struct is larger than the computed one is an out-of-bounds access on the
//! device through a checked launch (the extents count elements of the twin's size), and one
//! hid a function pointer from the raw-handle rule. The expected layouts are nvcc's (x86-64
//! Linux, GCC's attribute rules); where kgraph cannot know the layout it must refuse the struct.

use kgraph_codegen::cuda::signature::{find_kernel, CuBase};
use kgraph_codegen::cuda::types::CStruct;

/// The base type of the parameter `const <name>* p` after the definitions `defs`.
fn base(defs: &str, name: &str) -> CuBase {
    let src = format!("{defs}\nextern \"C\" __global__ void k(const {name}* p) {{}}");
    let k = find_kernel(&src, "k").unwrap_or_else(|e| panic!("{defs}: {e:?}"));
    k.params[0].ty.base.clone()
}

fn layout(defs: &str, name: &str) -> CStruct {
    match base(defs, name) {
        CuBase::Struct(s) => *s,
        other => panic!("{defs}: {other:?}"),
    }
}

/// (size, align, [(field, offset, size)]).
type Shape = (usize, usize, Vec<(String, usize, usize)>);

fn shape(defs: &str, name: &str) -> Shape {
    let s = layout(defs, name);
    (s.size, s.align, s.fields.iter().map(|f| (f.name.clone(), f.offset, f.size)).collect())
}

fn fields(list: &[(&str, usize, usize)]) -> Vec<(String, usize, usize)> {
    list.iter().map(|(n, o, s)| (n.to_string(), *o, *s)).collect()
}

/// The struct is refused, with a reason containing `why`.
fn refused(defs: &str, name: &str, why: &str) {
    match base(defs, name) {
        CuBase::Unreadable(msg) => assert!(msg.contains(why), "{defs}: {msg}"),
        other => panic!("{defs}: expected a refusal containing {why:?}, got {other:?}"),
    }
}

#[test]
fn attributes_after_the_closing_brace_align_the_struct() {
    // GCC applies attributes between `}` and the `;` (or a typedef's names) to the type:
    // nvcc makes these 16 bytes, aligned to 16. kgraph read 12 bytes, aligned to 4.
    let want = (16, 16, fields(&[("x", 0, 4), ("y", 4, 4), ("z", 8, 4)]));
    assert_eq!(shape("struct S { float x, y, z; } __attribute__((aligned(16)));", "S"), want);
    assert_eq!(shape("typedef struct { float x, y, z; } __attribute__((aligned(16))) S;", "S"), want);
    assert_eq!(shape("typedef struct T { float x, y, z; } __align__(16) S;", "T"), want);
    assert_eq!(shape("struct [[gnu::aligned(16)]] S { float x, y, z; };", "S"), want);
    // Packing is refused wherever it is written.
    refused("struct S { char c; float x; } __attribute__((packed));", "S", "alignment");
    refused("struct S { char c; float x; } [[gnu::packed]];", "S", "alignment");
    refused("struct [[gnu::packed]] S { char c; float x; };", "S", "alignment");
}

#[test]
fn pragma_pack_is_seen_however_spelled() {
    for pragma in
        ["#pragma  pack(1)", "#pragma\tpack(push, 1)", "#  pragma pack(1)", "_Pragma(\"pack(1)\") typedef int I;"]
    {
        refused(&format!("{pragma}\nstruct S {{ char c; float x; }};"), "S", "#pragma pack");
    }
}

#[test]
fn default_member_initializers_with_parentheses_are_fields() {
    // The `(` of an initializer was taken for a member function's, and the field dropped.
    let want = (8, 4, fields(&[("a", 0, 4), ("b", 4, 4)]));
    assert_eq!(shape("struct S { float a = float(1); float b; };", "S"), want);
    assert_eq!(shape("struct S { int a = (1 << 3); float b; };", "S"), want);
    assert_eq!(shape("struct S { float a = float(1), b{2}; };", "S"), want);
    assert_eq!(shape("struct S { float a{float(1)}; float b; };", "S"), want);
    // An aligned field with a brace initializer was dropped as a "function body".
    assert_eq!(
        shape("struct S { alignas(16) float v{0}; float w; };", "S"),
        (16, 16, fields(&[("v", 0, 4), ("w", 4, 4)]))
    );
    // Member functions, constructors and destructors still take no room.
    let s = "struct S { S(int); S() : x(0) {} float x; float get() const { return x; } ~S(); \
             S& operator=(const S&) = default; static_assert(sizeof(float) == 4, \"f\"); \
             inline static constexpr int N = 4; __attribute__((unused)) static float s; };";
    assert_eq!(shape(s, "S"), (4, 4, fields(&[("x", 0, 4)])));
    assert_eq!(shape("typedef struct T { T(int); float x; } S;", "S"), (4, 4, fields(&[("x", 0, 4)])));
}

#[test]
fn function_pointers_and_parenthesised_declarators_are_refused() {
    // `void (*cb)(int)` was skipped as a member function: 8 bytes nvcc lays out, and a code
    // pointer safe code could set, hidden from the raw-handle rule.
    for member in ["void (*cb)(int);", "float (*rows)[4];", "decltype(1.0) d;", "Inner (x);", "float (x);"] {
        refused(&format!("struct Inner {{ int i; }};\nstruct S {{ {member} float x; }};"), "S", "declarator");
    }
}

#[test]
fn names_with_two_definitions_are_refused() {
    // kgraph reads names without namespaces: the last definition won, here the smaller one.
    let defs = "namespace a { struct S { double x[4]; }; }\nnamespace b { struct S { float x; }; }";
    refused(defs, "S", "two different definitions");
    refused(
        "namespace a { typedef double real; }\nnamespace b { typedef float real; }\nstruct S { real x; };",
        "S",
        "two different definitions",
    );
    // Repeats of one definition and the C idiom `typedef struct P P;` are one type.
    assert_eq!(shape("typedef struct P P;\nstruct P { float x; };", "P"), (4, 4, fields(&[("x", 0, 4)])));
    assert_eq!(shape("struct P { float x; };\ntypedef struct P P;", "P"), (4, 4, fields(&[("x", 0, 4)])));
    assert_eq!(shape("typedef struct P { float x; } P;", "P"), (4, 4, fields(&[("x", 0, 4)])));
}

#[test]
fn member_typedefs_are_not_read_at_file_scope() {
    // Inside `S`, `F` is `double` (8 bytes); kgraph looked it up at file scope (`float`).
    refused("typedef float F;\nstruct S { typedef double F; F x; };", "S", "defines inside itself");
    refused("struct S { using G = double; G x; };", "S", "defines inside itself");
}

#[test]
fn plain_enums_wider_than_int_are_refused() {
    // C++ gives an enum without a fixed underlying type one that holds every value: 8 bytes
    // here, where kgraph assumed `int`.
    refused("enum Big { X = 0x100000000 };\nstruct S { Big b; float x; };", "S", "wider than an `int`");
    refused("enum Big { X = 1ULL << 40 };\nstruct S { Big b; float x; };", "S", "wider than an `int`");
    refused("enum Big { X = 1L };\nstruct S { Big b; float x; };", "S", "wider than an `int`");
    refused("enum Mixed { X = -1, Y = 0xFFFFFFFF };\nstruct S { Mixed b; float x; };", "S", "wider than an `int`");
    // Those that fit stay `int`-sized; a fixed underlying type is taken as written.
    let want = (8, 4, fields(&[("b", 0, 4), ("x", 4, 4)]));
    assert_eq!(shape("enum E { A, B = 1 << 4, C, D = -3 };\nstruct S { E b; float x; };", "S"), want);
    assert_eq!(shape("enum U { A = 0xFFFFFFFF };\nstruct S { U b; float x; };", "S"), want);
    let wide = (16, 8, fields(&[("b", 0, 8), ("x", 8, 4)]));
    assert_eq!(shape("enum W : long long { A };\nstruct S { W b; float x; };", "S"), wide);
}

#[test]
fn typedefs_of_texture_objects_are_spelled_as_handles() {
    // The raw-handle rule finds handles by the type's name: through a typedef it saw `Tex`.
    let s =
        layout("typedef cudaTextureObject_t Tex;\nusing Surf = Tex;\nstruct S { Tex t; const Surf u; int n; };", "S");
    let spelled: Vec<&str> = s.fields.iter().map(|f| f.spelled.as_str()).collect();
    assert_eq!(spelled, ["cudaTextureObject_t", "cudaTextureObject_t", "int"]);
}
