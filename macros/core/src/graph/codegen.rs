//! Code generation for a validated graph: the struct, `new`, buffer accessors, host transfer
//! methods, scalar setters and the associated constants. Launch, eager run, capture and the
//! replay-time scalar updates are in `codegen_run`.

use proc_macro2::{Literal, Span, TokenStream};
use quote::{format_ident, quote};
use syn::Ident;

use super::dataflow::{Edge, Schedule};
use super::ir::{Binding, GraphIr, Role, Value};
use super::{codegen_host, codegen_run};
use crate::model::Elem;
use crate::parse::{ident_text, kernel_handle_ident};

/// The host methods a role generates, `{}` standing for the buffer name.
pub fn host_methods(role: Role) -> &'static [&'static str] {
    match role {
        Role::Input => &["upload_{}"],
        Role::Output => &["download_{}", "download_{}_into"],
        Role::Parameter => &["load_{}"],
        Role::State => &["load_{}", "download_{}", "download_{}_into"],
        Role::Scratch => &[],
        Role::Pinned | Role::Slot => &["write_{}"],
        Role::PinnedOut => &["read_{}", "read_{}_into"],
    }
}

/// Everything codegen needs besides the IR.
pub struct CodegenInput<'a> {
    /// The validated graph.
    pub ir: &'a GraphIr,
    /// The struct's name.
    pub name: &'a Ident,
    /// Reduced dependency edges.
    pub edges: &'a [Edge],
    /// Capture schedule of `capture()` (dataflow branches).
    pub schedule: &'a Schedule,
    /// Capture schedule of `capture_serialized()` (file order, one stream).
    pub serial: &'a Schedule,
    /// The edges `capture()` makes programmatic (PDL).
    pub programmatic: &'a [(usize, usize)],
    /// Files to track with `include_bytes!` (absolute paths), so edits re-run the macro.
    pub tracked: &'a [String],
    /// Struct rustdoc.
    pub doc: &'a str,
    /// DOT source.
    pub dot: &'a str,
    /// Mermaid source.
    pub mermaid: &'a str,
}

pub(crate) fn ident(s: &str) -> Ident {
    Ident::new(s, Span::call_site())
}

pub(crate) fn elem_ty(e: Elem) -> Ident {
    ident(e.rust_name())
}

pub(crate) fn kernel_field(ir: &GraphIr, k: usize) -> Ident {
    format_ident!("kernel_{}", ident_text(&ir.kernels[k].name))
}

pub(crate) fn buffer_field(ir: &GraphIr, b: usize) -> Ident {
    let buf = &ir.buffers[b];
    match buf.role {
        Role::Pinned => format_ident!("pinned_{}", buf.name),
        Role::Slot => format_ident!("slot_{}", buf.name),
        Role::PinnedOut => format_ident!("mapped_out_{}", buf.name),
        _ => format_ident!("buf_{}", buf.name),
    }
}

/// The Rust type that holds a buffer of `role` with elements `t`.
pub(crate) fn storage_type(role: Role, t: &Ident) -> TokenStream {
    match role {
        Role::Pinned | Role::PinnedOut => quote!(::kgraph::MappedBuffer<#t>),
        Role::Slot => quote!(::kgraph::PinnedSlot<#t>),
        _ => quote!(::kgraph::CudaSlice<#t>),
    }
}

pub(crate) fn scalar_field(ir: &GraphIr, s: usize) -> Ident {
    format_ident!("scalar_{}", ir.scalars[s].name)
}

/// A typed literal for `elem`: `4096i32`, `0.5f32`, `f32::INFINITY`.
pub(crate) fn typed_literal(v: &Value, elem: Elem) -> TokenStream {
    let float = |text: &str| -> f64 { text.replace('_', "").parse::<f64>().unwrap_or(f64::NAN) };
    match (elem, v) {
        (Elem::F32, Value::Float(t)) => f32_tokens(t.replace('_', "").parse::<f32>().unwrap_or(f32::NAN)),
        (Elem::F32, Value::Int(i)) => f32_tokens(*i as f32),
        (Elem::F64, Value::Float(t)) => f64_tokens(float(t)),
        (Elem::F64, Value::Int(i)) => f64_tokens(*i as f64),
        (_, Value::Int(i)) => {
            let i = *i;
            let lit = match elem {
                Elem::I8 => Literal::i8_suffixed(i as i8),
                Elem::U8 => Literal::u8_suffixed(i as u8),
                Elem::I16 => Literal::i16_suffixed(i as i16),
                Elem::U16 => Literal::u16_suffixed(i as u16),
                Elem::I32 => Literal::i32_suffixed(i as i32),
                Elem::U32 => Literal::u32_suffixed(i as u32),
                Elem::I64 => Literal::i64_suffixed(i as i64),
                _ => Literal::u64_suffixed(i as u64),
            };
            // A negative literal is an expression (`-5i32`); parenthesize so it stays one term.
            if i < 0 {
                quote!((#lit))
            } else {
                quote!(#lit)
            }
        }
        (_, Value::Float(_)) => unreachable!("validation rejects float literals for integer parameters"),
    }
}

fn f32_tokens(v: f32) -> TokenStream {
    if v.is_nan() {
        quote!(f32::NAN)
    } else if v.is_infinite() {
        if v > 0.0 {
            quote!(f32::INFINITY)
        } else {
            quote!(f32::NEG_INFINITY)
        }
    } else if v < 0.0 {
        let lit = Literal::f32_suffixed(-v);
        quote!((-#lit))
    } else {
        let lit = Literal::f32_suffixed(v);
        quote!(#lit)
    }
}

fn f64_tokens(v: f64) -> TokenStream {
    if v.is_nan() {
        quote!(f64::NAN)
    } else if v.is_infinite() {
        if v > 0.0 {
            quote!(f64::INFINITY)
        } else {
            quote!(f64::NEG_INFINITY)
        }
    } else if v < 0.0 {
        let lit = Literal::f64_suffixed(-v);
        quote!((-#lit))
    } else {
        let lit = Literal::f64_suffixed(v);
        quote!(#lit)
    }
}

/// `#[doc]` attributes, one per line with a leading space (as `///` comments would give).
pub(crate) fn doc_attr(text: &str) -> TokenStream {
    let lines = text.trim_end().lines().map(|l| if l.is_empty() { String::new() } else { format!(" {l}") });
    quote!(#(#[doc = #lines])*)
}

/// The whole expansion for one graph.
pub fn generate(cg: &CodegenInput<'_>) -> TokenStream {
    let ir = cg.ir;
    let name = cg.name;
    let name_str = name.to_string();
    let module = &ir.module;
    let spec = &ir.spec_path;

    let kernel_fields: Vec<Ident> = (0..ir.kernels.len()).map(|k| kernel_field(ir, k)).collect();
    let kernel_types: Vec<TokenStream> = ir
        .kernels
        .iter()
        .map(|d| {
            let h = ident(&kernel_handle_ident(d).to_string());
            quote!(#module::#h)
        })
        .collect();
    let kernel_names: Vec<String> = ir.kernels.iter().map(|d| ident_text(&d.name)).collect();

    let buffer_fields: Vec<Ident> = (0..ir.buffers.len()).map(|b| buffer_field(ir, b)).collect();
    let buffer_types: Vec<TokenStream> = ir.buffers.iter().map(|b| storage_type(b.role, &elem_ty(b.elem))).collect();
    let buffer_inits: Vec<TokenStream> = ir
        .buffers
        .iter()
        .map(|b| {
            let t = elem_ty(b.elem);
            let len_const = format_ident!("{}_LEN", b.name.to_uppercase());
            let op =
                format!("{name_str}::new: allocate {} buffer `{}` ({} x {})", b.role.name(), b.name, b.len, b.elem);
            let alloc = match b.role {
                Role::Pinned | Role::PinnedOut => quote!(::kgraph::MappedBuffer::<#t>::new(device, Self::#len_const)),
                Role::Slot => {
                    let zero = typed_literal(&Value::Int(0), b.elem);
                    quote!(::kgraph::PinnedSlot::<#t>::new(device, #zero))
                }
                _ => quote!(device.alloc_zeros::<#t>(Self::#len_const)),
            };
            quote!(#alloc.map_err(|e| ::kgraph::Error::graph(#op, e))?)
        })
        .collect();

    let scalar_fields: Vec<Ident> = (0..ir.scalars.len()).map(|s| scalar_field(ir, s)).collect();
    let scalar_types: Vec<Ident> = ir.scalars.iter().map(|s| elem_ty(s.elem)).collect();
    let scalar_inits: Vec<TokenStream> = ir.scalars.iter().map(|s| typed_literal(&s.default, s.elem)).collect();

    let dim_consts = ir.dims.iter().map(|d| {
        let c = ident(&d.name.to_uppercase());
        let v = Literal::usize_unsuffixed(d.value as usize);
        let doc = doc_attr(&format!("Dim `{}` = {} (from the spec).", d.name, d.value));
        quote!(#doc pub const #c: usize = #v;)
    });
    let len_consts = ir.buffers.iter().map(|b| {
        let c = format_ident!("{}_LEN", b.name.to_uppercase());
        let v = Literal::usize_unsuffixed(b.len as usize);
        let doc = doc_attr(&format!("Length of buffer `{}` in elements: `{}` = {}.", b.name, b.len_src, b.len));
        quote!(#doc pub const #c: usize = #v;)
    });
    let node_names: Vec<&str> = ir.nodes.iter().map(|n| n.name.as_str()).collect();
    let edge_pairs = cg.edges.iter().map(|e| {
        let (f, t) = (Literal::usize_unsuffixed(e.from), Literal::usize_unsuffixed(e.to));
        quote!((#f, #t))
    });
    let node_pdl: Vec<bool> = ir.nodes.iter().map(|n| n.pdl).collect();
    let pdl_edge_pairs = cg.programmatic.iter().map(|&(f, t)| {
        let (f, t) = (Literal::usize_unsuffixed(f), Literal::usize_unsuffixed(t));
        quote!((#f, #t))
    });

    let (in_flight_field, in_flight_init, _) = codegen_host::in_flight_parts(ir);
    let accessors = accessors(cg);
    let host = codegen_host::host_methods_tokens(cg);
    let run = codegen_run::run_methods(cg);
    let tracked = cg.tracked;
    let struct_doc = doc_attr(cg.doc);
    let (dot, mermaid) = (cg.dot, cg.mermaid);
    let side_init = if cg.schedule.side_streams == 0 {
        quote!(::std::vec::Vec::new())
    } else {
        let k = cg.schedule.side_streams;
        quote!((0..#k).map(|_| device.new_stream()).collect::<::kgraph::Result<::std::vec::Vec<_>>>()?)
    };
    let event_init = if cg.schedule.events == 0 {
        quote!(::std::vec::Vec::new())
    } else {
        let e = cg.schedule.events;
        let op = format!("{name_str}::new: create a capture event");
        quote!((0..#e)
            .map(|_| device.context().new_event(::core::option::Option::None).map_err(|e| ::kgraph::Error::driver(#op, e)))
            .collect::<::kgraph::Result<::std::vec::Vec<_>>>()?)
    };
    let kernel_load_ops: Vec<String> =
        kernel_names.iter().map(|k| format!("{name_str}::new: load kernel `{k}`")).collect();

    quote! {
        #( const _: &[u8] = include_bytes!(#tracked); )*

        #struct_doc
        pub struct #name {
            device: ::kgraph::Device,
            #( #kernel_fields: #kernel_types, )*
            #( #buffer_fields: #buffer_types, )*
            #( #scalar_fields: #scalar_types, )*
            /// Side streams for parallel branches during capture (see `EDGES`).
            side_streams: ::std::vec::Vec<::std::sync::Arc<::kgraph::CudaStream>>,
            /// Fork/join events for capture, pre-created so capture creates nothing.
            events: ::std::vec::Vec<::kgraph::cudarc::driver::CudaEvent>,
            /// The captured graph, once `capture` or `capture_serialized` ran.
            captured: ::core::option::Option<::kgraph::Graph>,
            /// Launch the `NODE_PDL` nodes with PDL (eager runs and later captures).
            pdl_enabled: bool,
            /// Each spec node's node in the captured graph (as an address, so the struct stays
            /// `Send`; a handle is only used together with `captured`).
            graph_nodes: ::std::vec::Vec<usize>,
            #in_flight_field
        }

        impl #name {
            /// The spec file this type was generated from.
            pub const SPEC: &'static str = #spec;
            #( #dim_consts )*
            #( #len_consts )*
            /// Node names, in file order (= eager order); indices used by `EDGES`.
            pub const NODES: &'static [&'static str] = &[#(#node_names),*];
            /// Dependency edges `(from, to)` between nodes, derived from their reads and writes
            /// and transitively reduced: exactly the edges of the graph [`Self::capture`] builds.
            pub const EDGES: &'static [(usize, usize)] = &[#(#edge_pairs),*];
            /// Per node (indexed like `NODES`): launched with programmatic dependent launch (the
            /// spec's `pdl`). Such a kernel must execute `griddepcontrol.wait` before touching
            /// any buffer.
            pub const NODE_PDL: &'static [bool] = &[#(#node_pdl),*];
            /// The edges of `EDGES` that [`Self::capture`] makes programmatic: into a PDL node
            /// that continues the stream of its sole predecessor. Every other edge, including
            /// every cross-stream one, is a full dependency.
            pub const PDL_EDGES: &'static [(usize, usize)] = &[#(#pdl_edge_pairs),*];
            /// The dataflow as Graphviz DOT.
            pub const DOT: &'static str = #dot;
            /// The dataflow as a Mermaid flowchart.
            pub const MERMAID: &'static str = #mermaid;

            /// Loads the kernels and allocates every buffer (zeroed); scalars take their spec
            /// defaults. Nothing is captured yet: call [`Self::capture`] to build the CUDA graph.
            pub fn new(device: &::kgraph::Device) -> ::kgraph::Result<Self> {
                let mut modules = ::kgraph::ModuleCache::new(device.context());
                #( let #kernel_fields = #kernel_types::load(&mut modules)
                    .map_err(|e| ::kgraph::Error::graph(#kernel_load_ops, e))?; )*
                ::core::result::Result::Ok(Self {
                    #( #kernel_fields, )*
                    #( #buffer_fields: #buffer_inits, )*
                    #( #scalar_fields: #scalar_inits, )*
                    side_streams: #side_init,
                    events: #event_init,
                    captured: ::core::option::Option::None,
                    pdl_enabled: true,
                    graph_nodes: ::std::vec::Vec::new(),
                    #in_flight_init
                    device: ::core::clone::Clone::clone(device),
                })
            }

            /// The device this graph runs on.
            pub fn device(&self) -> &::kgraph::Device {
                &self.device
            }

            #accessors
            #host
            #run
        }
    }
}

fn accessors(cg: &CodegenInput<'_>) -> TokenStream {
    let ir = cg.ir;
    let mut out = TokenStream::new();
    for (b, buf) in ir.buffers.iter().enumerate() {
        let f = buffer_field(ir, b);
        let m = ident(&buf.name);
        let ty = storage_type(buf.role, &elem_ty(buf.elem));
        let doc = format!(
            "Buffer `{}`: {} {} x {} (`{}`){}. Read-only access: the captured graph holds its address, so it cannot be replaced.",
            buf.name,
            buf.role.name(),
            buf.elem,
            buf.len,
            buf.len_src,
            buf.doc.as_ref().map(|d| format!(" — {d}")).unwrap_or_default()
        );
        let doc = doc_attr(&doc);
        out.extend(quote!(#doc pub fn #m(&self) -> &#ty { &self.#f }));
    }
    for (s, sc) in ir.scalars.iter().enumerate() {
        let f = scalar_field(ir, s);
        let m = ident(&sc.name);
        let t = elem_ty(sc.elem);
        let doc = format!(
            "The current value of scalar `{}` ({}){}.",
            sc.name,
            sc.elem,
            sc.doc.as_ref().map(|d| format!(" — {d}")).unwrap_or_default()
        );
        let doc = doc_attr(&doc);
        out.extend(quote!(#doc pub fn #m(&self) -> #t { self.#f }));
        let set = format_ident!("set_{}", sc.name);
        let users: Vec<usize> = (0..ir.nodes.len())
            .filter(|&n| ir.nodes[n].args.iter().any(|a| a.binding == Binding::Scalar { scalar: s }))
            .collect();
        let update = users.iter().map(|&n| format_ident!("__update_node_{}", n));
        let used_by: Vec<String> = users.iter().map(|&n| format!("`{}`", ir.nodes[n].name)).collect();
        let doc = format!(
            "Sets scalar `{}` ({}). Takes effect at the next launch: eager runs pass it directly, and when a graph is captured its kernel nodes that take it ({}) are updated in place with `cuGraphExecKernelNodeSetParams` — no re-capture.",
            sc.name,
            sc.elem,
            used_by.join(", ")
        );
        let doc = doc_attr(&doc);
        out.extend(quote! {
            #doc
            pub fn #set(&mut self, value: #t) -> ::kgraph::Result<()> {
                self.#f = value;
                #( self.#update()?; )*
                ::core::result::Result::Ok(())
            }
        });
    }
    out
}
