//! The most threads per block a checked launch allows: the kernel's `__launch_bounds__`, or
//! `max_block = <threads>` in the declaration (the lower when both are given), and the rule
//! that a kernel with static shared memory and no `__launch_bounds__` must declare one: a
//! `__shared__ float tile[128]` does not grow with the block, so a kernel indexing it by thread
//! stays within it only for blocks up to some size, which the safe launch must check.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};

use super::config::Resolved;
use crate::compiled::KernelRecord;
use crate::diagnostics::Ctxt;
use crate::syntax::model::{KernelDecl, MaxBlock};

/// Where a kernel's block bound comes from.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Origin {
    /// `__launch_bounds__(n)` at this line of the kernel's file.
    LaunchBounds { line: usize },
    /// `max_block = n` in the declaration.
    Declared(MaxBlock),
}

/// A kernel's block bound.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BlockBound {
    /// The most threads per block.
    pub threads: u32,
    /// Where it comes from.
    pub origin: Origin,
}

/// The bound a checked launch holds `decl`'s blocks to, if any: the lower of the kernel's
/// `__launch_bounds__` and the declared `max_block`.
pub(crate) fn block_bound(decl: &KernelDecl, resolved: &Resolved) -> Option<BlockBound> {
    let compiled = resolved
        .kernel
        .launch_bounds
        .map(|b| BlockBound { threads: b.max_threads, origin: Origin::LaunchBounds { line: b.line } });
    let declared = decl.max_block.map(|m| BlockBound { threads: m.threads, origin: Origin::Declared(m) });
    match (compiled, declared) {
        (Some(c), Some(d)) => Some(if d.threads < c.threads { d } else { c }),
        (c, d) => c.or(d),
    }
}

impl BlockBound {
    /// Where it is written, for docs: `__launch_bounds__(128)` at kernels/x.cu:4, or
    /// `max_block = 128` in the declaration.
    pub(crate) fn describe(&self, file: &str) -> String {
        match self.origin {
            Origin::LaunchBounds { line } => format!("`__launch_bounds__({})` at {file}:{line}", self.threads),
            Origin::Declared(_) => format!("`max_block = {}` in the declaration", self.threads),
        }
    }
}

/// `MAX_THREADS`: the kernel's block bound, with where it comes from in the docs.
pub(crate) fn max_threads_const(decl: &KernelDecl, resolved: &Resolved) -> TokenStream {
    match block_bound(decl, resolved) {
        Some(bound) => {
            let max = bound.threads;
            let doc = format!(" {}: the most threads per block a launch may have.", bound.describe(&resolved.display));
            quote! {
                #[doc = #doc]
                pub const MAX_THREADS: ::core::option::Option<u32> = ::core::option::Option::Some(#max);
            }
        }
        None => quote! {
            /// `None`: the kernel declares no `__launch_bounds__` (the device's limit applies).
            pub const MAX_THREADS: ::core::option::Option<u32> = ::core::option::Option::None;
        },
    }
}

/// The block-size check of a launch (nothing without a bound). A declared bound is reported at
/// the declaration (`file!()`/`line!()` of the `max_block` number), `__launch_bounds__` at its
/// line of the `.cu`.
pub(crate) fn block_check(decl: &KernelDecl, resolved: &Resolved) -> TokenStream {
    let Some(bound) = block_bound(decl, resolved) else { return TokenStream::new() };
    let max = bound.threads;
    let (file, line) = match bound.origin {
        Origin::LaunchBounds { line } => {
            let line = u32::try_from(line).unwrap_or(u32::MAX);
            (quote!(Self::FILE), quote!(#line))
        }
        Origin::Declared(m) => (quote_spanned!(m.span=> ::core::file!()), quote_spanned!(m.span=> ::core::line!())),
    };
    quote!(::kgraph::__private::check_block(Self::NAME, &cfg, #max, #file, #line)?;)
}

/// Rule: a checked launch of a kernel that uses static shared memory (the record lists a
/// `__shared__` array) and has no `__launch_bounds__` needs `max_block = <threads>`: without a
/// bound any block up to the device's 1024 threads passes the checks, and a kernel indexing a
/// `__shared__ float[128]` by `threadIdx.x` writes past it.
pub(crate) fn check_static_shared_bound(
    decl: &KernelDecl,
    record: &KernelRecord,
    shown: &str,
    at: &str,
    cx: &mut Ctxt,
) {
    let Some(promise) = decl.extents_promise else { return };
    let bounded = record.max_threads.is_some() || record.req_threads.is_some() || decl.max_block.is_some();
    let Some(array) = record.static_shared.first().filter(|_| !bounded) else { return };
    let name = local_name(&array.symbol).unwrap_or_else(|| array.symbol.clone());
    let more = match record.static_shared.len() {
        1 => String::new(),
        n => format!(" and {} more", n - 1),
    };
    cx.push(
        promise,
        format!(
            "kernel `{shown}` uses static shared memory as nvcc compiled it ({at}): `__shared__` array `{name}` \
             ({} bytes){more}, whose size does not grow with the block, and it has no `__launch_bounds__`: a safe launch \
             must know the most threads per block the kernel is written for; declare it, e.g. `max_block = 256` \
             (a checked launch then refuses bigger blocks, `LaunchError::BlockTooLarge`), or add \
             `__launch_bounds__(256)` to the kernel (`max_block = 1024` if any block is fine)",
            array.size
        ),
    );
}

/// The C name of a function-scope variable's mangled symbol (`_ZZ4tileE1t` is `t`; a
/// discriminator `_0` after it is dropped); `None` for another symbol.
fn local_name(symbol: &str) -> Option<String> {
    let rest = symbol.strip_prefix("_ZZ")?;
    // `<function encoding>E<length><name>[_<n>]`: try each `E` from the end.
    rest.match_indices('E').rev().find_map(|(i, _)| {
        let tail = &rest[i + 1..];
        let digits = tail.len() - tail.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let len: usize = tail[..digits].parse().ok()?;
        let name = tail.get(digits..digits + len)?;
        let after = &tail[digits + len..];
        let discriminator =
            after.is_empty() || after.strip_prefix('_').is_some_and(|d| d.chars().all(|c| c.is_ascii_digit()));
        discriminator.then(|| name.to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::local_name;

    #[test]
    fn local_names_are_read_from_mangled_symbols() {
        assert_eq!(local_name("_ZZ4tileE1t").as_deref(), Some("t"));
        assert_eq!(local_name("_ZZ6helperPfE5tileE").as_deref(), Some("tileE"));
        assert_eq!(local_name("_ZZ4tileE7scratch_0").as_deref(), Some("scratch"));
        assert_eq!(local_name("grid2d"), None);
    }
}
