//! `pdl` in specs: resolution (top level, per-node override), the capture schedules it yields,
//! its validation, and the names it reserves.

use kgraph_codegen::graph::{analyze, generate, Analysis, GraphRequest};

const DECLS: &str = r#"
#[kernel("k.cu", unsafe(extents))] pub fn k_copy(x: &[f32; n], y: &mut [f32; n], n: i32);
"#;

fn run(spec: &str) -> Result<Analysis, Vec<String>> {
    let text = format!("{spec}\n[kernels]\nsource = \"decls.rs\"\nmodule = \"crate::decls\"\n");
    let read_file = |_: &str| Ok(DECLS.to_string());
    let req =
        GraphRequest { spec_path: "g.toml", spec_text: &text, struct_name: None, root: "", read_file: &read_file };
    analyze(&req)
}

/// `x -> a -> b -> c` through three copies; `extra` is inserted at the top level, `node_keys[i]`
/// into node `i`.
fn chain(top: &str, node_keys: [&str; 3]) -> String {
    let mut s = format!("{top}\n[dims]\nn = 64\n");
    for (name, role) in [("x", "input"), ("a", "scratch"), ("b", "scratch"), ("c", "output")] {
        s += &format!("[buffers.{name}]\ndtype = \"f32\"\nlen = \"n\"\nrole = \"{role}\"\n");
    }
    for (i, (src, dst)) in [("x", "a"), ("a", "b"), ("b", "c")].into_iter().enumerate() {
        s += &format!(
            "[[node]]\nname = \"copy{i}\"\nkernel = \"k_copy\"\ngrid = 1\nblock = 64\n{}\nargs = {{ x = \"{src}\", y = \"{dst}\", n = \"n\" }}\n",
            node_keys[i]
        );
    }
    s
}

fn pdl_flags(a: &Analysis) -> Vec<bool> {
    a.ir.nodes.iter().map(|n| n.pdl).collect()
}

#[test]
fn top_level_pdl_applies_to_every_node_and_a_node_overrides_it() {
    let a = run(&chain("", ["", "", ""])).unwrap_or_else(|e| panic!("{}", e.join("\n")));
    assert_eq!(pdl_flags(&a), [false; 3], "PDL is off unless asked for");
    assert!(a.schedule.programmatic_edges().is_empty() && a.serial.programmatic_edges().is_empty());

    let a = run(&chain("pdl = true", ["", "pdl = false", ""])).unwrap_or_else(|e| panic!("{}", e.join("\n")));
    assert_eq!(pdl_flags(&a), [true, false, true]);
    // The root has no predecessor to overlap; `copy1` opted out.
    assert_eq!(a.schedule.programmatic_edges(), vec![(1, 2)]);
    assert_eq!(a.serial.programmatic_edges(), vec![(1, 2)]);

    let a = run(&chain("pdl = false", ["", "pdl = true", ""])).unwrap_or_else(|e| panic!("{}", e.join("\n")));
    assert_eq!(pdl_flags(&a), [false, true, false]);
    assert_eq!(a.schedule.programmatic_edges(), vec![(0, 1)]);
}

#[test]
fn the_generated_struct_launches_pdl_nodes_with_pdl_and_offers_a_serialized_capture() {
    let text =
        format!("{}\n[kernels]\nsource = \"decls.rs\"\nmodule = \"crate::decls\"\n", chain("pdl = true", ["", "", ""]));
    let read_file = |_: &str| Ok(DECLS.to_string());
    let req =
        GraphRequest { spec_path: "g.toml", spec_text: &text, struct_name: None, root: "", read_file: &read_file };
    let code = generate(&req).unwrap_or_else(|e| panic!("{}", e.join("\n"))).to_string();
    for item in ["fn capture_serialized", "fn set_pdl_enabled", "LaunchOptions :: PDL", "NODE_PDL", "PDL_EDGES"] {
        assert!(code.contains(item), "`{item}` missing from the expansion");
    }
    let plain = format!("{}\n[kernels]\nsource = \"decls.rs\"\nmodule = \"crate::decls\"\n", chain("", ["", "", ""]));
    let req = GraphRequest { spec_text: &plain, ..req };
    let code = generate(&req).unwrap_or_else(|e| panic!("{}", e.join("\n"))).to_string();
    assert!(!code.contains("fn __pdl_options"), "no PDL launch in a spec without pdl");
    assert!(code.contains("PDL_EDGES : & 'static [(usize , usize)] = & [] ;"), "no programmatic edge without pdl");
    assert!(code.contains("fn capture_serialized"), "every graph can be captured serialized");
}

#[test]
fn pdl_must_be_a_boolean_and_errors_point_at_the_value() {
    let e = run(&chain("pdl = \"yes\"", ["", "pdl = 1", ""])).expect_err("must not validate").join("\n");
    assert!(e.contains("g.toml:1:7: `pdl` must be a boolean (`true` or `false`), found a string"), "{e}");
    assert!(e.contains("node `pdl` must be a boolean (`true` or `false`), found an integer"), "{e}");
}

#[test]
fn names_clashing_with_the_pdl_and_serialized_api_are_rejected() {
    let spec = chain("", ["", "", ""]).replace("[dims]\nn = 64\n", "[dims]\nn = 64\npdl_edges = 2\nnode_pdl = 3\n");
    let e = run(&spec).expect_err("must not validate").join("\n");
    assert!(e.contains("dim `pdl_edges` would generate the constant `PDL_EDGES`"), "{e}");
    assert!(e.contains("dim `node_pdl` would generate the constant `NODE_PDL`"), "{e}");
    let spec = chain("", ["", "", ""])
        .replace("[buffers.a]", "[buffers.capture_serialized]")
        .replace("\"a\"", "\"capture_serialized\"");
    let e = run(&spec).expect_err("must not validate").join("\n");
    assert!(e.contains("would generate the method `capture_serialized`"), "{e}");
}
