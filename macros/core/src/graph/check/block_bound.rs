//! Rule: a node's block, and every `tune` candidate, is within its kernel's declared block
//! bound (`max_block = <threads>` in `#[kernel]`), as the checked launch requires at run time
//! (`LaunchError::BlockTooLarge`): the bound is part of the kernel author's promise, so a
//! graph launching bigger blocks would run the kernel where it is not promised to stay in
//! bounds. (`__launch_bounds__` is checked by the driver and the handle's launch.)

use super::context::Ctx;
use crate::graph::ir::Node;
use crate::graph::spec::RawNode;
use crate::syntax::model::KernelDecl;
use crate::syntax::naming::ident_text;

/// Reports a node block or `tune` candidate above `decl`'s `max_block`.
pub(crate) fn block_within_bound(cx: &mut Ctx<'_>, raw: &RawNode, decl: &KernelDecl, node: &Node) {
    let (Some(bound), Some(launch)) = (decl.max_block, node.launch()) else { return };
    let what = |threads: u64, shape: String| {
        format!(
            "node `{}`: {shape} has {threads} threads per block, but kernel `{}` declares `max_block = {}` (the most \
             threads per block it is written for; a checked launch refuses bigger blocks with \
             `LaunchError::BlockTooLarge`); use blocks of at most {} threads",
            node.name,
            ident_text(&decl.name),
            bound.threads,
            bound.threads
        )
    };
    let block = launch.block.value;
    let threads: u64 = block.iter().map(|&d| u64::from(d)).product();
    if threads > u64::from(bound.threads) {
        let at = raw.block.as_ref().map_or_else(|| raw.span.clone(), |b| b.span.clone());
        cx.diags.push(at, what(threads, format!("`block` = {block:?}")));
    }
    let tune_at = raw.tune.as_ref().map_or_else(|| raw.span.clone(), |t| t.span.clone());
    for &candidate in launch.tune.iter().filter(|&&c| c > bound.threads) {
        cx.diags.push(tune_at.clone(), what(u64::from(candidate), format!("`tune` candidate {candidate}")));
    }
}
