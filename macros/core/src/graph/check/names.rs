//! The names the generated struct gets from the spec (accessors, host methods, setters,
//! constants), checked against each other and against the ones every graph has.

use std::collections::BTreeMap;

use super::context::Ctx;
use crate::graph::ir::{Buffer, Dim, Scalar};

/// Generated method names a spec name must not produce (see `graph::emit`).
pub const RESERVED_METHODS: &[&str] = &[
    "new",
    "device",
    "run_eager",
    "capture",
    "capture_serialized",
    "replay",
    "graph",
    "graph_nodes",
    "is_captured",
    "pdl_enabled",
    "set_pdl_enabled",
    "capture_streamed",
    "update_graph",
    "profile",
    "debug_dot",
    "set_launch",
    "autotune",
    "apply_tuning",
    "reload_kernels",
    "set_done_word_wait",
    "done_word_armed",
    "wait_replay",
];
/// Generated associated constants a spec name must not produce.
pub const RESERVED_CONSTS: &[&str] = &["SPEC", "NODES", "EDGES", "NODE_PDL", "PDL_EDGES", "DOT", "MERMAID"];

/// The two namespaces of generated items.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Item {
    Method,
    Constant,
}

/// One generated item a declaration wants.
struct Wanted {
    item: String,
    kind: Item,
    /// `buffer `x``, for the message.
    owner: String,
    /// The declared name, to find its span.
    name: String,
}

/// What each dim, buffer and scalar generates.
fn wanted(dims: &[Dim], buffers: &[Buffer], scalars: &[Scalar]) -> Vec<Wanted> {
    let mut wanted = Vec::new();
    let mut want = |item: String, kind: Item, owner: &str, name: &str| {
        wanted.push(Wanted { item, kind, owner: owner.to_string(), name: name.to_string() });
    };
    for d in dims {
        want(d.const_name(), Item::Constant, &format!("dim `{}`", d.name), &d.name);
    }
    for b in buffers {
        let owner = format!("buffer `{}`", b.name);
        want(b.name.clone(), Item::Method, &owner, &b.name);
        want(b.len_const(), Item::Constant, &owner, &b.name);
        for m in b.role.host_methods() {
            want(m.name(&b.name), Item::Method, &owner, &b.name);
        }
        if b.role.is_replaceable() {
            want(b.replacer(), Item::Method, &owner, &b.name);
        }
    }
    for s in scalars {
        let owner = format!("scalar `{}`", s.name);
        want(s.name.clone(), Item::Method, &owner, &s.name);
        want(s.setter(), Item::Method, &owner, &s.name);
    }
    wanted
}

/// The generated method and constant names, checked against each other and the fixed ones.
pub(crate) fn check_generated_names(cx: &mut Ctx<'_>, dims: &[Dim], buffers: &[Buffer], scalars: &[Scalar]) {
    let mut methods: BTreeMap<String, String> =
        RESERVED_METHODS.iter().map(|m| (m.to_string(), "a method every graph has".to_string())).collect();
    let mut consts: BTreeMap<String, String> =
        RESERVED_CONSTS.iter().map(|c| (c.to_string(), "a constant every graph has".to_string())).collect();
    for Wanted { item, kind, owner, name } in wanted(dims, buffers, scalars) {
        if name == "null" && item == name {
            // A node argument `"null"` passes a null pointer, so no declaration may take the word.
            let span = cx.names.get(&name).map(|(_, s)| s.clone()).unwrap_or(0..0);
            cx.diags.push(span, format!("{owner}: `null` is the argument that passes a null pointer; rename it"));
            continue;
        }
        let (table, kind_name) = match kind {
            Item::Method => (&mut methods, "method"),
            Item::Constant => (&mut consts, "constant"),
        };
        if let Some(prev) = table.get(&item) {
            let span = cx.names.get(&name).map(|(_, s)| s.clone()).unwrap_or(0..0);
            let msg = format!("{owner} would generate the {kind_name} `{item}`, which is already {prev}; rename it");
            cx.diags.push(span, msg);
        } else {
            table.insert(item, format!("generated for {owner}"));
        }
    }
}
