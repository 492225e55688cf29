//! Read-only accessors of the buffers, and each scalar's getter and `set_<scalar>` (which
//! refuses a value that breaks an extent the scalar feeds, then updates the captured graph in
//! place through the nodes' `__update_node_<n>`).

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::fields::{buffer_field, scalar_field, storage_type};
use super::input::CodegenInput;
use super::update::{extent_checks, launch_requirement_checks, requirement_checks};
use crate::emit_util::{doc_attr, elem_in_hidden_module, ident};
use crate::graph::ir::{Binding, GraphIr, NodeOp, Role};

/// `" — <doc>"` for an item's spec `doc`, or nothing.
fn doc_suffix(doc: &Option<String>) -> String {
    doc.as_ref().map(|d| format!(" — {d}")).unwrap_or_default()
}

/// Every buffer's accessor, then every scalar's getter and setter.
pub(crate) fn accessors(cg: &CodegenInput<'_>) -> TokenStream {
    let ir = cg.ir;
    let mut out = TokenStream::new();
    for b in 0..ir.buffers.len() {
        // A planned buffer's bytes belong to other buffers between its uses: no accessor.
        if cg.memory.slot(b).is_none() {
            out.extend(buffer_accessor(ir, b));
        }
    }
    for s in 0..ir.scalars.len() {
        out.extend(scalar_accessors(cg, s));
    }
    for b in 0..ir.buffers.len() {
        out.extend(buffer_replacer(cg, b));
    }
    out.extend(launch_setter(cg));
    out.extend(tuning(cg));
    out
}

/// `autotune(cache, iters)` and `apply_tuning(cache)` over the nodes with `tune` candidates.
fn tuning(cg: &CodegenInput<'_>) -> TokenStream {
    let ir = cg.ir;
    let graph = cg.name.to_string();
    let mut timed = TokenStream::new();
    let mut applied = TokenStream::new();
    for (n, node) in ir.nodes.iter().enumerate() {
        let Some(l) = node.launch().filter(|l| !l.tune.is_empty()) else { continue };
        let (gx, bx, shared) = (l.grid.value[0], l.block.value[0], l.shared);
        let threads = u64::from(gx) * u64::from(bx);
        let candidates = &l.tune;
        let name = &node.name;
        let unit = ir.control_of(n).map_or(name.clone(), |c| ir.controls[c].name.clone());
        let key = quote! {
            ::kgraph::expert::tune::TuneKey {
                gpu: gpu.clone(),
                graph: ::std::string::String::from(#graph),
                node: ::std::string::String::from(#name),
                threads: #threads,
            }
        };
        let cfg = quote! {
            |b: u32| ::kgraph::LaunchConfig {
                grid_dim: (#threads.div_ceil(u64::from(b)) as u32, 1, 1),
                block_dim: (b, 1, 1),
                shared_mem_bytes: #shared,
            }
        };
        timed.extend(quote! {
            {
                let cfg = #cfg;
                let key = #key;
                if let ::core::option::Option::Some(b) = cache.get(&key).filter(|b| *b == #bx || [#(#candidates),*].contains(b)) {
                    self.set_launch(#n, cfg(b))?;
                    out.push(::kgraph::expert::tune::TunedNode { node: ::std::string::String::from(#name), default: (#bx, f64::NAN), chosen: (b, f64::NAN), cached: true });
                } else {
                    self.set_launch(#n, cfg(#bx))?;
                    let time = |p: &::kgraph::expert::Profile| p.rows.iter().find(|r| r.node == #unit).map_or(f64::INFINITY, |r| r.us);
                    let base = time(&self.profile(iters)?);
                    let mut best = (#bx, base);
                    for &b in &[#(#candidates),*] {
                        if b == #bx || self.set_launch(#n, cfg(b)).is_err() {
                            continue;
                        }
                        // A candidate the kernel's checks refuse at build time is skipped.
                        let ::core::result::Result::Ok(p) = self.profile(iters) else { continue };
                        if time(&p) < best.1 {
                            best = (b, time(&p));
                        }
                    }
                    self.set_launch(#n, cfg(best.0))?;
                    cache.insert(key, best.0);
                    out.push(::kgraph::expert::tune::TunedNode { node: ::std::string::String::from(#name), default: (#bx, base), chosen: best, cached: false });
                }
            }
        });
        applied.extend(quote! {
            {
                let cfg = #cfg;
                // Only the spec's candidates (or its own block): a cache file is not the spec.
                if let ::core::option::Option::Some(b) = cache.get(&#key).filter(|b| *b == #bx || [#(#candidates),*].contains(b)) {
                    self.set_launch(#n, cfg(b))?;
                    count += 1;
                }
            }
        });
    }
    quote! {
        /// Autotunes the block size of every node with `tune` candidates: with the spec's block
        /// and each candidate (covering the same total threads), times the node with
        /// [`Self::profile`] over `iters` replays and keeps the fastest, then writes the choices
        /// to the cache file `cache`, keyed by GPU name, graph, node and thread count. A node
        /// already in the cache with its spec block or a candidate takes it without timing. Candidates the kernel's
        /// checks refuse are skipped. The graph, if built, is updated in place; call
        /// [`Self::capture`] after to build with the chosen shapes otherwise. Returns one row per
        /// tuned node (`kgraph::expert::tune::report_table` prints them). Timing runs the whole
        /// graph: outputs are overwritten, `state` buffers advance, `pinned_out` memory is
        /// written and collectives run (every rank must tune alike); tune before loading the
        /// state you mean to keep.
        #[allow(unused_variables, unused_mut)]
        pub fn autotune(&mut self, cache_path: &::std::path::Path, iters: usize) -> ::kgraph::Result<::std::vec::Vec<::kgraph::expert::tune::TunedNode>> {
            let gpu = self.device.name()?;
            let mut cache = ::kgraph::expert::tune::TuneCache::load(cache_path)?;
            let mut out = ::std::vec::Vec::new();
            #timed
            cache.save(cache_path)?;
            ::core::result::Result::Ok(out)
        }

        /// Applies the block sizes `cache` holds for this GPU and the nodes' thread counts
        /// (written by [`Self::autotune`]); nodes without an entry, or whose entry is neither the
        /// spec's block nor one of its `tune` candidates, keep the spec's shapes.
        /// Returns how many nodes took a cached shape. An absent file applies nothing.
        #[allow(unused_variables, unused_mut)]
        pub fn apply_tuning(&mut self, cache_path: &::std::path::Path) -> ::kgraph::Result<usize> {
            let gpu = self.device.name()?;
            let cache = ::kgraph::expert::tune::TuneCache::load(cache_path)?;
            let mut count = 0usize;
            #applied
            ::core::result::Result::Ok(count)
        }
    }
}

/// The nodes that pass buffer `b`.
fn users_of(ir: &GraphIr, b: usize) -> Vec<usize> {
    (0..ir.nodes.len())
        .filter(|&n| ir.nodes[n].args.iter().any(|a| a.binding.buffer_access().is_some_and(|(x, _)| x == b)))
        .collect()
}

/// The `[[while]]`/`[[if]]` whose condition reads buffer `b`, if one does. Its control kernel
/// holds the buffer's address in a node no `__update_node_*` rewrites, so such a buffer gets no
/// `replace_<buffer>`: rebinding it would leave the condition reading the old allocation.
fn condition_reader(ir: &GraphIr, b: usize) -> Option<&str> {
    ir.controls.iter().find(|c| c.condition_buffer() == Some(b)).map(|c| c.name.as_str())
}

/// `replace_<buffer>(new)` for a device buffer: exchanges the struct's slice for `new` and
/// rewrites every node that passes it in the instantiated graph (no re-instantiation).
fn buffer_replacer(cg: &CodegenInput<'_>, b: usize) -> Option<TokenStream> {
    let ir = cg.ir;
    let buf = &ir.buffers[b];
    if !buf.role.is_replaceable() || condition_reader(ir, b).is_some() || cg.memory.slot(b).is_some() {
        return None;
    }
    let (f, m) = (buffer_field(ir, b), format_ident!("{}", buf.replacer()));
    let t = elem_in_hidden_module(buf.elem);
    let len_const = format_ident!("{}", buf.len_const());
    let graph = cg.name.to_string();
    let what = format!("{}::{}", graph, buf.replacer());
    let name = &buf.name;
    let update = users_of(ir, b).into_iter().map(|n| format_ident!("__update_node_{}", n));
    let doc = doc_attr(&format!(
        "Rebinds buffer `{name}` to `new` (the same {} x {}, allocated on this graph's device stream) and returns the old slice; every node passing it is rewritten in the instantiated graph in place, with no re-capture: ping-pong buffers, or another allocation of the same shape. `kgraph::MemoryError::LengthMismatch` or `kgraph::LaunchError::ForeignStream` refuse `new` and change nothing. Should rewriting a node fail, the graph is dropped (call `capture` again) and `new` stays bound. The old slice may still be read by a replay in flight: its uses and its free are ordered on the device stream.",
        buf.len, buf.elem
    ));
    Some(quote! {
        #doc
        pub fn #m(&mut self, new: ::kgraph::DeviceBuffer<#t>) -> ::kgraph::Result<::kgraph::DeviceBuffer<#t>> {
            if new.len() != Self::#len_const {
                return ::core::result::Result::Err(::kgraph::Error::Memory(::kgraph::MemoryError::LengthMismatch {
                    what: ::std::string::String::from(#what),
                    expected: Self::#len_const,
                    actual: new.len(),
                }));
            }
            ::kgraph::__private::check_same_stream(#graph, #name, self.device.stream(), ::kgraph::DeviceIn::<#t>::stream(&new))?;
            let old = ::core::mem::replace(&mut self.#f, new);
            let rebound: ::kgraph::Result<()> = (|| {
                #( self.#update()?; )*
                ::core::result::Result::Ok(())
            })();
            if let ::core::result::Result::Err(e) = rebound {
                self.captured = ::core::option::Option::None;
                self.graph_nodes.clear();
                return ::core::result::Result::Err(e);
            }
            ::core::result::Result::Ok(old)
        }
    })
}

/// `set_launch(node, cfg)`: a kernel node's launch shape, updated in the instantiated graph.
fn launch_setter(cg: &CodegenInput<'_>) -> TokenStream {
    let ir = cg.ir;
    let kernels: Vec<usize> = (0..ir.nodes.len()).filter(|&n| ir.nodes[n].launch().is_some()).collect();
    let updates = kernels.iter().map(|&n| format_ident!("__update_node_{}", n));
    let what = format!("{}::set_launch", cg.name);
    // Without kernel nodes (GEMMs and copies only) every index is refused: the match below
    // has only its returning arm, so the code after it is unreachable.
    let unreachable = kernels.is_empty().then(|| quote!(#[allow(unreachable_code)]));
    let requirements = launch_requirement_checks(cg);
    // Said only where a node's kernel has `requires` (the other structs' docs stay as they were).
    let requires_doc = (!requirements.is_empty()).then(|| {
        doc_attr(
            "The `requires` conditions of the node's kernel are checked with `cfg` first, graph or not \
             (`kgraph::LaunchError::Requirement`).",
        )
    });
    quote! {
        /// Changes the launch shape (grid, block, dynamic shared memory) of kernel node `node`
        /// (an index into `NODES`) for later eager runs and, in place, in the instantiated graph.
        /// The launch checks of the kernel (its `__launch_bounds__`, the device's limits) run
        /// now when a graph exists (else at the next launch); a refused shape changes nothing.
        #requires_doc
        /// `kgraph::GraphError::Failed` for an index that is not a kernel node.
        #unreachable
        pub fn set_launch(&mut self, node: usize, cfg: ::kgraph::LaunchConfig) -> ::kgraph::Result<()> {
            #requirements
            let update: fn(&mut Self) -> ::kgraph::Result<()> = match node {
                #( #kernels => Self::#updates, )*
                _ => {
                    return ::core::result::Result::Err(::kgraph::Error::graph(
                        #what,
                        ::std::format!("node {} is not a kernel node of NODES ({} nodes)", node, Self::NODES.len()),
                    ))
                }
            };
            let old = ::core::mem::replace(&mut self.node_cfgs[node], cfg);
            if let ::core::result::Result::Err(e) = update(self) {
                self.node_cfgs[node] = old;
                return ::core::result::Result::Err(e);
            }
            ::core::result::Result::Ok(())
        }
    }
}

/// `<buffer>(&self)`: a shared reference to the buffer's storage. None for a `pinned_out`
/// buffer: a `&MappedBuffer`'s own reads (`to_vec`, `read_into`) wait only for pointers lent
/// since their last wait, and a replay lends none; `read_<buffer>` and `read_<buffer>_into` wait
/// for the struct's launches in flight and read with volatile loads.
fn buffer_accessor(ir: &GraphIr, b: usize) -> Option<TokenStream> {
    let buf = &ir.buffers[b];
    if buf.role == Role::PinnedOut {
        return None;
    }
    let f = buffer_field(ir, b);
    let m = ident(&buf.name);
    let ty = storage_type(buf.role, &elem_in_hidden_module(buf.elem));
    let exchange = match condition_reader(ir, b) {
        Some(control) => format!(
            "the condition of `{control}` reads it, so it has no `replace_{}`: it stays this allocation",
            buf.name
        ),
        None => "device buffers are exchanged through `replace_<buffer>`".to_string(),
    };
    let doc = format!(
        "Buffer `{}`: {} {} x {} (`{}`){}. Read-only access: the graph holds its address ({exchange}).",
        buf.name,
        buf.role.name(),
        buf.elem,
        buf.len,
        buf.len_src,
        doc_suffix(&buf.doc)
    );
    let doc = doc_attr(&doc);
    Some(quote!(#doc pub fn #m(&self) -> &#ty { &self.#f }))
}

fn scalar_accessors(cg: &CodegenInput<'_>, s: usize) -> TokenStream {
    let ir = cg.ir;
    let sc = &ir.scalars[s];
    let f = scalar_field(ir, s);
    let m = ident(&sc.name);
    let t = elem_in_hidden_module(sc.elem);
    let doc = format!("The current value of scalar `{}` ({}){}.", sc.name, sc.elem, doc_suffix(&sc.doc));
    let doc = doc_attr(&doc);
    let getter = quote!(#doc pub fn #m(&self) -> #t { self.#f });
    let set = format_ident!("{}", sc.setter());
    let users: Vec<usize> = (0..ir.nodes.len())
        .filter(|&n| ir.nodes[n].args.iter().any(|a| a.binding == Binding::Scalar { scalar: s }))
        .collect();
    let update: Vec<proc_macro2::Ident> = users.iter().map(|&n| format_ident!("__update_node_{}", n)).collect();
    let used_by: Vec<String> = users.iter().map(|&n| format!("`{}`", ir.nodes[n].name)).collect();
    let mut checks = extent_checks(cg, s);
    let requirements = requirement_checks(cg, s);
    let refuses = if checks.is_empty() {
        String::new()
    } else {
        " It feeds kernel extents, so it first checks that `value` keeps each of them (evaluated as the kernel's checked launch would) within its buffer, and refuses a value that does not with `kgraph::GraphError::ScalarBreaksExtent`, changing nothing: the captured graph keeps running with the old value.".to_string()
    };
    let doc = format!(
        "Sets scalar `{}` ({}). Takes effect at the next launch: eager runs pass it directly, and when a graph is captured its kernel nodes that take it ({}) are updated in place with `cuGraphExecKernelNodeSetParams` — no re-capture.{refuses}",
        sc.name,
        sc.elem,
        used_by.join(", ")
    );
    let doc = if requirements.is_empty() {
        doc
    } else {
        format!("{doc} It feeds `requires` conditions of kernels, so it first checks each of them with `value` and refuses a value that makes one false with `kgraph::LaunchError::Requirement`, changing nothing.")
    };
    checks.extend(requirements);
    let gemms: Vec<String> = users
        .iter()
        .filter(|&&n| matches!(ir.nodes[n].op, NodeOp::Gemm(_)))
        .map(|&n| format!("`{}`", ir.nodes[n].name))
        .collect();
    let doc = if gemms.is_empty() {
        doc
    } else {
        format!(
            "{doc} Of these, the GEMM nodes ({}) are captured again (one cuBLAS call each) and swapped into their child-graph nodes with `cuGraphExecChildGraphNodeSetParams`.",
            gemms.join(", ")
        )
    };
    let doc = format!(
        "{doc} With a graph instantiated, a value a node's launch checks refuse (a kernel's `shared` requirement, say) is returned as that error, with the scalar and every node as they were; without one, the next launch or capture refuses it."
    );
    let doc = doc_attr(&doc);
    if update.is_empty() {
        return quote! {
            #getter
            #doc
            pub fn #set(&mut self, value: #t) -> ::kgraph::Result<()> {
                #( #checks )*
                self.#f = value;
                ::core::result::Result::Ok(())
            }
        };
    }
    quote! {
        #getter
        #doc
        pub fn #set(&mut self, value: #t) -> ::kgraph::Result<()> {
            #( #checks )*
            let old = ::core::mem::replace(&mut self.#f, value);
            let updated = (|| -> ::kgraph::Result<()> {
                #( self.#update()?; )*
                ::core::result::Result::Ok(())
            })();
            if let ::core::result::Result::Err(e) = updated {
                // A node's launch checks refused the value: every node takes the old one again
                // (each accepted it before), so no replay mixes the two.
                self.#f = old;
                #( let _ = self.#update(); )*
                return ::core::result::Result::Err(e);
            }
            ::core::result::Result::Ok(())
        }
    }
}
