//! `kgraph declare` (`suggest_declarations`) against what nvcc compiled: the kernels in
//! `tests/compiled/` built with the real pipeline (nvcc required) into a scratch folder, so
//! C++ kernels are declared from the record, every instantiation by its C++ name, each
//! declaration checked by the macro to bind, and each skipped kernel with its reason.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use kgraph_build::KernelBuild;
use kgraph_codegen::{expand_kernel, suggest_declarations, Config, Suggestion};
use proc_macro2::TokenStream;

mod expansion_support;
use expansion_support::errors;

const MANIFEST: &str = env!("CARGO_MANIFEST_DIR");

fn kernel_dir() -> PathBuf {
    Path::new(MANIFEST).join("tests/compiled")
}

/// The configuration reading the records of one build of `tests/compiled`.
fn config() -> Config {
    static OUT: OnceLock<PathBuf> = OnceLock::new();
    let out = OUT.get_or_init(|| {
        let nvcc = kgraph_build::find_nvcc(Path::new(MANIFEST))
            .unwrap_or_else(|| panic!("these tests need nvcc: {}", kgraph_build::HOW_TO_GET_NVCC))
            .path;
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("declare-compiled");
        KernelBuild::new()
            .kernel_dir(kernel_dir())
            .out_dir(&out)
            .archs(["sm_90"])
            .nvcc(nvcc)
            .emit_cargo_directives(false)
            .run()
            .unwrap_or_else(|e| panic!("tests/compiled did not build:\n{e}"));
        out
    });
    Config::new(kernel_dir(), MANIFEST).with_record_dir(out)
}

fn declared(file: &str, config: &Config) -> Vec<Suggestion> {
    suggest_declarations(file, config).unwrap_or_else(|e| panic!("{file}: {e}"))
}

fn text<'s>(s: &'s [Suggestion], kernel: &str) -> &'s str {
    let found = s.iter().find(|s| s.kernel == kernel).unwrap_or_else(|| panic!("no `{kernel}` in {s:#?}"));
    &found.declaration.as_ref().unwrap_or_else(|e| panic!("{kernel}: {e}")).text
}

/// Expands a printed declaration (`#[kernel(<attr>)] <item>`) as the macro would.
fn expand_printed(declaration: &str, config: &Config) -> Vec<String> {
    let (attr, item) = declaration.strip_prefix("#[kernel(").and_then(|d| d.split_once(")] ")).unwrap();
    let out = expand_kernel(attr.parse::<TokenStream>().unwrap(), item.parse::<TokenStream>().unwrap(), config);
    errors(&out)
}

#[test]
fn every_instantiation_is_declared_by_its_cpp_name() {
    let c = config();
    let s = declared("cpp_args.cu", &c);
    let names: Vec<&str> = s.iter().map(|s| s.kernel.as_str()).collect();
    for want in [
        "act_mul<float, square<float>, true>",
        "act_mul<float, twice<float>, false>",
        "combine<Mode::Max, ops::Reduce::Sum>",
        "fill<double, 128>",
        "hidden_scale",
        "static_scale",
        "reset",
        "gather_rows",
    ] {
        assert!(names.contains(&want), "`{want}` not among {names:?}");
    }
    assert_eq!(
        text(&s, "act_mul<float, square<float>, true>"),
        "#[kernel(\"cpp_args.cu\", name = \"act_mul<float, square<float>, true>\")] \
         pub fn act_mul_float_square_float_true(out: &mut [f32], r#in: &[f32], d: i32);"
    );
    assert_eq!(
        text(&s, "map_first<negate, float>"),
        "#[kernel(\"cpp_args.cu\", name = \"map_first<negate, float>\")] pub fn map_first_negate_float(x: &mut [f32], scale: f32, n: i32);",
        "the type parameter after a function pointer is substituted"
    );
    assert_eq!(
        text(&s, "fill<double, 128>"),
        "#[kernel(\"cpp_args.cu\", name = \"fill<double, 128>\")] pub fn fill_double_128(out: &mut [f64], n: i32);"
    );
    assert_eq!(
        text(&s, "reset"),
        "#[kernel(\"cpp_args.cu\")] pub fn reset(x: &mut [f32], n: i32, force_reset: i32);",
        "a prototype's default argument is read past"
    );
    // Each printed line binds as printed.
    for suggestion in &s {
        let d = suggestion.declaration.as_ref().unwrap_or_else(|e| panic!("{}: {e}", suggestion.kernel));
        assert_eq!(expand_printed(&d.text, &c), Vec::<String>::new(), "{}", d.text);
    }
}

#[test]
fn function_template_arguments_bind_with_or_without_the_address_of() {
    let c = config();
    for name in ["act_mul<float, twice<float>, false>", "act_mul<float, &twice<float>, false>"] {
        let decl =
            format!("#[kernel(\"cpp_args.cu\", name = {name:?})] pub fn a(out: &mut [f32], r#in: &[f32], d: i32);");
        assert_eq!(expand_printed(&decl, &c), Vec::<String>::new(), "{name}");
    }
    let wrong = "#[kernel(\"cpp_args.cu\", name = \"act_mul<float, twice<float>, true>\")] pub fn a(out: &mut [f32], r#in: &[f32], d: i32);";
    let errors = expand_printed(wrong, &c);
    assert!(errors.iter().any(|e| e.contains("act_mul<float, square<float>, true>")), "{errors:?}");
}

#[test]
fn enumerator_arguments_bind_by_name_or_by_value() {
    let c = config();
    for name in
        ["combine<Mode::Max, ops::Reduce::Sum>", "combine<Mode::Max, ops::Sum>", "combine<(Mode)1, (ops::Reduce)0>"]
    {
        let decl = format!("#[kernel(\"cpp_args.cu\", name = {name:?})] pub fn c(out: &mut [f32], a: &[f32], n: i32);");
        assert_eq!(expand_printed(&decl, &c), Vec::<String>::new(), "{name}");
    }
    let wrong = "#[kernel(\"cpp_args.cu\", name = \"combine<Mode::Add, ops::Sum>\")] pub fn c(out: &mut [f32], a: &[f32], n: i32);";
    let errors = expand_printed(wrong, &c);
    assert!(errors.iter().any(|e| e.contains("combine<(Mode)1, (ops::Reduce)0>")), "{errors:?}");
}

#[test]
fn internal_linkage_is_declared_with_the_symbol_it_loads() {
    let s = declared("cpp_args.cu", &config());
    for kernel in ["hidden_scale", "static_scale"] {
        let d = s.iter().find(|s| s.kernel == kernel).unwrap().declaration.as_ref().unwrap();
        let symbol = d.internal_symbol.as_deref().unwrap_or_else(|| panic!("{kernel}: not internal"));
        assert!(symbol.starts_with("_Z") && symbol.contains(kernel), "{symbol}");
    }
    let reset = s.iter().find(|s| s.kernel == "reset").unwrap().declaration.as_ref().unwrap();
    assert_eq!(reset.internal_symbol, None);
}

#[test]
fn a_read_only_integer_array_among_pointers_is_flagged_as_an_index() {
    let s = declared("cpp_args.cu", &config());
    let index = |kernel: &str| {
        s.iter().find(|s| s.kernel == kernel).unwrap().declaration.as_ref().unwrap().index_arrays.clone()
    };
    assert_eq!(index("gather_rows"), ["index"]);
    assert_eq!(index("reset"), Vec::<String>::new());
    assert_eq!(index("act_mul<float, square<float>, true>"), Vec::<String>::new());
}

#[test]
fn overloads_are_declared_by_their_mangled_symbols() {
    let c = config();
    let s = declared("cpp.cu", &c);
    let texts: Vec<&String> =
        s.iter().filter(|s| s.kernel == "over").map(|s| &s.declaration.as_ref().unwrap().text).collect();
    assert_eq!(texts.len(), 2, "{s:#?}");
    assert!(texts[0].contains("name = \"_Z4overPfi\"") && texts[0].contains("pub fn over("), "{}", texts[0]);
    assert!(texts[1].contains("name = \"_Z4overPdi\"") && texts[1].contains("pub fn over_2("), "{}", texts[1]);
    assert!(s.iter().any(|s| s.kernel == "gemm<float, 128>"));
    let skipped = s.iter().find(|s| s.kernel == "uninstantiated").expect("the template nvcc did not compile is named");
    let why = skipped.declaration.as_ref().unwrap_err();
    assert!(why.contains("explicit instantiation") && skipped.line == 16, "{why} (line {})", skipped.line);
    assert!(s.iter().any(|s| s.kernel == "twice<double>"));
}

#[test]
fn without_a_record_each_cpp_kernel_says_why() {
    let c = Config::new(kernel_dir(), MANIFEST);
    let s = declared("cpp_args.cu", &c);
    let act = s.iter().find(|s| s.kernel == "act_mul").expect("the template is named");
    let why = act.declaration.as_ref().unwrap_err();
    assert!(why.contains("C++ linkage") && why.contains("record"), "{why}");
    assert!(s.iter().find(|s| s.kernel == "reset").unwrap().declaration.is_ok());
}
