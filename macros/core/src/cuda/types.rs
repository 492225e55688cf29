//! C types: [`CuBase`] and the struct layout model ([`CStruct`]), then C type names: CUDA's built-in types kgraph has a Rust twin of (`__half`, `float4`,
//! `cudaTextureObject_t`, ...), and the types a `.cu` file defines itself: `typedef` and
//! `using` aliases, `enum`s (by their underlying type) and `struct`s (laid out in
//! [`super::structs`]). Built-in names win over definitions, so a preprocessed file (where
//! `float4` and `__half` are structs of the CUDA headers) reads the same as the source.
//!
//! The model is in `model`, the names in `names`, the file's definitions in `env` (alignment
//! attributes in `attributes`, token helpers in `tokens`); everything is re-exported here.

mod attributes;
mod env;
mod model;
mod names;
mod tokens;

pub(crate) use attributes::{attribute_align, parse_int};
pub(crate) use env::Def;
pub use env::TypeEnv;
pub use model::{CField, CFieldType, CStruct, CuBase};
pub(crate) use names::{builtin, hint_for, is_type_word, word_type};
pub(crate) use tokens::{matching, split_top, text_of};
