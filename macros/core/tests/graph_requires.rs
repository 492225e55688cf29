//! The compile-time `requires` rule of `graph!` (`graph/check/requires.rs`): every kernel node
//! meets its kernel's `requires(...)` conditions, evaluated from the node's `grid`, `block` and
//! arguments (scalars at their defaults), and so does every `tune` candidate; a node that does
//! not is one error at the node's `block`/`grid` or argument, naming node, kernel and condition.
//! The setters re-check: `set_<scalar>` and `set_launch` call the kernel's `__requires` before
//! they change anything. Kernel declarations are given inline.

use kgraph_codegen::graph::{analyze, generate, Analysis, GraphRequest};

const DECLS: &str = r#"
#[kernel("k.cu", unsafe(extents), requires(stride >= 0, block.x == 256))]
pub fn k_rows(out: &mut [f32; grid.x * hidden], x: &[f32; (grid.x - 1) * stride + hidden], stride: i64, hidden: i32);
#[kernel("k.cu", unsafe(extents), requires(n <= i32::MAX - grid.x * block.x), align(x = 16, y = 16))]
pub fn k_vec4(x: &[f32; n], y: &mut [f32; n], n: i32);
"#;

const HEAD: &str = "[kernels]\nsource = \"decls.rs\"\nmodule = \"crate::decls\"\n";

fn request<'a>(text: &'a str, read_file: &'a dyn Fn(&str) -> std::io::Result<String>) -> GraphRequest<'a> {
    GraphRequest { spec_path: "g.toml", spec_text: text, struct_name: None, root: "", read_file }
}

fn run(spec: &str) -> Result<Analysis, Vec<String>> {
    let text = format!("{HEAD}{spec}");
    let read_file = |_: &str| Ok(DECLS.to_string());
    analyze(&request(&text, &read_file))
}

fn ok(spec: &str) {
    if let Err(e) = run(spec) {
        panic!("spec must validate:\n{}", e.join("\n"));
    }
}

/// The one error, which must start at `line:col` of `g.toml` and contain each of `needles`.
fn one_error_at(spec: &str, line: usize, col: usize, needles: &[&str]) {
    let errors = match run(spec) {
        Ok(_) => panic!("spec must not validate:\n{spec}"),
        Err(e) => e,
    };
    assert_eq!(errors.len(), 1, "{}", errors.join("\n"));
    let e = &errors[0];
    assert!(e.starts_with(&format!("g.toml:{line}:{col}: ")), "{e}");
    for needle in needles {
        assert!(e.contains(needle), "`{needle}` missing in:\n{e}");
    }
}

/// Buffers `out` and `x` of 8192, then one `k_rows` node with `launch` (its `grid`/`block`/`tune`
/// lines) and `stride` bound to `stride_arg`: scalar `stride` (i64, `default`) when it is
/// `"stride"`. The node's `block` is on line 15 and its `args` on line 16, three lines later
/// with the scalar.
fn rows(default: i64, launch: &str, stride_arg: &str) -> String {
    let scalar = if stride_arg == "\"stride\"" {
        format!("[scalars.stride]\ndtype = \"i64\"\ndefault = {default}\n")
    } else {
        String::new()
    };
    format!(
        "[buffers.out]\ndtype = \"f32\"\nlen = 8192\nrole = \"output\"\n\
         [buffers.x]\ndtype = \"f32\"\nlen = 8192\nrole = \"input\"\n\
         {scalar}[[node]]\nkernel = \"k_rows\"\n{launch}\nargs = {{ out = \"out\", x = \"x\", stride = {stride_arg}, hidden = 256 }}\n"
    )
}

#[test]
fn a_node_meeting_every_condition_validates() {
    ok(&rows(256, "grid = 16\nblock = 256", "\"stride\""));
    ok(&rows(0, "grid = 16\nblock = 256", "\"stride\""));
    ok(&rows(-5, "grid = 16\nblock = 256", "256"));
}

#[test]
fn a_block_shape_condition_is_an_error_at_the_block() {
    one_error_at(
        &rows(256, "grid = 16\nblock = 128", "\"stride\""),
        18,
        9,
        &[
            "node `k_rows`: kernel `k_rows` requires `block.x == 256`, which does not hold with block.x = 128",
            "a checked launch refuses this one with `LaunchError::Requirement`",
        ],
    );
}

#[test]
fn a_scalar_range_condition_is_an_error_at_the_argument() {
    one_error_at(
        &rows(256, "grid = 16\nblock = 256", "-1"),
        16,
        41,
        &["kernel `k_rows` requires `stride >= 0`, which does not hold with stride = -1"],
    );
    // A scalar's default counts, and the message says where the value comes from.
    one_error_at(
        &rows(-4, "grid = 16\nblock = 256", "\"stride\""),
        19,
        41,
        &["`stride >= 0`, which does not hold with stride = -4 (the default of scalar `stride`)"],
    );
}

#[test]
fn every_tune_candidate_meets_the_conditions() {
    one_error_at(
        &rows(256, "grid = 16\nblock = 256\ntune = [256, 128]", "\"stride\""),
        19,
        8,
        &["`tune` candidate 128 of node `k_rows`: kernel `k_rows` requires `block.x == 256`", "block.x = 128"],
    );
}

#[test]
fn headroom_conditions_are_exact_over_the_launch_shape() {
    let vec4 = |n: &str, grid: u32| {
        format!(
            "[buffers.x]\ndtype = \"f32\"\nlen = 4096\nrole = \"input\"\n\
             [buffers.y]\ndtype = \"f32\"\nlen = 4096\nrole = \"output\"\n\
             [[node]]\nkernel = \"k_vec4\"\ngrid = {grid}\nblock = 1024\nargs = {{ x = \"x\", y = \"y\", n = {n} }}\n"
        )
    };
    ok(&vec4("4096", 4));
    // 4096 + 2^21 threads of headroom would pass i32::MAX - 2^21 ... but the buffer bounds
    // n at 4096 anyway; what matters is that the condition, not only the extent, is checked:
    // with 2^21 threads, n may be at most i32::MAX - 2^21 (exact, no wrap in C's `int`).
    let errors = run(&vec4("2147483647", 2048)).expect_err("n leaves no headroom");
    assert!(
        errors.iter().any(|e| e.contains(
            "kernel `k_vec4` requires `n <= i32::MAX - grid.x * block.x`, which does not hold with n = 2147483647, \
             grid.x = 2048, block.x = 1024"
        )),
        "{}",
        errors.join("\n")
    );
}

/// The generated code of an inline spec, whitespace collapsed.
fn code(spec: &str) -> String {
    let text = format!("{HEAD}{spec}");
    let read_file = |_: &str| Ok(DECLS.to_string());
    let tokens = generate(&request(&text, &read_file)).unwrap_or_else(|e| panic!("{}", e.join("\n")));
    tokens.to_string().split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn setters_re_check_the_conditions_before_changing_anything() {
    let code = code(&rows(256, "grid = 16\nblock = 256", "\"stride\""));
    let set_stride = &code[code.find("pub fn set_stride").expect("set_stride")..];
    let check = set_stride
        .find("self . kernel_k_rows . __requires (& self . node_cfgs [0usize] , value) ?")
        .expect("set_stride calls __requires with the new value");
    let change = set_stride.find("self . scalar_stride").expect("the assignment");
    assert!(check < change, "checked before the change: {set_stride}");
    let set_launch = &code[code.find("pub fn set_launch").expect("set_launch")..];
    let check = set_launch
        .find("match node { 0usize => self . kernel_k_rows . __requires (& cfg , self . scalar_stride) ? ,")
        .expect("set_launch calls __requires with the new cfg");
    let change = set_launch.find("node_cfgs [node]").expect("the assignment");
    assert!(check < change, "checked before the change: {set_launch}");
}
