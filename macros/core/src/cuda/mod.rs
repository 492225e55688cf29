//! The CUDA source reader: a small tokenizer for `.cu` text ([`lex`]) and the kernel signature
//! reader on top of it ([`signature`]). No preprocessor and no compiler: what cannot be read
//! for certain is reported, never guessed.

pub mod cpp;
pub mod enums;
#[doc(hidden)]
pub mod lex;
pub mod preprocessed;
pub mod signature;
pub mod structs;
pub mod types;
