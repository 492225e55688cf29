//! Code generation with `quote!`: a kernel's handle struct (what a person would write by hand
//! over cudarc's `launch_builder`) and its stub for declarations with errors; the `Kernels`
//! registry of a `#[kernels]` module is in `emit_registry`. It only reads the checked model.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::{Attribute, Ident};

use super::block_bound::{block_check, max_threads_const};
use super::config::Resolved;
use super::docs::{launch_doc, struct_doc};
use super::guard::guard;
use super::launch_checks::{param_sizes, pdl_check, shared_opt_in, stream_checks};
use super::layout::layout_checks;
use super::requires_emit::{align_checks, requires_call, requires_fn};
use crate::emit_util::{doc_lines, elem_in_hidden_module, in_hidden_module};
use crate::syntax::model::{Elem, KernelDecl, ParamKind};
use crate::syntax::naming::{handle_ident, ident_text, kernel_handle_ident};
use crate::syntax::parse::DeclParse;

/// `#[cfg(...)]` attributes, which must be repeated on everything generated for a declaration.
pub(crate) fn cfg_attrs(attrs: &[Attribute]) -> Vec<&Attribute> {
    attrs.iter().filter(|a| a.path().is_ident("cfg")).collect()
}

/// The `launch` parameter type for a declared kind, as code in the handle's hidden module
/// names it (`in_hidden_module`), or as the declaring module does (a stub, emitted there).
/// A `nullable` pointer (`Option<&[T; n]>`) is an `Option` of a trait object, so that `None`
/// needs no type annotation.
fn launch_param_type(kind: ParamKind, nullable: bool, in_hidden_module: bool) -> TokenStream {
    let elem = kind.elem();
    let t = if in_hidden_module { elem_in_hidden_module(elem) } else { elem.rust_tokens() };
    match kind {
        ParamKind::Slice { mutable: false, .. } if nullable => {
            quote!(::core::option::Option<&dyn ::kgraph::DeviceIn<#t>>)
        }
        ParamKind::Slice { mutable: true, .. } if nullable => {
            quote!(::core::option::Option<&mut dyn ::kgraph::DeviceOut<#t>>)
        }
        ParamKind::Slice { mutable: false, .. } => quote!(&impl ::kgraph::DeviceIn<#t>),
        ParamKind::Slice { mutable: true, .. } => quote!(&mut impl ::kgraph::DeviceOut<#t>),
        // A Rust `bool` is already 0 or 1; `kgraph::Bool` is the element type of `bool` memory.
        ParamKind::Scalar(Elem::Bool) => quote!(bool),
        ParamKind::Scalar(_) => quote!(#t),
        ParamKind::Pinned(_) => quote!(::kgraph::PinnedPtr<#t>),
        ParamKind::PinnedMut(_) => quote!(::kgraph::PinnedMutPtr<#t>),
    }
}

/// The signatures of a handle's methods, from one description of the kernel's parameters:
/// the handle and its stub both use them, so they cannot drift apart.
struct HandleSignatures {
    /// `name: Type` per kernel parameter, in order.
    params: Vec<TokenStream>,
}

impl HandleSignatures {
    /// From each parameter's name and kind; a parameter whose type did not parse (`None`)
    /// takes `impl Sized`, so a stub keeps the arity. `in_hidden_module`: for a handle (in its
    /// hidden module), not a stub (in the declaring module).
    fn new<'p>(params: impl IntoIterator<Item = (&'p Ident, Option<ParamKind>, bool)>, in_hidden_module: bool) -> Self {
        let params = params
            .into_iter()
            .map(|(name, kind, nullable)| {
                let ty = kind.map_or_else(
                    || quote!(impl ::core::marker::Sized),
                    |kind| launch_param_type(kind, nullable, in_hidden_module),
                );
                quote!(#name: #ty)
            })
            .collect();
        HandleSignatures { params }
    }

    fn load() -> TokenStream {
        quote!(load(cache: &mut ::kgraph::expert::ModuleCache) -> ::kgraph::Result<Self>)
    }

    fn new_fn() -> TokenStream {
        quote!(new(device: &::kgraph::Device) -> ::kgraph::Result<Self>)
    }

    fn launch(&self) -> TokenStream {
        self.launcher("launch", false)
    }

    fn launch_ordered(&self) -> TokenStream {
        self.launcher("__launch_ordered", true)
    }

    fn launch_with(&self) -> TokenStream {
        self.launcher("launch_with", true)
    }

    /// `__issue(&self, __kg_target, cfg, opts, params...) -> Result<Issued>`.
    fn issue(&self) -> TokenStream {
        let params = &self.params;
        quote! {
            __issue(
                &self,
                __kg_target: ::kgraph::expert::Issue<'_, '_>,
                cfg: ::kgraph::LaunchConfig,
                opts: ::kgraph::LaunchOptions,
                #(#params),*
            ) -> ::kgraph::Result<::kgraph::expert::Issued>
        }
    }

    /// `name(&self, stream, cfg, [opts,] params...) -> Result<()>`.
    fn launcher(&self, name: &str, with_opts: bool) -> TokenStream {
        let name = syn::Ident::new(name, proc_macro2::Span::call_site());
        let params = &self.params;
        let opts = with_opts.then(|| quote!(opts: ::kgraph::LaunchOptions,));
        quote! {
            #name(
                &self,
                stream: &::kgraph::Stream,
                cfg: ::kgraph::LaunchConfig,
                #opts
                #(#params),*
            ) -> ::kgraph::Result<()>
        }
    }
}

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

/// `cfg_for`: a 1-D launch configuration within the kernel's bounds.
fn cfg_for() -> TokenStream {
    quote! {
        /// A one-dimensional launch configuration for `n` threads: blocks of
        /// `min(MAX_THREADS, 256)` threads (256 without bounds), as many as cover `n`, at
        /// least one.
        pub fn cfg_for(&self, n: u32) -> ::kgraph::LaunchConfig {
            ::kgraph::__private::config_for(n, Self::MAX_THREADS)
        }
    }
}

/// `NAME`, `FILE`, `MAX_THREADS` and `SOURCE`.
fn handle_consts(decl: &KernelDecl, resolved: &Resolved) -> TokenStream {
    let (name, file) = (&decl.symbol, &resolved.display);
    let max_threads = max_threads_const(decl, resolved);
    let cubin = format!("/kgraph/{}.cubin", resolved.stem);
    let include_dir = &resolved.include_dir;
    let symbol = &resolved.symbol;
    let sizes = param_sizes(decl);
    let pdl_waits = resolved.pdl_waits;
    let source = kernel_source(
        file,
        quote!(::core::include_bytes!(::core::concat!(::core::env!("OUT_DIR"), #cubin))),
        source_text(resolved),
        include_dir,
    );
    let pdl_doc = if pdl_waits {
        " `true`: the compiled kernel executes `griddepcontrol.wait` (and calls no function kgraph cannot see), so a PDL launch (`LaunchOptions::PDL`) waits for the previous kernel's writes."
    } else if resolved.record_path.is_some() {
        " `false`: the compiled kernel is not proven to execute `griddepcontrol.wait` (it lacks it, or calls a function kgraph cannot see), so `launch_with` refuses PDL (`LaunchError::PdlWithoutWait`)."
    } else {
        " `false`: no record of what was compiled (the build used the NVRTC fallback), so nothing proves a wait; `launch_with` refuses PDL (`LaunchError::PdlWithoutWait`)."
    };
    let record = resolved.record_path.as_ref().map(|path| {
        quote! {
            /// The compiled-kernel record the declaration was checked against (embedded so
            /// that a rebuild of the kernel re-runs the check).
            #[doc(hidden)]
            pub const __KGRAPH_RECORD: &'static [u8] = ::core::include_bytes!(#path);
        }
    });
    quote! {
        /// The kernel's name as declared (`extern "C"` symbol, or C++ name), for messages.
        pub const NAME: &'static str = #name;
        /// The symbol the module is searched for: the `extern "C"` name, or a C++ kernel's
        /// mangled symbol from the compiled record.
        pub const SYMBOL: &'static str = #symbol;
        /// The `.cu` file the kernel is in.
        pub const FILE: &'static str = #file;
        #[doc = #pdl_doc]
        pub const PDL_WAITS: bool = #pdl_waits;
        /// Bytes of each parameter as declared, in order (checked against the loaded
        /// function's parameters where the driver reports them).
        pub const PARAM_SIZES: &'static [u32] = &[#(#sizes),*];
        #record
        #max_threads
        /// The kernel's module: the cubin `kgraph-build` compiled, and the source for the NVRTC fallback.
        pub const SOURCE: ::kgraph::expert::KernelSource = #source;
    }
}

/// The `.cu` text `SOURCE` carries for the NVRTC fallback: `include_str!` of the file, or, for a
/// file that is not UTF-8, its text as a literal, the bytes included beside it so that a change
/// to the file still rebuilds the crate.
fn source_text(resolved: &Resolved) -> TokenStream {
    let path = &resolved.source_path;
    match &resolved.source_literal {
        None => quote!(::core::include_str!(#path)),
        Some(text) => quote!({
            const _: &[u8] = ::core::include_bytes!(#path);
            #text
        }),
    }
}

/// The `KernelSource` value of a handle's `SOURCE` (the one place it is built, for handles and
/// stubs alike), through its `unsafe` constructor: the image is the one `kgraph-build` compiled
/// from this very `.cu` (its name derives from the file, `OUT_DIR/kgraph/<stem>.cubin`), the
/// file the declaration was checked against.
fn kernel_source(file: &str, image: TokenStream, source: TokenStream, include_dir: &str) -> TokenStream {
    quote! {
        // SAFETY: `image` is what kgraph-build compiled from `source` (this declaration's file),
        // `source` that file's text, `include_dir` its header folder.
        unsafe { ::kgraph::expert::KernelSource::new(#file, #image, #source, #include_dir) }
    }
}

/// `load`, `new` and the accessors of a verified handle.
fn loaders() -> TokenStream {
    let (load, new) = (HandleSignatures::load(), HandleSignatures::new_fn());
    quote! {
        /// Loads the kernel through `cache`, which loads each `.cu` module once per context.
        ///
        /// # Errors
        ///
        /// `kgraph::ModuleError::Load` when the module cannot be loaded,
        /// `kgraph::ModuleError::FunctionNotFound` when the kernel is not in it,
        /// `kgraph::ModuleError::ParamMismatch` when the loaded function's parameter sizes differ
        /// from the declaration's (as the driver reports them, CUDA 12.4+).
        pub fn #load {
            let module = cache.module(&Self::SOURCE)?;
            let function = cache.kernel_function(&Self::SOURCE, Self::SYMBOL, Self::NAME, Self::PARAM_SIZES)?;
            ::core::result::Result::Ok(Self { module, function, shared_limit: ::core::default::Default::default() })
        }

        /// Loads the kernel on `device` with a cache of its own (use [`Self::load`] to share modules).
        ///
        /// # Errors
        ///
        /// As [`Self::load`].
        pub fn #new {
            Self::load(&mut ::kgraph::expert::ModuleCache::new(device.context()))
        }

        /// The loaded function, e.g. to launch it by hand.
        pub fn function(&self) -> &::kgraph::cudarc::driver::CudaFunction {
            &self.function
        }

        /// The module the kernel was loaded from.
        pub fn module(&self) -> &::std::sync::Arc<::kgraph::cudarc::driver::CudaModule> {
            &self.module
        }
    }
}

/// `launch` (through cudarc's `launch_builder`) and `launch_with` (through `launch_ex`):
/// safe and checked for a declaration with extents, `unsafe` without.
fn launchers(decl: &KernelDecl, resolved: &Resolved, sigs: &HandleSignatures) -> TokenStream {
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

/// The kernel handle for a verified declaration.
pub(crate) fn handle(decl: &KernelDecl, resolved: &Resolved) -> TokenStream {
    let ty = kernel_handle_ident(decl);
    let vis = &decl.vis;
    let (docs, other_attrs): (Vec<&Attribute>, Vec<&Attribute>) =
        decl.attrs.iter().partition(|a| a.path().is_ident("doc"));
    let cfgs = cfg_attrs(&decl.attrs);
    let struct_doc = struct_doc(decl, resolved, &ty, !docs.is_empty());
    let sigs = HandleSignatures::new(decl.params.iter().map(|p| (&p.name, Some(p.kind), p.nullable)), true);
    let consts = handle_consts(decl, resolved);
    let loaders = loaders();
    let cfg_for = cfg_for();
    let launchers = launchers(decl, resolved, &sigs);
    let layouts = layout_checks(decl, resolved).into_iter().map(|item| quote!(#(#cfgs)* #item));
    let items = quote! {
        #(#docs)*
        #struct_doc
        #(#other_attrs)*
        #[derive(::core::fmt::Debug, ::core::clone::Clone)]
        pub struct #ty {
            module: ::std::sync::Arc<::kgraph::cudarc::driver::CudaModule>,
            function: ::kgraph::cudarc::driver::CudaFunction,
            shared_limit: ::kgraph::__private::DynamicSharedLimit,
        }

        #(#cfgs)*
        // Accessors and loaders a program does not use are not worth a warning; an unused
        // kernel still is ("struct is never constructed").
        #[allow(dead_code)]
        impl #ty {
            #consts
            #loaders
            #cfg_for
            #launchers
        }
    };
    let handle = in_hidden_module(&hidden_module(&ty), &ty, vis, &cfgs, items);
    quote! {
        #(#layouts)*
        #handle
    }
}

/// The module a handle is emitted in ([`in_hidden_module`]).
pub(super) fn hidden_module(ty: &Ident) -> Ident {
    format_ident!("__kgraph_kernel_{}", ty)
}

/// The placeholder for a declaration with errors: every item the handle would have (its
/// consts, loaders and launchers, `unsafe` where the handle's would be), with the same names and
/// signatures where known, so code using it (the user's, a registry's, a graph's) reports
/// nothing further. Its methods never return.
pub(crate) fn stub(parsed: &DeclParse) -> TokenStream {
    let Some(name) = &parsed.name else { return TokenStream::new() };
    let (vis, ty, cfgs) = (&parsed.vis, handle_ident(name), cfg_attrs(&parsed.attrs));
    let args = parsed.args.as_ref();
    let symbol = args.and_then(|a| a.symbol.as_ref()).map_or_else(|| ident_text(name), |(s, _)| s.clone());
    let file = args.map_or_else(String::new, |a| a.file.clone());
    let message = format!("the `#[kernel]` declaration of `{symbol}` has errors");
    let never = quote!(::core::unreachable!(#message));
    // Emitted in the declaring module, not a hidden one: its names resolve as declared.
    let sigs = HandleSignatures::new(parsed.params.iter().map(|p| (&p.name, p.kind, p.nullable)), false);
    let (load, new) = (HandleSignatures::load(), HandleSignatures::new_fn());
    let (launch, launch_with) = (sigs.launch(), sigs.launch_with());
    // Safe launchers where the handle's would be, or where that is unknown (an attribute that
    // did not parse): a needless `unsafe` block is a warning, a missing one an error.
    let launchers = if args.map_or(true, |a| a.extents_promise.is_some()) {
        let (ordered, issue) = (sigs.launch_ordered(), sigs.issue());
        quote! {
            /// Never returns: the declaration has errors.
            pub fn #launch { #never }
            /// Never returns: the declaration has errors.
            pub fn #launch_with { #never }
            /// Never returns: the declaration has errors.
            #[doc(hidden)]
            pub unsafe fn #ordered { #never }
            /// Never returns: the declaration has errors.
            #[doc(hidden)]
            pub unsafe fn #issue { #never }
        }
    } else {
        quote! {
            /// Never returns: the declaration has errors.
            pub unsafe fn #launch { #never }
            /// Never returns: the declaration has errors.
            pub unsafe fn #launch_with { #never }
        }
    };
    let source = kernel_source(&file, quote!(&[]), quote!(""), "");
    let requires = parsed.to_decl().map(|d| stub_requires(&d, &never));
    quote! {
        #(#cfgs)*
        /// Placeholder for a kernel whose `#[kernel]` declaration has errors (see the compiler's messages).
        #[derive(::core::fmt::Debug, ::core::clone::Clone)]
        #[allow(dead_code)]
        #vis struct #ty {
            _declaration_has_errors: (),
        }

        #(#cfgs)*
        #[allow(dead_code, unused_variables, clippy::too_many_arguments)]
        impl #ty {
            /// The kernel's name.
            pub const NAME: &'static str = #symbol;
            /// Unknown: the declaration has errors.
            pub const SYMBOL: &'static str = #symbol;
            /// The `.cu` file as declared.
            pub const FILE: &'static str = #file;
            /// Unknown: the declaration has errors.
            pub const PDL_WAITS: bool = false;
            /// Unknown: the declaration has errors.
            pub const PARAM_SIZES: &'static [u32] = &[];
            /// Unknown: the declaration has errors.
            pub const MAX_THREADS: ::core::option::Option<u32> = ::core::option::Option::None;
            /// Empty: the declaration has errors.
            pub const SOURCE: ::kgraph::expert::KernelSource = #source;
            /// Never returns: the declaration has errors.
            pub fn #load { #never }
            /// Never returns: the declaration has errors.
            pub fn #new { #never }
            /// Never returns: the declaration has errors.
            pub fn function(&self) -> &::kgraph::cudarc::driver::CudaFunction { #never }
            /// Never returns: the declaration has errors.
            pub fn module(&self) -> &::std::sync::Arc<::kgraph::cudarc::driver::CudaModule> { #never }
            /// Never returns: the declaration has errors.
            pub fn cfg_for(&self, n: u32) -> ::kgraph::LaunchConfig { #never }
            #launchers
            #requires
        }
    }
}

/// The stub's `__requires`, which graph structs call for a declaration with `requires`.
fn stub_requires(decl: &KernelDecl, never: &TokenStream) -> TokenStream {
    if decl.requires.is_empty() {
        return TokenStream::new();
    }
    let params = decl.required_scalars().into_iter().map(|p| {
        let (n, t) = (&p.name, p.kind.elem().rust_tokens());
        quote!(#n: #t)
    });
    quote! {
        /// Never returns: the declaration has errors.
        #[doc(hidden)]
        pub fn __requires(&self, cfg: &::kgraph::LaunchConfig, #(#params),*) -> ::kgraph::Result<()> { #never }
    }
}
