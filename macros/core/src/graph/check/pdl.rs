//! Rule: a node launched with programmatic dependent launch (`pdl = true`, per node or for the
//! whole graph) needs a kernel proven to wait on its grid dependency: the compiled-kernel
//! record of its `.cu` says the entry executes `griddepcontrol.wait` and calls no function
//! kgraph cannot see ([`crate::compiled::pdl_waits`]). A kernel without a record (a build
//! without nvcc: the NVRTC fallback) is not proven either. Runs after validation, on the
//! validated graph, and only where the record folder is known (`graph!` always knows it: it is
//! `$OUT_DIR/kgraph`).
//!
//! The same records say which kernels wait first ([`proven_waits_first`]): what lets the memory
//! plan take a PDL edge as ordering.

use std::path::Path;

use crate::compiled::{pdl_waits, read_record, KernelRecord, Lookup};
use crate::diagnostics::Ctxt;
use crate::graph::ir::GraphIr;
use crate::graph::spec::RawSpec;

/// The compiled record of entry `symbol` of `file`, or why there is none to read.
fn entry_record(record_dir: &Path, file: &str, symbol: &str) -> Result<KernelRecord, String> {
    let stem = file.strip_suffix(".cu").unwrap_or(file);
    let compiled = match read_record(Some(record_dir), stem) {
        None => return Err(format!("the build left no record of what nvcc compiled from `{file}` (no nvcc: the NVRTC fallback), so nothing proves a wait")),
        Some(Err(e)) => return Err(e),
        Some(Ok(c)) => c,
    };
    match compiled.lookup(symbol) {
        Lookup::Found(record) => Ok(record.clone()),
        _ => Err(format!("`{file}`'s compiled record has no single entry `{symbol}`")),
    }
}

/// Per node of `ir`: its kernel is proven, by its compiled record in `record_dir`, to wait on its
/// grid dependency before it touches any buffer (`pdl_wait_first`: the first thing its entry
/// does that could touch memory or branch is an unguarded `griddepcontrol.wait`). Nodes that
/// launch no kernel, kernels without a record and every node when no record folder is known:
/// not proven.
pub fn proven_waits_first(ir: &GraphIr, record_dir: Option<&Path>) -> Vec<bool> {
    let mut by_kernel: Vec<Option<bool>> = vec![None; ir.kernels.len()];
    let mut proven = |k: usize| {
        *by_kernel[k].get_or_insert_with(|| {
            let decl = &ir.kernels[k];
            record_dir
                .and_then(|dir| entry_record(dir, &decl.file, &decl.symbol).ok())
                .is_some_and(|r| r.pdl_wait_first)
        })
    };
    ir.nodes.iter().map(|node| node.kernel().is_some_and(&mut proven)).collect()
}

/// Why the wait of a node's kernel is not proven, if it is not.
fn unproven(record_dir: &Path, file: &str, symbol: &str) -> Option<String> {
    let record = match entry_record(record_dir, file, symbol) {
        Ok(record) => record,
        Err(why) => return Some(why),
    };
    if pdl_waits(Some(&record)) {
        return None;
    }
    let hidden: Vec<String> = record
        .callees
        .iter()
        .filter(|c| !c.defined || c.name.is_none())
        .map(|c| c.name.clone().map_or_else(|| "an indirect call".to_string(), |n| format!("`{n}`")))
        .collect();
    Some(if !record.pdl_wait {
        "the compiled kernel never executes `griddepcontrol.wait`".to_string()
    } else {
        format!(
            "the compiled kernel calls {}, whose code kgraph cannot see, so its wait is not proven",
            hidden.join(", ")
        )
    })
}

/// Reports every PDL node whose kernel's wait is not proven by the records in `record_dir`.
pub fn check_pdl_waits(raw: &RawSpec, ir: &GraphIr, record_dir: &Path, diags: &mut Ctxt) {
    for (index, node) in ir.nodes.iter().enumerate() {
        if !node.pdl {
            continue;
        }
        let Some(k) = node.kernel() else { continue };
        let decl = &ir.kernels[k];
        let Some(why) = unproven(record_dir, &decl.file, &decl.symbol) else { continue };
        let raw_node = raw.nodes.get(index);
        let span = raw_node
            .and_then(|n| n.pdl.as_ref().map(|p| p.span.clone()))
            .or_else(|| raw.pdl.as_ref().map(|p| p.span.clone()))
            .or_else(|| raw_node.and_then(|n| n.kernel.as_ref().map(|k| k.span.clone())))
            .unwrap_or(0..0);
        diags.push(
            span,
            format!(
                "node `{}` is launched with PDL (`pdl = true`), but its kernel `{}` ({}) is not proven to wait on its grid dependency: {why}. A PDL launch may start before the previous kernel finishes, so the kernel must execute `griddepcontrol.wait` (`cudaGridDependencySynchronize()`) before reading its inputs; add it, or set `pdl = false` on this node",
                node.name, decl.symbol, decl.file
            ),
        );
    }
}
