//! The front end shared by both generators: the typed [`model`] of `#[kernel]` declarations
//! (with spans, its integer [`expr`]essions and launch-time [`condition`]s) and their [`extent`]s
//! (`x: &[f32; n]`) and [`requires`] conditions, their [`parse`]r (declared types in `types`), the `#[kernels] mod` parser (`registry`), the [`source`]
//! reader that finds declarations in a Rust file (for graph specs), and the [`naming`] and
//! [`text`] rules every later stage uses (handle and struct names, signatures in messages).
//!
//! Nothing here reads a `.cu` file or generates code.

pub mod condition;
pub mod expr;
pub mod extent;
pub mod model;
pub mod naming;
pub mod parse;
pub(crate) mod promise;
pub(crate) mod registry;
pub mod requires;
pub mod source;
pub mod text;
pub(crate) mod types;
