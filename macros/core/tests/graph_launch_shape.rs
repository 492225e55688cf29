//! Extents over the launch's shape (`grid.x` ... `block.z`) and optional pointers
//! (`Option<&[T; n]>`, `"null"` in a spec) in `graph!`'s compile-time checks: a node's extents
//! are evaluated with its own `grid` and `block` (and with each `tune` candidate's), and a
//! `"null"` argument is accepted exactly where the declaration says the kernel takes NULL.
//! Kernel declarations are given inline.

use kgraph_codegen::graph::{analyze, generate, Analysis, GraphRequest};

const DECLS: &str = r#"
#[kernel("k.cu", unsafe(extents))] pub fn k_rows(out: &mut [f32; grid.x * hidden], x: &[f32; grid.x * hidden], hidden: i32);
#[kernel("k.cu", unsafe(extents))] pub fn k_cells(x: &[f32; grid.x * block.x], y: &mut [f32; grid.x * block.x]);
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

/// The generated struct's code for a spec that validates.
fn code(spec: &str) -> String {
    let text = format!("{HEAD}{spec}");
    let read_file = |_: &str| Ok(DECLS.to_string());
    let req =
        GraphRequest { spec_path: "g.toml", spec_text: &text, struct_name: None, root: "", read_file: &read_file };
    generate(&req).unwrap_or_else(|e| panic!("spec must validate:\n{}", e.join("\n"))).to_string()
}

fn ok(spec: &str) -> Analysis {
    run(spec).unwrap_or_else(|e| panic!("spec must validate:\n{}", e.join("\n")))
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
    assert!(generated.contains(":: core :: option :: Option :: None"), "{generated}");
    let spec =
        format!("{COPY}{}", node("k_copy", "grid = 4\nblock = 256", "y = \"y\", x = \"x\", copy = \"c\", n = 1024"));
    let generated = code(&spec);
    assert!(generated.contains(":: core :: option :: Option :: Some (& mut self ."), "{generated}");
}
