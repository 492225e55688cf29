//! The `#[kernel]` binding, in the style of serde_derive: the declaration (parsed by
//! [`crate::syntax`]) is checked against the kernel's signature read from its `.cu`
//! ([`crate::cuda`]), every mismatch a spanned error (`check`, parameter names in `names`),
//! its extents checked
//! (`extent_rules`) and its launch-time requirements (`requires_rules`), then the handle struct
//! is generated over cudarc's `launch_builder` (`emit`, with the checks of a checked launch from
//! `guard` and `requires_emit`; both only read the checked model).
//! [`expand`] runs it for the two attribute macros; [`config`] says where `.cu` files are found.
//! For tools: [`source_check`] checks a whole Rust file's declarations as the macros would, and
//! [`declare`] writes the declaration that binds each kernel of a `.cu` file.

mod abi;
mod block_bound;
mod c_types;
mod check;
pub mod config;
pub mod declare;
mod declare_line;
mod declare_record;
mod device_fn;
mod docs;
mod emit;
mod emit_registry;
pub mod expand;
mod extent_rules;
pub(crate) mod guard;
mod launch_checks;
mod layout;
mod names;
mod param_error;
mod raw_handles;
mod record_check;
mod requires_emit;
mod requires_rules;
mod resolve;
pub mod source_check;
