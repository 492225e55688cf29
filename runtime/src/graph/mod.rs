//! CUDA graphs: stream capture and replay ([`Graph`](crate::Graph)), explicit construction and
//! in-place updates, conditional nodes' control kernels, one entry point that launches eagerly
//! or adds a node ([`issue_kernel`](crate::issue_kernel)), per-node profiles and tuning.

pub(crate) mod build;
pub(crate) mod capture;
pub(crate) mod captured;
pub mod control;
pub(crate) mod issue;
pub(crate) mod profile;
pub mod tune;
pub(crate) mod update;
