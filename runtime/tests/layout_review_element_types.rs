//! Soundness review of the element types (CPU only): which Rust types may stand for which C
//! types in device memory and kernel parameters.
//!
//! - Downloads (`Device::download`, mapped buffers, pinned slots) take `Pod`, a type valid for
//!   every bit pattern, since a kernel may store any bytes: `bool`, `char`, `NonZero*`,
//!   references and kgraph's own `Bool` are not `Pod`.
//! - `Bool` (a C `bool`, only ever 0 or 1) is a `DeviceValue` (it may be uploaded) but no cast
//!   makes one from an arbitrary byte: not bytemuck's `Pod`, `AnyBitPattern` or
//!   `CheckedBitPattern` either.
//! - CUDA's vector types have `vector_types.h`'s size and alignment (written out here, not taken
//!   from kgraph's own tables), so no buffer or sub-view of them is less aligned than nvcc's
//!   vector loads need, and a struct twin holding one lays out as the C struct does.

use std::marker::PhantomData;
use std::mem::{align_of, size_of};
use std::num::NonZeroU32;

use kgraph_runtime::*;

/// `Probe::<T>(PhantomData).is_pod()` and the like: true where `T` has the trait (the bounded
/// inherent method wins), false otherwise (the trait's default); concrete types only.
trait Fallback {
    fn is_pod(&self) -> bool {
        false
    }
    fn is_device_value(&self) -> bool {
        false
    }
    fn is_bytemuck_pod(&self) -> bool {
        false
    }
    fn is_any_bit_pattern(&self) -> bool {
        false
    }
    fn is_checked_bit_pattern(&self) -> bool {
        false
    }
}
struct PodProbe<T>(PhantomData<T>);
impl<T: Pod> PodProbe<T> {
    fn is_pod(&self) -> bool {
        true
    }
}
impl<T> Fallback for PodProbe<T> {}

struct ValueProbe<T>(PhantomData<T>);
impl<T: DeviceValue> ValueProbe<T> {
    fn is_device_value(&self) -> bool {
        true
    }
}
impl<T> Fallback for ValueProbe<T> {}

struct MuckProbe<T>(PhantomData<T>);
impl<T: bytemuck::Pod> MuckProbe<T> {
    fn is_bytemuck_pod(&self) -> bool {
        true
    }
}
impl<T> Fallback for MuckProbe<T> {}

struct AnyBitsProbe<T>(PhantomData<T>);
impl<T: bytemuck::AnyBitPattern> AnyBitsProbe<T> {
    fn is_any_bit_pattern(&self) -> bool {
        true
    }
}
impl<T> Fallback for AnyBitsProbe<T> {}

struct CheckedProbe<T>(PhantomData<T>);
impl<T: bytemuck::CheckedBitPattern> CheckedProbe<T> {
    fn is_checked_bit_pattern(&self) -> bool {
        true
    }
}
impl<T> Fallback for CheckedProbe<T> {}

macro_rules! pod {
    ($t:ty) => {
        PodProbe::<$t>(PhantomData).is_pod()
    };
}

#[test]
fn types_with_invalid_bit_patterns_are_not_pod() {
    // Each would come back from `download` holding whatever byte a kernel stored.
    assert!(!pod!(bool));
    assert!(!pod!(char));
    assert!(!pod!(NonZeroU32));
    assert!(!pod!(&'static u8));
    assert!(!pod!(*const f32), "a device address is a `u64` field, behind an `unsafe` launch");
    assert!(!pod!(Option<u32>));
    assert!(!pod!(Bool));
    assert!(!pod!([Bool; 4]));
    assert!(!pod!(usize), "no target-dependent sizes either");
    // And the ones that are.
    assert!(pod!(u8) && pod!(i64) && pod!(f32) && pod!(f16) && pod!(bf16) && pod!([Float4; 3]) && pod!(Half2));
}

#[test]
fn bool_is_uploaded_never_made_from_a_byte() {
    assert!(ValueProbe::<Bool>(PhantomData).is_device_value());
    assert!(!ValueProbe::<bool>(PhantomData).is_device_value(), "a by-value `bool` is passed as a Rust `bool`");
    assert!(!MuckProbe::<Bool>(PhantomData).is_bytemuck_pod());
    assert!(!AnyBitsProbe::<Bool>(PhantomData).is_any_bit_pattern());
    assert!(!CheckedProbe::<Bool>(PhantomData).is_checked_bit_pattern());
    // (The probes see the traits where they are.)
    assert!(AnyBitsProbe::<u8>(PhantomData).is_any_bit_pattern());
    assert!(CheckedProbe::<bool>(PhantomData).is_checked_bit_pattern());
    // Its bytes are the C `bool`'s: 0 and 1 only, one byte, as `bool`.
    assert_eq!((size_of::<Bool>(), align_of::<Bool>()), (1, 1));
    assert_eq!(bytemuck::bytes_of(&Bool::from(true)), [1]);
    assert_eq!(bytemuck::bytes_of(&Bool::new(false)), [0]);
    assert_eq!(bytemuck::bytes_of(&<Bool as bytemuck::Zeroable>::zeroed()), [0]);
    assert_eq!(Bool::default(), Bool::FALSE);
}

#[test]
fn vector_types_have_cudas_size_and_alignment() {
    // vector_types.h (CUDA 12/13), cuda_fp16.h, cuda_bf16.h.
    macro_rules! cuda {
        ($($t:ty => $c:literal, $size:literal, $align:literal;)*) => {$(
            assert_eq!((size_of::<$t>(), align_of::<$t>()), ($size, $align), "{}", $c);
            assert_eq!(<$t>::C_NAME, $c);
            assert!(pod!($t));
            assert!(MuckProbe::<$t>(PhantomData).is_bytemuck_pod());
        )*};
    }
    cuda! {
        Char2 => "char2", 2, 2;
        Char4 => "char4", 4, 4;
        UChar2 => "uchar2", 2, 2;
        UChar4 => "uchar4", 4, 4;
        Short2 => "short2", 4, 4;
        Short4 => "short4", 8, 8;
        UShort2 => "ushort2", 4, 4;
        UShort4 => "ushort4", 8, 8;
        Int2 => "int2", 8, 8;
        Int3 => "int3", 12, 4;
        Int4 => "int4", 16, 16;
        UInt2 => "uint2", 8, 8;
        UInt3 => "uint3", 12, 4;
        UInt4 => "uint4", 16, 16;
        Float2 => "float2", 8, 8;
        Float3 => "float3", 12, 4;
        Float4 => "float4", 16, 16;
        LongLong2 => "longlong2", 16, 16;
        ULongLong2 => "ulonglong2", 16, 16;
        Double2 => "double2", 16, 16;
        Double3 => "double3", 24, 8;
        Half2 => "half2", 4, 4;
        Bf16x2 => "nv_bfloat162", 4, 4;
    }
    assert_eq!((size_of::<f16>(), align_of::<f16>()), (2, 2));
    assert_eq!((size_of::<bf16>(), align_of::<bf16>()), (2, 2));
    // Every element of a buffer (and of a sub-view, which starts at an element) is as aligned
    // as the type, since its size is a multiple of its alignment.
    assert_eq!(size_of::<[Float4; 3]>(), 48);
    assert_eq!(size_of::<[Double3; 2]>() % align_of::<Double3>(), 0);
}
