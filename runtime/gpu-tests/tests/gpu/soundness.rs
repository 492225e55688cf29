//! Issue #32's run-time refusals: a module cache keyed by the code, not the file name (a
//! handle gets its own `SOURCE`'s code whatever else the cache holds), and module images whose
//! framing announces more bytes than they hold refused before the driver reads them.
//! The compile-time half is the root package's `tests/ui/safety/i32_*`.

use std::sync::Arc;

use kgraph::expert::{KernelSource, ModuleCache};
use kgraph::{Error, ModuleError};

use super::common::device;

const N: usize = 256;

#[kgraph::kernels]
mod iota {
    /// `out[i] = base + i` for `i < n` (`kernels/test_runtime.cu`).
    #[kernel("test_runtime.cu", unsafe(extents))]
    pub fn rt_iota_u32(out: &mut [u32; n], n: i32, base: u32);
}

/// A kernel of the same name and parameter sizes as `rt_iota_u32` that writes nothing: what a
/// poisoned cache would hand the declared handle (its `launch` would then run unchecked code).
const IMPOSTOR_PTX: &str = "\
.version 8.0
.target sm_80
.address_size 64
.visible .entry rt_iota_u32(.param .u64 out, .param .u32 n, .param .u32 base)
{
    ret;
}
";

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_handle_gets_its_own_code_from_a_cache_holding_other_code_under_its_file_name() {
    let dev = device();
    let mut cache = ModuleCache::new(dev.context());
    // SAFETY: (a test) the impostor is only loaded, never launched through a raw function;
    // it models what safe code could build when `KernelSource`'s fields were public.
    let impostor = unsafe { KernelSource::new(iota::RtIotaU32::FILE, IMPOSTOR_PTX.as_bytes(), "", "") };
    let poisoned = cache.module(&impostor).unwrap();
    let kernels = iota::Kernels::load_with(&mut cache).unwrap();
    let handle = &kernels.rt_iota_u32;
    assert!(!Arc::ptr_eq(&poisoned, handle.module()), "the handle got the module of other code of its file name");
    let mut out = dev.alloc_zeros::<u32>(N).unwrap();
    handle.launch(dev.stream(), handle.cfg_for(N as u32), &mut out, N as i32, 11).unwrap();
    let out = dev.download(&out).unwrap();
    assert!(out.iter().enumerate().all(|(i, &v)| v == 11 + i as u32), "the handle did not run its own kernel");
    // And the impostor, asked for again, is still its own module (keyed by its code).
    assert!(Arc::ptr_eq(&poisoned, &cache.module(&impostor).unwrap()));
}

/// A fatbin header announcing 1 MiB of entries in a 32-byte image.
static OVERSIZED_FATBIN: [u8; 32] = {
    let mut b = [0u8; 32];
    let magic = 0xBA55_ED50u32.to_le_bytes();
    b[0] = magic[0];
    b[1] = magic[1];
    b[2] = magic[2];
    b[3] = magic[3];
    b[4] = 1; // version
    b[6] = 16; // header size
    b[10] = 0x10; // fat size: 1 MiB
    b
};

#[test]
#[ignore = "needs a CUDA GPU"]
fn an_image_announcing_more_bytes_than_it_holds_is_refused_before_the_driver_reads_it() {
    let dev = device();
    // A cubin cut short: the ELF header of the crate's own cubin without the rest.
    let whole = iota::RtIotaU32::SOURCE.image();
    assert!(whole.starts_with(b"\x7fELF") || whole.starts_with(&0xBA55_ED50u32.to_le_bytes()));
    let truncated = &whole[..whole.len() / 2];
    for (what, image) in [("truncated cubin", truncated), ("oversized fatbin", &OVERSIZED_FATBIN[..])] {
        // SAFETY: (a test) the claim that the image is complete is exactly what is broken
        // here, to show kgraph refuses it rather than letting the driver read past it.
        let src = unsafe { KernelSource::new("kernels/broken.cu", image, "", "") };
        match ModuleCache::new(dev.context()).module(&src) {
            Err(Error::Module(ModuleError::Load { file: "kernels/broken.cu", detail })) => {
                assert!(detail.contains("past") || detail.contains("truncated"), "{what}: {detail}")
            }
            other => panic!("{what}: expected ModuleError::Load, got {other:?}"),
        }
    }
}

#[kgraph::kernels]
mod bools {
    /// `out[i] = !input[i]` (`kernels/test_runtime.cu`).
    #[kernel("test_runtime.cu", unsafe(extents))]
    pub fn rt_not_bool(input: &[bool; n], out: &mut [bool; n], n: i32);
    /// Stores the raw `byte` into every `out[i]`.
    #[kernel("test_runtime.cu", unsafe(extents))]
    pub fn rt_store_byte(out: &mut [bool; n], n: i32, byte: u8);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn bools_go_in_as_0_and_1_and_come_back_as_bools() {
    let dev = device();
    let k = bools::Kernels::load(&dev).unwrap();
    let host: Vec<bool> = (0..N).map(|i| i % 3 == 0).collect();
    let flags: Vec<kgraph::Bool> = host.iter().map(|&b| b.into()).collect();
    let input = dev.upload(&flags).unwrap();
    let mut out = dev.alloc_zeros::<kgraph::Bool>(N).unwrap();
    k.rt_not_bool.launch(dev.stream(), k.rt_not_bool.cfg_for(N as u32), &input, &mut out, N as i32).unwrap();
    let negated: Vec<bool> = host.iter().map(|b| !b).collect();
    assert_eq!(dev.download_bools(&out).unwrap(), negated, "the kernel did not read 0/1 bools");
    // A kernel that stores 0x7f into the buffer: it comes back as `true`s, Rust `bool`s.
    k.rt_store_byte.launch(dev.stream(), k.rt_store_byte.cfg_for(N as u32), &mut out, N as i32, 0x7f).unwrap();
    assert!(dev.download_bools(&out).unwrap().into_iter().all(|b| b), "a nonzero byte read back as false");
}
