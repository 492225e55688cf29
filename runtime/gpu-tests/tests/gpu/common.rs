//! Helpers shared by the runtime's GPU test modules.

use kgraph::Device;

/// Device 0; GPU tests only run where one exists (they are `#[ignore]`d elsewhere).
pub fn device() -> Device {
    Device::new(0).unwrap_or_else(|e| panic!("GPU test needs a CUDA device: {e}"))
}
