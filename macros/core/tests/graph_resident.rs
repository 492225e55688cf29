//! `resident = true` (docs/resident.md): the rules that make a spec lowerable to one resident
//! kernel, each a located error, the step's layout and the CUDA source the build compiles, and
//! `unsafe(device_fn = ..)` on `#[kernel]`.

use kgraph_codegen::graph::resident::cuda;
use kgraph_codegen::graph::resident::layout::StepLayout;
use kgraph_codegen::graph::{analyze_with, Analysis, GraphRequest, Options};
use quote::quote;

mod decl_support;
use decl_support::errors_of;

const DECLS: &str = r#"
#[kernel("k.cu", unsafe(extents, device_fn = "k_in_block"))] pub fn k_in(x: Pinned<[f32; n]>, y: &mut [f32; n], n: i32);
#[kernel("k.cu", unsafe(extents, device_fn = "k_step_block"))] pub fn k_step(x: &[f32; n], y: &mut [f32; n], a: f32, n: i32);
#[kernel("k.cu", unsafe(extents, device_fn = "k_out_block"))] pub fn k_out(x: &[f32; n], y: PinnedMut<[f32; n]>, n: i32);
#[kernel("k.cu", unsafe(extents))] pub fn k_plain(x: &[f32; n], y: &mut [f32; n], n: i32);
#[kernel("k.cu", unsafe(extents, device_fn = "k_wide_block"), align(x = 16))] pub fn k_wide(x: Pinned<[f32; n]>, y: &mut [f32; n], n: i32);
"#;

const BUFFERS: &[(&str, &str, &str, &str)] = &[
    ("x", "f32", "n", "pinned"),
    ("a", "f32", "n", "scratch"),
    ("b", "f32", "n", "scratch"),
    ("s", "f64", "n", "state"),
    ("y", "f32", "n", "pinned_out"),
];

/// A spec with `resident = true`, `buffers` and `body`, analyzed as `graph!` would (`repeat`
/// given or not).
fn run_with(buffers: &[(&str, &str, &str, &str)], body: &str, repeat: Option<u32>) -> Result<Analysis, Vec<String>> {
    let text = spec_text(buffers, body);
    let read_file = |_: &str| Ok(DECLS.to_string());
    let req =
        GraphRequest { spec_path: "g.toml", spec_text: &text, struct_name: None, root: "", read_file: &read_file };
    let options = Options { resident: true, repeat: repeat.and_then(std::num::NonZeroU32::new), ..Options::default() };
    analyze_with(&req, &options)
}

/// The spec `run_with` checks: `resident = true` (line 1), `buffers`, a scalar, `body`.
fn spec_text(buffers: &[(&str, &str, &str, &str)], body: &str) -> String {
    let mut text = String::from("resident = true\n[dims]\nn = 64\n");
    for (name, dtype, len, role) in buffers {
        text += &format!("[buffers.{name}]\ndtype = \"{dtype}\"\nlen = \"{len}\"\nrole = \"{role}\"\n");
    }
    text += "[scalars.gain]\ndtype = \"f32\"\ndefault = 0.1\n";
    text += body;
    text += "\n[kernels]\nsource = \"decls.rs\"\nmodule = \"crate::decls\"\n";
    text
}

fn run(body: &str) -> Result<Analysis, Vec<String>> {
    run_with(BUFFERS, body, None)
}

fn errors(body: &str) -> String {
    match run(body) {
        Ok(_) => panic!("must not validate:\n{body}"),
        Err(e) => e.join("\n"),
    }
}

/// load (pinned x -> a) and zero (fill s), then step (a -> b, scalar gain), then publish
/// (b -> pinned_out y).
const NODES: &str = r#"
[[node]]
name = "load"
kernel = "k_in"
grid = 1
block = 64
args = { x = "x", y = "a", n = "n" }
[[node]]
name = "zero"
memset = { dst = "s", value = 0 }
[[node]]
name = "step"
kernel = "k_step"
grid = 2
block = 64
args = { x = "a", y = "b", a = "gain", n = "n" }
[[node]]
name = "publish"
kernel = "k_out"
grid = 1
block = 64
args = { x = "b", y = "y", n = "n" }
"#;

#[test]
fn a_lowerable_spec_gets_its_layout_and_its_cuda_source() {
    let a = run(NODES).unwrap_or_else(|e| panic!("{}", e.join("\n")));
    assert!(a.ir.resident);
    let layout = StepLayout::of(&a.ir, &a.edges);
    let name = |b: &usize| a.ir.buffers[*b].name.clone();
    assert_eq!(layout.inputs.iter().map(name).collect::<Vec<_>>(), ["x"]);
    assert_eq!(layout.outputs.iter().map(name).collect::<Vec<_>>(), ["y"]);
    assert_eq!(layout.pointers.iter().map(name).collect::<Vec<_>>(), ["s", "a", "b"], "largest element first");
    assert_eq!(layout.levels, [vec![0, 1], vec![2], vec![3]], "load | zero, then step, then publish");
    let src = cuda::source(&a.ir, &a.edges, &[]);
    for want in [
        "#include \"kg_resident_grid.cuh\"",
        "#define __restrict__\n#include \"k.cu\"\n#undef __restrict__",
        "struct In {\n        float kg_x[64];\n    };",
        "struct Out {\n        float kg_y[64];\n    };",
        "void* kg_s;\n        void* kg_a;\n        void* kg_b;\n        float kg_gain;",
        "kg_g.for_each_block(1u, [&](unsigned kg_b) { k_in_block(kg_b, 1u, KgAnyPtr{(void*)static_cast<const In*>(kg_g.input)->kg_x}, KgAnyPtr{kg_p.kg_a}, (int)(64ull)); __syncthreads(); });",
        "kg_g.fill(kg_p.kg_s, 0u, 4u, 128ull);", // a zero fill of f64 as 4-byte words
        "k_step_block(kg_b, 2u, KgAnyPtr{kg_p.kg_a}, KgAnyPtr{kg_p.kg_b}, kg_p.kg_gain, (int)(64ull))",
        "KgAnyPtr{(void*)kg_out.kg_y}",
        "extern \"C\" __global__ void __launch_bounds__(64)\nkg_g_resident(",
        "kg_resident_grid_loop<KgStep_kg_g_resident>(bell, in, out, scratch, params);",
    ] {
        assert!(src.contains(want), "missing `{want}` in:\n{src}");
    }
    assert_eq!(src.matches("kg_g.sync();").count(), 2, "a barrier between levels only:\n{src}");
}

#[test]
fn a_resident_spec_under_repeat_is_an_ordinary_graph() {
    let a = run_with(BUFFERS, NODES, Some(4)).unwrap_or_else(|e| panic!("{}", e.join("\n")));
    assert!(!a.ir.resident, "`repeat` makes a variant the build did not lower");
}

#[test]
fn a_kernel_without_a_device_function_is_an_error_at_its_node() {
    let body = NODES.replace("kernel = \"k_step\"", "kernel = \"k_plain\"").replace("a = \"gain\", ", "");
    let e = errors(&body);
    assert!(e.contains("node `step`: kernel `k_plain` has no device-function form"), "{e}");
    assert!(e.contains("unsafe(device_fn = \"k_plain_block\")"), "{e}");
    assert_eq!(e.matches("has no device-function form").count(), 1, "one error: {e}");
}

#[test]
fn grids_blocks_and_shared_memory_a_grid_cannot_give_are_errors() {
    let e = errors(&NODES.replace("grid = 2", "grid = [2, 2, 1]"));
    assert!(e.contains("node `step`: grid [2, 2, 1] is not 1-D"), "{e}");
    let e = errors(&NODES.replacen("block = 64", "block = 128", 1));
    assert!(e.contains("node `step`: block [64, 1, 1] differs from node `load`'s [128, 1, 1]"), "{e}");
    let e = errors(&NODES.replace("grid = 2\n", "grid = 2\nshared = 256\n"));
    assert!(e.contains("node `step` asks for 256 bytes of dynamic shared memory"), "{e}");
}

#[test]
fn control_flow_is_not_lowerable() {
    let body = format!("{NODES}\n[[while]]\nname = \"again\"\nnodes = [\"step\"]\nrepeat = 3\n");
    let e = errors(&body);
    assert!(e.contains("`again`: a resident spec (`resident = true`) cannot hold `[[while]]` or `[[if]]`"), "{e}");
}

#[test]
fn the_step_needs_an_input_and_an_output_of_whole_words_without_padding() {
    let no_input = [("a", "f32", "n", "state"), ("y", "f32", "n", "pinned_out")];
    let body = "[[node]]\nname = \"publish\"\nkernel = \"k_out\"\ngrid = 1\nblock = 64\nargs = { x = \"a\", y = \"y\", n = \"n\" }\n";
    let e = match run_with(&no_input, body, None) {
        Ok(_) => panic!("no input"),
        Err(e) => e.join("\n"),
    };
    assert!(
        e.contains("a resident step needs an input: no node uses a buffer of role `pinned`, `slot` or `input`"),
        "{e}"
    );
    // f64 state as an output beside one f32: 8 + 4 bytes would end in padding.
    let padded: Vec<_> = BUFFERS
        .iter()
        .map(|b| if b.0 == "s" { ("s", "f64", "n", "output") } else { *b })
        .chain([("one", "f32", "1", "pinned_out")])
        .collect();
    let body = format!(
        "{NODES}\n[[node]]\nname = \"last\"\nkernel = \"k_out\"\ngrid = 1\nblock = 64\nargs = {{ x = \"b\", y = \"one\", n = 1 }}\n"
    );
    let e = match run_with(&padded, &body, None) {
        Ok(_) => panic!("padding"),
        Err(e) => e.join("\n"),
    };
    assert!(e.contains("would end in padding after its 8-byte fields"), "{e}");
}

#[test]
fn device_fn_names_a_device_function_with_the_block_and_the_count_first() {
    let item = quote!(
        pub fn scale(x: &[f32; n], y: &mut [f32; n], a: f32, n: i32);
    );
    let ok = errors_of(quote!("blocks.cu", unsafe(extents, device_fn = "scale_block")), item.clone());
    assert!(ok.is_empty(), "{ok:?}");
    let pre = errors_of(quote!("blocks.cu", unsafe(extents, device_fn = "pre_block")), item.clone());
    assert!(pre.is_empty(), "preprocessed spelling: {pre:?}");
    let host = errors_of(quote!("blocks.cu", unsafe(extents, device_fn = "host_block")), item.clone());
    assert_eq!(host.len(), 1, "{host:?}");
    assert!(host[0].contains("has no `__device__` function `host_block`"), "{host:?}");
    let short = errors_of(quote!("blocks.cu", unsafe(extents, device_fn = "short_block")), item.clone());
    assert!(short[0].contains("`short_block` in") && short[0].contains("takes 5 parameters"), "{short:?}");
    assert!(short[0].contains("(6 parameters)"), "{short:?}");
    let bad = errors_of(quote!("blocks.cu", unsafe(device_fn = "2x")), item.clone());
    assert!(bad[0].contains("`2x` is not a C identifier"), "{bad:?}");
    let unknown = errors_of(quote!("blocks.cu", unsafe(bounds)), item.clone());
    assert!(unknown[0].starts_with("unknown promise `bounds`"), "{unknown:?}");
    let twice = errors_of(quote!("blocks.cu", unsafe(device_fn = "scale_block", device_fn = "scale_block")), item);
    assert!(twice[0].contains("`device_fn` given twice"), "{twice:?}");
}

#[test]
fn a_wide_read_of_a_misaligned_input_field_is_an_error() {
    let buffers = [
        ("one", "f32", "1", "pinned"),
        ("x", "f32", "n", "pinned"),
        ("a", "f32", "n", "scratch"),
        ("y", "f32", "n", "pinned_out"),
    ];
    let node = |name: &str, kernel: &str, args: &str| {
        format!("[[node]]\nname = \"{name}\"\nkernel = \"{kernel}\"\ngrid = 1\nblock = 64\nargs = {{ {args} }}\n")
    };
    let body = [
        node("first", "k_in", "x = \"one\", y = \"a\", n = 1"),
        node("wide", "k_wide", "x = \"x\", y = \"a\", n = \"n\""),
        node("publish", "k_out", "x = \"a\", y = \"y\", n = \"n\""),
    ]
    .concat();
    let e = match run_with(&buffers, &body, None) {
        Ok(_) => panic!("x sits at byte 4 of the input"),
        Err(e) => e.join("\n"),
    };
    assert!(e.contains("node `wide`: kernel `k_wide` needs `x` aligned to 16 bytes"), "{e}");
    assert!(e.contains("buffer `x` sits at byte 4 of the resident step's input"), "{e}");
}

#[test]
fn a_block_of_part_of_a_warp_is_an_error_once() {
    let e = errors(&NODES.replace("block = 64", "block = 48"));
    assert!(e.contains("node `load`: block [48, 1, 1] is 48 threads, not a whole number of warps"), "{e}");
    assert_eq!(e.matches("not a whole number of warps").count(), 1, "one error, at the first kernel node: {e}");
}

#[test]
fn a_copy_of_struct_elements_is_an_error() {
    let buffers: Vec<_> =
        BUFFERS.iter().copied().chain([("p", "Particle", "n", "state"), ("q", "Particle", "n", "scratch")]).collect();
    let body = format!("{NODES}\n[[node]]\nname = \"carry\"\nmemcpy = {{ src = \"p\", dst = \"q\" }}\n");
    let e = match run_with(&buffers, &body, None) {
        Ok(_) => panic!("a struct copy was lowered"),
        Err(e) => e.join("\n"),
    };
    assert!(e.contains("node `carry` copies buffer `p` of `"), "{e}");
    assert!(e.contains("a resident step sizes its copies and fills from number elements"), "{e}");
}

#[test]
fn a_generated_kernel_nvcc_refused_is_an_error_at_the_spec_with_nvccs_words() {
    let a = run(NODES).unwrap_or_else(|e| panic!("{}", e.join("\n")));
    let dir = tempfile::tempdir().unwrap();
    let source = kgraph_codegen::graph::resident::built_source_path(dir.path(), &a.ir.spec_path);
    std::fs::create_dir_all(source.parent().unwrap()).unwrap();
    std::fs::write(&source, cuda::source(&a.ir, &a.edges, &[])).unwrap();
    let check = || kgraph_codegen::graph::resident::check_built(&a.ir, &a.edges, dir.path(), &[]);
    assert!(check().is_ok(), "the file as this expansion writes it: {:?}", check());
    std::fs::write(source.with_extension("failed"), "k.cu(3): error: function \"f\" has already been defined\n")
        .unwrap();
    let e = check().unwrap_err();
    assert!(e.contains("nvcc could not compile the resident kernel the build generated from this spec"), "{e}");
    assert!(e.contains("function \"f\" has already been defined"), "{e}");
}

#[test]
fn the_error_of_a_generated_kernel_nvcc_refused_points_at_the_resident_key() {
    let dir = tempfile::tempdir().unwrap();
    let resident = dir.path().join("resident");
    std::fs::create_dir_all(&resident).unwrap();
    std::fs::write(resident.join("kg_g_resident.failed"), "k.cu(3): error: function \"f\" has already been defined\n")
        .unwrap();
    // A first line before the key, so the error's line is the key's, not the file's start.
    let text = format!("pdl = false\n{}", spec_text(BUFFERS, NODES));
    let read_file = |_: &str| Ok(DECLS.to_string());
    let req =
        GraphRequest { spec_path: "g.toml", spec_text: &text, struct_name: None, root: "", read_file: &read_file };
    let options = Options { resident: true, record_dir: Some(dir.path()), ..Options::default() };
    let e = match kgraph_codegen::graph::generate_with(&req, &options) {
        Ok(_) => panic!("a refused resident kernel expanded"),
        Err(e) => e.join("\n"),
    };
    assert!(e.contains("nvcc could not compile the resident kernel"), "{e}");
    assert!(e.contains("g.toml:2:"), "at the `resident` key (line 2): {e}");
}
