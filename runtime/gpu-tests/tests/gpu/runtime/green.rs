//! SM splits (`Device::split_sms`, green contexts): the counts, the partition as `%smid` sees
//! it, device memory through a green Device, and the refused requests. Kernel:
//! `kernels/test_green.cu`.

use std::collections::BTreeSet;

use kgraph::cudarc::driver::{sys, CudaFunction, PushKernelArg};
use kgraph::expert::{KernelSource, ModuleCache};
use kgraph::{Device, DeviceBuffer, DeviceOut, Error, LaunchConfig, LaunchError, Result, SetupError, SmSplit, Stream};

use super::{launch_error, raw, TestKernels};
use crate::common::device;

// SAFETY: the image is the one kgraph-build compiled from this file; it is only loaded by hand
// (`ModuleCache::function`) and launched through cudarc's unsafe launch, no declared handle.
const TEST_GREEN: KernelSource = unsafe {
    KernelSource::new(
        "kernels/test_green.cu",
        include_bytes!(concat!(env!("OUT_DIR"), "/kgraph/test_green.cubin")),
        include_str!("../../../kernels/test_green.cu"),
        concat!(env!("CARGO_MANIFEST_DIR"), "/kernels"),
    )
};

/// About 10 us at the H200's clock: long enough for a launch of 4 blocks per SM to spread over
/// every SM its stream may use.
const SPIN_CYCLES: i64 = 20_000;

/// The device's SM count, from `CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT` (not from the split).
fn device_sms(dev: &Device) -> u32 {
    // SAFETY: only a device attribute is read through cudarc's context; nothing is issued.
    let ctx = unsafe { dev.context().cuda() };
    let n = ctx.attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT).unwrap();
    u32::try_from(n).unwrap()
}

/// `dev` split with `reserved` SMs reserved.
fn split(dev: &Device, reserved: u32) -> Result<SmSplit> {
    // SAFETY: each test uses its split's Devices from its own thread only.
    unsafe { dev.split_sms(reserved) }
}

/// `rt_record_smid` loaded in `dev`'s context.
fn record_smid_fn(dev: &Device) -> CudaFunction {
    ModuleCache::new(dev.context()).function(&TEST_GREEN, "rt_record_smid").unwrap_or_else(|e| panic!("{e}"))
}

/// Launches `rt_record_smid` on `s`, one block per element of `out` (32 threads each).
fn record_smid(f: &CudaFunction, s: &Stream, out: &mut impl DeviceOut<u32>) -> Result<()> {
    let n = out.elem_len() as i32;
    let cfg = LaunchConfig { grid_dim: (n as u32, 1, 1), block_dim: (32, 1, 1), shared_mem_bytes: 0 };
    let mut l = raw(s).launch_builder(f);
    let addr = out.device_addr();
    l.arg(&addr).arg(&n).arg(&SPIN_CYCLES);
    // SAFETY: matches rt_record_smid(unsigned*, int, long long); out holds n elements and is
    // ordered on `s` (the callers synchronize before using it elsewhere).
    unsafe { l.launch(cfg) }.map(drop).map_err(launch_error("rt_record_smid"))
}

/// The distinct SM ids of a finished `rt_record_smid` run, after checking every block wrote one.
fn sm_ids(dev: &Device, out: &DeviceBuffer<u32>) -> BTreeSet<u32> {
    let ids = dev.download(out).unwrap();
    assert!(ids.iter().all(|&id| id != u32::MAX), "a block wrote no SM id");
    ids.into_iter().collect()
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_split_reports_counts_that_add_up_to_the_device() {
    let dev = device();
    let total = device_sms(&dev);
    let s = split(&dev, 8).unwrap();
    assert!(s.reserved_sms >= 8, "{} SMs reserved for 8 asked", s.reserved_sms);
    assert!(s.rest_sms > 0);
    assert_eq!(s.reserved_sms + s.rest_sms, total, "reserved {} + rest {}", s.reserved_sms, s.rest_sms);
    // The streams say which SMs their work may use: the main streams and a further stream.
    assert_eq!(dev.stream().sm_count().unwrap(), total);
    assert_eq!(s.reserved.stream().sm_count().unwrap(), s.reserved_sms);
    assert_eq!(s.rest.stream().sm_count().unwrap(), s.rest_sms);
    // SAFETY: the stream is only queried.
    let further = unsafe { s.reserved.new_stream() }.unwrap();
    assert_eq!(further.sm_count().unwrap(), s.reserved_sms);
    // A split of 1 SM gets the hardware's smallest partition, no more than the split of 8.
    let one = split(&dev, 1).unwrap();
    assert!(one.reserved_sms >= 1 && one.reserved_sms <= s.reserved_sms, "{}", one.reserved_sms);
    assert_eq!(one.reserved_sms + one.rest_sms, total);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn work_on_each_part_runs_only_on_its_sms() {
    let dev = device();
    let total = device_sms(&dev);
    let s = split(&dev, 8).unwrap();
    let blocks = 4 * total as usize;
    let unset = vec![u32::MAX; blocks];
    let (f_reserved, f_rest, f_all) = (record_smid_fn(&s.reserved), record_smid_fn(&s.rest), record_smid_fn(&dev));
    let mut on_reserved = s.reserved.upload(&unset).unwrap();
    let mut on_rest = s.rest.upload(&unset).unwrap();
    let mut on_all = dev.upload(&unset).unwrap();
    // Both parts at once: the rest's launch cannot take the reserved SMs, nor the reverse.
    record_smid(&f_reserved, s.reserved.stream(), &mut on_reserved).unwrap();
    record_smid(&f_rest, s.rest.stream(), &mut on_rest).unwrap();
    let reserved_ids = sm_ids(&s.reserved, &on_reserved);
    let rest_ids = sm_ids(&s.rest, &on_rest);
    assert!(reserved_ids.len() <= s.reserved_sms as usize, "reserved ran on {reserved_ids:?} ({} SMs)", s.reserved_sms);
    assert!(rest_ids.len() <= s.rest_sms as usize, "rest ran on {} SMs of {}", rest_ids.len(), s.rest_sms);
    let shared: Vec<_> = reserved_ids.intersection(&rest_ids).collect();
    assert!(shared.is_empty(), "SMs {shared:?} ran work of both parts");
    // A further stream of the reserved Device (what a Resident runs on) stays on its SMs too.
    s.reserved.synchronize().unwrap();
    let mut on_further = s.reserved.upload(&unset).unwrap();
    s.reserved.synchronize().unwrap();
    // SAFETY: `on_further` is written on this stream only after its upload finished (waited
    // above), and read after this stream is waited for below.
    let further = unsafe { s.reserved.new_stream() }.unwrap();
    record_smid(&f_reserved, &further, &mut on_further).unwrap();
    further.synchronize().unwrap();
    let further_ids = sm_ids(&s.reserved, &on_further);
    assert!(further_ids.is_disjoint(&rest_ids), "a further stream ran on {further_ids:?}, the rest on {rest_ids:?}");
    assert!(further_ids.len() <= s.reserved_sms as usize, "a further stream ran on {further_ids:?}");
    // The control: the same launch on the primary context spreads over more SMs than were
    // reserved, so the bounds above are the partition's doing.
    record_smid(&f_all, dev.stream(), &mut on_all).unwrap();
    let all_ids = sm_ids(&dev, &on_all);
    assert!(all_ids.len() > s.reserved_sms as usize, "the primary context's launch ran on {} SMs only", all_ids.len());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn device_memory_round_trips_through_a_green_device() {
    let dev = device();
    let s = split(&dev, 8).unwrap();
    for part in [&s.reserved, &s.rest] {
        let k = TestKernels::load(part);
        let mut x = part.upload(&[0.0f32, 1.0, 2.0, 3.0]).unwrap();
        k.affine(part.stream(), &mut x, 2.0, 1.0).unwrap();
        assert_eq!(part.download(&x).unwrap(), [1.0, 3.0, 5.0, 7.0]);
    }
    // Each part's transfers keep to buffers of its own stream, as between any two Devices.
    let x = s.reserved.upload(&[1u32, 2, 3]).unwrap();
    match s.rest.download(&x) {
        Err(Error::Launch(LaunchError::ForeignStream { .. })) => {}
        other => panic!("the rest downloaded a buffer of the reserved stream: {other:?}"),
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn refused_requests_are_typed_errors() {
    let dev = device();
    let total = device_sms(&dev);
    let mut largest = 0;
    for asked in [0, total, total + 1, u32::MAX] {
        match split(&dev, asked) {
            Err(Error::Setup(SetupError::SmSplit { asked: a, device_sms, max_reservable, .. })) => {
                assert_eq!((a, device_sms), (asked, total));
                assert!(max_reservable > 0 && max_reservable < total, "{max_reservable}");
                largest = max_reservable;
            }
            other => panic!("a split of {asked} of {total} SMs: {other:?}"),
        }
    }
    // The largest request the refusal names is one the device makes.
    let s = split(&dev, largest).unwrap_or_else(|e| panic!("a split of {largest} (the largest named): {e}"));
    assert!(s.reserved_sms >= largest && s.rest_sms > 0);
    assert_eq!(s.reserved_sms + s.rest_sms, total);
    assert!(matches!(split(&dev, largest + 1), Err(Error::Setup(SetupError::SmSplit { .. }))));
}
