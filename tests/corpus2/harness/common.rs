//! Helpers shared by the corpus2 harness modules: the device, launch shapes, buffers of exactly
//! a declared extent (filled with a poison value, so an element the kernel should not touch is
//! seen untouched), and the check that a grid one larger than the buffers is refused.
#![allow(dead_code)]

use kgraph::{Device, DeviceBuffer, DeviceValue, Error, LaunchConfig, LaunchError, Pod};

/// The GPU suite's helpers (one copy of the pseudo-random generator).
#[path = "../../gpu/common.rs"]
mod gpu_common;
pub use gpu_common::random;

/// Device 0; the tests only run where one exists (they are `#[ignore]`d elsewhere).
pub fn device() -> Device {
    Device::new(0).unwrap_or_else(|e| panic!("corpus2 GPU test needs a CUDA device: {e}"))
}

/// A launch shape as MANIFEST.toml writes it: `grid=(x,y,z) block=(x,y,z)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    pub grid: (u32, u32, u32),
    pub block: (u32, u32, u32),
}

impl Shape {
    /// A one-dimensional grid of `grid` blocks of `block` threads.
    pub const fn x(grid: u32, block: u32) -> Self {
        Shape { grid: (grid, 1, 1), block: (block, 1, 1) }
    }

    /// The launch with no dynamic shared memory.
    pub fn cfg(self) -> LaunchConfig {
        self.cfg_shared(0)
    }

    /// The launch with `shared` bytes of dynamic shared memory.
    pub fn cfg_shared(self, shared: u32) -> LaunchConfig {
        LaunchConfig { grid_dim: self.grid, block_dim: self.block, shared_mem_bytes: shared }
    }

    /// The same block with one more block in x: the grid the extent check must refuse.
    pub fn one_more_block(self) -> Self {
        Shape { grid: (self.grid.0 + 1, self.grid.1, self.grid.2), ..self }
    }

    /// `grid.x` as the kernels copy it (into `usize` for host indexing).
    pub fn gx(self) -> usize {
        self.grid.0 as usize
    }

    /// `block.x` as a host index.
    pub fn bx(self) -> usize {
        self.block.0 as usize
    }
}

/// A buffer of exactly `len` elements, every one `value` (the poison an untouched element keeps).
pub fn filled<T: DeviceValue + Copy>(dev: &Device, len: usize, value: T) -> DeviceBuffer<T> {
    dev.upload(&vec![value; len]).unwrap_or_else(|e| panic!("upload of {len} elements: {e}"))
}

/// A buffer holding exactly `host`.
pub fn upload<T: DeviceValue>(dev: &Device, host: &[T]) -> DeviceBuffer<T> {
    dev.upload(host).unwrap_or_else(|e| panic!("upload of {} elements: {e}", host.len()))
}

/// The buffer's contents (after the stream's work so far).
pub fn download<T: Pod>(dev: &Device, buf: &DeviceBuffer<T>) -> Vec<T> {
    dev.download(buf).unwrap_or_else(|e| panic!("download: {e}"))
}

/// `0, 1, 2, ...` as `f32` (exact up to 2^24).
pub fn iota_f32(len: usize) -> Vec<f32> {
    (0..len).map(|i| i as f32).collect()
}

/// `0, 1, 2, ...` as `i32`.
pub fn iota_i32(len: usize) -> Vec<i32> {
    (0..len).map(|i| i as i32).collect()
}

/// The bit patterns of `v`, for bit-for-bit comparisons that treat NaN like any other value.
pub fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// Asserts `r` is the checked launch's refusal of `param` of `kernel` for its extent, naming the
/// `required` element count, with the buffer of `actual` elements.
pub fn assert_extent_refused(r: Result<(), Error>, kernel: &str, param: &str, required: u64, actual: usize) {
    match r {
        Err(Error::Launch(LaunchError::Extent { kernel: k, param: p, required: req, actual: act }))
            if k == kernel && p == param =>
        {
            assert_eq!((req, act), (required, actual), "{kernel}: extent of `{param}` (required, actual)");
        }
        other => panic!("{kernel}: expected LaunchError::Extent for `{param}`, got {other:?}"),
    }
}

/// Asserts `r` is the checked launch's refusal of `kernel` because its requirement `condition`
/// (as the declaration writes it) is false for the launch.
pub fn assert_requirement_refused(r: Result<(), Error>, kernel: &str, condition: &str) {
    match r {
        Err(Error::Launch(LaunchError::Requirement { kernel: k, condition: c, .. }))
            if k == kernel && c == condition => {}
        other => panic!("{kernel}: expected LaunchError::Requirement for `{condition}`, got {other:?}"),
    }
}
