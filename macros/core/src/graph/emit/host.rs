//! Generated host transfer methods, one set per buffer role (see [`Role::host_methods`]):
//! `upload_`, `load_`, `download_`, `write_`, `read_`. The mapped-memory methods skip the
//! stream wait when none of the graph's own launches can still be running (see `InFlight`).

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::Ident;

use super::fields::buffer_field;
use super::input::CodegenInput;
use crate::emit_util::{doc_attr, elem_in_hidden_module};
use crate::graph::ir::{Buffer, HostMethod, Role};

fn length_check(what: &str, len_const: &Ident, actual: TokenStream) -> TokenStream {
    quote! {
        if #actual != Self::#len_const {
            return ::core::result::Result::Err(::kgraph::Error::Memory(::kgraph::MemoryError::LengthMismatch {
                what: ::std::string::String::from(#what),
                expected: Self::#len_const,
                actual: #actual,
            }));
        }
    }
}

/// Waits if one of this graph's launches may still be running (the done word or the device
/// stream, see `done_wait`); `op` names the method and buffer in the error.
fn wait_in_flight(op: &str) -> TokenStream {
    let wait = super::done_wait::wait_stmt(op);
    quote! {
        if self.in_flight.get() {
            #wait
            self.in_flight.set(false);
        }
    }
}

/// One host method of one buffer, as its generator needs it.
struct Method<'a> {
    buf: &'a Buffer,
    /// The method's name.
    name: Ident,
    /// The buffer's field.
    field: Ident,
    /// The element type.
    t: TokenStream,
    /// `Self::<NAME>_LEN`.
    len_const: Ident,
    /// `f32 x 64 (`n`)`, for the docs.
    shape: String,
    /// `Graph::method (role buffer `x`)`, for errors.
    what: String,
}

impl Method<'_> {
    fn length_check(&self, actual: TokenStream) -> TokenStream {
        length_check(&self.what, &self.len_const, actual)
    }

    fn wait_in_flight(&self) -> TokenStream {
        wait_in_flight(&format!("{}: wait for the replay in flight", self.what))
    }
}

/// Every buffer's host methods.
pub(crate) fn host_methods_tokens(cg: &CodegenInput<'_>) -> TokenStream {
    let ir = cg.ir;
    let gname = cg.name.to_string();
    let mut out = TokenStream::new();
    for (b, buf) in ir.buffers.iter().enumerate() {
        for &method in buf.role.host_methods() {
            let name = format_ident!("{}", method.name(&buf.name));
            let m = Method {
                buf,
                what: format!("{gname}::{name} ({} buffer `{}`)", buf.role.name(), buf.name),
                name,
                field: buffer_field(ir, b),
                t: elem_in_hidden_module(buf.elem),
                len_const: format_ident!("{}", buf.len_const()),
                shape: format!("{} x {} (`{}`)", buf.elem, buf.len, buf.len_src),
            };
            let (doc, body) = match (method, buf.role) {
                (HostMethod::Upload | HostMethod::Load, _) => upload(&m),
                (HostMethod::Download, _) => download(&m),
                (HostMethod::DownloadInto, _) => download_into(&m),
                (HostMethod::Read, _) => read(&m),
                (HostMethod::ReadInto, _) => read_into(&m),
                (HostMethod::Write, Role::Slot) => write_slot(&m),
                (HostMethod::Write, _) => write_pinned(&m),
            };
            let doc = doc_attr(&doc);
            out.extend(quote!(#doc #body));
        }
    }
    out
}

/// `upload_<input>` / `load_<parameter or state>`: a length-checked copy to the device.
fn upload(m: &Method<'_>) -> (String, TokenStream) {
    let (n, shape) = (&m.buf.name, &m.shape);
    let check = m.length_check(quote!(src.len()));
    let doc = match m.buf.role {
        Role::Input => format!("Copies `src` into input buffer `{n}` ({shape}), ordered before later work on the device stream. Length-checked."),
        Role::Parameter => format!("Loads parameter buffer `{n}` ({shape}) from `src` (weights: load once). Length-checked."),
        _ => format!("Overwrites state buffer `{n}` ({shape}) with `src` (e.g. to reset it). Length-checked."),
    };
    let Method { name, field, t, .. } = m;
    let body = quote! {
        pub fn #name(&mut self, src: &[#t]) -> ::kgraph::Result<()> {
            #check
            self.device.upload_into(src, &mut self.#field)
        }
    };
    (doc, body)
}

fn download(m: &Method<'_>) -> (String, TokenStream) {
    let doc = format!(
        "Reads {} buffer `{}` ({}) back to the host, after all work queued before it.",
        m.buf.role.name(),
        m.buf.name,
        m.shape
    );
    let Method { name, field, t, .. } = m;
    let body = quote! {
        pub fn #name(&self) -> ::kgraph::Result<::std::vec::Vec<#t>> {
            self.device.download(&self.#field)
        }
    };
    (doc, body)
}

fn download_into(m: &Method<'_>) -> (String, TokenStream) {
    let check = m.length_check(quote!(dst.len()));
    let doc = format!(
        "Reads {} buffer `{}` ({}) into `dst` without allocating. Length-checked.",
        m.buf.role.name(),
        m.buf.name,
        m.shape
    );
    let Method { name, field, t, .. } = m;
    let body = quote! {
        pub fn #name(&self, dst: &mut [#t]) -> ::kgraph::Result<()> {
            #check
            self.device.download_into(&self.#field, dst)
        }
    };
    (doc, body)
}

fn read(m: &Method<'_>) -> (String, TokenStream) {
    let (n, shape) = (&m.buf.name, &m.shape);
    let doc = format!("Reads pinned_out buffer `{n}` ({shape}), which kernels write straight into mapped host memory: waits for this graph's replay or eager run still in flight (a stream synchronize, or a spin on the done word after `set_done_word_wait`; nothing when none is), then copies the values out with volatile loads. No device copy.");
    let wait = m.wait_in_flight();
    let Method { name, field, t, .. } = m;
    let body = quote! {
        pub fn #name(&self) -> ::kgraph::Result<::std::vec::Vec<#t>> {
            #wait
            ::core::result::Result::Ok(self.#field.to_vec_volatile())
        }
    };
    (doc, body)
}

fn read_into(m: &Method<'_>) -> (String, TokenStream) {
    let (n, shape) = (&m.buf.name, &m.shape);
    let check = m.length_check(quote!(dst.len()));
    let doc = format!("Reads pinned_out buffer `{n}` ({shape}) into `dst` without allocating: waits for this graph's replay or eager run still in flight (nothing when none is), then copies the values out of mapped host memory with volatile loads. No device copy. Length-checked.");
    let wait = m.wait_in_flight();
    let Method { name, field, t, .. } = m;
    let body = quote! {
        pub fn #name(&self, dst: &mut [#t]) -> ::kgraph::Result<()> {
            #check
            #wait
            self.#field.read_volatile_into(dst)
        }
    };
    (doc, body)
}

fn write_slot(m: &Method<'_>) -> (String, TokenStream) {
    let doc = format!("Writes pinned slot `{}` ({}): kernels read it zero-copy at their next launch (eager or replay), no transfer and no re-capture. Does not wait for launches in flight: one that has not read the slot yet sees the new value.", m.buf.name, m.buf.elem);
    let Method { name, field, t, .. } = m;
    let body = quote! {
        pub fn #name(&self, value: #t) {
            self.#field.write(value);
        }
    };
    (doc, body)
}

fn write_pinned(m: &Method<'_>) -> (String, TokenStream) {
    let (n, shape) = (&m.buf.name, &m.shape);
    let check = m.length_check(quote!(src.len()));
    let doc = format!("Copies `src` into pinned buffer `{n}` ({shape}), which kernels read zero-copy at their next launch (no transfer, no re-capture). First waits for this graph's replay or eager run still in flight (a stream synchronize, or a spin on the done word after `set_done_word_wait`; nothing when none is), so none of its launches sees a half-written buffer. Length-checked.");
    let wait = m.wait_in_flight();
    let Method { name, field, t, .. } = m;
    let body = quote! {
        pub fn #name(&mut self, src: &[#t]) -> ::kgraph::Result<()> {
            #check
            #wait
            self.#field.as_mut_slice()?.copy_from_slice(src);
            ::core::result::Result::Ok(())
        }
    };
    (doc, body)
}
