//! The `.cu` reader on hand-written inputs: the tokenizer, and kernel signatures in every
//! spelling kgraph accepts or reports.

use kgraph_codegen::cuda::lex::lex;
use kgraph_codegen::cuda::signature::{find_kernel, kernel_names, CuBase, CuError, CuParam, CuType};
use kgraph_codegen::syntax::model::Elem;

fn ty(p: &CuParam) -> String {
    p.ty.to_string()
}

fn sig(src: &str, name: &str) -> Vec<(Option<String>, String, usize)> {
    let k = find_kernel(src, name).unwrap_or_else(|e| panic!("{name}: {e:?}"));
    k.params.iter().map(|p| (p.name.clone(), ty(p), p.line)).collect()
}

#[test]
fn reads_a_plain_kernel() {
    let src = "// header\nextern \"C\" __global__ void axpb(const float* __restrict__ x, float* y, float a, int n) {\n  y[0] = x[0];\n}\n";
    let k = find_kernel(src, "axpb").unwrap();
    assert_eq!(k.line, 2);
    assert_eq!(k.signature(), "axpb(const float* x, float* y, float a, int n)");
    assert_eq!(
        k.params[0].ty,
        CuType { base: CuBase::Elem(Elem::F32), spelled: "float".into(), pointers: 1, is_const: true }
    );
    assert!(!k.params[1].ty.is_const);
    assert_eq!(k.params[3].ty.base, CuBase::Elem(Elem::I32));
}

#[test]
fn const_after_type_restrict_spellings_and_line_breaks() {
    let src = "extern \"C\"\n__global__\nvoid\nk(\n float const * __restrict x, // the input\n /* out */ float *__restrict__ y,\n const int n)\n{}";
    assert_eq!(
        sig(src, "k"),
        vec![
            (Some("x".into()), "const float*".into(), 5),
            (Some("y".into()), "float*".into(), 6),
            (Some("n".into()), "const int".into(), 7),
        ]
    );
}

#[test]
fn const_pointer_to_mutable_data_is_writable() {
    let s = sig("extern \"C\" __global__ void k(float* const y) {}", "k");
    assert_eq!(s[0].1, "float*");
}

#[test]
fn launch_bounds_extern_c_blocks_and_namespaces() {
    let src = r#"
namespace detail { __device__ float sq(float v) { return v * v; } }
extern "C" {
__global__ void __launch_bounds__(256, 2) a(double* out) { out[0] = detail::sq(1.0f); }
__global__ void b(void) {}
}
namespace outer { extern "C" __global__ void c(size_t n, unsigned long long m, long q) {} }
"#;
    assert_eq!(sig(src, "a"), vec![(Some("out".into()), "double*".into(), 4)]);
    assert!(find_kernel(src, "b").unwrap().params.is_empty());
    let c = find_kernel(src, "c").unwrap();
    let bases: Vec<CuBase> = c.params.iter().map(|p| p.ty.base.clone()).collect();
    assert_eq!(
        bases,
        vec![CuBase::Elem(Elem::U64); 2].into_iter().chain([CuBase::Elem(Elem::I64)]).collect::<Vec<_>>()
    );
    assert_eq!(kernel_names(src), vec!["a", "b", "c"]);
}

#[test]
fn launch_bounds_are_read_when_they_are_numbers() {
    let src = r#"
#define BLOCK 128
extern "C" __global__ void
__launch_bounds__(256, 2) a(float* out) {}
extern "C" __global__ void __launch_bounds__(0x80u) b(float* out) {}
extern "C" __global__ void __launch_bounds__(BLOCK) c(float* out) {}
extern "C" __global__ void d(float* out) {}
"#;
    let bounds = |name: &str| find_kernel(src, name).unwrap().launch_bounds.map(|b| (b.max_threads, b.line));
    assert_eq!(bounds("a"), Some((256, 4)));
    assert_eq!(bounds("b"), Some((128, 5)));
    assert_eq!(bounds("c"), None, "a macro is not guessed at");
    assert_eq!(bounds("d"), None);
}

#[test]
fn every_element_type_spelling() {
    let cases = [
        ("float", Elem::F32),
        ("double", Elem::F64),
        ("signed char", Elem::I8),
        ("int8_t", Elem::I8),
        ("unsigned char", Elem::U8),
        ("uint8_t", Elem::U8),
        ("short", Elem::I16),
        ("short int", Elem::I16),
        ("int16_t", Elem::I16),
        ("unsigned short", Elem::U16),
        ("uint16_t", Elem::U16),
        ("int", Elem::I32),
        ("signed", Elem::I32),
        ("int32_t", Elem::I32),
        ("std::int32_t", Elem::I32),
        ("unsigned", Elem::U32),
        ("unsigned int", Elem::U32),
        ("uint32_t", Elem::U32),
        ("long long", Elem::I64),
        ("long long int", Elem::I64),
        ("long", Elem::I64),
        ("int64_t", Elem::I64),
        ("unsigned long long", Elem::U64),
        ("uint64_t", Elem::U64),
        ("size_t", Elem::U64),
    ];
    for (c, elem) in cases {
        let src = format!("extern \"C\" __global__ void k({c} v, const {c}* p) {{}}");
        let k = find_kernel(&src, "k").unwrap_or_else(|e| panic!("{c}: {e:?}"));
        assert_eq!(k.params[0].ty.base, CuBase::Elem(elem), "{c}");
        assert_eq!((k.params[1].ty.pointers, k.params[1].ty.is_const), (1, true), "{c}");
    }
}

#[test]
fn types_without_a_kgraph_counterpart_are_other() {
    for c in ["long double", "double4", "dim3", "char3", "float1", "float**"] {
        let src = format!("extern \"C\" __global__ void k({c} v) {{}}");
        let k = find_kernel(&src, "k").unwrap_or_else(|e| panic!("{c}: {e:?}"));
        let t = &k.params[0].ty;
        assert!(t.base == CuBase::Other || t.pointers > 1, "{c}: {t:?}");
    }
}

#[test]
fn array_parameters_are_pointers_and_unnamed_parameters_are_read() {
    let s = sig("extern \"C\" __global__ void k(const float x[], int*, int) {}", "k");
    assert_eq!(
        s,
        vec![(Some("x".into()), "const float*".into(), 1), (None, "int*".into(), 1), (None, "int".into(), 1)]
    );
}

#[test]
fn macros_in_the_parameter_list_cannot_be_verified() {
    let cases = [
        ("float* RESTRICT x", 0, "RESTRICT"),
        ("KERNEL_ARGS", 0, "KERNEL_ARGS"),
        ("ARGS(float), int n", 0, "ARGS"),
        ("float& r", 0, "&"),
    ];
    for (params, index, token) in cases {
        let src = format!("#define REAL float\nextern \"C\" __global__ void k({params}) {{}}");
        match find_kernel(&src, "k") {
            Err(CuError::Unverifiable { param, token: t, line, .. }) => {
                assert_eq!((param, t.as_str(), line), (index, token, 2), "{params}")
            }
            other => panic!("{params}: {other:?}"),
        }
    }
}

#[test]
fn a_type_name_the_file_does_not_define_is_unknown() {
    for (params, index) in [("REAL* x, int n", 0), ("const float* x, const REAL* y", 1), ("Params p", 0)] {
        let src = format!("extern \"C\" __global__ void k({params}) {{}}");
        let k = find_kernel(&src, "k").unwrap_or_else(|e| panic!("{params}: {e:?}"));
        assert_eq!(k.params[index].ty.base, CuBase::Unknown, "{params}");
    }
}

#[test]
fn a_function_like_macro_parameter_reports_the_macro_name() {
    let err = find_kernel("extern \"C\" __global__ void k(ARGS(float)) {}", "k").unwrap_err();
    assert!(matches!(err, CuError::Unverifiable { ref token, .. } if token == "ARGS"), "{err:?}");
}

#[test]
fn cpp_mangled_kernels_are_told_apart() {
    let src = "__global__ void mangled(float* x) {}\ntemplate <typename T>\n__global__ void tmpl(T* x) {}\n";
    assert_eq!(find_kernel(src, "mangled"), Err(CuError::NotExternC { name: "mangled".into(), line: 1 }));
    assert_eq!(find_kernel(src, "tmpl"), Err(CuError::NotExternC { name: "tmpl".into(), line: 3 }));
}

#[test]
fn missing_kernels_list_what_exists_and_spot_device_functions() {
    let src = "extern \"C\" __global__ void one() {}\n__device__ float helper(float v) { return v; }\nextern \"C\" __global__ void two(int n);";
    assert_eq!(
        find_kernel(src, "three"),
        Err(CuError::NotFound { name: "three".into(), kernels: vec!["one".into(), "two".into()], non_kernel: None })
    );
    assert!(matches!(find_kernel(src, "helper"), Err(CuError::NotFound { non_kernel: Some(2), .. })));
}

#[test]
fn calls_inside_bodies_and_commented_out_kernels_are_not_declarations() {
    let src = "extern \"C\" __global__ void outer(int n) { inner(n); }\n// extern \"C\" __global__ void ghost(int n) {}\n/* extern \"C\" __global__ void ghost2(int n) {} */\n#if 0\n#endif\n";
    assert!(matches!(find_kernel(src, "inner"), Err(CuError::NotFound { non_kernel: None, .. })));
    assert!(matches!(find_kernel(src, "ghost"), Err(CuError::NotFound { .. })));
    assert!(matches!(find_kernel(src, "ghost2"), Err(CuError::NotFound { .. })));
}

#[test]
fn a_prototype_then_a_definition_is_one_kernel() {
    let src =
        "extern \"C\" __global__ void k(const float*, int);\nextern \"C\" __global__ void k(const float* x, int n) {}";
    // The definition's names count (a declaration's names are checked against them).
    assert_eq!(sig(src, "k"), vec![(Some("x".into()), "const float*".into(), 2), (Some("n".into()), "int".into(), 2)]);
    let bounds_on_prototype =
        "extern \"C\" __global__ void __launch_bounds__(128) k(int);\nextern \"C\" __global__ void k(int n) {}";
    assert_eq!(find_kernel(bounds_on_prototype, "k").unwrap().launch_bounds.map(|b| b.max_threads), Some(128));
}

#[test]
fn never_panics_on_truncated_or_odd_input() {
    let src = "extern \"C\" __global__ void k(const float* x, int n) { if (n) { x[0]; } }";
    for end in 0..=src.len() {
        let _ = find_kernel(&src[..end], "k");
    }
    for odd in [
        "(((",
        "))){{}}}",
        "extern \"C\" {{{",
        "k(,)",
        "__global__ k(",
        "}}}__global__ void k(int,,)",
        "extern \"C\" __global__ void k(int n,)",
    ] {
        let _ = find_kernel(odd, "k");
    }
}

// The tokenizer.

fn texts(src: &str) -> Vec<(String, usize)> {
    lex(src).into_iter().map(|t| (t.text(), t.line)).collect()
}

#[test]
fn drops_comments_and_directives_and_counts_lines() {
    let src = "#define X(a) \\\n  a\n// c\n/* a\n b */ int x; // t\n  # pragma once\n::y";
    assert_eq!(
        texts(src),
        vec![("int".into(), 5), ("x".into(), 5), (";".into(), 5), ("::".into(), 7), ("y".into(), 7)]
    );
}

#[test]
fn strings_chars_and_numbers_are_single_tokens() {
    let toks = texts(r#"extern "C" 'x' '\'' 1.5e-3f R"d(a")b)d" u8"s""#);
    let words: Vec<&str> = toks.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(words, vec!["extern", "\"C\"", "'x'", "'\\''", "1.5e-3f", "\"a\")b\"", "\"s\""]);
}

#[test]
fn unterminated_constructs_end_quietly() {
    assert_eq!(texts("a /* never closed").len(), 1);
    assert_eq!(texts("\"open").len(), 1);
    assert_eq!(texts("R\"x(open").len(), 1);
}

#[test]
fn hash_inside_a_line_is_punctuation() {
    assert_eq!(texts("a # b").len(), 3);
}

#[test]
fn default_arguments_of_a_prototype_are_read_past() {
    // A prototype with defaults (`int force_reset = 0`) and its definition without them.
    let src = "extern \"C\" __global__ void reset(float* x, int n, int force_reset = 0, float s = 1.0f);\n\
               extern \"C\" __global__ void reset(float* x, int n, int force_reset, float s) {}\n";
    let params = sig(src, "reset");
    let shown: Vec<(Option<String>, String)> = params.into_iter().map(|(n, t, _)| (n, t)).collect();
    let want = [("x", "float*"), ("n", "int"), ("force_reset", "int"), ("s", "float")];
    assert_eq!(shown, want.map(|(n, t)| (Some(n.to_string()), t.to_string())).to_vec());
    let only_prototype = "extern \"C\" __global__ void reset(float* x, int force_reset = 0);\n";
    let params = sig(only_prototype, "reset");
    assert_eq!(params.len(), 2);
    assert_eq!(params[1].0.as_deref(), Some("force_reset"));
}
