//! The `#[kernel]` binding, in the style of serde_derive: the declaration (parsed by
//! [`crate::syntax`]) is checked against the kernel's signature read from its `.cu`
//! ([`crate::cuda`]), every mismatch a spanned error (`check`), then the handle struct is
//! generated over cudarc's `launch_builder` (`emit`, which only reads the checked model).
//! [`expand`] runs it for the two attribute macros; [`config`] says where `.cu` files are found.

mod check;
pub mod config;
mod emit;
pub mod expand;
