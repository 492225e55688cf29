//! The memory plan (`graph::memplan`): which buffers share the arena and which may share bytes.
//! Every rule is checked on a small spec: parallel branches never share, a chain reuses, PDL
//! edges do not order (unless promised), loops and `[[if]]` bodies, collectives, conditions,
//! read-first buffers and the opt-outs. The model specs' numbers are checked to add up.

use kgraph_codegen::graph::memplan::{BufferPlan, MemoryPlan, Slot, Unplanned, ARENA_ALIGN};
use kgraph_codegen::graph::{analyze_with, Analysis, GraphRequest, Options};

const DECLS: &str = r#"
#[kernel("k.cu", unsafe(extents))] pub fn k_copy(x: &[f32; n], y: &mut [f32; n], n: i32);
#[kernel("k.cu", unsafe(extents))] pub fn k_add(a: &[f32; n], b: &[f32; n], y: &mut [f32; n], n: i32);
#[kernel("k.cu", unsafe(extents))] pub fn k_acc(y: &mut [f32; n], n: i32);
"#;

/// `buffers` as `(name, role)` (f32, 1024 elements each: 4096 bytes), then `body`.
fn spec(top: &str, buffers: &[(&str, &str)], body: &str) -> String {
    let mut text = format!("{top}\n[dims]\nn = 1024\none = 1\n");
    for (name, role) in buffers {
        let len = if *name == "flag" || *name == "loss" { "one" } else { "n" };
        let dtype = if *name == "flag" { "i32" } else { "f32" };
        text += &format!("[buffers.{name}]\ndtype = \"{dtype}\"\nlen = \"{len}\"\nrole = \"{role}\"\n");
    }
    text += body;
    text += "\n[kernels]\nsource = \"decls.rs\"\nmodule = \"crate::decls\"\n";
    text
}

fn analyze_text(text: &str, options: &Options<'_>) -> Analysis {
    let read_file = |_: &str| Ok(DECLS.to_string());
    let req = GraphRequest { spec_path: "g.toml", spec_text: text, struct_name: None, root: "", read_file: &read_file };
    analyze_with(&req, options).unwrap_or_else(|e| panic!("must validate:\n{}\n{text}", e.join("\n")))
}

fn plan(top: &str, buffers: &[(&str, &str)], body: &str) -> Analysis {
    analyze_text(&spec(top, buffers, body), &Options::default())
}

fn copy(name: &str, x: &str, y: &str) -> String {
    format!("[[node]]\nname = \"{name}\"\nkernel = \"k_copy\"\ngrid = 4\nblock = 256\nargs = {{ x = \"{x}\", y = \"{y}\", n = \"n\" }}\n")
}

fn add(name: &str, a: &str, b: &str, y: &str) -> String {
    format!("[[node]]\nname = \"{name}\"\nkernel = \"k_add\"\ngrid = 4\nblock = 256\nargs = {{ a = \"{a}\", b = \"{b}\", y = \"{y}\", n = \"n\" }}\n")
}

fn slot(a: &Analysis, name: &str) -> Option<Slot> {
    let b = a.ir.buffers.iter().position(|b| b.name == name).unwrap_or_else(|| panic!("no buffer {name}"));
    a.memory.slot(b)
}

fn why(a: &Analysis, name: &str) -> Unplanned {
    let b = a.ir.buffers.iter().position(|b| b.name == name).unwrap();
    match &a.memory.buffers[b] {
        BufferPlan::Own(why) => why.clone(),
        BufferPlan::Arena(s) => panic!("{name} is planned at {s:?}"),
    }
}

/// Whether buffers `p` and `q` are both planned and share bytes.
fn shares(a: &Analysis, p: &str, q: &str) -> bool {
    matches!((slot(a, p), slot(a, q)), (Some(x), Some(y)) if overlap(x, y))
}

fn overlap(a: Slot, b: Slot) -> bool {
    a.offset < b.offset + b.bytes && b.offset < a.offset + a.bytes
}

/// The chain x → s1 → s2 → s3 → y: s1 is dead once s2 is written, so s3 reuses its bytes.
fn chain_body() -> String {
    [copy("c1", "x", "s1"), copy("c2", "s1", "s2"), copy("c3", "s2", "s3"), copy("c4", "s3", "y")].concat()
}

const CHAIN: [(&str, &str); 5] =
    [("x", "input"), ("s1", "scratch"), ("s2", "scratch"), ("s3", "scratch"), ("y", "output")];

#[test]
fn a_chain_reuses_the_bytes_of_a_buffer_whose_uses_are_over() {
    let a = plan("", &CHAIN, &chain_body());
    assert!(shares(&a, "s1", "s3"), "s3 reuses s1's bytes: {:?}", a.memory);
    // s2 is live while s1 and s3 are: it would share with nothing, so it keeps its own.
    assert_eq!(why(&a, "s2"), Unplanned::NothingShared);
    assert_eq!(a.memory.arena_bytes, 4096);
    assert_eq!(a.memory.own_bytes(&a.ir), Some(3 * 4096));
    assert_eq!(MemoryPlan::bytes_without_plan(&a.ir), Some(5 * 4096));
    assert_eq!(why(&a, "x"), Unplanned::Role(kgraph_codegen::graph::ir::Role::Input));
}

#[test]
fn two_parallel_branches_never_share_bytes() {
    // x → (s1 → s2) and x → (s3 → s4), joined into y: every pair across the branches may run at
    // once; within a branch s1 and s2 are both used by one node.
    // After the join, t1 → s5 → t2: s5 may take the bytes of any of them.
    let body = [
        copy("a1", "x", "s1"),
        copy("a2", "s1", "s2"),
        copy("b1", "x", "s3"),
        copy("b2", "s3", "s4"),
        add("join", "s2", "s4", "y"),
        copy("t1", "y", "s5"),
        copy("t2", "s5", "z"),
    ]
    .concat();
    let buffers = [
        ("x", "input"),
        ("s1", "scratch"),
        ("s2", "scratch"),
        ("s3", "scratch"),
        ("s4", "scratch"),
        ("s5", "scratch"),
        ("y", "output"),
        ("z", "output"),
    ];
    let a = plan("", &buffers, &body);
    assert!(["s1", "s2", "s3", "s4"].iter().any(|p| shares(&a, p, "s5")), "{:?}", a.memory);
    for (p, q) in [("s1", "s3"), ("s1", "s4"), ("s2", "s3"), ("s2", "s4"), ("s1", "s2"), ("s3", "s4"), ("s2", "s4")] {
        assert!(!shares(&a, p, q), "{p} and {q} share: {:?}", a.memory);
    }
}

#[test]
fn a_buffer_read_later_stays_live_across_the_nodes_between() {
    // s1 is written first and read last: s2 (written and read in between) may not take its bytes.
    let body =
        [copy("w1", "x", "s1"), copy("w2", "x", "s2"), copy("r2", "s2", "y"), add("r1", "s1", "y", "z")].concat();
    let buffers = [("x", "input"), ("s1", "scratch"), ("s2", "scratch"), ("y", "output"), ("z", "output")];
    let a = plan("", &buffers, &body);
    assert!(!shares(&a, "s1", "s2"), "{:?}", a.memory);
}

#[test]
fn pdl_edges_do_not_order_unless_the_waits_are_promised() {
    let a = plan("pdl = true", &CHAIN, &chain_body());
    assert_eq!(a.memory.arena_bytes, 0, "a PDL chain may overlap, so nothing shares: {:?}", a.memory);
    assert_eq!(why(&a, "s1"), Unplanned::NothingShared);
    let promised = analyze_text(
        &spec("pdl = true", &CHAIN, &chain_body()),
        &Options { pdl_waits_first: true, ..Options::default() },
    );
    assert_eq!(slot(&promised, "s1").unwrap().offset, slot(&promised, "s3").unwrap().offset);
    assert_eq!(promised.memory.arena_bytes, 4096);
}

/// A record folder whose `k.kernels` says each kernel waits (`pdl_wait=1`, as the PDL check
/// wants) and whether it waits first (`pdl_wait_first`, absent for `None`: an older record).
fn records(first: &[(&str, Option<bool>)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from("kgraph-kernels 1\n");
    for (kernel, waits_first) in first {
        text += &format!("entry {kernel} visible=1 pdl_wait=1 pdl_trigger=1 calls=0");
        if let Some(w) = waits_first {
            text += &format!(" pdl_wait_first={}", u8::from(*w));
        }
        text += "\nend\n";
    }
    std::fs::write(dir.path().join("k.kernels"), text).unwrap();
    dir
}

fn plan_with_records(top: &str, body: &str, dir: &tempfile::TempDir) -> Analysis {
    analyze_text(&spec(top, &CHAIN, body), &Options { record_dir: Some(dir.path()), ..Options::default() })
}

#[test]
fn pdl_edges_into_kernels_proven_to_wait_first_order() {
    // Every node PDL, its kernel's record proving the wait first: the chain plans as the promise
    // plans it, with no promise (the first node too: the next run's c1 waits for this run's c4).
    let proven = records(&[("k_copy", Some(true)), ("k_add", Some(true))]);
    let a = plan_with_records("pdl = true", &chain_body(), &proven);
    assert_eq!(slot(&a, "s1").unwrap().offset, slot(&a, "s3").unwrap().offset, "{:?}", a.memory);
    assert_eq!(a.memory.arena_bytes, 4096);
    // Records that wait but not first, or written before the field existed: nothing shares.
    for waits_first in [Some(false), None] {
        let unproven = records(&[("k_copy", waits_first), ("k_add", waits_first)]);
        let a = plan_with_records("pdl = true", &chain_body(), &unproven);
        assert_eq!(a.memory.arena_bytes, 0, "{waits_first:?}: {:?}", a.memory);
    }
    // No record folder: nothing is proven either.
    assert_eq!(plan("pdl = true", &CHAIN, &chain_body()).memory.arena_bytes, 0);
}

#[test]
fn one_pdl_kernel_not_proven_to_wait_first_keeps_the_buffers_around_it_apart() {
    // c3 runs k_add, whose record does not prove the wait first: c3 may overlap c2, so s1 (c1,
    // c2) and s3 (c3, c4) stay apart although every other kernel waits first.
    let body = chain_body().replacen(&copy("c3", "s2", "s3"), &add("c3", "s2", "s2", "s3"), 1);
    let mixed = records(&[("k_copy", Some(true)), ("k_add", Some(false))]);
    let a = plan_with_records("pdl = true", &body, &mixed);
    assert!(!shares(&a, "s1", "s3"), "{:?}", a.memory);
    let proven = records(&[("k_copy", Some(true)), ("k_add", Some(true))]);
    assert!(shares(&plan_with_records("pdl = true", &body, &proven), "s1", "s3"));
    // The promise covers the kernel the records do not prove.
    let promised = analyze_text(
        &spec("pdl = true", &CHAIN, &body),
        &Options { record_dir: Some(mixed.path()), pdl_waits_first: true, ..Options::default() },
    );
    assert!(shares(&promised, "s1", "s3"), "{:?}", promised.memory);
}

#[test]
fn one_pdl_node_keeps_the_buffers_around_it_apart() {
    // c2 (PDL) may start before c1 finishes and (waiting on nothing kgraph may assume) finish
    // before it: c3 and c4 may then overlap c1's tail, so s1 (c1, c2) and s3 (c3, c4) stay apart.
    let body = chain_body().replacen("name = \"c2\"\n", "name = \"c2\"\npdl = true\n", 1);
    let a = plan("", &CHAIN, &body);
    assert!(!shares(&a, "s1", "s3"), "{:?}", a.memory);
    // c3 PDL instead: c2 (a user of s1) may still run when c3 and c4 (users of s3) start.
    let body = chain_body().replacen("name = \"c3\"\n", "name = \"c3\"\npdl = true\n", 1);
    let a = plan("", &CHAIN, &body);
    assert!(!shares(&a, "s1", "s3"), "{:?}", a.memory);
    // Nothing else may share, so nothing is planned: a plan that saves no byte is not used.
    assert_eq!(a.memory.arena_bytes, 0, "{:?}", a.memory);
    assert_eq!(why(&a, "s2"), Unplanned::NothingShared);
}

#[test]
fn a_pdl_first_node_may_overlap_the_previous_run_so_the_last_buffers_keep_their_bytes() {
    // c1 is PDL: an eager run's c1 may overlap the previous run's c4, so s3 (c3, c4) may not
    // share with s1 (c1, c2) even though s1's uses come first within a run.
    let body = chain_body().replacen("name = \"c1\"\n", "name = \"c1\"\npdl = true\n", 1);
    let a = plan("", &CHAIN, &body);
    assert!(!shares(&a, "s1", "s3"), "{:?}", a.memory);
}

#[test]
fn a_loop_body_is_one_unit_outside_and_ordered_inside() {
    // c2, c3 in a [[while]]: s1 (before the loop) and s3 (used inside only) may not share with
    // s2 (inside and outside); inside the body, s2 and s3 are ordered per iteration but both
    // live across the body, so they stay apart.
    let body = format!("{}\n[[while]]\nname = \"lp\"\nnodes = [\"c2\", \"c3\"]\nrepeat = 3\n", chain_body());
    let a = plan("", &CHAIN, &body);
    for (p, q) in [("s1", "s2"), ("s2", "s3")] {
        assert!(!shares(&a, p, q), "{p} and {q} share: {:?}", a.memory);
    }
    // s1 is used by c1 (before) and c2 (the loop); s3 by the loop and c4: both touch the loop.
    assert!(!shares(&a, "s1", "s3"), "{:?}", a.memory);
}

#[test]
fn buffers_used_only_inside_one_body_share_by_the_body_order() {
    // The whole chain in a loop: every buffer is body-local; s1 and s3 share, as in a plain chain.
    let body =
        format!("{}\n[[while]]\nname = \"lp\"\nnodes = [\"c1\", \"c2\", \"c3\", \"c4\"]\nrepeat = 3\n", chain_body());
    let a = plan("", &CHAIN, &body);
    assert_eq!(slot(&a, "s1").unwrap().offset, slot(&a, "s3").unwrap().offset, "{:?}", a.memory);
    // With PDL the next iteration's c1 may overlap c4: s3 (c3, c4) and s1 (c1, c2) stay apart.
    let a = plan("pdl = true", &CHAIN, &body);
    assert!(!shares(&a, "s1", "s3"), "{:?}", a.memory);
}

#[test]
fn a_buffer_first_written_under_an_if_and_read_after_it_is_not_planned() {
    let buffers = [("x", "input"), ("flag", "input"), ("s1", "scratch"), ("s2", "scratch"), ("y", "output")];
    let body = [copy("c1", "x", "s1"), copy("c2", "x", "s2"), add("c3", "s1", "s2", "y")].concat()
        + "\n[[if]]\nname = \"maybe\"\nnodes = [\"c2\"]\nflag = \"flag\"\n";
    let a = plan("", &buffers, &body);
    assert_eq!(why(&a, "s2"), Unplanned::WrittenUnderIf("maybe".into()));
}

#[test]
fn a_condition_buffer_is_not_planned() {
    let buffers = [("x", "input"), ("loss", "scratch"), ("y", "output")];
    let body = format!(
        "{}[[node]]\nname = \"probe\"\nkernel = \"k_copy\"\ngrid = 1\nblock = 1\nargs = {{ x = \"y\", y = \"loss\", n = \"one\" }}\n[[while]]\nname = \"descend\"\nnodes = [\"c\", \"probe\"]\nuntil = {{ buffer = \"loss\", below = 0.5 }}\nmax = 10\n",
        copy("c", "x", "y")
    );
    let a = plan("", &buffers, &body);
    assert_eq!(why(&a, "loss"), Unplanned::Condition("descend".into()));
}

#[test]
fn a_buffer_a_collective_passes_is_not_planned() {
    let buffers = [("x", "input"), ("s1", "scratch"), ("y", "output")];
    let body = format!(
        "{}[[node]]\nname = \"avg\"\ncollective = {{ op = \"all_reduce\", reduce = \"avg\", buffer = \"s1\" }}\n{}",
        copy("c1", "x", "s1"),
        copy("c2", "s1", "y")
    );
    let a = plan("", &buffers, &body);
    assert_eq!(why(&a, "s1"), Unplanned::Collective("avg".into()));
}

#[test]
fn the_spec_buffer_and_macro_opt_outs_keep_buffers_out() {
    let a = plan("plan_memory = false", &CHAIN, &chain_body());
    assert_eq!(a.memory.arena_bytes, 0);
    assert_eq!(why(&a, "s1"), Unplanned::GraphOptOut);
    assert_eq!(a.memory.own_bytes(&a.ir), MemoryPlan::bytes_without_plan(&a.ir));

    let s3 = "[buffers.s3]\ndtype = \"f32\"\nlen = \"n\"\nrole = \"scratch\"\n";
    let text = spec("", &CHAIN, &chain_body()).replacen(s3, &format!("{s3}plan = false\n"), 1);
    let a = analyze_text(&text, &Options::default());
    assert_eq!(why(&a, "s3"), Unplanned::BufferOptOut);
    assert_eq!(why(&a, "s1"), Unplanned::NothingShared, "s3 was the one to share with");

    let a = analyze_text(&spec("", &CHAIN, &chain_body()), &Options { no_memory_plan: true, ..Options::default() });
    assert_eq!(why(&a, "s3"), Unplanned::GraphOptOut);
}

#[test]
fn a_read_modify_write_first_access_counts_as_a_write_under_the_scratch_contract() {
    // k_acc takes `&mut` only: kgraph cannot tell `y = ..` from `y += ..`. The scratch role's
    // contract (undefined before its first write in the run) makes it the defining write; a
    // spec that relies on a zeroed scratch opts the buffer out (`plan = false`).
    let buffers = [("s1", "scratch"), ("y", "output")];
    let body = format!(
        "[[node]]\nname = \"acc\"\nkernel = \"k_acc\"\ngrid = 4\nblock = 256\nargs = {{ y = \"s1\", n = \"n\" }}\n{}",
        copy("c", "s1", "y")
    );
    let a = plan("", &buffers, &body);
    assert_eq!(why(&a, "s1"), Unplanned::NothingShared, "eligible, but alone");
}

#[test]
fn offsets_are_aligned_and_packing_puts_the_largest_first() {
    let a = plan("", &CHAIN, &chain_body());
    for b in 0..a.ir.buffers.len() {
        if let Some(s) = a.memory.slot(b) {
            assert_eq!(s.offset % ARENA_ALIGN, 0);
        }
    }
}

/// The model specs at the repository root, planned as `graph!` plans them (with and without the
/// PDL promise): the numbers add up, nothing planned overlaps another buffer of one node, and
/// the report prints them (`cargo test -p kgraph-codegen --test graph_memplan -- --nocapture`).
#[test]
fn the_model_specs_plan_and_report_their_bytes() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    for spec in
        ["graphs/train_step.toml", "graphs/ppo_update.toml", "graphs/perception.toml", "graphs/perception_fused.toml"]
    {
        let text = std::fs::read_to_string(root.join(spec)).unwrap();
        let read_file = |p: &str| std::fs::read_to_string(root.join(p));
        let req =
            GraphRequest { spec_path: spec, spec_text: &text, struct_name: None, root: "", read_file: &read_file };
        for promise in [false, true] {
            let a = analyze_with(&req, &Options { pdl_waits_first: promise, ..Options::default() })
                .unwrap_or_else(|e| panic!("{spec}: {}", e.join("\n")));
            let m = &a.memory;
            let (own, without) = (m.own_bytes(&a.ir).unwrap(), MemoryPlan::bytes_without_plan(&a.ir).unwrap());
            let planned_sum: u64 = (0..a.ir.buffers.len()).filter_map(|b| m.slot(b)).map(|s| s.bytes).sum();
            assert_eq!(own + planned_sum, without, "{spec}");
            assert!(m.arena_bytes <= planned_sum + ARENA_ALIGN * a.ir.buffers.len() as u64);
            for n in 0..a.ir.nodes.len() {
                let slots: Vec<Slot> = a.ir.accesses(n).iter().filter_map(|&(b, _)| m.slot(b)).collect();
                for (i, p) in slots.iter().enumerate() {
                    assert!(
                        slots[i + 1..].iter().all(|q| !overlap(*p, *q)),
                        "{spec}: node {n} passes overlapping slots"
                    );
                }
            }
            println!(
                "{spec} (pdl_waits_first = {promise}): without plan {without} B; planned arena {} B + unplanned {own} B = {} B ({} buffers planned)",
                m.arena_bytes,
                m.arena_bytes + own,
                (0..a.ir.buffers.len()).filter(|&b| m.slot(b).is_some()).count()
            );
        }
    }
}

/// The structs `tests/gpu/memory_plan.rs` compares really plan something (their GPU tests also
/// assert it, but a zero there would only show on the GPU machine).
#[test]
fn the_gpu_tests_planned_forms_share_bytes() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let cases = [
        ("graphs/train_step.toml", None, true),
        ("graphs/train_step.toml", Some(4), true),
        ("graphs/train_step_ddp.toml", None, false),
        ("graphs/ppo_update.toml", None, true),
        ("graphs/ppo_update.toml", Some(32), true),
        ("graphs/perception.toml", None, true),
    ];
    for (spec, repeat, promise) in cases {
        let text = std::fs::read_to_string(root.join(spec)).unwrap();
        let read_file = |p: &str| std::fs::read_to_string(root.join(p));
        let req =
            GraphRequest { spec_path: spec, spec_text: &text, struct_name: None, root: "", read_file: &read_file };
        let options = Options {
            repeat: repeat.map(|k| std::num::NonZeroU32::new(k).unwrap()),
            pdl_waits_first: promise,
            ..Options::default()
        };
        let a = analyze_with(&req, &options).unwrap_or_else(|e| panic!("{spec}: {}", e.join("\n")));
        let without = MemoryPlan::bytes_without_plan(&a.ir).unwrap();
        let with = a.memory.arena_bytes + a.memory.own_bytes(&a.ir).unwrap();
        assert!(a.memory.arena_bytes > 0 && with < without, "{spec} (repeat {repeat:?}): {with} of {without} B");
        let off = analyze_with(&req, &Options { no_memory_plan: true, ..options }).unwrap();
        assert_eq!(off.memory.arena_bytes, 0, "{spec}: plan_memory = false");
    }
}
