//! Waiting without a launch or a stream synchronize: a persistent kernel that takes one step
//! per doorbell ([`Resident`], device side `kg_resident.cuh`), and the done-word wait of a
//! graph struct's replays ([`DoneWait`]). Both rest on words of mapped pinned memory the host
//! spins on with a bounded back-off ([`SpinPolicy`]), asking the stream without blocking
//! whether a fault ended the work, so a wait ends in the answer, a device fault
//! ([`crate::Error::Driver`]) or a timeout ([`crate::WaitError::Timeout`]), never a hang.
//!
//! `docs/resident.md` has the design, the measurements to make and what is not done;
//! `docs/safety.md` ("Resident kernels") the soundness argument.

pub(crate) mod bell;
mod done_word;
mod executor;
mod grid;
mod pairs;
mod spin;

pub use done_word::DoneWait;
pub use executor::{Resident, ResidentOptions};
pub use grid::GridShape;
pub use spin::SpinPolicy;

/// The device side of [`Resident`]: `kg_resident_loop<Body>` and the doorbell layout. Include it
/// from the `.cu` that instantiates the loop (copy it next to your kernels, or include it by
/// path: kgraph's reference model includes `kgraph-record/src/cuda/kg_resident.cuh`).
pub const HEADER: &str = kgraph_record::cuda::RESIDENT_HEADER;

/// The device side of [`Resident::new_grid`]: `kg_resident_grid_loop<Body>`, the grid-wide loop
/// for steps spread over a cooperative grid (it includes `kg_resident.cuh`: keep the two
/// files side by side).
pub const GRID_HEADER: &str = kgraph_record::cuda::RESIDENT_GRID_HEADER;
