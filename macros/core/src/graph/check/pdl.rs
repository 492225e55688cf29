//! Rule: a node launched with programmatic dependent launch (`pdl = true`, per node or for the
//! whole graph) needs a kernel proven to wait on its grid dependency: the compiled-kernel
//! record of its `.cu` says the entry executes `griddepcontrol.wait` and calls no function
//! kgraph cannot see ([`crate::compiled::pdl_waits`]). A kernel without a record (a build
//! without nvcc: the NVRTC fallback) is not proven either. Runs after validation, on the
//! validated graph, and only where the record folder is known (`graph!` always knows it: it is
//! `$OUT_DIR/kgraph`).

use std::path::Path;

use crate::compiled::{pdl_waits, read_record, Lookup};
use crate::diagnostics::Ctxt;
use crate::graph::ir::GraphIr;
use crate::graph::spec::RawSpec;

/// Why the wait of a node's kernel is not proven, if it is not.
fn unproven(record_dir: &Path, file: &str, symbol: &str) -> Option<String> {
    let stem = file.strip_suffix(".cu").unwrap_or(file);
    let compiled = match read_record(Some(record_dir), stem) {
        None => return Some(format!("the build left no record of what nvcc compiled from `{file}` (no nvcc: the NVRTC fallback), so nothing proves a wait")),
        Some(Err(e)) => return Some(e),
        Some(Ok(c)) => c,
    };
    let Lookup::Found(record) = compiled.lookup(symbol) else {
        return Some(format!("`{file}`'s compiled record has no single entry `{symbol}`"));
    };
    if pdl_waits(Some(record)) {
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
