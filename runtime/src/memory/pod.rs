//! [`Pod`]: the element types kgraph copies between host and device as raw bytes.

use cudarc::driver::{DeviceRepr, ValidAsZeroBits};

/// Plain old data: a type kgraph may move between host and device memory byte for byte.
///
/// Implemented for `f32 f64 i8 u8 i16 u16 i32 u32 i64 u64`, `f16`, `bf16`, CUDA's vector types
/// ([`crate::Float4`], ...) and arrays `[T; N]` of `Pod`.
/// Your own `#[repr(C)]` struct of `Pod` fields can implement it too:
///
/// ```
/// use kgraph_runtime::Pod;
/// use kgraph_runtime::cudarc::driver::{DeviceRepr, ValidAsZeroBits};
///
/// #[derive(Clone, Copy)]
/// #[repr(C)]
/// struct Particle { pos: [f32; 3], id: u32 }
/// // SAFETY: repr(C), fields are Pod, no padding (16 bytes, align 4), any bits are valid.
/// unsafe impl DeviceRepr for Particle {}
/// // SAFETY: all-zero bytes are a valid Particle.
/// unsafe impl ValidAsZeroBits for Particle {}
/// // SAFETY: as above; the kernel side declares the same layout.
/// unsafe impl Pod for Particle {}
/// ```
///
/// # Safety
/// Implementors promise that
/// - every bit pattern of `size_of::<T>()` bytes is a valid `T` (a kernel may write any bytes,
///   and [`crate::Device::download`] turns them back into `T`s): so no `bool`, `char`, enums,
///   references, pointers or `NonZero*`;
/// - the layout is fixed (`#[repr(C)]` or `#[repr(transparent)]`) and matches what kernels
///   declare; padding is allowed but its bytes are unspecified after a round trip, so prefer
///   structs without padding;
/// - the type owns no resources (it is `Copy`, so it has no `Drop`).
pub unsafe trait Pod: DeviceRepr + ValidAsZeroBits + Copy + Send + Sync + 'static {}

macro_rules! pod_primitives {
    ($($t:ty),*) => {$(
        // SAFETY: a primitive number: fixed layout, every bit pattern is a valid value.
        unsafe impl Pod for $t {}
    )*};
}
pod_primitives!(f32, f64, i8, u8, i16, u16, i32, u32, i64, u64);
// `half::f16` and `half::bf16` are Pod too (`crate::memory::vector`, beside the vector types).

// SAFETY: an array of Pod has no padding between elements and every bit pattern of each
// element is valid, so every bit pattern of the array is valid.
unsafe impl<T: Pod, const N: usize> Pod for [T; N] {}
