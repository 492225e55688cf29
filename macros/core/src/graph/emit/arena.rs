//! The memory plan in the generated struct: the planned buffers' fields (slices of one arena),
//! the arena's allocation in `new`, the constants that report the plan, and its rustdoc
//! section. What is planned is decided by `graph::memplan`; this file only reads the plan.

use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};

use super::fields::storage_type;
use super::input::CodegenInput;
use crate::emit_util::elem_in_hidden_module;
use crate::graph::ir::GraphIr;
use crate::graph::memplan::{BufferPlan, MemoryPlan};

/// The type of buffer `b`'s field: a slice of the arena when planned, else its role's storage.
pub(crate) fn field_type(cg: &CodegenInput<'_>, b: usize) -> TokenStream {
    let buf = &cg.ir.buffers[b];
    let t = elem_in_hidden_module(buf.elem);
    match cg.memory.slot(b) {
        Some(_) => quote!(::kgraph::__private::ArenaSlice<#t>),
        None => storage_type(buf.role, &t),
    }
}

/// `new`'s statement allocating the arena (zeroed) as `__arena`; nothing without one.
pub(crate) fn arena_alloc(cg: &CodegenInput<'_>) -> TokenStream {
    if cg.memory.arena_bytes == 0 {
        return TokenStream::new();
    }
    let graph = cg.name.to_string();
    let op = format!("allocate the memory plan's arena ({} bytes)", cg.memory.arena_bytes);
    quote! {
        let __arena = ::kgraph::__private::Arena::new(
            device.alloc_zeros::<u8>(Self::PLANNED_BYTES).map_err(|e| ::kgraph::Error::in_graph(#graph, #op, e))?,
        );
    }
}

/// `new`'s expression for planned buffer `b`: its slice of `__arena`; `None` when not planned.
pub(crate) fn planned_init(cg: &CodegenInput<'_>, b: usize) -> Option<TokenStream> {
    let slot = cg.memory.slot(b)?;
    let buf = &cg.ir.buffers[b];
    let t = elem_in_hidden_module(buf.elem);
    let len_const = format_ident!("{}", buf.len_const());
    let offset = Literal::usize_unsuffixed(slot.offset as usize);
    let graph = cg.name.to_string();
    let op = format!("place planned buffer `{}` in the arena", buf.name);
    Some(quote! {
        // SAFETY: the memory plan (`kgraph_codegen::graph::memplan`) gives overlapping slices
        // only to buffers every use of one of which finishes before every use of the other starts
        // in each way the graph runs (this run and the next, every iteration), never two buffers
        // of one node; each is a `scratch` buffer whose every read follows a write in the same
        // run, and the struct lends no planned slice out.
        unsafe { ::kgraph::__private::ArenaSlice::<#t>::new(&__arena, #offset, Self::#len_const) }
            .map_err(|e| ::kgraph::Error::in_graph(#graph, #op, e))?
    })
}

/// Bytes of the device buffers `filter` selects as a `usize` constant expression (a struct's
/// size is rustc's to know).
fn bytes_expr(ir: &GraphIr, filter: impl Fn(usize) -> bool) -> TokenStream {
    let terms: Vec<TokenStream> = (0..ir.buffers.len())
        .filter(|&b| !ir.buffers[b].role.is_host() && filter(b))
        .map(|b| {
            let t = elem_in_hidden_module(ir.buffers[b].elem);
            let len_const = format_ident!("{}", ir.buffers[b].len_const());
            quote!(Self::#len_const * ::core::mem::size_of::<#t>())
        })
        .collect();
    if terms.is_empty() {
        quote!(0)
    } else {
        quote!(#(#terms)+*)
    }
}

/// `PLANNED_BYTES`, `UNPLANNED_BYTES`, `BYTES_WITHOUT_PLAN` and `MEMORY_PLAN`.
pub(crate) fn plan_consts(cg: &CodegenInput<'_>) -> TokenStream {
    let ir = cg.ir;
    let arena = Literal::usize_unsuffixed(cg.memory.arena_bytes as usize);
    let unplanned = bytes_expr(ir, |b| cg.memory.slot(b).is_none());
    let without = bytes_expr(ir, |_| true);
    let rows = (0..ir.buffers.len()).filter_map(|b| {
        let slot = cg.memory.slot(b)?;
        let (name, offset, bytes) = (&ir.buffers[b].name, slot.offset as usize, slot.bytes as usize);
        Some(quote!((#name, #offset, #bytes)))
    });
    quote! {
        /// Bytes of the memory plan's arena: the planned (`scratch`) buffers share it, packed
        /// by when the graph uses them (`docs/graph-spec.md`, "Memory plan"); 0 without one.
        pub const PLANNED_BYTES: usize = #arena;
        /// Device bytes of the buffers with an allocation of their own (not planned).
        pub const UNPLANNED_BYTES: usize = #unplanned;
        /// Device bytes of all buffers, each in an allocation of its own (without a plan):
        /// the plan saves `BYTES_WITHOUT_PLAN - PLANNED_BYTES - UNPLANNED_BYTES`.
        pub const BYTES_WITHOUT_PLAN: usize = #without;
        /// The planned buffers: `(buffer, byte offset in the arena, bytes)`, by buffer order.
        pub const MEMORY_PLAN: &'static [(&'static str, usize, usize)] = &[#(#rows),*];
    }
}

/// The struct rustdoc's "Memory plan" section: what shares the arena, and what does not.
pub fn doc_section(ir: &GraphIr, plan: &MemoryPlan) -> String {
    if !ir.buffers.iter().any(|b| b.role == crate::graph::ir::Role::Scratch) {
        return String::new();
    }
    let mut d = String::from("\n# Memory plan\n\n");
    if plan.arena_bytes == 0 {
        d += "No buffer shares an arena: each has an allocation of its own.\n";
    } else {
        d += &format!(
            "The planned buffers share one arena of {} bytes ([`Self::PLANNED_BYTES`]); they have no accessor and no `replace_<buffer>`, and their values do not outlive the run that wrote them.\n\n| buffer | offset | bytes |\n|---|---|---|\n",
            plan.arena_bytes
        );
        for (b, p) in plan.buffers.iter().enumerate() {
            if let BufferPlan::Arena(s) = p {
                d += &format!("| `{}` | {} | {} |\n", ir.buffers[b].name, s.offset, s.bytes);
            }
        }
    }
    let own: Vec<String> = plan
        .buffers
        .iter()
        .enumerate()
        .filter_map(|(b, p)| match p {
            BufferPlan::Own(why) if ir.buffers[b].role == crate::graph::ir::Role::Scratch => {
                Some(format!("`{}` ({})", ir.buffers[b].name, why.text()))
            }
            _ => None,
        })
        .collect();
    if !own.is_empty() {
        d += &format!("\nScratch buffers not planned: {}.\n", own.join(", "));
    }
    d
}
