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
/// - the layout is fixed (`#[repr(C)]` or `#[repr(transparent)]`), matches what kernels
///   declare, and has no padding bytes: every `Pod` is a [`DeviceValue`], whose bytes kgraph
///   copies and passes as they are, and that trait promises every byte initialised (make C's
///   implicit padding an explicit field, as bytemuck's derive requires);
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

/// A type whose *valid values* kgraph may copy to the device byte for byte, and allocate
/// zeroed: what [`crate::Device::upload`] and [`crate::Device::alloc_zeros`] take. Every
/// [`Pod`] is one; so is [`Bool`], whose bytes are 0 or 1 but which is not `Pod` (not every
/// byte is a `Bool`, so device memory is read back through [`crate::Device::download_bools`]).
///
/// # Safety
/// Implementors promise a fixed layout (`#[repr(C)]`/`#[repr(transparent)]`) matching what
/// kernels declare, with no padding bytes (every byte of a value is initialised), that all-zero
/// bytes are a valid value, and that the bytes of every value a safe API can make are a value
/// of the kernel's type.
pub unsafe trait DeviceValue: DeviceRepr + ValidAsZeroBits + Copy + Send + Sync + 'static {}

// SAFETY: `Pod` promises all of it and more (every bit pattern is valid).
unsafe impl<T: Pod> DeviceValue for T {}

/// A C `bool` in device memory: one byte that is only ever 0 (`false`) or 1 (`true`), the
/// element type of a kernel's `const bool*`/`bool*` parameter (`&[bool; n]` in a declaration,
/// a `DeviceBuffer<Bool>` at the launch).
///
/// nvcc does not mask a loaded `bool`: a kernel indexing `out[i + n * flag]` with a `flag`
/// byte of `0x7f` writes 127 `n` past `out`. So safe code cannot make any other byte: `Bool` is
/// made from a Rust `bool` ([`Bool::new`], `From<bool>`), and it is not [`Pod`] (nor bytemuck's
/// `Pod`/`AnyBitPattern`): a kernel may store any byte into a `bool*` buffer, so device memory
/// comes back as Rust `bool`s through [`crate::Device::download_bools`], which reads any
/// nonzero byte as `true`, never as a `Bool` holding it.
///
/// ```
/// use kgraph_runtime::Bool;
/// assert_eq!(Bool::from(true).get(), true);
/// assert_eq!(Bool::default(), Bool::FALSE);
/// ```
/// ```compile_fail
/// // No `Bool` from an arbitrary byte.
/// let b: kgraph_runtime::Bool = kgraph_runtime::bytemuck::cast(0x7fu8);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
#[repr(transparent)]
pub struct Bool(u8);

impl Bool {
    /// `false` (the byte 0).
    pub const FALSE: Bool = Bool(0);
    /// `true` (the byte 1).
    pub const TRUE: Bool = Bool(1);

    /// The `Bool` of `value`.
    pub const fn new(value: bool) -> Self {
        Bool(value as u8)
    }

    /// Its value.
    pub const fn get(self) -> bool {
        self.0 != 0
    }
}

impl From<bool> for Bool {
    fn from(value: bool) -> Self {
        Bool::new(value)
    }
}

impl From<Bool> for bool {
    fn from(value: Bool) -> Self {
        value.get()
    }
}

impl std::fmt::Debug for Bool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&self.get(), f)
    }
}

// SAFETY: one byte, `repr(transparent)` over `u8`: the driver copies exactly that byte.
unsafe impl DeviceRepr for Bool {}
// SAFETY: the byte 0 is `Bool::FALSE`.
unsafe impl ValidAsZeroBits for Bool {}
// SAFETY: `repr(transparent)` over `u8` (no padding, zero is `FALSE`), and every `Bool` safe
// code can make is 0 or 1, a valid C `bool`.
unsafe impl DeviceValue for Bool {}
// SAFETY: all-zero is `Bool::FALSE`. (Not `bytemuck::Pod`: not every byte is a `Bool`.)
unsafe impl bytemuck::Zeroable for Bool {}
// SAFETY: one initialised byte, no padding: reading a `Bool`'s bytes is fine.
unsafe impl bytemuck::NoUninit for Bool {}

/// A `T` of all-zero bytes: what a graph struct starts a vector or struct scalar at.
pub fn zeroed<T: Pod>() -> T {
    // SAFETY: `T: Pod` implies `ValidAsZeroBits`: all-zero bytes are a valid `T`.
    unsafe { std::mem::zeroed() }
}
