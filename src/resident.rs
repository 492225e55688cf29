//! Graph A fused as a resident kernel: [`PerceptionResident`] keeps one block of
//! `kernels/perception_resident.cu` on the GPU, which runs Graph A's whole step
//! (`perception_fused_row`, the device function of [`crate::graphs::PerceptionFused`]'s kernel)
//! once per doorbell in mapped pinned memory: no launch and no stream synchronize per step.
//!
//! ```no_run
//! use kgraph_model::graphs::ModelWeights;
//! use kgraph_model::resident::{PerceptionIn, PerceptionResident};
//! # fn main() -> kgraph::Result<()> {
//! let dev = kgraph::Device::new(0)?;
//! let mut r = PerceptionResident::new(&dev, &ModelWeights::init(7), Default::default())?;
//! let out = r.step(&PerceptionIn { snap: [1.0; 40], dt: 0.1 })?; // write, doorbell, spin, read
//! println!("{:?}", out.probs);
//! # Ok(()) }
//! ```

use kgraph::cudarc::driver::{DeviceRepr, ValidAsZeroBits};
use kgraph::resident::{Resident, ResidentOptions};
use kgraph::{Device, DeviceBuffer, DeviceIn, Result};

use crate::graphs::{ModelWeights, PerceptionFused};
use crate::model::{N_HORIZONS, N_PROJ, SNAP_LEN};

/// One step's input: the snapshot and its elapsed time (`PerceptionStep::In` of the `.cu`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PerceptionIn {
    /// The MBP-10 snapshot (`bid_px[10], bid_sz[10], ask_px[10], ask_sz[10]`).
    pub snap: [f32; SNAP_LEN],
    /// Elapsed time since the previous snapshot.
    pub dt: f32,
}

/// One step's output (`PerceptionStep::Out` of the `.cu`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PerceptionOut {
    /// Probability of an up-move per horizon.
    pub probs: [f32; N_HORIZONS],
    /// The projection of the new state.
    pub y: [f32; N_PROJ],
}

// SAFETY (the three impls of each): repr(C) structs of f32 arrays, no padding (41 and 13 f32s,
// align 4, asserted below), every bit pattern and all-zero bytes valid; the kernel side declares
// the same layouts (PerceptionStep::In / Out, sizes asserted there too).
unsafe impl DeviceRepr for PerceptionIn {}
unsafe impl ValidAsZeroBits for PerceptionIn {}
unsafe impl kgraph::Pod for PerceptionIn {}
unsafe impl DeviceRepr for PerceptionOut {}
unsafe impl ValidAsZeroBits for PerceptionOut {}
unsafe impl kgraph::Pod for PerceptionOut {}

/// The body's parameters (`PerceptionStep::Params` of the `.cu`): device addresses into
/// [`PerceptionBuffers`], and `n_hid`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
struct PerceptionParams {
    h: u64,
    w_g: u64,
    b_g: u64,
    w_t: u64,
    b_t: u64,
    w_h: u64,
    b_h: u64,
    p: u64,
    c: u64,
    n_hid: i32,
    _pad: i32,
}

const _: () = assert!(std::mem::size_of::<PerceptionIn>() == 41 * 4);
const _: () = assert!(std::mem::size_of::<PerceptionOut>() == 13 * 4);
const _: () = assert!(std::mem::size_of::<PerceptionParams>() == 80);

/// The device memory the resident kernel reads and writes: the carried state and the weights.
pub struct PerceptionBuffers {
    /// The CfC state, updated in place by every step.
    pub h: DeviceBuffer<f32>,
    w_g: DeviceBuffer<f32>,
    b_g: DeviceBuffer<f32>,
    w_t: DeviceBuffer<f32>,
    b_t: DeviceBuffer<f32>,
    w_h: DeviceBuffer<f32>,
    b_h: DeviceBuffer<f32>,
    p: DeviceBuffer<f32>,
    c: DeviceBuffer<f32>,
}

/// The code of `kernels/perception_resident.cu`, as the build compiled it.
// SAFETY: the image is the cubin kgraph-build compiled from this file (or empty for the NVRTC
// fallback), the text is the file, the include folder its headers' folder; no `#[kernel]`
// handle uses this value (the function is launched by `Resident`, whose contract it meets).
const SOURCE: kgraph::expert::KernelSource = unsafe {
    kgraph::expert::KernelSource::new(
        "kernels/perception_resident.cu",
        include_bytes!(concat!(env!("OUT_DIR"), "/kgraph/perception_resident.cubin")),
        include_str!("../kernels/perception_resident.cu"),
        concat!(env!("CARGO_MANIFEST_DIR"), "/kernels"),
    )
};

/// The threads of the resident block (one warp per hidden unit at `n_hid = 32`, as the fused
/// graph's kernel).
const BLOCK: u32 = crate::model::launch::FUSED_BLOCK;

/// Graph A fused as a resident kernel at B = 1 (see the module docs): [`Self::submit`] /
/// [`Self::wait`] / [`Self::step`], the state `h` carried from step to step on the device, and
/// the kernel stopped (and waited for) on drop.
pub struct PerceptionResident {
    inner: Resident<PerceptionIn, PerceptionOut, PerceptionParams, PerceptionBuffers>,
}

impl PerceptionResident {
    /// Uploads `weights` and a zero state; the kernel starts with the first submit.
    pub fn new(device: &Device, weights: &ModelWeights, options: ResidentOptions) -> Result<Self> {
        let n_hid = PerceptionFused::N_HID;
        let bufs = PerceptionBuffers {
            h: device.alloc_zeros(n_hid)?,
            w_g: device.upload(&weights.w_g)?,
            b_g: device.upload(&weights.b_g)?,
            w_t: device.upload(&weights.w_t)?,
            b_t: device.upload(&weights.b_t)?,
            w_h: device.upload(&weights.w_h)?,
            b_h: device.upload(&weights.b_h)?,
            p: device.upload(&weights.p)?,
            c: device.upload(&weights.c)?,
        };
        check_lengths(&bufs)?;
        // The uploads ran on the device stream; the resident kernel runs on a stream of its own.
        device.synchronize()?;
        let params = PerceptionParams {
            h: bufs.h.device_addr(),
            w_g: bufs.w_g.device_addr(),
            b_g: bufs.b_g.device_addr(),
            w_t: bufs.w_t.device_addr(),
            b_t: bufs.b_t.device_addr(),
            w_h: bufs.w_h.device_addr(),
            b_h: bufs.b_h.device_addr(),
            p: bufs.p.device_addr(),
            c: bufs.c.device_addr(),
            n_hid: n_hid as i32,
            _pad: 0,
        };
        let function = kgraph::expert::ModuleCache::new(device.context()).kernel_function(
            &SOURCE,
            "perception_resident",
            "perception_resident",
            &[8, 8, 8, std::mem::size_of::<PerceptionParams>() as u32],
        )?;
        // SAFETY: `perception_resident` takes (KgResidentBell*, const KgResidentPair*,
        // KgResidentPair*, Params) and runs kg_resident_loop<PerceptionStep> only;
        // PerceptionIn/Out/Params have the layouts of PerceptionStep::In/Out/Params (f32
        // arrays without padding, 41 and 13 words; nine 8-byte addresses and an int padded to
        // 80 bytes; the sizes are asserted on both sides). Every address in `params` is the
        // start of a buffer of `bufs` (moved into the Resident, never handed out while it runs)
        // with the length the fused kernel's extents require at batch 1 and n_hid =
        // PerceptionFused::N_HID (`check_lengths`); the body (perception_fused_row) writes only
        // `h`, `probs` and `y`, returns, and fits one block of 1024 threads (32 warps).
        let inner =
            unsafe { Resident::new("PerceptionResident", device, function, (BLOCK, 1, 1), params, bufs, options) }?;
        Ok(PerceptionResident { inner })
    }

    /// Writes one step's input and rings the doorbell (waiting first for a step still in flight).
    pub fn submit(&mut self, input: &PerceptionIn) -> Result<()> {
        self.inner.submit(input)
    }

    /// Waits for the step submitted last and returns its output.
    pub fn wait(&mut self) -> Result<PerceptionOut> {
        self.inner.wait()
    }

    /// [`Self::submit`] then [`Self::wait`].
    pub fn step(&mut self, input: &PerceptionIn) -> Result<PerceptionOut> {
        self.inner.step(input)
    }

    /// Stops the kernel (see `kgraph::resident::Resident::stop`); the state can then be read
    /// with [`Self::download_h`].
    pub fn stop(&mut self) -> Result<()> {
        self.inner.stop()
    }

    /// The state `h` after [`Self::stop`]: `None` while the kernel may still run.
    pub fn download_h(&self, device: &Device) -> Option<Result<Vec<f32>>> {
        self.inner.body().map(|b| device.download(&b.h))
    }
}

/// Every buffer holds what the fused kernel's extents require at batch 1.
fn check_lengths(b: &PerceptionBuffers) -> Result<()> {
    let want = [
        ("h", &b.h, PerceptionFused::H_LEN),
        ("w_g", &b.w_g, PerceptionFused::W_G_LEN),
        ("b_g", &b.b_g, PerceptionFused::B_G_LEN),
        ("w_t", &b.w_t, PerceptionFused::W_T_LEN),
        ("b_t", &b.b_t, PerceptionFused::B_T_LEN),
        ("w_h", &b.w_h, PerceptionFused::W_H_LEN),
        ("b_h", &b.b_h, PerceptionFused::B_H_LEN),
        ("p", &b.p, PerceptionFused::P_LEN),
        ("c", &b.c, PerceptionFused::C_LEN),
    ];
    for (name, buf, len) in want {
        if buf.elem_len() != len {
            return Err(kgraph::Error::Memory(kgraph::MemoryError::LengthMismatch {
                what: format!("PerceptionResident::new: weights `{name}`"),
                expected: len,
                actual: buf.elem_len(),
            }));
        }
    }
    Ok(())
}
