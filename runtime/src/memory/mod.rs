//! Memory: the element types copied as raw bytes, device buffers and their views, mapped pinned
//! host memory, staged transfers, the slot bus, [`Device`](crate::Device), whose one `impl`
//! allocates and moves data, and SM splits into green contexts ([`SmSplit`](crate::SmSplit)).

pub(crate) mod arena;
pub(crate) mod buffer;
pub(crate) mod device;
pub(crate) mod green;
pub mod layout;
pub(crate) mod mapped;
pub(crate) mod pinned;
pub(crate) mod pod;
pub(crate) mod slot_bus;
pub(crate) mod transfer;
pub(crate) mod vector;
