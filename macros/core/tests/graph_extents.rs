//! The compile-time extent rules of `graph!` (`graph/check/extents.rs`): every node's pointer
//! arguments hold their declared extents, evaluated from the node's arguments (scalars at their
//! defaults) in the C type the runtime computes them in, with the same checked arithmetic; and a
//! node launches at most 2^31 threads. Extents over the launch's shape (`grid.x` ... `block.z`)
//! are evaluated with each node's own `grid` and `block` (and each `tune` candidate's), and a
//! `"null"` argument is accepted exactly where the declaration says the kernel takes NULL.
//! Kernel declarations are given inline.

use kgraph_codegen::graph::{analyze, generate, Analysis, GraphRequest};

const DECLS: &str = r#"
#[kernel("k.cu", unsafe(extents))] pub fn k_affine(x: &[f32; n], y: &mut [f32; n], a: f32, n: i32);
#[kernel("k.cu", unsafe(extents))] pub fn k_grid(x: &[f32; rows * cols], y: &mut [f32; rows * cols], rows: i32, cols: i32);
#[kernel("k.cu", unsafe(extents))] pub fn k_tail(x: &[f32; n - m], y: &mut [f32; min(n, 64)], n: u32, m: u32);
#[kernel("k.cu", unsafe(extents))] pub fn k_mixed(x: &[f32; n - m], y: &mut [f32; 1], n: i32, m: u32);
#[kernel("k.cu", unsafe(extents))] pub fn k_wide(x: &[f32; n * n], y: &mut [f32; n / d], n: i64, d: i64);
#[kernel("k.cu", unsafe(extents))] pub fn k_signed(x: &[f32; n - m], y: &mut [f32; n % 7], n: i32, m: i32);
#[kernel("k.cu", unsafe(extents))] pub fn k_pinned(src: Pinned<[f32; batch * 40]>, out: PinnedMut<[f32; batch * 5]>, batch: i32);
#[kernel("k.cu", unsafe(extents), shared = block.x * 4 + n)] pub fn k_smem(x: &[f32; n], y: &mut [f32; n], a: f32, n: i32);
#[kernel("k.cu", unsafe(extents))] pub fn k_rows(out: &mut [f32; grid.x * hidden], x: &[f32; grid.x * hidden], hidden: i32);
#[kernel("k.cu", unsafe(extents))] pub fn k_cells(x: &[f32; grid.x * block.x], y: &mut [f32; grid.x * block.x]);
#[kernel("k.cu", unsafe(extents))] pub fn k_span(x: &[f32; (end - start) + offset], y: &mut [f32; n * m + offset], end: u32, start: u32, offset: i64, n: i32, m: i32);
#[kernel("k.cu", unsafe(extents))] pub fn k_copy(y: &mut [f32; n], x: &[f32; n], copy: Option<&mut [f32; n]>, n: i32);
"#;

const HEAD: &str = "[kernels]\nsource = \"decls.rs\"\nmodule = \"crate::decls\"\n";

fn run(spec: &str) -> Result<Analysis, Vec<String>> {
    let text = format!("{HEAD}{spec}");
    let read_file = |_: &str| Ok(DECLS.to_string());
    let req =
        GraphRequest { spec_path: "g.toml", spec_text: &text, struct_name: None, root: "", read_file: &read_file };
    analyze(&req)
}

fn errors(spec: &str) -> Vec<String> {
    match run(spec) {
        Ok(_) => panic!("spec must not validate:\n{spec}"),
        Err(e) => e,
    }
}

fn ok(spec: &str) -> Analysis {
    run(spec).unwrap_or_else(|e| panic!("spec must validate:\n{}", e.join("\n")))
}

/// Buffers `x` (input) and `y` (output) of `len`, then one node of `kernel` with `args`.
fn spec(dims: &str, len: &str, scalars: &str, kernel: &str, args: &str) -> String {
    format!(
        "[dims]\n{dims}\n[buffers.x]\ndtype = \"f32\"\nlen = {len}\nrole = \"input\"\n[buffers.y]\ndtype = \"f32\"\nlen = {len}\nrole = \"output\"\n{scalars}[[node]]\nkernel = \"{kernel}\"\ngrid = 1\nblock = 32\nargs = {{ {args} }}\n"
    )
}

/// The one error, which must start at `line:col` of `g.toml` and contain `needle`.
fn one_error_at(errors: &[String], line: usize, col: usize, needle: &str) {
    assert_eq!(errors.len(), 1, "{}", errors.join("\n"));
    let e = &errors[0];
    assert!(e.starts_with(&format!("g.toml:{line}:{col}: ")), "{e}");
    assert!(e.contains(needle), "`{needle}` missing in:\n{e}");
}

#[test]
fn a_buffer_shorter_than_an_extent_is_an_error_at_the_argument() {
    let e = errors(&spec("n = 4096", "16", "", "k_affine", "x = \"x\", y = \"y\", a = 1.0, n = \"n\""));
    assert_eq!(e.len(), 2, "x and y are both too short:\n{}", e.join("\n"));
    assert!(
        e[0].starts_with(
            "g.toml:18:14: node `k_affine`: parameter `x: &[f32; n]` of kernel `k_affine`: its extent `n` is 4096 \
             elements with n = 4096, but buffer `x` holds 16 (len = `16`): the kernel may access past its end; give \
             `x` a `len` of at least 4096, or change the node's arguments"
        ),
        "{}",
        e[0]
    );
    assert!(e[0].contains("18 | args = { x = \"x\", y = \"y\", a = 1.0, n = \"n\" }"), "{}", e[0]);
    assert!(e[1].starts_with("g.toml:18:23: node `k_affine`: parameter `y: &mut [f32; n]`"), "{}", e[1]);
    // A dim expression is named with its source; an exact fit passes.
    let e = errors(&spec("n = 64", "\"n\"", "", "k_affine", "x = \"x\", y = \"y\", a = 1.0, n = \"n + 1\""));
    assert!(e[0].contains("its extent `n` is 65 elements with n = 65 (`n + 1`), but buffer `x` holds 64 (len = `n`)"));
    ok(&spec("n = 64", "\"n\"", "", "k_affine", "x = \"x\", y = \"y\", a = 1.0, n = \"n\""));
    ok(&spec("n = 64", "\"n\"", "", "k_affine", "x = \"x\", y = \"y\", a = 1.0, n = 0"));
}

#[test]
fn extents_overflow_in_the_c_type_they_are_computed_in() {
    // 65536 * 65536 = 2^32 fits in 64 bits, but C computes `rows * cols` in `int`.
    let e = errors(&spec(
        "rows = 65536\ncols = 65536",
        "16",
        "",
        "k_grid",
        "x = \"x\", y = \"y\", rows = \"rows\", cols = \"cols\"",
    ));
    assert_eq!(e.len(), 2, "{}", e.join("\n"));
    assert!(
        e[0].starts_with(
            "g.toml:19:14: node `k_grid`: parameter `x: &[f32; rows * cols]` of kernel `k_grid`: its extent \
             `rows * cols` cannot be evaluated with rows = 65536, cols = 65536: `*` overflows `i32` (extents are \
             computed in the kernel's C type, here `int`, and a checked launch refuses this one)"
        ),
        "{}",
        e[0]
    );
    // The largest product that fits `int` passes the arithmetic (and then needs a long buffer).
    let e = errors(&spec("r = 46340", "16", "", "k_grid", "x = \"x\", y = \"y\", rows = \"r\", cols = \"r\""));
    assert!(e[0].contains("its extent `rows * cols` is 2147395600 elements"), "{}", e[0]);
    // In `long long` the same product is fine.
    let e = errors(&spec("n = 65536", "16", "", "k_wide", "x = \"x\", y = \"y\", n = \"n\", d = 0"));
    assert_eq!(e.len(), 2, "{}", e.join("\n"));
    assert!(e[0].contains("its extent `n * n` is 4294967296 elements with n = 65536"), "{}", e[0]);
    assert!(e[1].contains("its extent `n / d` cannot be evaluated with n = 65536, d = 0: `/` divides by zero"));
    let e = errors(&spec("n = 3037000500", "16", "", "k_wide", "x = \"x\", y = \"y\", n = \"n\", d = 1"));
    assert!(e[0].contains("`*` overflows `i64`"), "{}", e[0]);
}

#[test]
fn each_operation_is_checked_in_the_type_c_computes_it_in() {
    // `end - start` is `unsigned int` arithmetic in C (it wraps below zero) before the `long
    // long` addition: computed whole in 64 bits it would be 9, a short buffer accepted.
    let args = |end: &str, start: &str, n: &str| {
        format!("x = \"x\", y = \"y\", end = {end}, start = {start}, offset = 10, n = {n}, m = 2")
    };
    let e = errors(&spec("d = 1", "64", "", "k_span", &args("1", "2", "1")));
    one_error_at(&e, 18, 14, "its extent `(end - start) + offset` cannot be evaluated with end = 1, start = 2");
    assert!(e[0].contains("`-` overflows `u32`"), "{}", e[0]);
    ok(&spec("d = 1", "64", "", "k_span", &args("3", "2", "1")));
    // `n * m` overflows `int` before it meets the `long long` offset.
    let e = errors(&spec("d = 1", "64", "", "k_span", &args("3", "2", "1073741824")));
    one_error_at(&e, 18, 23, "`*` overflows `i32`");
}

#[test]
fn unsigned_extents_must_not_go_below_zero_and_signed_ones_must_not_be_negative() {
    let args = |n: &str, m: &str| format!("x = \"x\", y = \"y\", n = {n}, m = {m}");
    let e = errors(&spec("n = 1", "64", "", "k_tail", &args("1", "2")));
    one_error_at(&e, 18, 14, "its extent `n - m` cannot be evaluated with n = 1, m = 2: `-` overflows `u32`");
    ok(&spec("n = 1", "64", "", "k_tail", &args("100", "40")));
    // `min(n, 64)` caps `y`'s extent at the buffer's 64.
    ok(&spec("n = 1", "64", "", "k_tail", &args("4000000000", "3999999940")));
    let e = errors(&spec("n = 1", "64", "", "k_signed", &args("1", "2")));
    one_error_at(&e, 18, 14, "its extent `n - m` is -1 with n = 1, m = 2, which is negative");
    let e = errors(&spec("n = 1", "64", "", "k_signed", &args("-2147483648", "1")));
    assert!(e[0].contains("`-` overflows `i32`"), "{}", e[0]);
    // `%` keeps the dividend's sign, as in C: -3 % 7 = -3.
    let e = errors(&spec("n = 1", "64", "", "k_signed", &args("-3", "-10")));
    one_error_at(&e, 18, 23, "its extent `n % 7` is -3 with n = -3, which is negative");
    // An `int` scalar in an `unsigned int` extent converts, as the runtime's `scalar` does.
    let e = errors(&spec("n = 1", "64", "", "k_mixed", &args("-1", "0")));
    one_error_at(&e, 18, 14, "with n = -1, m = 0: `n` = -1 does not fit in `u32`");
}

#[test]
fn a_scalar_default_that_breaks_an_extent_is_an_error_naming_the_scalar() {
    let scalar = |default: i64| format!("[scalars.n]\ndtype = \"i32\"\ndefault = {default}\n");
    let args = "x = \"x\", y = \"y\", a = 1.0, n = \"n\"";
    let e = errors(&spec("len = 16", "\"len\"", &scalar(4096), "k_affine", args));
    assert_eq!(e.len(), 2, "{}", e.join("\n"));
    assert!(
        e[0].starts_with(
            "g.toml:21:14: node `k_affine`: parameter `x: &[f32; n]` of kernel `k_affine`: its extent `n` is 4096 \
             elements with n = 4096 (the default of scalar `n`), but buffer `x` holds 16 (len = `len`): the kernel \
             may access past its end; give `x` a `len` of at least 4096, or change the node's arguments or the \
             default of scalar `n`"
        ),
        "{}",
        e[0]
    );
    let e = errors(&spec("len = 16", "\"len\"", &scalar(-1), "k_affine", args));
    assert!(e[0].contains("its extent `n` is -1 with n = -1 (the default of scalar `n`), which is negative"));
    let a = ok(&spec("len = 16", "\"len\"", &scalar(16), "k_affine", args));
    assert_eq!(a.ir.scalars[0].name, "n");
    ok(&spec("len = 16", "\"len\"", &scalar(0), "k_affine", args));
}

#[test]
fn pinned_extents_are_checked_like_device_ones() {
    let text = "[dims]\nbatch = 4\n[buffers.src]\ndtype = \"f32\"\nlen = \"batch * 40\"\nrole = \"pinned\"\n[buffers.out]\ndtype = \"f32\"\nlen = \"batch * 4\"\nrole = \"pinned_out\"\n[[node]]\nkernel = \"k_pinned\"\ngrid = 1\nblock = 32\nargs = { src = \"src\", out = \"out\", batch = \"batch\" }\n";
    let e = errors(text);
    one_error_at(
        &e,
        18,
        29,
        "parameter `out: PinnedMut<[f32; batch * 5]>` of kernel `k_pinned`: its extent `batch * 5` is 20 elements \
         with batch = 4, but buffer `out` holds 16 (len = `batch * 4`)",
    );
    ok(&text.replace("len = \"batch * 4\"", "len = \"batch * 5\""));
}

#[test]
fn a_node_launches_at_most_two_to_the_31_threads() {
    let node = |grid: &str, block: &str| {
        spec("n = 1", "1", "", "k_affine", "x = \"x\", y = \"y\", a = 1.0, n = 1")
            .replace("grid = 1\nblock = 32", &format!("grid = {grid}\nblock = {block}"))
    };
    ok(&node("2097152", "1024"));
    ok(&node("[2097152, 1, 1]", "[512, 2]"));
    let e = errors(&node("2097153", "1024"));
    one_error_at(
        &e,
        16,
        8,
        "`grid` [2097153, 1, 1] × `block` [1024, 1, 1] = 2147484672 threads, more than the 2^31 = 2147483648 a \
         checked launch allows",
    );
    let e = errors(&node("[65535, 65535, 65535]", "[1024, 1, 1]"));
    one_error_at(&e, 16, 8, "= 288217182213504000 threads");
}

/// The generated code of an inline spec, formatted.
fn code(spec: &str) -> String {
    let text = format!("{HEAD}{spec}");
    let read_file = |_: &str| Ok(DECLS.to_string());
    let req =
        GraphRequest { spec_path: "g.toml", spec_text: &text, struct_name: None, root: "", read_file: &read_file };
    let tokens = generate(&req).unwrap_or_else(|e| panic!("{}", e.join("\n")));
    prettyplease::unparse(&syn::parse2(tokens).expect("generated code parses"))
}

/// The body of `set_<name>`, up to the field assignment.
fn setter_checks<'c>(code: &'c str, name: &str) -> &'c str {
    let start = code.find(&format!("pub fn set_{name}(")).expect("setter");
    let assignment =
        [format!("self.scalar_{name} = value;"), format!("::core::mem::replace(&mut self.scalar_{name}, value)")];
    let end = start + assignment.iter().filter_map(|a| code[start..].find(a.as_str())).min().expect("assignment");
    &code[start..end]
}

#[test]
fn setters_of_scalars_that_feed_extents_re_check_them_before_changing_anything() {
    // `rows` (a scalar) times `cols` (a constant) into x and y of 4096, and `n` of k_affine
    // into two buffers of different lengths; `a` feeds no extent.
    let spec = "[dims]\nlen = 4096\n\
        [buffers.x]\ndtype = \"f32\"\nlen = \"len\"\nrole = \"input\"\n\
        [buffers.y]\ndtype = \"f32\"\nlen = \"len\"\nrole = \"output\"\n\
        [buffers.z]\ndtype = \"f32\"\nlen = 64\nrole = \"output\"\n\
        [scalars.rows]\ndtype = \"i32\"\ndefault = 64\n\
        [scalars.n]\ndtype = \"i32\"\ndefault = 64\n\
        [scalars.a]\ndtype = \"f32\"\n\
        [[node]]\nkernel = \"k_grid\"\ngrid = 1\nblock = 32\nargs = { x = \"x\", y = \"y\", rows = \"rows\", cols = 64 }\n\
        [[node]]\nkernel = \"k_affine\"\ngrid = 1\nblock = 32\nargs = { x = \"y\", y = \"z\", a = \"a\", n = \"n\" }\n";
    let code = code(spec);
    let rows = setter_checks(&code, "rows");
    // x and y have the same extent and length: one check.
    assert_eq!(rows.matches("::kgraph::__private::extent::within(").count(), 1, "{rows}");
    let compact: String = rows.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        compact.contains(
            "::kgraph::__private::extent::within( ::kgraph::__private::extent::mul( ::kgraph::__private::extent::scalar::<i32, _>(\"rows\", value), \
             ::kgraph::__private::extent::scalar::<i32, _>(\"cols\", 64i32), ), 4096u64, )"
        ),
        "{rows}"
    );
    assert!(compact
        .contains("node: \"k_grid\", param: \"x\", expr: \"rows * cols\", buffer: \"x\", required, len: 4096u64"));
    // `n` reaches y (4096) and z (64): two checks, each against its own length.
    let n = setter_checks(&code, "n");
    assert_eq!(n.matches("::kgraph::__private::extent::within(").count(), 2, "{n}");
    assert!(n.contains("4096u64") && n.contains("64u64"), "{n}");
    // A scalar that feeds no extent is set without a check, as before.
    assert!(!setter_checks(&code, "a").contains("within"), "{code}");
}

#[test]
fn a_node_gives_a_kernel_the_shared_memory_it_declares() {
    let args = "x = \"x\", y = \"y\", a = 1.0, n = \"n\"";
    // block = 32, n = 16: 32 * 4 + 16 = 144 bytes.
    let without = spec("n = 16", "16", "", "k_smem", args);
    let e = errors(&without);
    assert_eq!(e.len(), 1, "{}", e.join("\n"));
    assert!(e[0].contains("kernel `k_smem` declares `shared = block.x * 4 + n`"), "{}", e[0]);
    assert!(e[0].contains("144 bytes with block = [32, 1, 1], but the node gives `shared = 0`"), "{}", e[0]);
    let short = without.replace("block = 32\n", "block = 32\nshared = 143\n");
    let e = errors(&short);
    assert!(e.len() == 1 && e[0].starts_with("g.toml:18:10: "), "at the node's `shared`: {}", e.join("\n"));
    ok(&without.replace("block = 32\n", "block = 32\nshared = 144\n"));
    // Every `tune` candidate keeps the node's `shared`: 64 threads need 272 bytes.
    let tuned = without.replace("block = 32\n", "block = 32\nshared = 144\ntune = [16, 64]\n");
    let e = errors(&tuned);
    assert_eq!(e.len(), 1, "{}", e.join("\n"));
    assert!(e[0].starts_with("g.toml:19:8: `tune` candidate 64: "), "{}", e[0]);
    assert!(e[0].contains("272 bytes with block = [64, 1, 1]"), "{}", e[0]);
}

const BUFFERS: &str = "[buffers.x]\ndtype = \"f32\"\nlen = 1024\nrole = \"input\"\n\
    [buffers.y]\ndtype = \"f32\"\nlen = 1024\nrole = \"output\"\n";

/// A third buffer, for the specs that pass it.
const COPY: &str = "[buffers.c]\ndtype = \"f32\"\nlen = 1024\nrole = \"output\"\n";

fn node(kernel: &str, launch: &str, args: &str) -> String {
    format!("{BUFFERS}[[node]]\nkernel = \"{kernel}\"\n{launch}\nargs = {{ {args} }}\n")
}

#[test]
fn a_grid_sized_extent_is_evaluated_with_the_nodes_grid() {
    // 8 rows of 128 fill the 1024-element buffers exactly; 9 rows do not.
    ok(&node("k_rows", "grid = 8\nblock = 64", "out = \"y\", x = \"x\", hidden = 128"));
    let e = errors(&node("k_rows", "grid = 9\nblock = 64", "out = \"y\", x = \"x\", hidden = 128"));
    assert_eq!(e.len(), 2, "out and x are both too short:\n{}", e.join("\n"));
    for e in &e {
        assert!(e.contains("grid.x * hidden") && e.contains("1152") && e.contains("grid = [9, 1, 1]"), "{e}");
    }
}

#[test]
fn block_and_grid_together_and_each_tune_candidate_are_checked() {
    ok(&node("k_cells", "grid = 4\nblock = 256", "x = \"x\", y = \"y\""));
    let e = errors(&node("k_cells", "grid = 5\nblock = 256", "x = \"x\", y = \"y\""));
    assert!(e.iter().all(|e| e.contains("1280")), "{}", e.join("\n"));
    // 1024 threads at block 256; candidate 96 needs ceil(1024 / 96) = 11 blocks = 1056 elements.
    let e = errors(&node("k_cells", "grid = 4\nblock = 256\ntune = [128, 96]", "x = \"x\", y = \"y\""));
    assert!(
        !e.is_empty() && e.iter().all(|e| e.contains("`tune` candidate 96") && e.contains("1056")),
        "{}",
        e.join("\n")
    );
}

#[test]
fn null_is_accepted_only_for_an_optional_pointer() {
    ok(&node("k_copy", "grid = 4\nblock = 256", "y = \"y\", x = \"x\", copy = \"null\", n = 1024"));
    ok(&format!("{COPY}{}", node("k_copy", "grid = 4\nblock = 256", "y = \"y\", x = \"x\", copy = \"c\", n = 1024")));
    let e = errors(&format!(
        "{COPY}{}",
        node("k_copy", "grid = 4\nblock = 256", "y = \"y\", x = \"null\", copy = \"c\", n = 1024")
    ));
    assert_eq!(e.len(), 1, "{}", e.join("\n"));
    assert!(e[0].contains("takes no `\"null\"`") && e[0].contains("x: Option<&[f32]>"), "{}", e[0]);
}

#[test]
fn no_buffer_may_be_named_null() {
    let spec = format!(
        "{BUFFERS}[buffers.null]\ndtype = \"f32\"\nlen = 1024\nrole = \"output\"\n[[node]]\nkernel = \"k_copy\"\n\
         grid = 4\nblock = 256\nargs = {{ y = \"y\", x = \"x\", copy = \"null\", n = 1024 }}\n"
    );
    let e = errors(&spec);
    assert!(e.iter().any(|e| e.contains("`null` is the argument that passes a null pointer")), "{}", e.join("\n"));
}

#[test]
fn the_launch_passes_some_or_none_to_an_optional_parameter() {
    let spec = node("k_copy", "grid = 4\nblock = 256", "y = \"y\", x = \"x\", copy = \"null\", n = 1024");
    let generated = code(&spec);
    assert!(generated.contains("::core::option::Option::None"), "{generated}");
    let spec =
        format!("{COPY}{}", node("k_copy", "grid = 4\nblock = 256", "y = \"y\", x = \"x\", copy = \"c\", n = 1024"));
    let generated = code(&spec);
    assert!(generated.contains("::core::option::Option::Some(&mut self."), "{generated}");
}
