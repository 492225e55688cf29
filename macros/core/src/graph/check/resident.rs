//! `resident = true`: what makes a spec lowerable to one resident kernel (`graph::resident`).
//! Every node runs as device code inside one cooperative grid: a kernel through its device
//! function (`unsafe(device_fn = ..)`) on a 1-D grid with the step's block shape and no dynamic
//! shared memory, copies and fills as grid loops; nothing a grid cannot run itself (GEMM,
//! collective and conditional nodes). The step's input and output are fixed-size structs of
//! 4-byte words with no padding, the input small enough for every block's shared memory.

use super::context::Ctx;
use crate::graph::ir::{Buffer, Control, Node, NodeOp};
use crate::graph::resident::layout::{elem_size, struct_fields, StepSide, MAX_IN_BYTES, MAX_OUT_BYTES, STRUCT_ALIGN};
use crate::graph::spec::{RawSpec, Span};
use crate::syntax::model::{Elem, KernelDecl};

/// Every rule, for a spec asking for a resident kernel (`at`: the `resident` key).
pub(crate) fn check_lowerable(
    cx: &mut Ctx<'_>,
    raw: &RawSpec,
    at: &Span,
    (nodes, kernels): (&[Node], &[KernelDecl]),
    (buffers, buffer_spans): (&[Buffer], &[Span]),
    controls: &[Control],
) {
    for c in controls {
        let span = raw.controls.iter().find(|r| r.name.as_ref().is_some_and(|n| n.v == c.name)).map(|r| r.span.clone());
        cx.diags.push(
            span.unwrap_or_else(|| at.clone()),
            format!(
                "`{}`: a resident spec (`resident = true`) cannot hold `[[while]]` or `[[if]]`: its step runs every node once",
                c.name
            ),
        );
    }
    let mut block: Option<([u32; 3], String)> = None;
    for (n, node) in nodes.iter().enumerate() {
        let span = raw.nodes.get(n).map_or_else(|| at.clone(), |r| r.span.clone());
        node_lowerable(cx, &span, node, kernels, &mut block);
        copy_sizes_known(cx, &span, node, buffers);
    }
    step_structs(cx, at, nodes, buffers, buffer_spans);
    for (n, node) in nodes.iter().enumerate() {
        let span = raw.nodes.get(n).map_or_else(|| at.clone(), |r| r.span.clone());
        aligned_fields(cx, &span, node, kernels, buffers, nodes);
    }
}

/// A parameter the kernel reads as a wider type (`align(param = N)`) bound to a field of the
/// step's input or output: the field's offset in its struct must be a multiple of N, and N at
/// most the structs' own alignment.
fn aligned_fields(
    cx: &mut Ctx<'_>,
    span: &Span,
    node: &Node,
    kernels: &[KernelDecl],
    buffers: &[Buffer],
    nodes: &[Node],
) {
    let NodeOp::Kernel(launch) = &node.op else { return };
    let decl = &kernels[launch.kernel];
    let used =
        |b: usize| nodes.iter().flat_map(|n| &n.args).any(|a| a.binding.buffer_access().is_some_and(|(x, _)| x == b));
    for align in &decl.align {
        let param = crate::syntax::naming::ident_text(&align.param);
        let Some((b, _)) = node.args.iter().find(|a| a.param == param).and_then(|a| a.binding.buffer_access()) else {
            continue;
        };
        let side = StepSide::of(buffers[b].role);
        if side == StepSide::Device {
            continue;
        }
        let fields: Vec<usize> =
            (0..buffers.len()).filter(|&x| used(x) && StepSide::of(buffers[x].role) == side).collect();
        let offset = struct_fields(buffers, &fields).into_iter().find(|(x, _)| *x == b).map_or(0, |(_, o)| o);
        if offset % align.bytes != 0 || align.bytes > STRUCT_ALIGN {
            cx.diags.push(
                span.clone(),
                format!(
                    "node `{}`: kernel `{}` needs `{param}` aligned to {} bytes (`align({param} = {})`), but buffer `{}` sits at byte {offset} of the resident step's {} (aligned to {STRUCT_ALIGN}); give the buffers before it a multiple of {} bytes, or pass it through a device buffer",
                    node.name,
                    decl.symbol,
                    align.bytes,
                    align.bytes,
                    buffers[b].name,
                    if side == StepSide::In { "input" } else { "output" },
                    align.bytes
                ),
            );
        }
    }
}

/// One node: a kernel with a device function on a 1-D grid and the step's block, or a copy or
/// fill.
fn node_lowerable(
    cx: &mut Ctx<'_>,
    span: &Span,
    node: &Node,
    kernels: &[KernelDecl],
    block: &mut Option<([u32; 3], String)>,
) {
    let what = match &node.op {
        NodeOp::Kernel(launch) => {
            let decl = &kernels[launch.kernel];
            let kernel = crate::syntax::naming::ident_text(&decl.name);
            if decl.device_fn.is_none() {
                cx.diags.push(
                    span.clone(),
                    format!(
                        "node `{}`: kernel `{kernel}` has no device-function form, so a resident step cannot run it: write its block as `__device__ void {kernel}_block(unsigned block, unsigned blocks, <its parameters>)` (what the kernel does as block `block` of a grid of `blocks`, with no `blockIdx`, `gridDim` or dynamic shared memory), have the kernel call it with `blockIdx.x, gridDim.x`, and declare it: `#[kernel(\"{}\", unsafe(device_fn = \"{kernel}_block\"))]`",
                        node.name, decl.file
                    ),
                );
            }
            if launch.grid.value[1] != 1 || launch.grid.value[2] != 1 {
                cx.diags.push(
                    span.clone(),
                    format!(
                        "node `{}`: grid {:?} is not 1-D: a resident step runs a node's blocks as `block` of `blocks` (grid = [x, 1, 1])",
                        node.name, launch.grid.value
                    ),
                );
            }
            if launch.shared != 0 {
                cx.diags.push(
                    span.clone(),
                    format!(
                        "node `{}` asks for {} bytes of dynamic shared memory: a resident step has none to give (declare the function's shared memory statically)",
                        node.name, launch.shared
                    ),
                );
            }
            match block {
                Some((b, first)) if *b != launch.block.value => cx.diags.push(
                    span.clone(),
                    format!(
                        "node `{}`: block {:?} differs from node `{first}`'s {:?}: every node of a resident step runs on the step's one block shape",
                        node.name, launch.block.value, b
                    ),
                ),
                Some(_) => {}
                None => {
                    let threads: u32 = launch.block.value.iter().product();
                    if threads % 32 != 0 {
                        cx.diags.push(
                            span.clone(),
                            format!(
                                "node `{}`: block {:?} is {threads} threads, not a whole number of warps: the resident loop's warp 0 polls with full-warp votes, so its block is whole warps (a multiple of 32 threads)",
                                node.name, launch.block.value
                            ),
                        );
                    }
                    *block = Some((launch.block.value, node.name.clone()));
                }
            }
            return;
        }
        NodeOp::Memcpy | NodeOp::Memset { .. } => return,
        NodeOp::Gemm(_) => "a GEMM node (cuBLAS launches kernels of its own)",
        NodeOp::Collective(_) => "a collective node (NCCL launches kernels of its own)",
    };
    cx.diags.push(
        span.clone(),
        format!(
            "node `{}` is {what}: a resident step runs only kernels with a device-function form, copies and fills",
            node.name
        ),
    );
}

/// A copy or fill moves bytes the generated code counts from the element size, which a struct
/// element does not have at expansion (its twin's size is Rust's to know): refused, rather than
/// moving one byte per element.
fn copy_sizes_known(cx: &mut Ctx<'_>, span: &Span, node: &Node, buffers: &[Buffer]) {
    let what = match node.op {
        NodeOp::Memcpy => "copies",
        NodeOp::Memset { .. } => "fills",
        _ => return,
    };
    for (b, _) in node.args.iter().filter_map(|a| a.binding.buffer_access()) {
        let buf = &buffers[b];
        if buf.elem.size().is_none() {
            cx.diags.push(
                span.clone(),
                format!(
                    "node `{}` {what} buffer `{}` of `{}` elements: a resident step sizes its copies and fills from number elements; give the buffer a number type, or move it with a kernel",
                    node.name,
                    buf.name,
                    buf.elem.rust_name()
                ),
            );
            return;
        }
    }
}

/// The step's input and output structs: one field per buffer the host writes or reads, each a
/// whole number of 4-byte words of a plain number type, no padding, within the size limits.
fn step_structs(cx: &mut Ctx<'_>, at: &Span, nodes: &[Node], buffers: &[Buffer], spans: &[Span]) {
    let used =
        |b: usize| nodes.iter().flat_map(|n| &n.args).any(|a| a.binding.buffer_access().is_some_and(|(x, _)| x == b));
    for (side, name, limit) in [(StepSide::In, "input", MAX_IN_BYTES), (StepSide::Out, "output", MAX_OUT_BYTES)] {
        let fields: Vec<usize> =
            (0..buffers.len()).filter(|&b| used(b) && StepSide::of(buffers[b].role) == side).collect();
        if fields.is_empty() {
            cx.diags.push(
                at.clone(),
                format!(
                    "a resident step needs an {name}: no node uses a buffer of role {}",
                    if side == StepSide::In { "`pinned`, `slot` or `input`" } else { "`pinned_out` or `output`" }
                ),
            );
            continue;
        }
        let mut bytes = 0u64;
        let mut align = 1u64;
        for &b in &fields {
            let buf = &buffers[b];
            let size = elem_size(buf.elem) * buf.len;
            let plain = buf.elem.is_number() || matches!(buf.elem, Elem::F16 | Elem::Bf16);
            if !plain || size % 4 != 0 {
                cx.diags.push(
                    spans[b].clone(),
                    format!(
                        "buffer `{}` ({} x {}, {size} bytes) is part of the resident step's {name}, which travels as 4-byte words: it must be a plain number type and a whole number of words",
                        buf.name,
                        buf.len,
                        buf.elem.rust_name()
                    ),
                );
            }
            bytes += size;
            align = align.max(elem_size(buf.elem));
        }
        if bytes % align != 0 {
            cx.diags.push(
                at.clone(),
                format!("the resident step's {name} ({bytes} bytes) would end in padding after its {align}-byte fields: give the buffers of smaller elements one more word"),
            );
        }
        if bytes > limit {
            cx.diags.push(
                at.clone(),
                format!("the resident step's {name} is {bytes} bytes, over the {limit} a step may carry"),
            );
        }
    }
}
