//! Derive macros: `#[derive(kgraph::DeviceStruct)]` ([`device_struct`]).

pub mod device_struct;
