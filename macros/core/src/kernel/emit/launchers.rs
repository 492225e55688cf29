//! A verified handle's launchers: the safe, checked `launch`, `launch_with` and
//! `__launch_ordered`/`__issue` of a declaration with extents, or the `unsafe` ones of a
//! declaration without, each ending in the launch itself over the arguments' device addresses.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::Ident;

use super::signatures::HandleSignatures;
use crate::emit_util::{doc_lines, elem_in_hidden_module};
use crate::kernel::block_bound::block_check;
use crate::kernel::config::Resolved;
use crate::kernel::docs::launch_doc;
use crate::kernel::guard::guard;
use crate::kernel::launch_checks::{pdl_check, shared_opt_in, stream_checks};
use crate::kernel::requires_emit::{align_checks, requires_call, requires_fn};
use crate::syntax::model::{KernelDecl, ParamKind};

/// `let x = <device address of x>;` for each pointer parameter (scalars are pushed as they are).
fn device_addresses(decl: &KernelDecl) -> Vec<TokenStream> {
    decl.params
        .iter()
        .filter_map(|p| {
            let n = &p.name;
            match p.kind {
                // `None` is the null pointer the kernel accepts.
                ParamKind::Slice { elem, .. } if p.nullable => {
                    let t = elem_in_hidden_module(elem);
                    Some(quote! {
                        let #n: u64 = match &#n {
                            ::core::option::Option::Some(b) => ::kgraph::DeviceIn::<#t>::device_addr(&**b),
                            ::core::option::Option::None => 0,
                        };
                    })
                }
                ParamKind::Slice { elem, mutable } => {
                    let t = elem_in_hidden_module(elem);
                    let arg = if mutable { quote!(&*#n) } else { quote!(#n) };
                    Some(quote!(let #n = ::kgraph::DeviceIn::<#t>::device_addr(#arg);))
                }
                ParamKind::Pinned(_) | ParamKind::PinnedMut(_) => Some(quote!(let #n = #n.addr();)),
                ParamKind::Scalar(_) => None,
            }
        })
        .collect()
}

/// `launch` (through cudarc's `launch_builder`) and `launch_with` (through `launch_ex`):
/// safe and checked for a declaration with extents, `unsafe` without.
pub(super) fn launchers(decl: &KernelDecl, resolved: &Resolved, sigs: &HandleSignatures) -> TokenStream {
    if decl.has_checked_launch() {
        checked_launchers(decl, resolved, sigs)
    } else {
        unsafe_launchers(decl, resolved, sigs)
    }
}

/// The launch itself, after the arguments are checked (or trusted): every pointer argument
/// becomes its device address, then one `arg` per parameter in order.
fn launch_body(decl: &KernelDecl, args: &Ident) -> TokenStream {
    let names: Vec<&Ident> = decl.params.iter().map(|p| &p.name).collect();
    quote! {
        // SAFETY: cudarc's stream only launches this kernel, with the arguments checked above.
        let mut #args = unsafe { stream.cuda() }.launch_builder(&self.function);
        #(#args.arg(&#names);)*
    }
}

/// The `launch_ex` call of `launch_with`, after the addresses.
fn launch_ex_call(decl: &KernelDecl, args: &Ident) -> TokenStream {
    let names: Vec<&Ident> = decl.params.iter().map(|p| &p.name).collect();
    quote! {
        let mut #args = [#(&#names as *const _ as *mut ::core::ffi::c_void),*];
    }
}

/// The first paragraph of `launch_with`'s rustdoc.
fn launch_with_doc() -> TokenStream {
    doc_lines([
        "[`Self::launch`] with launch options, e.g. `kgraph::LaunchOptions::PDL`",
        "(programmatic dependent launch through `cuLaunchKernelEx`: the kernel must wait",
        "on its grid dependency, `griddepcontrol.wait`, before reading what the previous",
        "kernel wrote). With default options this is exactly [`Self::launch`].",
    ])
}

/// The safe `launch` and `launch_with` of a declaration with extents, and the
/// `__launch_ordered` both run: every check (block, extents, lengths, overlaps, PDL) but the
/// stream check, which `launch`/`launch_with` make first, so `__launch_ordered` is the one body.
fn checked_launchers(decl: &KernelDecl, resolved: &Resolved, sigs: &HandleSignatures) -> TokenStream {
    let launch_doc = launch_doc(decl, resolved);
    let (launch, launch_with, ordered) = (sigs.launch(), sigs.launch_with(), sigs.launch_ordered());
    let addresses = device_addresses(decl);
    let names: Vec<&Ident> = decl.params.iter().map(|p| &p.name).collect();
    let guard = guard(decl);
    let (lengths, overlaps) = (&guard.lengths, &guard.overlaps);
    let block_check = block_check(decl, resolved);
    let (requires_fn, requires_call, aligns) = (requires_fn(decl), requires_call(decl), align_checks(decl));
    let opt_in = shared_opt_in();
    let streams = stream_checks(decl);
    let pdl = pdl_check();
    // Hygienic, so a parameter named `args` cannot clash with it.
    let args = Ident::new("args", Span::mixed_site());
    let (body, ex_args) = (launch_body(decl, &args), launch_ex_call(decl, &args));
    let launch_with_doc = launch_with_doc();
    let issue = sigs.issue();
    quote! {
        #requires_fn

        #launch_doc
        #[inline]
        #[allow(clippy::too_many_arguments)]
        pub fn #launch {
            self.launch_with(stream, cfg, ::kgraph::LaunchOptions::default(), #(#names),*)
        }

        #launch_with_doc
        ///
        /// # Errors
        ///
        /// As [`Self::launch`], and `kgraph::LaunchError::PdlWithoutWait` for PDL options when
        /// [`Self::PDL_WAITS`] is `false`.
        #[inline]
        #[allow(clippy::too_many_arguments)]
        pub fn #launch_with {
            #streams
            // SAFETY: every device-memory argument is owned by `stream` and every pinned one
            // belongs to its context (checked just above), which is `__launch_ordered`'s
            // contract; it makes every other check.
            unsafe { self.__launch_ordered(stream, cfg, opts, #(#names),*) }
        }

        /// [`Self::launch_with`] without the stream check, for work ordered by events: the
        /// graph structs' capture, whose side streams are forked from and joined back into the
        /// device stream. Every other check is made.
        ///
        /// # Safety
        ///
        /// `stream` is ordered with the stream that owns every device-memory argument
        /// (`DeviceIn::stream`): work issued on it starts after everything issued on the owning
        /// stream before this call, and the owning stream waits for it (an event recorded on
        /// `stream` and waited for by the owning stream) before it frees or reuses any argument.
        /// Pinned arguments still must belong to `stream`'s context (checked).
        ///
        /// # Errors
        ///
        /// As [`Self::launch_with`], less `ForeignStream`.
        #[doc(hidden)]
        #[inline]
        #[allow(clippy::too_many_arguments)]
        pub unsafe fn #ordered {
            // SAFETY: the caller's contract (`# Safety`) is `__issue`'s for a stream.
            unsafe { self.__issue(::kgraph::expert::Issue::Stream(stream), cfg, opts, #(#names),*) }.map(|_| ())
        }

        /// [`Self::__launch_ordered`] to any [`kgraph::expert::Issue`] target: a stream, a kernel node
        /// added to a graph under construction, or an existing kernel node of an instantiated
        /// graph rewritten for its later replays. Every check of `launch_with` but the stream
        /// check is made first.
        ///
        /// # Safety
        ///
        /// For a stream, as [`Self::__launch_ordered`]. For a graph: every device-memory
        /// argument stays allocated, unmoved, for every later launch of the graph, and is
        /// ordered with the graph's stream (the graph structs own both); programmatic edges in
        /// `deps` only with PDL options.
        #[doc(hidden)]
        #[inline]
        #[allow(clippy::too_many_arguments)]
        pub unsafe fn #issue {
            #block_check
            #requires_call
            #lengths
            #(#addresses)*
            #aligns
            #overlaps
            #pdl
            #opt_in
            if let (::kgraph::expert::Issue::Stream(stream), true) = (&__kg_target, opts == ::kgraph::LaunchOptions::default()) {
                use ::kgraph::cudarc::driver::PushKernelArg as _;
                ::kgraph::__private::__check_capture(stream, Self::NAME)?;
                #body
                // SAFETY: the argument list matches the kernel's parameters in the `.cu` in count,
                // order, element type and constness (verified by `check.rs` at expansion) and in
                // size and alignment as nvcc compiled it (`record_check.rs`, where the build left
                // a record); each pointer is the device address of an allocation borrowed for
                // this call (`DeviceIn`/`DeviceOut`) or of mapped pinned memory its owner keeps
                // alive (`PinnedPtr`, `PinnedMutPtr`), holding at least its extent (checked
                // above); no written argument overlaps another within the extents (checked
                // above); the declaration's `unsafe(extents)` is its author's promise that the
                // kernel accesses nothing outside the extents; the caller orders `stream` with
                // the arguments' streams (`# Safety`). Scalars are pushed by reference to locals
                // that outlive the call.
                return unsafe { #args.launch(cfg) }
                    .map(|_events| ::kgraph::expert::Issued::Launched)
                    .map_err(|source| ::kgraph::Error::LaunchFailed { kernel: Self::NAME, source });
            }
            #ex_args
            // SAFETY: as above: one pointer per kernel parameter, in the verified order, each to
            // a local (device address or scalar) that outlives the call (the driver copies the
            // values), the arguments checked against the extents the declaration promises; PDL
            // only for a kernel whose wait on its grid dependency is proven (`check_pdl` above);
            // the lifetime of the addresses in a graph as the caller promises (`# Safety`).
            unsafe { ::kgraph::__private::issue_kernel(__kg_target, &self.function, Self::NAME, cfg, opts, &mut #args) }
        }
    }
}

/// The `unsafe` `launch` and `launch_with` of a declaration without extents: nothing bounds
/// what the kernel accesses, so the caller takes on the contract in `# Safety`.
fn unsafe_launchers(decl: &KernelDecl, resolved: &Resolved, sigs: &HandleSignatures) -> TokenStream {
    let launch_doc = launch_doc(decl, resolved);
    let (launch, launch_with) = (sigs.launch(), sigs.launch_with());
    let addresses = device_addresses(decl);
    let names: Vec<&Ident> = decl.params.iter().map(|p| &p.name).collect();
    let args = Ident::new("args", Span::mixed_site());
    let (body, ex_args) = (launch_body(decl, &args), launch_ex_call(decl, &args));
    let launch_with_doc = launch_with_doc();
    let block_check = block_check(decl, resolved);
    let opt_in = shared_opt_in();
    let streams = stream_checks(decl);
    let pdl = pdl_check();
    quote! {
        #launch_doc
        #[inline]
        #[allow(clippy::too_many_arguments)]
        pub unsafe fn #launch {
            use ::kgraph::cudarc::driver::PushKernelArg as _;
            #streams
            #block_check
            ::kgraph::__private::__check_capture(stream, Self::NAME)?;
            #(#addresses)*
            #opt_in
            #body
            // SAFETY: the argument list matches the kernel's parameters in the `.cu` in count,
            // order, element type and constness (verified by `check.rs` at expansion); each
            // pointer is the device address of an allocation borrowed for this call or of
            // mapped pinned memory its owner keeps alive; what the kernel accesses through
            // them is the caller's contract (`# Safety` above).
            unsafe { #args.launch(cfg) }
                .map(|_events| ())
                .map_err(|source| ::kgraph::Error::LaunchFailed { kernel: Self::NAME, source })
        }

        #launch_with_doc
        ///
        /// # Safety
        ///
        /// As for [`Self::launch`].
        ///
        /// # Errors
        ///
        /// As [`Self::launch`].
        #[inline]
        #[allow(clippy::too_many_arguments)]
        pub unsafe fn #launch_with {
            if opts == ::kgraph::LaunchOptions::default() {
                // SAFETY: the caller upholds `launch`'s contract, which is this function's.
                return unsafe { self.launch(stream, cfg, #(#names),*) };
            }
            #streams
            #block_check
            #pdl
            #(#addresses)*
            #opt_in
            #ex_args
            // SAFETY: as in `launch`: one pointer per kernel parameter, in the verified order,
            // each to a local (device address or scalar) that outlives the call; the caller
            // upholds the contract on what the kernel accesses.
            unsafe { ::kgraph::__private::launch_ex(stream, &self.function, Self::NAME, cfg, opts, &mut #args) }
        }
    }
}
