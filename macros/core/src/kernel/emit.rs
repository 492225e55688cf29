//! Code generation with `quote!`: a kernel's handle struct (what a person would write by hand
//! over cudarc's `launch_builder`) and its stub for declarations with errors; the `Kernels`
//! registry of a `#[kernels]` module is in `emit_registry`. It only reads the checked model.
//! The methods' signatures are in [`signatures`], the launchers' bodies in [`launchers`].

mod launchers;
mod signatures;

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::{Attribute, Ident};

use super::block_bound::max_threads_const;
use super::config::Resolved;
use super::docs::struct_doc;
use super::launch_checks::param_sizes;
use super::layout::layout_checks;
use crate::emit_util::in_hidden_module;
use crate::syntax::model::KernelDecl;
use crate::syntax::naming::{handle_ident, ident_text, kernel_handle_ident};
use crate::syntax::parse::DeclParse;
use launchers::launchers;
use signatures::HandleSignatures;

/// `#[cfg(...)]` attributes, which must be repeated on everything generated for a declaration.
pub(crate) fn cfg_attrs(attrs: &[Attribute]) -> Vec<&Attribute> {
    attrs.iter().filter(|a| a.path().is_ident("cfg")).collect()
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
