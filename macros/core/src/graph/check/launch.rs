//! A node's launch configuration: `grid` and `block` (1 to 3 dimensions within the CUDA
//! limits, and at most 2^31 threads in all: see `extents`) and `shared` (dynamic shared memory).

use super::context::Ctx;
use super::extents::threads_within_promise;
use super::values::num_src;
use crate::graph::ir::Dim3;
use crate::graph::spec::{Num, RawNode, S};

const MAX_BLOCK: [u32; 3] = [1024, 1024, 64];
const MAX_GRID: [u32; 3] = [i32::MAX as u32, 65535, 65535];
/// The largest dynamic shared memory any current GPU grants a block (227 KiB, Hopper, opt-in).
const MAX_SHARED: i128 = 227 * 1024;

/// A node's `grid`, `block` and `shared`, each `None` when wrong (reported).
pub(crate) struct Launch {
    pub grid: Option<Dim3>,
    pub block: Option<Dim3>,
    pub shared: Option<u32>,
    /// `tune` candidates (empty when absent), `None` when wrong (reported).
    pub tune: Option<Vec<u32>>,
}

/// Checks the node's launch configuration.
pub(crate) fn launch(cx: &mut Ctx<'_>, node: &RawNode) -> Launch {
    let grid = launch_dims(cx, &node.grid, node, "grid", MAX_GRID);
    let block = launch_dims(cx, &node.block, node, "block", MAX_BLOCK);
    let shared = shared_mem(cx, node);
    if let (Some(g), Some(b)) = (&grid, &block) {
        threads_within_promise(cx, node, g, b);
    }
    let tune = tune_candidates(cx, node, grid.as_ref(), block.as_ref());
    Launch { grid, block, shared, tune }
}

/// Rule: `tune` lists distinct block sizes from 1 to 1024 for a node whose launch is 1-D (the
/// autotuner keeps the spec's total thread count, `grid.x * block.x`, covering it with each
/// candidate's blocks).
fn tune_candidates(cx: &mut Ctx<'_>, node: &RawNode, grid: Option<&Dim3>, block: Option<&Dim3>) -> Option<Vec<u32>> {
    let Some(t) = &node.tune else { return Some(Vec::new()) };
    if t.v.is_empty() {
        cx.diags.push(t.span.clone(), "`tune` is empty: list candidate block sizes, e.g. [64, 128, 256]");
        return None;
    }
    let one_d = |d: Option<&Dim3>| d.map_or(true, |d| d.value[1] == 1 && d.value[2] == 1);
    if !one_d(grid) || !one_d(block) {
        cx.diags.push(t.span.clone(), "`tune` needs a 1-D launch (`grid` and `block` with y = z = 1)");
        return None;
    }
    let mut out = Vec::new();
    for c in &t.v {
        match cx.whole(c, "`tune`") {
            Some(b) if (1..=1024).contains(&b) && !out.contains(&(b as u32)) => out.push(b as u32),
            Some(b) if (1..=1024).contains(&b) => {
                cx.diags.push(c.span.clone(), format!("`tune` lists block size {b} twice"));
                return None;
            }
            Some(b) => {
                cx.diags.push(c.span.clone(), format!("`tune` candidate {b} must be between 1 and 1024 threads"));
                return None;
            }
            None => return None,
        }
    }
    Some(out)
}

fn launch_dims(cx: &mut Ctx<'_>, v: &Option<S<Vec<S<Num>>>>, node: &RawNode, key: &str, max: [u32; 3]) -> Option<Dim3> {
    let Some(v) = v else {
        let at = node.kernel.as_ref().map_or(node.span.clone(), |k| k.span.clone());
        cx.diags.push(at, format!("node has no `{key}` (an integer, an expression over dims, or [x, y, z])"));
        return None;
    };
    let mut value = [1u32; 3];
    let mut ok = true;
    for (i, part) in v.v.iter().enumerate() {
        let axis = ["x", "y", "z"][i];
        match cx.whole(part, &format!("`{key}`")) {
            Some(x) if x >= 1 && x <= i128::from(max[i]) => value[i] = x as u32,
            Some(x) => {
                cx.diags.push(part.span.clone(), format!("`{key}`.{axis} = {x}, must be between 1 and {}", max[i]));
                ok = false;
            }
            None => ok = false,
        }
    }
    if ok && key == "block" && value.iter().map(|&x| u64::from(x)).product::<u64>() > 1024 {
        cx.diags.push(v.span.clone(), format!("`block` = {value:?} has more than 1024 threads"));
        ok = false;
    }
    let src: Vec<String> = v.v.iter().map(|p| num_src(&p.v)).collect();
    let src = if src.len() == 1 { src[0].clone() } else { format!("[{}]", src.join(", ")) };
    ok.then_some(Dim3 { value, src })
}

/// `shared` in bytes (0 when not given).
fn shared_mem(cx: &mut Ctx<'_>, node: &RawNode) -> Option<u32> {
    let Some(s) = &node.shared else { return Some(0) };
    let v = cx.whole(s, "`shared`")?;
    if (0..=MAX_SHARED).contains(&v) {
        Some(v as u32)
    } else {
        cx.diags.push(s.span.clone(), format!("`shared` = {v} bytes, must be between 0 and {MAX_SHARED}"));
        None
    }
}
