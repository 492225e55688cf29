//! The graph spec as written: its TOML read ([`read()`]) into a raw, spanned model ([`raw`]:
//! structure only, which keys exist and their TOML types), with the error reporting ([`diag`])
//! and the integer expressions over dims ([`expr`]) the later checks use. Names, dtypes, roles
//! and expression values are judged in [`super::check`].

pub mod diag;
pub mod expr;
pub mod include;
pub mod raw;
mod read;

pub use raw::*;
pub use read::read;
