//! The done-word wait of graphs with mapped host buffers (`pinned`, `pinned_out`): a
//! `kgraph::resident::DoneWait` field, the node it appends as the graph's last when turned on
//! (`set_done_word_wait`), and `wait_replay`. The read and write methods of mapped buffers wait
//! through it: a spin on the done word when the graph was built with it, else the stream
//! synchronize they always used. Empty for graphs without mapped host buffers.

use proc_macro2::TokenStream;
use quote::quote;

use super::input::CodegenInput;
use crate::emit_util::doc_attr;
use crate::graph::ir::{GraphIr, Role};

/// The field and its initialiser in `new`.
pub(crate) fn field_and_init(ir: &GraphIr) -> (TokenStream, TokenStream) {
    if !tracks_in_flight(ir) {
        return (TokenStream::new(), TokenStream::new());
    }
    (
        quote! {
            /// How the mapped buffers' methods and `wait_replay` wait for a replay: the stream,
            /// or the done word the graph's last node writes (`set_done_word_wait`).
            done_wait: ::kgraph::resident::DoneWait,
        },
        quote!(done_wait: ::kgraph::resident::DoneWait::off(),),
    )
}

/// The statement that appends the done node to `built` (a `GraphBuilder` binding) before it is
/// instantiated; `again`: only when the graph it replaces has one (an in-place update).
pub(crate) fn append(ir: &GraphIr, again: bool) -> TokenStream {
    if !tracks_in_flight(ir) {
        return TokenStream::new();
    }
    let call = if again { quote!(append_if_armed) } else { quote!(append) };
    quote! {
        let mut built = built;
        // SAFETY: the struct's drop waits for its stream, then drops `captured` (the graph
        // instantiated from `built`) before `done_wait` (declared after it).
        unsafe { self.done_wait.#call(&mut built) }?;
    }
}

/// The statement of `capture_streamed`: its graph has no done node.
pub(crate) fn disarm(ir: &GraphIr) -> TokenStream {
    if !tracks_in_flight(ir) {
        return TokenStream::new();
    }
    quote!(self.done_wait.disarm();)
}

/// The replay, recorded for the done word (its count is taken before the launch).
pub(crate) fn replay_call(ir: &GraphIr) -> TokenStream {
    if !tracks_in_flight(ir) {
        return quote!(graph.replay());
    }
    quote!(self.done_wait.replay(|| graph.replay()))
}

/// The wait of a mapped buffer's method for a launch in flight; `op` names it in errors.
pub(crate) fn wait_stmt(op: &str) -> TokenStream {
    quote!(self.done_wait.wait(self.device.stream(), #op)?;)
}

/// `set_done_word_wait`, `done_word_armed` and `wait_replay`.
pub(crate) fn methods(cg: &CodegenInput<'_>) -> TokenStream {
    if !tracks_in_flight(cg.ir) {
        return TokenStream::new();
    }
    let op = format!("{}::wait_replay", cg.name);
    let set_doc = doc_attr(
        "Chooses how the graph's replays are waited for (by [`Self::wait_replay`] and the `read_*` / `write_*` methods of its mapped buffers), from the next [`Self::capture`] or [`Self::capture_serialized`] on: `Some(policy)` appends one node after every other (one thread: it counts the replay in device memory and publishes the count into a word of mapped host memory) and the waits spin on that word with `policy`'s back-off and timeout (`kgraph::WaitError::Timeout`; a device fault is `kgraph::Error::Driver` at once), instead of synchronizing the stream; `None` (the default) synchronizes the stream. Eager runs and `capture_streamed` graphs are always waited for by the stream. The first `Some` allocates the word and loads the node's kernel.",
    );
    quote! {
        #set_doc
        pub fn set_done_word_wait(&mut self, policy: ::core::option::Option<::kgraph::resident::SpinPolicy>) -> ::kgraph::Result<()> {
            self.done_wait.set(&self.device, policy)
        }

        /// Whether the graph built last ends with the done-word node (its replays are waited
        /// for by spinning; see [`Self::set_done_word_wait`]).
        pub fn done_word_armed(&self) -> bool {
            self.done_wait.is_armed()
        }

        /// Waits for this graph's replay or eager run still in flight (nothing when none is):
        /// a spin on the done word when the graph was built with it
        /// ([`Self::set_done_word_wait`]), else a stream synchronize. On a timeout the replay
        /// stays in flight, and the next wait waits for it again.
        pub fn wait_replay(&self) -> ::kgraph::Result<()> {
            if self.in_flight.get() {
                self.done_wait.wait(self.device.stream(), #op)?;
                self.in_flight.set(false);
            }
            ::core::result::Result::Ok(())
        }
    }
}

/// Whether the struct tracks its launches in flight: only graphs with mapped host buffers the
/// host writes (`pinned`) or reads (`pinned_out`) need to know.
pub(crate) fn tracks_in_flight(ir: &GraphIr) -> bool {
    ir.buffers.iter().any(|b| matches!(b.role, Role::Pinned | Role::PinnedOut))
}
