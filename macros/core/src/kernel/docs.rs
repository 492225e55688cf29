//! The rustdoc of a handle and of its `launch`: the arguments with their `.cu` parameters and
//! extents, and the contract: what a checked launch checks and returns, or the `# Safety`
//! contract of an unchecked (`unsafe`) one.

use proc_macro2::TokenStream;
use syn::Ident;

use super::block_bound::block_bound;
use super::config::Resolved;
use crate::emit_util::doc_lines;
use crate::syntax::model::{KernelDecl, ParamKind};

/// The handle struct's rustdoc, after the declaration's own doc comments (if any).
pub(crate) fn struct_doc(decl: &KernelDecl, resolved: &Resolved, ty: &Ident, has_docs: bool) -> TokenStream {
    let (name, file, line) = (&decl.symbol, &resolved.display, resolved.kernel.line);
    let mut lines = Vec::new();
    if has_docs {
        lines.push(String::new());
    }
    lines.extend([
        format!("Kernel `{name}` of `{file}` (line {line}), bound by `#[kernel]`:"),
        format!("`extern \"C\" __global__ void {}`.", resolved.kernel.signature()),
        String::new(),
        "The declaration was checked against that source when this crate was compiled.".into(),
        format!("Load it with [`{ty}::new`] or [`{ty}::load`], then call [`{ty}::launch`]."),
    ]);
    if !decl.has_checked_launch() {
        lines.push(String::new());
        lines.push("The declaration states no extents, so `launch` is `unsafe` (see its `# Safety`).".into());
    }
    doc_lines(lines)
}

/// `launch`'s rustdoc: the arguments with their `.cu` parameters, the contract, the errors.
pub(crate) fn launch_doc(decl: &KernelDecl, resolved: &Resolved) -> TokenStream {
    let (name, file, line) = (&decl.symbol, &resolved.display, resolved.kernel.line);
    let mut lines = vec![
        format!("Launches `{name}` ({file}:{line}) on `stream` with `cfg`."),
        String::new(),
        "Arguments, in the kernel's order:".to_string(),
    ];
    for (p, cu) in decl.params.iter().zip(&resolved.kernel.params) {
        match &p.extent {
            Some(extent) => lines.push(format!("- `{}`: `{cu}`, `{}` elements", p.name, extent.text)),
            None => lines.push(format!("- `{}`: `{cu}`", p.name)),
        }
    }
    if let Some(shared) = &decl.shared {
        lines.push(String::new());
        lines.push(format!(
            "Dynamic shared memory: `cfg.shared_mem_bytes` must be at least `{}` bytes \
             (`kgraph::LaunchError::SharedMemory` otherwise).",
            shared.text
        ));
    }
    if decl.has_checked_launch() {
        lines.extend(CHECKED_CONTRACT.map(String::from));
    } else {
        lines.extend(UNSAFE_CONTRACT.map(String::from));
    }
    if decl.params.iter().any(|p| matches!(p.kind, ParamKind::PinnedMut(_))) {
        let pinned_mut = [
            "",
            "The kernel writes mapped pinned host memory through its `PinnedMutPtr` arguments:",
            "read that memory on the host only after synchronizing `stream`.",
        ];
        lines.extend(pinned_mut.map(String::from));
    }
    lines.extend(["", "# Errors", ""].map(String::from));
    if let Some(bound) = block_bound(decl, resolved) {
        lines.push(format!(
            "`kgraph::LaunchError::BlockTooLarge` when `cfg`'s blocks have more than {} threads",
            bound.threads
        ));
        lines.push(format!("({}).", bound.describe(file)));
        lines.push(String::new());
    }
    if decl.has_checked_launch() {
        lines.extend(CHECKED_ERRORS.map(String::from));
    }
    let launch_error = [
        "`kgraph::Error::LaunchFailed` when the driver rejects the launch (or an earlier",
        "asynchronous fault surfaces).",
    ];
    lines.extend(launch_error.map(String::from));
    doc_lines(lines)
}

const CHECKED_CONTRACT: [&str; 11] = [
    "",
    "# Checks",
    "",
    "`#[kernel]` verified at compile time that the number, order, element types and",
    "constness of these arguments match the kernel's parameters. The declaration states",
    "each pointer argument's extent under `unsafe(extents)`: its author's promise that the",
    "kernel accesses nothing outside them, for any `cfg` of at most 2^31 threads. Before",
    "launching, this checks the thread count, evaluates every extent from the scalar",
    "arguments (checked, in the type C computes it in), checks that every pointer argument",
    "holds at least its extent, and that no argument the kernel writes overlaps another",
    "pointer argument within their extents; nothing is launched when a check fails.",
];

const UNSAFE_CONTRACT: [&str; 23] = [
    "",
    "# Safety",
    "",
    "`#[kernel]` verified at compile time that the number, order, element types and",
    "constness of these arguments match the kernel's parameters, but the declaration states",
    "no extents, so nothing bounds what the kernel accesses. The caller must ensure that:",
    "",
    "- for these scalar arguments and `cfg`, every access of the kernel through a pointer",
    "  argument stays inside that argument's allocation (its `elem_len()` elements, or the",
    "  mapped buffer's length);",
    "- no argument the kernel writes (`&mut`, `PinnedMutPtr`) overlaps any other pointer",
    "  argument in the memory the kernel accesses;",
    "- `cfg.shared_mem_bytes` covers the dynamic shared memory the kernel uses for this",
    "  `cfg` (an `extern __shared__` array);",
    "- the kernel writes nothing through a read-only argument (`&[T]`, `PinnedPtr`), stays",
    "  within its shared memory for `cfg`'s block, does not race on its module's `__device__`",
    "  variables with launches running at the same time, stores only 0 or 1 through a `bool`",
    "  pointer, and every texture or surface object or struct field holding an address that it",
    "  is passed is valid for what it does with it.",
    "",
    "Declare extents (`x: &[f32; n]`) with `unsafe(extents)` in the `#[kernel]` attribute",
    "to make the promise once, at the declaration, and get a safe `launch` that checks",
    "them.",
];

const CHECKED_ERRORS: [&str; 9] = [
    "`kgraph::LaunchError::TooManyThreads` when `cfg` has more than 2^31 threads;",
    "`kgraph::LaunchError::ExtentArithmetic` when an extent overflows, divides by zero or is",
    "negative for these scalar arguments; `kgraph::LaunchError::Extent` when an argument holds",
    "fewer elements than its extent; `kgraph::LaunchError::Aliasing` when an argument the kernel",
    "writes overlaps another; `kgraph::LaunchError::SharedMemory` when `cfg.shared_mem_bytes` is",
    "below the declaration's `shared`; `kgraph::LaunchError::SharedMemoryLimit` when it is more than",
    "the device grants the kernel; `kgraph::GraphError::Failed` when `stream` is capturing into a",
    "graph kgraph did not begin (all before anything is launched).",
    "",
];
