//! Runtime: transfers through mapped pinned staging, pinned slots, the slot bus, graphs
//! (`graph` submodule) and SM splits into green contexts (`green`). Kernels are in
//! `kernels/test_runtime.cu` (and `test_green.cu`), launched through cudarc's `launch_builder`
//! directly so these tests stand on the runtime alone.

mod graph;
mod green;

use std::sync::Arc;

use kgraph::cudarc::driver::{CudaFunction, CudaStream, DeviceRepr, PushKernelArg, ValidAsZeroBits};
use kgraph::expert::{KernelSource, ModuleCache};
use kgraph::{
    Device, DeviceBuffer, DeviceIn, DeviceOut, Error, LaunchConfig, MappedBuffer, PinnedMutPtr, PinnedPtr, Stream,
};
use kgraph::{MemoryError, PinnedSlot, Pod, Result, SlotBus};

// SAFETY: the image is the one kgraph-build compiled from this file; it is only loaded by hand
// (`ModuleCache::function`) and launched through cudarc's unsafe launch, no declared handle.
const TEST_RUNTIME: KernelSource = unsafe {
    KernelSource::new(
        "kernels/test_runtime.cu",
        include_bytes!(concat!(env!("OUT_DIR"), "/kgraph/test_runtime.cubin")),
        include_str!("../../kernels/test_runtime.cu"),
        concat!(env!("CARGO_MANIFEST_DIR"), "/kernels"),
    )
};

/// The kernels of `kernels/test_runtime.cu`, with typed launchers.
pub(crate) struct TestKernels {
    read_slot_u64: CudaFunction,
    copy_one_f32: CudaFunction,
    affine_f32: CudaFunction,
    mix_f32: CudaFunction,
    iota_u32: CudaFunction,
    spin_then_fill_f32: CudaFunction,
    spin_then_copy_f32: CudaFunction,
}

fn launch_error(kernel: &'static str) -> impl Fn(kgraph::cudarc::driver::DriverError) -> Error {
    move |source| Error::LaunchFailed { kernel, source }
}

/// cudarc's stream under `s`, for the hand-written launches below.
fn raw(s: &Stream) -> &Arc<CudaStream> {
    // SAFETY: the launches below issue on `s` only, with arguments the callers order on it (the
    // tests that pass another stream's memory check the refusal before launching).
    unsafe { s.cuda() }
}

fn grid(n: usize) -> LaunchConfig {
    LaunchConfig::for_num_elems(u32::try_from(n).expect("test sizes fit in u32"))
}

impl TestKernels {
    pub(crate) fn load(dev: &Device) -> Self {
        let mut cache = ModuleCache::new(dev.context());
        let mut f = |name| cache.function(&TEST_RUNTIME, name).unwrap_or_else(|e| panic!("{e}"));
        TestKernels {
            read_slot_u64: f("rt_read_slot_u64"),
            copy_one_f32: f("rt_copy_one_f32"),
            affine_f32: f("rt_affine_f32"),
            mix_f32: f("rt_mix_f32"),
            iota_u32: f("rt_iota_u32"),
            spin_then_fill_f32: f("rt_spin_then_fill_f32"),
            spin_then_copy_f32: f("rt_spin_then_copy_f32"),
        }
    }

    /// `out[idx] = *slot`.
    fn read_slot(&self, s: &Stream, slot: PinnedPtr<u64>, out: &mut DeviceBuffer<u64>, idx: usize) -> Result<()> {
        assert!(idx < out.len());
        let idx = idx as i32;
        let mut l = raw(s).launch_builder(&self.read_slot_u64);
        let (slot, out) = (slot.addr(), out.device_addr());
        l.arg(&slot).arg(&out).arg(&idx);
        // SAFETY: matches rt_read_slot_u64(const unsigned long long*, unsigned long long*, int);
        // the slot holds one u64 and idx < out.len().
        unsafe { l.launch(LaunchConfig::for_num_elems(1)) }.map(drop).map_err(launch_error("rt_read_slot_u64"))
    }

    /// `dst[dst_idx] = src[src_idx]`, `src` given as a raw device address (device or pinned).
    fn copy_one(
        &self,
        s: &Stream,
        src: u64,
        src_idx: usize,
        dst: &mut DeviceBuffer<f32>,
        dst_idx: usize,
    ) -> Result<()> {
        assert!(dst_idx < dst.len());
        let (si, di) = (src_idx as i32, dst_idx as i32);
        let mut l = raw(s).launch_builder(&self.copy_one_f32);
        let dst = dst.device_addr();
        l.arg(&src).arg(&si).arg(&dst).arg(&di);
        // SAFETY: matches rt_copy_one_f32(const float*, int, float*, int); callers pass a source
        // address holding more than src_idx floats; dst_idx < dst.len().
        unsafe { l.launch(LaunchConfig::for_num_elems(1)) }.map(drop).map_err(launch_error("rt_copy_one_f32"))
    }

    /// `x = a * x + b` in place.
    pub(crate) fn affine(&self, s: &Stream, x: &mut impl DeviceOut<f32>, a: f32, b: f32) -> Result<()> {
        let n = x.elem_len() as i32;
        let cfg = grid(x.elem_len());
        let mut l = raw(s).launch_builder(&self.affine_f32);
        let x = x.device_addr();
        l.arg(&x).arg(&n).arg(&a).arg(&b);
        // SAFETY: matches rt_affine_f32(float*, int, float, float); x holds n floats.
        unsafe { l.launch(cfg) }.map(drop).map_err(launch_error("rt_affine_f32"))
    }

    /// `z[i] = x[i] * y[(i + 1) % n] + sin(x[i])`.
    pub(crate) fn mix(
        &self,
        s: &Stream,
        x: &DeviceBuffer<f32>,
        y: &DeviceBuffer<f32>,
        z: &mut DeviceBuffer<f32>,
    ) -> Result<()> {
        assert!(x.len() == y.len() && y.len() == z.len());
        let n = x.len() as i32;
        let cfg = grid(x.len());
        let mut l = raw(s).launch_builder(&self.mix_f32);
        let (x, y, z) = (x.device_addr(), y.device_addr(), z.device_addr());
        l.arg(&x).arg(&y).arg(&z).arg(&n);
        // SAFETY: matches rt_mix_f32(const float*, const float*, float*, int); all hold n floats.
        unsafe { l.launch(cfg) }.map(drop).map_err(launch_error("rt_mix_f32"))
    }

    /// `out[i] = base + i`.
    pub(crate) fn iota(&self, s: &Stream, out: &mut impl DeviceOut<u32>, base: u32) -> Result<()> {
        let n = out.elem_len() as i32;
        let cfg = grid(out.elem_len());
        let mut l = raw(s).launch_builder(&self.iota_u32);
        let out = out.device_addr();
        l.arg(&out).arg(&n).arg(&base);
        // SAFETY: matches rt_iota_u32(unsigned*, int, unsigned); out holds n elements.
        unsafe { l.launch(cfg) }.map(drop).map_err(launch_error("rt_iota_u32"))
    }

    /// Spins `cycles` clock cycles, then `out[i] = v` for `i < n`, writing mapped host memory.
    pub(crate) fn spin_then_fill(
        &self,
        s: &Stream,
        out: PinnedMutPtr<'_, f32>,
        n: usize,
        v: f32,
        cycles: i64,
    ) -> Result<()> {
        let n_i = n as i32;
        let mut l = raw(s).launch_builder(&self.spin_then_fill_f32);
        l.arg(&out).arg(&n_i).arg(&v).arg(&cycles);
        // SAFETY: matches rt_spin_then_fill_f32(float*, int, float, long long); callers pass a
        // buffer of at least n floats, which its `Drop` and host views keep alive and unread
        // (except volatile) until the kernel has finished.
        unsafe { l.launch(grid(n)) }.map(drop).map_err(launch_error("rt_spin_then_fill_f32"))
    }

    /// Spins `cycles` clock cycles, then `dst[i] = src[i]`, reading mapped host memory.
    pub(crate) fn spin_then_copy(
        &self,
        s: &Stream,
        src: PinnedPtr<'_, f32>,
        dst: &mut DeviceBuffer<f32>,
        cycles: i64,
    ) -> Result<()> {
        let n = dst.len();
        let n_i = n as i32;
        let mut l = raw(s).launch_builder(&self.spin_then_copy_f32);
        let dst = dst.device_addr();
        l.arg(&src).arg(&dst).arg(&n_i).arg(&cycles);
        // SAFETY: matches rt_spin_then_copy_f32(const float*, float*, int, long long); callers
        // pass a source of at least dst.len() floats, kept alive by its `Drop`'s wait.
        unsafe { l.launch(grid(n)) }.map(drop).map_err(launch_error("rt_spin_then_copy_f32"))
    }
}

/// SplitMix64: a deterministic stream of well-mixed 64-bit words.
pub(crate) fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// `len` values of `T` whose bytes are pseudo-random (every byte value occurs).
fn random_values<T: Pod>(len: usize, seed: u64) -> Vec<T> {
    let mut state = seed;
    let bytes: Vec<u8> = (0..len * std::mem::size_of::<T>()).map(|_| splitmix(&mut state) as u8).collect();
    // SAFETY: all-zero bytes are a valid `T` (`Pod: ValidAsZeroBits`).
    let mut out: Vec<T> = vec![unsafe { std::mem::zeroed() }; len];
    // SAFETY: `out` holds exactly `bytes.len()` bytes; any bytes are a valid `T` (`Pod`).
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), out.as_mut_ptr().cast::<u8>(), bytes.len()) };
    out
}

/// The bytes of a slice of padding-free `Pod` values (every type used here has no padding).
fn bytes_of<T: Pod>(values: &[T]) -> &[u8] {
    // SAFETY: the types tested have no padding, so all `size_of_val` bytes are initialised.
    unsafe { std::slice::from_raw_parts(values.as_ptr().cast::<u8>(), std::mem::size_of_val(values)) }
}

/// Asserts two slices are bitwise identical, naming the first differing element.
pub(crate) fn assert_same_bits<T: Pod>(what: &str, got: &[T], want: &[T]) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    let size = std::mem::size_of::<T>().max(1);
    if let Some(i) = bytes_of(got).iter().zip(bytes_of(want)).position(|(a, b)| a != b) {
        panic!("{what}: element {} differs (byte {i})", i / size);
    }
}

/// A `#[repr(C)]` user struct without padding: 8 + 4 + 2 + 2 = 16 bytes, align 8.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
struct Record {
    a: f64,
    b: u32,
    c: i16,
    d: [u8; 2],
}
const _: () = assert!(std::mem::size_of::<Record>() == 16);
// SAFETY: repr(C) of plain numbers with no padding (checked above).
unsafe impl DeviceRepr for Record {}
// SAFETY: all-zero bytes are a valid Record.
unsafe impl ValidAsZeroBits for Record {}
// SAFETY: every bit pattern of each field is valid and there is no padding.
unsafe impl Pod for Record {}

const LENS: [usize; 5] = [0, 1, 3, 1000, 1 << 20];

/// upload -> download and upload_into -> download_into are the identity, bit for bit.
fn check_round_trip<T: Pod>(dev: &Device, name: &str, special: &[T]) {
    for (k, &len) in LENS.iter().enumerate() {
        let mut data = random_values::<T>(len, 0xC0FFEE + k as u64);
        for (slot, v) in data.iter_mut().zip(special) {
            *slot = *v;
        }
        let what = format!("{name} x {len}");
        let on_device = dev.upload(&data).unwrap_or_else(|e| panic!("{what}: upload: {e}"));
        assert_eq!(on_device.len(), len, "{what}: device length");
        let back = dev.download(&on_device).unwrap_or_else(|e| panic!("{what}: download: {e}"));
        assert_same_bits(&format!("{what}: upload/download"), &back, &data);

        let mut target = dev.alloc_zeros::<T>(len).unwrap();
        dev.upload_into(&data, &mut target).unwrap();
        // SAFETY: all-zero bytes are a valid `T`.
        let mut host = vec![unsafe { std::mem::zeroed::<T>() }; len];
        dev.download_into(&target, &mut host).unwrap();
        assert_same_bits(&format!("{what}: upload_into/download_into"), &host, &data);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn round_trip_is_identity_for_all_lengths_and_types() {
    let dev = super::common::device();
    // NaN payloads (quiet and signalling), both zeros, infinities, subnormals, extremes.
    let f32_special: Vec<f32> = [
        0x7fc0_0001u32,
        0x7f80_0001,
        0xffc1_2345,
        0xff80_0fff,
        0x8000_0000,
        0x0000_0000,
        0x7f80_0000,
        0xff80_0000,
        0x0000_0001,
        0x807f_ffff,
        0x7f7f_ffff,
    ]
    .into_iter()
    .map(f32::from_bits)
    .collect();
    check_round_trip::<f32>(&dev, "f32", &f32_special);
    check_round_trip::<i32>(&dev, "i32", &[i32::MIN, -1, 0, i32::MAX]);
    check_round_trip::<u8>(&dev, "u8", &[0, 0xff, 0x80, 0x7f]);
    let nan_record = Record { a: f64::from_bits(0x7ff0_dead_beef_0001), b: u32::MAX, c: i16::MIN, d: [0xff, 0] };
    check_round_trip::<Record>(&dev, "Record", &[nan_record]);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn back_to_back_uploads_reuse_and_grow_staging_without_clobbering() {
    let dev = super::common::device();
    // Growing sizes force staging reallocation; no sync between uploads, so a staging buffer
    // overwritten before its copy ran would corrupt an earlier block.
    let blocks: Vec<Vec<u32>> = (0..12).map(|k| random_values::<u32>(1000 + k * 37_000, 77 + k as u64)).collect();
    let on_device: Vec<DeviceBuffer<u32>> = blocks.iter().map(|b| dev.upload(b).unwrap()).collect();
    for (k, (block, d)) in blocks.iter().zip(&on_device).enumerate() {
        assert_same_bits(&format!("block {k}"), &dev.download(d).unwrap(), block);
    }
    // Shrinking again and releasing staging keeps working.
    dev.release_staging().unwrap();
    let small = random_values::<u32>(5, 9);
    assert_same_bits("after release_staging", &dev.download(&dev.upload(&small).unwrap()).unwrap(), &small);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn buffer_views_cover_exactly_their_range_and_past_the_end_is_refused() {
    let dev = super::common::device();
    const N: usize = 1000;
    let values: Vec<u32> = (0..N as u32).collect();
    let mut buf = dev.upload(&values).unwrap();
    assert_eq!((buf.len(), buf.stream()), (N, dev.stream()), "a buffer is owned by the device stream");
    assert_eq!(dev.download(&buf.slice(10..20).unwrap()).unwrap(), values[10..20]);
    assert_eq!(dev.download(&buf.slice(990..).unwrap()).unwrap(), values[990..]);
    let view = buf.slice(100..200).unwrap();
    assert_eq!(dev.download(&view.slice(5..=6).unwrap()).unwrap(), [105, 106], "a view of a view");
    assert!(matches!(view.slice(50..101), Err(Error::Memory(MemoryError::OutOfRange { index: 101, len: 100, .. }))));
    // A write through a writable view lands in its range and nowhere else.
    dev.upload_into(&[7, 7, 7], &mut buf.slice_mut(500..503).unwrap()).unwrap();
    let (lo, hi) = buf.split_at_mut(500).unwrap();
    assert_eq!((lo.len(), hi.len()), (500, 500));
    assert_eq!(dev.download(&hi.slice(0..4).unwrap()).unwrap(), [7, 7, 7, 503]);
    assert_eq!(dev.download(&lo.slice(497..).unwrap()).unwrap(), [497, 498, 499]);
    let after = dev.download(&buf).unwrap();
    assert!(after.iter().enumerate().all(|(i, &v)| v == if (500..503).contains(&i) { 7 } else { i as u32 }));
    // Past the end: a typed error, nothing touched.
    for refused in [buf.slice(0..N + 1).map(drop), buf.slice(N + 1..).map(drop), buf.slice_mut(999..=1000).map(drop)] {
        assert!(matches!(refused, Err(Error::Memory(MemoryError::OutOfRange { len: N, .. }))), "{refused:?}");
    }
    assert!(matches!(buf.split_at_mut(N + 1), Err(Error::Memory(MemoryError::OutOfRange { .. }))));
    assert_eq!(dev.download(&buf).unwrap(), after);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn length_mismatch_is_an_error_naming_the_operation_and_writes_nothing() {
    let dev = super::common::device();
    let mut d = dev.alloc_zeros::<f32>(4).unwrap();
    match dev.upload_into(&[1.0f32; 5], &mut d) {
        Err(Error::Memory(MemoryError::LengthMismatch { what, expected: 4, actual: 5 })) => {
            assert!(what.contains("upload_into"), "{what}")
        }
        other => panic!("expected LengthMismatch, got {other:?}"),
    }
    let mut host = [0.0f32; 3];
    match dev.download_into(&d, &mut host) {
        Err(Error::Memory(MemoryError::LengthMismatch { what, expected: 4, actual: 3 })) => {
            assert!(what.contains("download_into"), "{what}")
        }
        other => panic!("expected LengthMismatch, got {other:?}"),
    }
    assert_eq!(dev.download(&d).unwrap(), vec![0.0f32; 4], "a refused upload must not write");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn kernel_reading_a_pinned_slot_sees_every_host_write() {
    const ITERATIONS: usize = 1000;
    let dev = super::common::device();
    let k = TestKernels::load(&dev);
    let slot = PinnedSlot::new(&dev, 0u64).unwrap();
    let mut out = dev.alloc_zeros::<u64>(ITERATIONS).unwrap();
    let mut state = 0x5107;
    let values: Vec<u64> = (0..ITERATIONS).map(|_| splitmix(&mut state)).collect();
    for (i, &v) in values.iter().enumerate() {
        slot.write(v);
        assert_eq!(slot.peek(), v, "peek after write {i}");
        k.read_slot(dev.stream(), slot.device_ptr(), &mut out, i).unwrap();
        let seen = dev.download(&out.slice(i..i + 1).unwrap()).unwrap();
        assert_eq!(seen, [v], "iteration {i}: the kernel must see the value just written");
    }
    // Later writes did not disturb what earlier launches stored.
    assert_eq!(dev.download(&out).unwrap(), values);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn mapped_buffer_device_pointer_maps_the_host_elements() {
    let dev = super::common::device();
    let k = TestKernels::load(&dev);
    let n = 64;
    let mut buffer = MappedBuffer::<f32>::new(&dev, n).unwrap();
    assert_eq!(buffer.len(), n);
    assert!(buffer.to_vec().unwrap().iter().all(|&v| v.to_bits() == 0), "a new buffer is zeroed");
    let values: Vec<f32> = random_values::<u32>(n, 3).into_iter().map(|b| f32::from_bits(b & 0x3fff_ffff)).collect();
    buffer.as_mut_slice().unwrap().copy_from_slice(&values);
    let mut out = dev.alloc_zeros::<f32>(n).unwrap();
    let base = buffer.device_ptr().addr();
    // Read element i through the device address into out[n - 1 - i]: offsets line up.
    for i in 0..n {
        k.copy_one(dev.stream(), base, i, &mut out, n - 1 - i).unwrap();
    }
    let got = dev.download(&out).unwrap();
    let reversed: Vec<f32> = values.iter().rev().copied().collect();
    assert_same_bits("mapped buffer read by a kernel", &got, &reversed);
    assert!(MappedBuffer::<f32>::new(&dev, 0).unwrap().is_empty());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn slot_bus_writes_agree_with_snapshot_and_are_stream_ordered() {
    let dev = super::common::device();
    let k = TestKernels::load(&dev);
    let n = 7;
    let mut bus = SlotBus::with_name(&dev, "controls", n).unwrap();
    assert_eq!(bus.snapshot().unwrap(), vec![0.0; n], "slots start at zero");
    let mut expect = vec![0.0f32; n];
    for (i, v) in [(3, 1.5f32), (0, -2.25), (6, 1e-30), (3, 7.0), (1, f32::MAX)] {
        bus.write(i, v).unwrap();
        expect[i] = v;
    }
    assert_same_bits("snapshot", &bus.snapshot().unwrap(), &expect);

    // Stream order: each launch sees the value written just before it, not a later one.
    let mut seen = dev.alloc_zeros::<f32>(3).unwrap();
    let slots = kgraph::DeviceIn::device_addr(bus.slots());
    for (j, v) in [11.0f32, -12.5, 13.25].into_iter().enumerate() {
        bus.write(2, v).unwrap();
        k.copy_one(dev.stream(), slots, 2, &mut seen, j).unwrap();
    }
    assert_eq!(dev.download(&seen).unwrap(), vec![11.0, -12.5, 13.25]);
    assert_eq!(bus.snapshot().unwrap()[2], 13.25);

    match bus.write(n, 1.0) {
        Err(Error::Memory(MemoryError::OutOfRange { what, index, len })) => {
            assert_eq!((index, len), (n, n));
            assert!(what.contains("controls"), "error must name the bus: {what}");
        }
        other => panic!("expected OutOfRange, got {other:?}"),
    }
    let message = bus.write(n + 3, 1.0).unwrap_err().to_string();
    assert!(message.contains("controls") && message.contains(&format!("{}", n + 3)), "{message}");
    assert!(matches!(bus.write(usize::MAX, 1.0), Err(Error::Memory(MemoryError::OutOfRange { .. }))));
}
