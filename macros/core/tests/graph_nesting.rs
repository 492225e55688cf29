//! How far includes nest and what `graph!(.., repeat = K)` wraps: one recursive rule (the
//! splice of `[[include]]`) with one depth limit, so `repeat`'s loop holds every node however
//! deep; a chain past the limit is one error at the include that goes too deep (never a stack
//! overflow); includes that multiply stop at a node limit; an included spec's error is reported
//! once however often it is included; `repeat`'s own errors are in the user's file and name it.

use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use kgraph_codegen::graph::ir::ControlKind;
use kgraph_codegen::graph::{analyze_with, Analysis, GraphRequest, Options, MAX_INCLUDE_DEPTH, MAX_SPLICED_NODES};

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("workspace root")
}

/// Analyzes `main` with `repeat`; `files` serves the specs (by path), the workspace the rest
/// (the declarations `tests/gpu/graph/kernels.rs`, `tests/graphs/nest/*.toml`).
fn analyze(files: &dyn Fn(&str) -> Option<String>, main: &str, repeat: Option<u32>) -> Result<Analysis, Vec<String>> {
    let root = workspace_root();
    let read_file = |p: &str| files(p).map_or_else(|| std::fs::read_to_string(root.join(p)), Ok);
    let text = read_file(main).expect("main spec");
    let req = GraphRequest { spec_path: main, spec_text: &text, struct_name: None, root: "", read_file: &read_file };
    analyze_with(
        &req,
        &Options { record_dir: None, repeat: repeat.map(|k| NonZeroU32::new(k).unwrap()), ..Options::default() },
    )
}

fn errors(files: &dyn Fn(&str) -> Option<String>, main: &str, repeat: Option<u32>) -> Vec<String> {
    match analyze(files, main, repeat) {
        Ok(a) => panic!("{main} must not validate ({} nodes)", a.ir.nodes.len()),
        Err(e) => e,
    }
}

fn no_files(_: &str) -> Option<String> {
    None
}

const KERNELS: &str = "[kernels]\nsource = \"tests/gpu/graph/kernels.rs\"\nmodule = \"crate::graph::kernels\"\n";

/// Spec `l<level>.toml`: input `x`, output `y` (4 floats), one `tg_prep` node from `x` to `y`,
/// then `copies` includes of `l<level + 1>.toml` (none for the last of `levels`).
fn level(level: usize, levels: usize, copies: usize) -> String {
    let mut t = format!(
        "{KERNELS}[buffers.x]\ndtype = \"f32\"\nlen = 4\nrole = \"input\"\n[buffers.y]\ndtype = \"f32\"\nlen = 4\nrole = \"output\"\n\
         [[node]]\nname = \"prep\"\nkernel = \"tg_prep\"\ngrid = 1\nblock = 4\nargs = {{ x = \"x\", s = \"y\", n = 4 }}\n"
    );
    if level + 1 < levels {
        for copy in 0..copies {
            t += &format!(
                "[[include]]\nname = \"i{copy}\"\nspec = \"l{}.toml\"\nbuffers = {{ x = \"x\", y = \"y\" }}\n",
                level + 1
            );
        }
    }
    t
}

/// A chain of `levels` specs `l0.toml` -> `l1.toml` -> ..., each included `copies` times.
fn chain(levels: usize, copies: usize) -> impl Fn(&str) -> Option<String> {
    move |p: &str| {
        let n: usize = p.strip_prefix('l')?.strip_suffix(".toml")?.parse().ok()?;
        (n < levels).then(|| level(n, levels, copies))
    }
}

#[test]
fn repeat_wraps_every_node_of_an_18_level_include_chain() {
    let a =
        analyze(&no_files, "tests/graphs/nest/level_00.toml", Some(5)).unwrap_or_else(|e| panic!("{}", e.join("\n")));
    assert_eq!(a.ir.nodes.len(), 18, "one node per level");
    let deepest = format!("{}count", "d_".repeat(17));
    assert_eq!(a.ir.nodes[17].name, deepest);
    assert_eq!(a.ir.controls.len(), 1, "one loop");
    let ctl = &a.ir.controls[0];
    assert_eq!((ctl.name.as_str(), &ctl.kind, ctl.body()), ("repeat_steps", &ControlKind::Repeat(5), 0..18));
    // Without `repeat`, the same 18 nodes and no loop.
    let plain = analyze(&no_files, "tests/graphs/nest/level_00.toml", None).unwrap();
    assert_eq!(plain.ir.nodes.len(), 18);
    assert!(plain.ir.controls.is_empty());
}

#[test]
fn includes_nest_up_to_the_limit() {
    // l0 is the spec itself; l1 .. l64 are 64 levels of includes.
    let a =
        analyze(&chain(MAX_INCLUDE_DEPTH + 1, 1), "l0.toml", Some(2)).unwrap_or_else(|e| panic!("{}", e.join("\n")));
    assert_eq!(a.ir.nodes.len(), MAX_INCLUDE_DEPTH + 1);
    assert_eq!(a.ir.controls[0].body(), 0..MAX_INCLUDE_DEPTH + 1, "repeat wraps the deepest level too");
}

#[test]
fn one_level_more_is_one_error_at_the_include_that_goes_too_deep() {
    // 3000 levels overflowed the stack before the limit; now the 65th level is one error.
    for levels in [MAX_INCLUDE_DEPTH + 2, 3000] {
        let started = Instant::now();
        let e = errors(&chain(levels, 1), "l0.toml", None);
        assert!(started.elapsed() < Duration::from_secs(30), "{levels} levels took {:?}", started.elapsed());
        assert_eq!(e.len(), 1, "one error: {e:#?}");
        let deepest = format!("l{MAX_INCLUDE_DEPTH}.toml");
        let line = level(MAX_INCLUDE_DEPTH, levels, 1).lines().position(|l| l.starts_with("spec =")).unwrap() + 1;
        assert!(e[0].starts_with(&format!("{deepest}:{line}:8: `[[include]]` of `l65.toml` nests 65 levels deep (l0.toml -> l1.toml -> l2.toml -> … -> l63.toml -> l64.toml -> l65.toml), but at most 64 levels of includes nest")), "{}", e[0]);
        assert!(e[0].contains(&format!(" {line} | spec = \"l65.toml\"")), "quotes the include:\n{}", e[0]);
        assert!(e[0].ends_with(&format!("= note: `{deepest}` is included at l63.toml:{line}:8")), "{}", e[0]);
    }
}

#[test]
fn includes_that_multiply_stop_at_the_node_limit() {
    // Every level includes the next twice: 2^20 nodes at the top, were it not for the limit.
    let started = Instant::now();
    let e = errors(&chain(20, 2), "l0.toml", Some(3));
    assert!(started.elapsed() < Duration::from_secs(30), "took {:?}", started.elapsed());
    assert_eq!(e.len(), 1, "one error, however often the spec with it is included: {e:#?}");
    assert!(e[0].contains(&format!("above the limit of {MAX_SPLICED_NODES} nodes")), "{}", e[0]);
    assert!(e[0].starts_with("l5.toml:"), "at the include that goes over: {}", e[0]);
}

/// `p.toml`, broken (an unknown buffer), included by `files`' other specs.
const BROKEN: &str = "[buffers.x]\ndtype = \"f32\"\nlen = 4\nrole = \"input\"\n[buffers.y]\ndtype = \"f32\"\nlen = 4\nrole = \"output\"\n\
                      [[node]]\nname = \"prep\"\nkernel = \"tg_prep\"\ngrid = 1\nblock = 4\nargs = { x = \"xx\", s = \"y\", n = 4 }\n";

fn includes(names: &[(&str, &str)]) -> String {
    let mut t = format!("{KERNELS}[buffers.x]\ndtype = \"f32\"\nlen = 4\nrole = \"input\"\n[buffers.y]\ndtype = \"f32\"\nlen = 4\nrole = \"output\"\n");
    for (name, spec) in names {
        t += &format!("[[include]]\nname = \"{name}\"\nspec = \"{spec}\"\nbuffers = {{ x = \"x\", y = \"y\" }}\n");
    }
    t
}

#[test]
fn an_included_error_is_reported_once_however_often_it_is_included() {
    let files = |p: &str| match p {
        "p.toml" => Some(format!("{KERNELS}{BROKEN}")),
        "twice.toml" => Some(includes(&[("a", "p.toml"), ("b", "p.toml")])),
        "b.toml" | "c.toml" => Some(includes(&[("p", "p.toml")])),
        "diamond.toml" => Some(includes(&[("b", "b.toml"), ("c", "c.toml"), ("t", "twice.toml")])),
        _ => None,
    };
    for main in ["twice.toml", "diamond.toml"] {
        let e = errors(&files, main, None);
        assert_eq!(e.len(), 1, "{main}: {e:#?}");
        assert!(e[0].starts_with("p.toml:17:14: unknown buffer `xx`"), "{}", e[0]);
    }
}

/// A spec with nodes `a` and `b` (tg_prep x -> y, then y -> z) and `extra`.
fn two_nodes(extra: &str) -> String {
    let mut t = String::from(KERNELS);
    for (name, role) in [("x", "input"), ("y", "scratch"), ("z", "output")] {
        t += &format!("[buffers.{name}]\ndtype = \"f32\"\nlen = 4\nrole = \"{role}\"\n");
    }
    t += "[[node]]\nname = \"a\"\nkernel = \"tg_prep\"\ngrid = 1\nblock = 4\nargs = { x = \"x\", s = \"y\", n = 4 }\n";
    t += "[[node]]\nname = \"b\"\nkernel = \"tg_prep\"\ngrid = 1\nblock = 4\nargs = { x = \"y\", s = \"z\", n = 4 }\n";
    t + extra
}

fn line_of(text: &str, needle: &str) -> usize {
    text.lines().position(|l| l.contains(needle)).unwrap_or_else(|| panic!("`{needle}` not in the spec")) + 1
}

#[test]
fn repeat_errors_are_located_in_the_users_file_and_name_repeat() {
    // A loop of the spec's own: bodies do not nest.
    let own = two_nodes("[[while]]\nname = \"twice\"\nnodes = [\"b\"]\nrepeat = 2\n");
    let e = errors(&|p| (p == "g.toml").then(|| own.clone()), "g.toml", Some(7));
    assert_eq!(e.len(), 1, "{e:#?}");
    assert!(e[0].starts_with(&format!("g.toml:{}:", line_of(&own, "[[while]]"))), "{}", e[0]);
    assert!(e[0].contains("`graph!(.., repeat = 7)` puts every node in one `[[while]]` loop, but `[[while]]` `twice` already runs some of them conditionally"), "{}", e[0]);
    let lines = own.lines().count();
    assert!(!e[0].contains(&format!("g.toml:{}:", lines + 1)), "nothing past the file's end: {}", e[0]);
    // An included loop: at the include that brings it.
    let sub = own.clone();
    let parent = format!(
        "{KERNELS}[buffers.x]\ndtype = \"f32\"\nlen = 4\nrole = \"input\"\n[buffers.z]\ndtype = \"f32\"\nlen = 4\nrole = \"output\"\n\
         [[include]]\nname = \"inner\"\nspec = \"sub.toml\"\nbuffers = {{ x = \"x\", z = \"z\" }}\n"
    );
    let files = |p: &str| match p {
        "sub.toml" => Some(sub.clone()),
        "p.toml" => Some(parent.clone()),
        _ => None,
    };
    let e = errors(&files, "p.toml", Some(7));
    assert_eq!(e.len(), 1, "{e:#?}");
    assert!(e[0].starts_with(&format!("p.toml:{}:", line_of(&parent, "[[include]]"))), "{}", e[0]);
    assert!(e[0].contains("`[[while]]` `inner_twice`") && e[0].contains("repeat = 7"), "{}", e[0]);
    // A node with the loop's name.
    let named = two_nodes("").replace("name = \"b\"", "name = \"repeat_steps\"");
    let e = errors(&|p| (p == "g.toml").then(|| named.clone()), "g.toml", Some(2));
    assert_eq!(e.len(), 1, "{e:#?}");
    assert!(e[0].starts_with(&format!("g.toml:{}:", line_of(&named, "\"repeat_steps\""))), "{}", e[0]);
    assert!(e[0].contains("`graph!(.., repeat = 2)`") && e[0].contains("rename the node"), "{}", e[0]);
}
