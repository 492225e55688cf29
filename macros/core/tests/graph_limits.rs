//! Inputs a generator or a typo produces that once crashed, hung or were silently wrong: very
//! deep expressions, one huge line of bad arguments, float literals out of their dtype's range,
//! integers out of range for every integer dtype, and `[kernels] module` paths that do not name
//! the declarations' module. Each must be a located error (`g.toml:line:col`), bounded in size.

use kgraph_codegen::graph::spec::diag::MAX_ERRORS;
use kgraph_codegen::graph::spec::expr::MAX_DEPTH;
use kgraph_codegen::graph::{analyze, Analysis, GraphRequest};

const DECLS: &str = r#"
#[kernel("k.cu", unsafe(extents))] pub fn k_scale(x: &[f32; n], y: &mut [f32; n], s: f32, n: i32);
#[kernel("k.cu", unsafe(extents))] pub fn k_wide(y: &mut [f32; 1], d: f64, a: i8, b: u8, c: i16, e: u16, f: i32, g: u32, h: i64, i: u64);
pub mod inner {
    pub mod deeper {
        #[kernel("k.cu", unsafe(extents))] pub fn k_inner(y: &mut [f32; n], n: i32);
    }
}
"#;

fn run_with(module: &str, body: &str) -> Result<Analysis, Vec<String>> {
    let text = format!("[kernels]\nsource = \"src/decls.rs\"\nmodule = \"{module}\"\n{body}");
    let read_file = |_: &str| Ok(DECLS.to_string());
    let req =
        GraphRequest { spec_path: "g.toml", spec_text: &text, struct_name: None, root: "", read_file: &read_file };
    analyze(&req)
}

fn errors_with(module: &str, body: &str) -> Vec<String> {
    match run_with(module, body) {
        Ok(_) => panic!("spec must not validate:\n{body}"),
        Err(e) => e,
    }
}

fn errors(body: &str) -> Vec<String> {
    errors_with("crate::decls", body)
}

/// `[dims] n`, input `x`, output `y`, then one `k_scale` node with `grid` and `n` as given.
fn scale_spec(grid: &str, n_arg: &str) -> String {
    format!(
        "[dims]\nn = 64\n[buffers.x]\ndtype = \"f32\"\nlen = \"n\"\nrole = \"input\"\n[buffers.y]\ndtype = \"f32\"\nlen = \"n\"\nrole = \"output\"\n\
         [[node]]\nkernel = \"k_scale\"\ngrid = {grid}\nblock = 64\nargs = {{ x = \"x\", y = \"y\", s = 1.0, n = {n_arg} }}\n"
    )
}

/// One error at `line` of the spec (1-based, counting the 3 lines of `[kernels]`).
fn assert_one_error_at(errors: &[String], line: usize, needle: &str) {
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert!(errors[0].starts_with(&format!("g.toml:{line}:")), "{}", errors[0]);
    assert!(errors[0].contains(needle), "missing `{needle}` in {}", errors[0]);
}

#[test]
fn deep_expressions_are_located_errors_not_a_stack_overflow() {
    let deep = 2000;
    let too_deep = format!("expression nested deeper than {MAX_DEPTH} levels");
    let parens = format!("\"{}n{}\"", "(".repeat(deep), ")".repeat(deep));
    let chain = format!("\"n{}\"", " + 1".repeat(deep));
    let negations = format!("\"{}n\"", "-".repeat(deep));
    let calls = format!("\"{}n{}\"", "ceil(".repeat(deep), ")".repeat(deep));
    for expr in [&parens, &chain, &negations, &calls] {
        // As a grid (line 16) and as a value argument (line 18).
        assert_one_error_at(&errors(&scale_spec(expr, "\"n\"")), 16, &too_deep);
        assert_one_error_at(&errors(&scale_spec("1", expr)), 18, &too_deep);
    }
    // As a buffer length (line 8, `len` of `x`).
    let spec = scale_spec("1", "\"n\"").replacen("len = \"n\"", &format!("len = {chain}"), 1);
    assert_one_error_at(&errors(&spec), 8, &too_deep);
}

#[test]
fn expressions_up_to_the_depth_limit_still_evaluate() {
    let depth = MAX_DEPTH - 1;
    let parens = format!("\"{}n{}\"", "(".repeat(depth), ")".repeat(depth));
    let chain = format!("\"1{}\"", " + 0".repeat(depth - 1));
    for (grid, want) in [(&parens, 64), (&chain, 1)] {
        let a = run_with("crate::decls", &scale_spec(grid, "\"n\"")).unwrap_or_else(|e| panic!("{}", e.join("\n")));
        assert_eq!(a.ir.nodes[0].launch().expect("a kernel node").grid.value[0], want);
    }
}

#[test]
fn a_huge_line_of_bad_arguments_gives_bounded_messages() {
    // One 200 KB line: thousands of unknown arguments and unknown buffer names.
    let mut args = String::new();
    let mut i = 0;
    while args.len() < 200_000 {
        args += &format!(", bad{i} = \"nope{i}\"");
        i += 1;
    }
    let spec = scale_spec("1", "\"n\"").replace("n = \"n\" }", &format!("n = \"n\"{args} }}"));
    let errors = errors(&spec);
    let total: usize = errors.iter().map(String::len).sum();
    println!("{i} bad arguments on one line: {} errors shown, {total} bytes", errors.len());
    assert!(total < 1 << 20, "{total} bytes of errors");
    assert_eq!(errors.len(), MAX_ERRORS + 1);
    assert!(errors[MAX_ERRORS].contains(&format!("and {} more error(s)", i - MAX_ERRORS)), "{}", errors[MAX_ERRORS]);
    for e in &errors {
        assert!(e.starts_with("g.toml:18:"), "{e}");
        let quoted = e.lines().find(|l| l.starts_with(" 18 | ")).expect("the line is quoted");
        assert!(quoted.chars().count() <= 200, "quoted {} chars", quoted.chars().count());
        assert!(quoted.contains('…'), "a cut line is marked: {quoted}");
    }
}

#[test]
fn the_caret_of_a_cut_line_is_under_the_offending_text() {
    let filler = " ".repeat(5000);
    let spec = scale_spec("1", "\"n\"").replace("s = 1.0,", &format!("s = 1.0,{filler} q = 1,"));
    let errors = errors(&spec);
    let e = &errors[0];
    let lines: Vec<&str> = e.lines().collect();
    let quoted = lines[2].split_once(" | ").unwrap().1;
    let caret = lines[3].split_once(" | ").unwrap().1;
    let at = caret.chars().position(|c| c == '^').unwrap();
    let under: String = quoted.chars().skip(at).take(1).collect();
    assert_eq!(under, "q", "{e}");
    assert!(quoted.starts_with('…'), "{quoted}");
}

fn scalar_spec(dtype: &str, default: &str) -> String {
    format!("[scalars.s]\ndtype = \"{dtype}\"\ndefault = {default}\n{}", scale_spec("1", "\"n\""))
}

#[test]
fn float_defaults_out_of_their_dtype_are_located_errors() {
    for (dtype, value, needle) in [
        ("f32", "1e39", "is out of its range"),
        ("f32", "-3.5e38", "is out of its range"),
        ("f32", "1e-50", "is too small for it: it would round to 0"),
        ("f64", "1e309", "is out of its range"),
        ("f64", "-1e-400", "is too small for it: it would round to 0"),
    ] {
        let e = errors(&scalar_spec(dtype, value)).join("\n");
        assert!(e.contains(&format!("g.toml:6:11: scalar `s` is {dtype}: the value `{value}` {needle}")), "{e}");
    }
}

#[test]
fn float_literals_in_range_and_explicit_infinities_are_accepted() {
    for value in ["3.4028235e38", "-3.4028235e38", "1e-45", "0.0", "-0.0", "inf", "-inf", "nan", "+inf", "1_000.5"] {
        let spec = scale_spec("1", "\"n\"").replace("s = 1.0", &format!("s = {value}"));
        run_with("crate::decls", &spec).unwrap_or_else(|e| panic!("{value}: {}", e.join("\n")));
    }
    let spec = scale_spec("1", "\"n\"").replace("s = 1.0", "s = 1e39");
    assert_one_error_at(
        &errors(&spec),
        18,
        "parameter `s: f32` of `k_scale` is f32: the value `1e39` is out of its range",
    );
}

/// A `k_wide` node with one argument replaced.
fn wide_spec(param: &str, value: &str) -> String {
    let mut args: Vec<String> =
        ["d", "a", "b", "c", "e", "f", "g", "h", "i"].iter().map(|p| format!("{p} = 0")).collect();
    let i = ["d", "a", "b", "c", "e", "f", "g", "h", "i"].iter().position(|p| *p == param).unwrap();
    args[i] = format!("{param} = {value}");
    format!(
        "[buffers.y]\ndtype = \"f32\"\nlen = 4\nrole = \"output\"\n[[node]]\nkernel = \"k_wide\"\ngrid = 1\nblock = 1\nargs = {{ y = \"y\", {} }}\n",
        args.join(", ")
    )
}

#[test]
fn integers_out_of_range_are_located_errors_for_every_integer_dtype() {
    let cases: [(&str, &str, i128, i128); 8] = [
        ("a", "i8", i8::MIN.into(), i8::MAX.into()),
        ("b", "u8", 0, u8::MAX.into()),
        ("c", "i16", i16::MIN.into(), i16::MAX.into()),
        ("e", "u16", 0, u16::MAX.into()),
        ("f", "i32", i32::MIN.into(), i32::MAX.into()),
        ("g", "u32", 0, u32::MAX.into()),
        ("h", "i64", i64::MIN.into(), i64::MAX.into()),
        ("i", "u64", 0, u64::MAX.into()),
    ];
    for (param, dtype, min, max) in cases {
        for ok in [min, max] {
            run_with("crate::decls", &wide_spec(param, &ok.to_string())).unwrap_or_else(|e| panic!("{}", e.join("\n")));
        }
        for bad in [min - 1, max + 1] {
            // As a literal, as an expression (which is always exact), and as a scalar's default.
            for value in [bad.to_string(), format!("\"{bad}\"")] {
                let e = errors(&wide_spec(param, &value));
                assert_one_error_at(&e, 12, &format!("of `k_wide` is {dtype}: the value {bad} does not fit"));
            }
            let e = errors(&scalar_spec(dtype, &bad.to_string())).join("\n");
            assert!(e.contains(&format!("g.toml:6:11: scalar `s` is {dtype}: the value {bad} does not fit")), "{e}");
        }
    }
}

fn inner_spec() -> String {
    "[buffers.y]\ndtype = \"f32\"\nlen = 4\nrole = \"output\"\n[[node]]\nkernel = \"k_inner\"\ngrid = 1\nblock = 1\nargs = { y = \"y\", n = 4 }\n"
        .to_string()
}

#[test]
fn module_paths_that_are_not_module_paths_are_located_errors() {
    for module in ["crate::", "crate::a b", "crate::Vec<u8>", "fn", "1x", ""] {
        let e = errors_with(module, &inner_spec());
        assert_one_error_at(&e, 3, "is not a Rust module path");
    }
}

#[test]
fn module_paths_must_name_the_declarations_module() {
    for ok in ["crate::decls::inner::deeper", "crate::x::inner::deeper", "self::inner::deeper", "inner::deeper"] {
        run_with(ok, &inner_spec()).unwrap_or_else(|e| panic!("{ok}: {}", e.join("\n")));
    }
    for bad in ["crate::decls", "crate::decls::inner", "crate::decls::deeper::inner", "crate::inner::deepr"] {
        let e = errors_with(bad, &inner_spec());
        assert_one_error_at(&e, 3, "`src/decls.rs` declares the kernels used in `mod inner::deeper`, so the path should end in `inner::deeper`");
    }
    // Declarations at the file's top level: the file's own module.
    for ok in ["crate::decls", "crate::a::decls", "self", "super"] {
        run_with(ok, &scale_spec("1", "\"n\"")).unwrap_or_else(|e| panic!("{ok}: {}", e.join("\n")));
    }
    for bad in ["crate::decl", "crate", "crate::decls::k"] {
        let e = errors_with(bad, &scale_spec("1", "\"n\""));
        assert_one_error_at(
            &e,
            3,
            "declares the kernels used at its top level, so the path should end in `decls`, the file's own module",
        );
    }
}

#[test]
fn kernels_from_two_modules_cannot_share_one_module_path() {
    let spec = format!(
        "{}[[node]]\nname = \"second\"\nkernel = \"k_inner\"\ngrid = 1\nblock = 1\nargs = {{ y = \"y\", n = 4 }}\n",
        scale_spec("1", "\"n\"")
    );
    let e = errors(&spec);
    assert_one_error_at(&e, 3, "`k_scale` at its top level, `k_inner` in `mod inner::deeper`");
}

#[test]
fn deeply_nested_toml_values_are_located_errors() {
    let deep = 3000;
    let arrays = format!("{}1{}", "[".repeat(deep), "]".repeat(deep));
    let tables = format!("{}1{}", "{ a = ".repeat(deep), " }".repeat(deep));
    for value in [&arrays, &tables] {
        let e = errors(&scale_spec(value, "\"n\""));
        assert!(e[0].starts_with("g.toml:16:"), "{}", e[0]);
    }
    let dotted = format!("[buffers.{}]\n", vec!["a"; deep].join("."));
    let e = errors(&format!("{}{dotted}", scale_spec("1", "\"n\"")));
    assert!(e.iter().all(|e| e.starts_with("g.toml:")), "{e:?}");
}

#[test]
fn a_buffer_length_is_below_2_pow_48_exactly_as_the_message_and_docs_say() {
    let with_len = |len: &str| scale_spec("1", "\"n\"").replacen("len = \"n\"", &format!("len = {len}"), 1);
    for len in ["281474976710656", "\"2 * 140737488355328\"", "281474976710657", "0"] {
        let e = errors(&with_len(len));
        assert_one_error_at(&e, 8, "buffer `x`: `len` = ");
        assert!(e[0].contains("must be at least 1 and below 2^48 (281474976710656)"), "{}", e[0]);
    }
    // One less is a valid length (the node reads 64 elements of it).
    run_with("crate::decls", &with_len("281474976710655")).unwrap_or_else(|e| panic!("{}", e.join("\n")));
}
