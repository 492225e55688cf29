//! The Rust side of a spec's resident kernel (`resident = true`, `graph::resident`): the step's
//! input and output structs, its parameter struct, the `<Graph>Resident` alias, and
//! `into_resident`, which moves the graph struct (every buffer the kernel touches) into a
//! `kgraph::resident::Resident` running the kernel the build compiled from the same layout.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::fields::{buffer_field, scalar_field};
use super::input::CodegenInput;
use crate::emit_util::{doc_attr, elem_in_hidden_module, ident};
use crate::graph::ir::GraphIr;
use crate::graph::resident::cuda::block_threads;
use crate::graph::resident::layout::{resident_symbol, StepLayout};

/// The names of the generated resident items of graph `name`.
struct Names {
    input: syn::Ident,
    output: syn::Ident,
    params: syn::Ident,
    resident: syn::Ident,
}

impl Names {
    fn of(name: &syn::Ident) -> Self {
        Names {
            input: format_ident!("{}ResidentIn", name),
            output: format_ident!("{}ResidentOut", name),
            params: format_ident!("{}ResidentParams", name),
            resident: format_ident!("{}Resident", name),
        }
    }
}

/// The items beside the graph struct (in the calling module), empty without `resident = true`.
pub(crate) fn resident_types(cg: &CodegenInput<'_>) -> TokenStream {
    let ir = cg.ir;
    if !ir.resident {
        return TokenStream::new();
    }
    let layout = StepLayout::of(ir, cg.edges);
    let n = Names::of(cg.name);
    let (name, input, output, params, resident) = (cg.name, &n.input, &n.output, &n.params, &n.resident);
    let in_struct = step_struct(ir, input, &layout.inputs, &format!("The input of one resident step of [`{name}`] (`{name}::into_resident`): the buffers the host writes each step, one field each."));
    let out_struct = step_struct(
        ir,
        output,
        &layout.outputs,
        &format!("The output of one resident step of [`{name}`]: the buffers the host reads back, one field each."),
    );
    let pointer_fields = layout.pointers.iter().map(|&b| ident(&ir.buffers[b].name));
    let scalar_fields = layout.scalars.iter().map(|&s| ident(&ir.scalars[s].name));
    let scalar_types = layout.scalars.iter().map(|&s| ir.scalars[s].elem.rust_tokens());
    // The kernel's `Params` has one word when it would be empty (`resident::cuda`).
    let empty_field = (layout.pointers.is_empty() && layout.scalars.is_empty()).then(|| quote!(kg_unused: u32,));
    quote! {
        #in_struct
        #out_struct

        /// The device addresses and scalar values a resident step of the graph reads (the
        /// `Params` of its kernel, field for field).
        #[doc(hidden)]
        #[repr(C)]
        #[derive(Clone, Copy, Debug)]
        #[allow(dead_code)]
        pub struct #params {
            #( #pointer_fields: u64, )*
            #( #scalar_fields: #scalar_types, )*
            #empty_field
        }

        /// The graph running as one resident kernel: see [`#name::into_resident`].
        pub type #resident = ::kgraph::resident::Resident<#input, #output, #params, #name>;
    }
}

/// `#[repr(C)] pub struct name { pub buffer: [T; len], .. }`, plain old data.
fn step_struct(ir: &GraphIr, name: &syn::Ident, buffers: &[usize], doc: &str) -> TokenStream {
    let doc = doc_attr(doc);
    let fields = buffers.iter().map(|&b| {
        let buf = &ir.buffers[b];
        let (f, t, len) = (ident(&buf.name), buf.elem.rust_tokens(), buf.len as usize);
        let doc = buf.doc.as_deref().map(doc_attr);
        quote!(#doc pub #f: [#t; #len])
    });
    quote! {
        #doc
        #[repr(C)]
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub struct #name {
            #( #fields, )*
        }

        // SAFETY: arrays of plain numbers (every bit pattern a value), laid out largest element
        // first with every field a whole number of 4-byte words, so no padding (checked when the
        // spec expanded: `check::resident`).
        unsafe impl ::kgraph::cudarc::driver::DeviceRepr for #name {}
        // SAFETY: as above (all-zero bytes are zeros).
        unsafe impl ::kgraph::cudarc::driver::ValidAsZeroBits for #name {}
        // SAFETY: as above: fixed layout, every bit pattern valid, no padding, no resources.
        unsafe impl ::kgraph::Pod for #name {}

        impl ::core::default::Default for #name {
            /// Every element zero.
            fn default() -> Self {
                ::kgraph::__private::zeroed()
            }
        }
    }
}

/// `into_resident`, inside the graph struct's `impl` (it reads the private fields).
pub(crate) fn into_resident_fn(cg: &CodegenInput<'_>) -> TokenStream {
    let ir = cg.ir;
    if !ir.resident {
        return TokenStream::new();
    }
    let layout = StepLayout::of(ir, cg.edges);
    let n = Names::of(cg.name);
    let (params, resident) = (&n.params, &n.resident);
    let graph = cg.name.to_string();
    let symbol = resident_symbol(&ir.spec_path);
    // The files `graph!` compared with its own lowering, else (no record folder) `$OUT_DIR`'s.
    let (cubin_bytes, source_text, header_dir) = match cg.resident_source {
        Some(cu) => {
            let cubin = format!("{}.cubin", cu.strip_suffix(".cu").unwrap_or(cu));
            let dir = std::path::Path::new(cu).parent().map_or_else(String::new, |d| d.to_string_lossy().into_owned());
            (quote!(::core::include_bytes!(#cubin)), quote!(::core::include_str!(#cu)), quote!(#dir))
        }
        None => {
            let cubin = format!("/kgraph/resident/{symbol}.cubin");
            let cu = format!("/kgraph/resident/{symbol}.cu");
            (
                quote!(::core::include_bytes!(::core::concat!(::core::env!("OUT_DIR"), #cubin))),
                quote!(::core::include_str!(::core::concat!(::core::env!("OUT_DIR"), #cu))),
                quote!(::core::concat!(::core::env!("OUT_DIR"), "/kgraph/resident")),
            )
        }
    };
    let spec = &ir.spec_path;
    let pointer_fields = layout.pointers.iter().map(|&b| ident(&ir.buffers[b].name));
    let pointer_values = layout.pointers.iter().map(|&b| {
        let (f, t) = (buffer_field(ir, b), elem_in_hidden_module(ir.buffers[b].elem));
        quote!(::kgraph::DeviceIn::<#t>::device_addr(&self.#f))
    });
    let scalar_fields = layout.scalars.iter().map(|&s| ident(&ir.scalars[s].name));
    let scalar_values = layout.scalars.iter().map(|&s| scalar_field(ir, s));
    let launch_checks = ir.nodes.iter().enumerate().filter_map(|(n, node)| {
        let l = node.launch()?;
        let ([gx, gy, gz], [bx, by, bz], shared, name) = (l.grid.value, l.block.value, l.shared, &node.name);
        Some(quote! {
            let cfg = &self.node_cfgs[#n];
            if cfg.grid_dim != (#gx, #gy, #gz) || cfg.block_dim != (#bx, #by, #bz) || cfg.shared_mem_bytes != #shared {
                return ::core::result::Result::Err(::kgraph::GraphError::LaunchChanged { graph: #graph, node: #name }.into());
            }
        })
    });
    let empty_value = (layout.pointers.is_empty() && layout.scalars.is_empty()).then(|| quote!(kg_unused: 0,));
    let threads = block_threads(ir);
    let block = ir.nodes.iter().find_map(|n| n.launch()).map_or([threads, 1, 1], |l| l.block.value);
    let [bx, by, bz] = block;
    // Blocks past the widest node's grid would only wait at the barriers.
    let widest = ir.nodes.iter().filter_map(|n| n.launch()).map(|l| l.grid.value[0]).max().unwrap_or(1).max(1);
    quote! {
        /// Moves the graph into one resident kernel (its spec says `resident = true`): a
        /// cooperative grid that stays on the GPU and runs every node once per
        /// [`submit`](::kgraph::resident::Resident::submit) (each kernel through its device
        /// function, a grid barrier between dataflow levels), with no launch per step. The
        /// buffers the host writes each step travel in the step's input, the ones it reads back
        /// in its output; every other buffer (weights, state, scratch) is this struct's, as
        /// loaded and set now, scalars at their current values. `max_blocks`: at most this
        /// many blocks (`None`: as many as the widest node's grid, the most any level can
        /// use), never more than are co-resident.
        /// [`Resident::into_body`](::kgraph::resident::Resident::into_body) gives the struct
        /// back. See `docs/resident.md`.
        ///
        /// # Errors
        /// Loading the kernel (a build without nvcc compiles it with NVRTC), waiting for this
        /// struct's work, and those of `Resident::new_grid`.
        pub fn into_resident(
            self,
            max_blocks: ::core::option::Option<u32>,
            options: ::kgraph::resident::ResidentOptions,
        ) -> ::kgraph::Result<super::#resident> {
            // SAFETY: the cubin kgraph-build compiled from the generated source beside it (or
            // empty: NVRTC), and that source's folder, which holds the headers it includes.
            const SOURCE: ::kgraph::expert::KernelSource = unsafe {
                ::kgraph::expert::KernelSource::new(#spec, #cubin_bytes, #source_text, #header_dir)
            };
            // The kernel runs the spec's launch shapes: the scalars were checked against the
            // current ones (`set_<scalar>`), so they must be the spec's.
            #( #launch_checks )*
            let device = ::core::clone::Clone::clone(&self.device);
            let param_bytes = ::core::mem::size_of::<super::#params>() as u32;
            let function = ::kgraph::expert::ModuleCache::new(device.context())
                .kernel_function(&SOURCE, #symbol, #symbol, &[8, 8, 8, 8, param_bytes])
                .map_err(|e| ::kgraph::Error::in_graph(#graph, "load the resident kernel", e))?;
            let params = super::#params {
                #( #pointer_fields: #pointer_values, )*
                #( #scalar_fields: self.#scalar_values, )*
                #empty_value
            };
            // Every upload, replay and eager run of this struct has ended before the kernel,
            // on a stream of its own, touches the buffers.
            device.synchronize()?;
            for stream in &self.side_streams {
                stream.synchronize()?;
            }
            let max_blocks = ::core::option::Option::Some(max_blocks.unwrap_or(#widest));
            let shape = ::kgraph::resident::GridShape { block: (#bx, #by, #bz), max_blocks };
            // SAFETY: the kernel is `<spec>_resident` of the source kgraph-build generated from
            // this spec's layout (`graph!` compared it with its own when it expanded): it runs
            // `kg_resident_grid_loop` over a body whose `In`, `Out` and `Params` are the structs
            // above field for field (no padding: `check::resident`), whose device addresses are
            // this struct's buffers, which move into the resident and which every node accesses
            // within their lengths (the spec's extent checks, through each kernel's
            // `unsafe(device_fn)` promise); the body returns, reaches its barriers in every
            // thread, strides each node over any grid, and its launch bounds are this block.
            unsafe { ::kgraph::resident::Resident::new_grid(#graph, &device, function, shape, params, self, options) }
        }
    }
}
