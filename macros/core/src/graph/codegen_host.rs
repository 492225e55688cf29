//! Generated host transfer methods, one set per buffer role (`upload_`, `load_`, `download_`,
//! `write_`, `read_`), and the in-flight tracking that lets the mapped-memory methods skip a
//! stream wait when none of the graph's own launches can still be running.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::Ident;

use super::codegen::{buffer_field, doc_attr, elem_ty, host_methods, CodegenInput};
use super::ir::{GraphIr, Role};

/// Whether the struct tracks its launches in flight: only graphs with mapped host buffers the
/// host writes (`pinned`) or reads (`pinned_out`) need to know.
pub(crate) fn tracks_in_flight(ir: &GraphIr) -> bool {
    ir.buffers.iter().any(|b| matches!(b.role, Role::Pinned | Role::PinnedOut))
}

/// The struct field, its initialiser, and the statement `replay`/`run_eager` begin with (all
/// empty when the graph does not track launches in flight).
pub(crate) fn in_flight_parts(ir: &GraphIr) -> (TokenStream, TokenStream, TokenStream) {
    if !tracks_in_flight(ir) {
        return (TokenStream::new(), TokenStream::new(), TokenStream::new());
    }
    (
        quote! {
            /// A replay or eager run of this graph may still be running: set when one is issued,
            /// cleared when a host method has waited for the device stream. `write_<pinned>` and
            /// `read_<pinned_out>` wait only while it is set (no driver call otherwise).
            in_flight: ::core::cell::Cell<bool>,
        },
        quote!(in_flight: ::core::cell::Cell::new(false),),
        quote!(self.in_flight.set(true);),
    )
}

fn length_check(what: &str, len_const: &Ident, actual: TokenStream) -> TokenStream {
    quote! {
        if #actual != Self::#len_const {
            return ::core::result::Result::Err(::kgraph::Error::LengthMismatch {
                what: ::std::string::String::from(#what),
                expected: Self::#len_const,
                actual: #actual,
            });
        }
    }
}

/// Waits for the device stream if one of this graph's launches may still be running; `op`
/// names the method and buffer in the error.
fn wait_in_flight(op: &str) -> TokenStream {
    quote! {
        if self.in_flight.get() {
            self.device.stream().synchronize().map_err(|e| ::kgraph::Error::driver(#op, e))?;
            self.in_flight.set(false);
        }
    }
}

/// Every buffer's host methods (see [`host_methods`]).
pub(crate) fn host_methods_tokens(cg: &CodegenInput<'_>) -> TokenStream {
    let ir = cg.ir;
    let gname = cg.name.to_string();
    let mut out = TokenStream::new();
    for (b, buf) in ir.buffers.iter().enumerate() {
        let f = buffer_field(ir, b);
        let t = elem_ty(buf.elem);
        let n = &buf.name;
        let len_const = format_ident!("{}_LEN", n.to_uppercase());
        let shape = format!("{} x {} (`{}`)", buf.elem, buf.len, buf.len_src);
        for m in host_methods(buf.role) {
            let method = format_ident!("{}", m.replace("{}", n));
            let what = format!("{gname}::{method} ({} buffer `{n}`)", buf.role.name());
            let wait = wait_in_flight(&format!("{what}: synchronize the device stream"));
            let (doc, body) = match (*m, buf.role) {
                ("upload_{}" | "load_{}", _) => {
                    let check = length_check(&what, &len_const, quote!(src.len()));
                    let doc = match buf.role {
                        Role::Input => format!("Copies `src` into input buffer `{n}` ({shape}), ordered before later work on the device stream. Length-checked."),
                        Role::Parameter => format!("Loads parameter buffer `{n}` ({shape}) from `src` (weights: load once). Length-checked."),
                        _ => format!("Overwrites state buffer `{n}` ({shape}) with `src` (e.g. to reset it). Length-checked."),
                    };
                    (
                        doc,
                        quote! {
                            pub fn #method(&mut self, src: &[#t]) -> ::kgraph::Result<()> {
                                #check
                                self.device.upload_into(src, &mut self.#f)
                            }
                        },
                    )
                }
                ("download_{}", _) => {
                    let doc = format!(
                        "Reads {} buffer `{n}` ({shape}) back to the host, after all work queued before it.",
                        buf.role.name()
                    );
                    (
                        doc,
                        quote! {
                            pub fn #method(&self) -> ::kgraph::Result<::std::vec::Vec<#t>> {
                                self.device.download(&self.#f)
                            }
                        },
                    )
                }
                ("download_{}_into", _) => {
                    let check = length_check(&what, &len_const, quote!(dst.len()));
                    let doc = format!(
                        "Reads {} buffer `{n}` ({shape}) into `dst` without allocating. Length-checked.",
                        buf.role.name()
                    );
                    (
                        doc,
                        quote! {
                            pub fn #method(&self, dst: &mut [#t]) -> ::kgraph::Result<()> {
                                #check
                                self.device.download_into(&self.#f, dst)
                            }
                        },
                    )
                }
                ("read_{}", _) => {
                    let doc = format!("Reads pinned_out buffer `{n}` ({shape}), which kernels write straight into mapped host memory: waits for this graph's replay or eager run still in flight (a stream synchronize; nothing when none is), then copies the values out with volatile loads. No device copy.");
                    (
                        doc,
                        quote! {
                            pub fn #method(&self) -> ::kgraph::Result<::std::vec::Vec<#t>> {
                                #wait
                                ::core::result::Result::Ok(self.#f.to_vec_volatile())
                            }
                        },
                    )
                }
                ("read_{}_into", _) => {
                    let check = length_check(&what, &len_const, quote!(dst.len()));
                    let doc = format!("Reads pinned_out buffer `{n}` ({shape}) into `dst` without allocating: waits for this graph's replay or eager run still in flight (nothing when none is), then copies the values out of mapped host memory with volatile loads. No device copy. Length-checked.");
                    (
                        doc,
                        quote! {
                            pub fn #method(&self, dst: &mut [#t]) -> ::kgraph::Result<()> {
                                #check
                                #wait
                                self.#f.read_volatile_into(dst)
                            }
                        },
                    )
                }
                (_, Role::Slot) => {
                    let doc = format!("Writes pinned slot `{n}` ({}): kernels read it zero-copy at their next launch (eager or replay), no transfer and no re-capture. Does not wait for launches in flight: one that has not read the slot yet sees the new value.", buf.elem);
                    (
                        doc,
                        quote! {
                            pub fn #method(&self, value: #t) {
                                self.#f.write(value);
                            }
                        },
                    )
                }
                _ => {
                    let check = length_check(&what, &len_const, quote!(src.len()));
                    let doc = format!("Copies `src` into pinned buffer `{n}` ({shape}), which kernels read zero-copy at their next launch (no transfer, no re-capture). First waits for this graph's replay or eager run still in flight (a stream synchronize; nothing when none is), so none of its launches sees a half-written buffer. Length-checked.");
                    (
                        doc,
                        quote! {
                            pub fn #method(&mut self, src: &[#t]) -> ::kgraph::Result<()> {
                                #check
                                #wait
                                self.#f.as_mut_slice().copy_from_slice(src);
                                ::core::result::Result::Ok(())
                            }
                        },
                    )
                }
            };
            let doc = doc_attr(&doc);
            out.extend(quote!(#doc #body));
        }
    }
    out
}
