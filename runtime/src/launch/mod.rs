//! Launching a kernel: its module loaded once per context, the argument traits and pinned
//! pointers a typed launch takes, the checks a launch runs first (extents, stream, context,
//! block, PDL, dynamic shared memory) and the launch with attributes.

pub(crate) mod args;
pub(crate) mod config;
pub mod extent;
pub(crate) mod image;
pub(crate) mod module;
pub(crate) mod module_registry;
pub(crate) mod pinned_ptr;
pub mod reload;
pub mod requires;
