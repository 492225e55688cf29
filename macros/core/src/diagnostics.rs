//! One collector for every error codegen finds, modelled on serde_derive's `Ctxt`: a check
//! pushes an error with where it points ([`Ctxt::push`]) and goes on, so one run reports all
//! of an input's problems; the stage that owns the collector ends it with [`Ctxt::check`],
//! which turns it into `Ok` or the [`Errors`]. A `Ctxt` dropped without `check` is a bug
//! (errors lost): in debug builds, and so in every test, the drop panics and names it.
//!
//! `#[kernel]` errors point at Rust tokens ([`Location::Span`]); graph-spec errors at bytes of
//! the TOML file ([`Location::Spec`]). The macros turn [`Errors`] into `compile_error!`s
//! ([`Errors::to_compile_error`]); spec errors and `kgraph check` render them as
//! `file:line:col` with the line quoted (`graph::spec::diag::SourceMap::render_errors`).

use std::ops::Range;

use proc_macro2::{Span, TokenStream};

/// Where an error points.
#[derive(Debug, Clone)]
pub enum Location {
    /// A Rust token (a `#[kernel]` declaration, a macro's arguments).
    Span(Span),
    /// Rust tokens as a `syn::Error` spans them: from its first token to its last (a compile
    /// error underlines the range; `Span::join`, which would make it one span, is nightly-only
    /// in a proc macro). Its own message is the diagnostic's.
    Tokens(syn::Error),
    /// A byte range of the graph spec being checked.
    Spec(Range<usize>),
    /// The graph spec as a whole.
    SpecFile,
    /// Nowhere of its own: the message is already positioned and rendered in another file
    /// (an included spec's error, rendered with that spec's text).
    Positioned,
}

impl From<Span> for Location {
    fn from(span: Span) -> Self {
        Location::Span(span)
    }
}

impl From<Range<usize>> for Location {
    fn from(range: Range<usize>) -> Self {
        Location::Spec(range)
    }
}

/// One error: where, and what is wrong (without the position).
#[derive(Debug, Clone)]
pub struct Diagnostic {
    /// Where it points.
    pub location: Location,
    /// What is wrong.
    pub message: String,
}

impl Diagnostic {
    /// The error as a `syn::Error` at its span (`fallback` for the errors that point into a
    /// spec file, or are positioned elsewhere).
    pub fn to_syn(&self, fallback: Span) -> syn::Error {
        let span = match &self.location {
            Location::Span(span) => *span,
            Location::Tokens(error) => return error.clone(),
            Location::Spec(_) | Location::SpecFile | Location::Positioned => fallback,
        };
        syn::Error::new(span, &self.message)
    }
}

/// The message alone, without where it points (for a message quoted inside another).
impl std::fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// Collects the errors of one run; see the module docs. `Default` is [`Ctxt::new`].
#[derive(Debug)]
pub struct Ctxt {
    /// `None` once checked.
    errors: Option<Vec<Diagnostic>>,
}

impl Default for Ctxt {
    fn default() -> Self {
        Self::new()
    }
}

impl Ctxt {
    /// An empty collector; it must be ended with [`Ctxt::check`].
    pub fn new() -> Self {
        Ctxt { errors: Some(Vec::new()) }
    }

    fn errors_mut(&mut self) -> &mut Vec<Diagnostic> {
        self.errors.as_mut().expect("kgraph-codegen: Ctxt used after check()")
    }

    fn errors(&self) -> &[Diagnostic] {
        self.errors.as_deref().expect("kgraph-codegen: Ctxt used after check()")
    }

    /// Records an error at `at` (a `Span`, a spec byte range, or a [`Location`]).
    pub fn push(&mut self, at: impl Into<Location>, message: impl Into<String>) {
        self.errors_mut().push(Diagnostic { location: at.into(), message: message.into() });
    }

    /// Records an error over `tokens` (a parameter `x: &[f32; n]`): rustc underlines from their
    /// first token to their last, as `syn::Error::new_spanned` does.
    pub fn push_spanned(&mut self, tokens: impl quote::ToTokens, message: impl std::fmt::Display) {
        self.push_syn(syn::Error::new_spanned(tokens, message));
    }

    /// Records every message of `error` (a combined `syn::Error` holds several), each at the
    /// tokens it spans.
    pub fn push_syn(&mut self, error: syn::Error) {
        for e in error {
            let message = e.to_string();
            self.push(Location::Tokens(e), message);
        }
    }

    /// Records errors an earlier, checked collector returned.
    pub fn extend(&mut self, errors: Errors) {
        self.errors_mut().extend(errors.0);
    }

    /// True when something was recorded.
    pub fn has_errors(&self) -> bool {
        !self.errors().is_empty()
    }

    /// Number of errors recorded (a stage compares it before and after to see whether it
    /// found any).
    #[allow(clippy::len_without_is_empty)] // `has_errors` is the emptiness test
    pub fn len(&self) -> usize {
        self.errors().len()
    }

    /// Lets `f` change the message of every error recorded so far (given where it points).
    pub fn annotate(&mut self, mut f: impl FnMut(&Location, &mut String)) {
        for e in self.errors_mut() {
            f(&e.location, &mut e.message);
        }
    }

    /// Ends the run: `Ok` when nothing was recorded, else every error, in the order recorded.
    pub fn check(mut self) -> Result<(), Errors> {
        let errors = self.errors.take().unwrap_or_default();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(Errors(errors))
        }
    }
}

impl Drop for Ctxt {
    fn drop(&mut self) {
        // Release builds (a user's proc macro) lose nothing by not panicking here: a forgotten
        // check drops errors, which the debug-built tests catch.
        if cfg!(debug_assertions) && !std::thread::panicking() && self.errors.is_some() {
            panic!("kgraph-codegen: a diagnostics Ctxt was dropped without check()");
        }
    }
}

/// The errors of a checked run (never empty when it comes from [`Ctxt::check`]).
#[derive(Debug, Clone, Default)]
pub struct Errors(Vec<Diagnostic>);

impl Errors {
    /// One error at `at`.
    pub fn one(at: impl Into<Location>, message: impl Into<String>) -> Self {
        Errors(vec![Diagnostic { location: at.into(), message: message.into() }])
    }

    /// The errors, in the order recorded.
    pub fn iter(&self) -> std::slice::Iter<'_, Diagnostic> {
        self.0.iter()
    }

    /// Number of errors.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Every error as a `compile_error!` at its span (`fallback` for errors without one).
    pub fn to_compile_error(&self, fallback: Span) -> TokenStream {
        self.0.iter().map(|e| e.to_syn(fallback).to_compile_error()).collect()
    }
}

impl IntoIterator for Errors {
    type Item = Diagnostic;
    type IntoIter = std::vec::IntoIter<Diagnostic>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl<'a> IntoIterator for &'a Errors {
    type Item = &'a Diagnostic;
    type IntoIter = std::slice::Iter<'a, Diagnostic>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

#[cfg(test)]
mod tests {
    use proc_macro2::Span;

    use crate::diagnostics::{Ctxt, Location};

    #[test]
    fn check_returns_every_error_in_order() {
        let mut cx = Ctxt::new();
        cx.push(3..4, "b");
        cx.push(Location::SpecFile, "a");
        let errors = cx.check().unwrap_err();
        let messages: Vec<&str> = errors.iter().map(|e| e.message.as_str()).collect();
        assert_eq!(messages, ["b", "a"]);
    }

    #[test]
    fn an_empty_collector_checks_ok() {
        assert!(Ctxt::new().check().is_ok());
    }

    #[test]
    fn a_combined_syn_error_is_one_error_per_message() {
        let mut e = syn::Error::new(Span::call_site(), "one");
        e.combine(syn::Error::new(Span::call_site(), "two"));
        let mut cx = Ctxt::new();
        cx.push_syn(e);
        assert_eq!(cx.len(), 2);
        assert_eq!(
            cx.check().unwrap_err().to_compile_error(Span::call_site()).to_string().matches("compile_error").count(),
            2
        );
    }

    #[test]
    fn an_error_over_several_tokens_keeps_its_range() {
        // rustc underlines from the first token's span to the last's: both must survive.
        let arg: syn::FnArg = syn::parse_str("stride: i32").unwrap();
        let original = syn::Error::new_spanned(&arg, "remove `stride`");
        let mut cx = Ctxt::new();
        cx.push_syn(original.clone());
        let through = cx.check().unwrap_err().to_compile_error(Span::call_site());
        let spans = |tokens: proc_macro2::TokenStream| -> Vec<_> {
            tokens.into_iter().map(|t| (t.span().start(), t.span().end())).collect()
        };
        assert_eq!(spans(through), spans(original.to_compile_error()));
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "dropped without check()")]
    fn dropping_unchecked_panics() {
        let mut cx = Ctxt::new();
        cx.push(0..1, "lost");
    }
}
