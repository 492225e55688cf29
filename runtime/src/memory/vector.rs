//! CUDA's built-in vector types (`float2`, `float4`, `int4`, `double2`, `half2`, ...) as Rust
//! structs with CUDA's size and alignment, so kernels taking them by value or by pointer bind
//! with the layout nvcc compiled (`vector_types.h`, `cuda_fp16.h`, `cuda_bf16.h`).
//!
//! Each is `#[repr(C, align(N))]` with public fields `x`, `y` (`z`, `w`), implements [`Pod`]
//! and cudarc's `DeviceRepr`, and converts from and to an array. The 4-wide 64-bit types are
//! left out: CUDA 13 deprecates `double4`/`long4` in favour of explicitly aligned variants.

use cudarc::driver::{DeviceRepr, ValidAsZeroBits};
use half::{bf16, f16};

use crate::memory::pod::Pod;

macro_rules! cuda_vector {
    ($(#[$doc:meta])* $name:ident, $c:literal, $t:ty, $align:literal, [$($f:ident),+], $n:literal) => {
        $(#[$doc])*
        #[doc = concat!("CUDA's `", $c, "`: ", stringify!($n), " × `", stringify!($t),
            "`, aligned to ", stringify!($align), " bytes.")]
        #[derive(Debug, Clone, Copy, Default, PartialEq)]
        #[repr(C, align($align))]
        pub struct $name {
            $(
                #[doc = concat!("Component `", stringify!($f), "`.")]
                pub $f: $t,
            )+
        }

        impl $name {
            /// The vector of these components.
            pub const fn new($($f: $t),+) -> Self {
                $name { $($f),+ }
            }

            /// The name of the C type this matches.
            pub const C_NAME: &'static str = $c;
        }

        impl From<[$t; $n]> for $name {
            fn from(a: [$t; $n]) -> Self {
                let [$($f),+] = a;
                $name { $($f),+ }
            }
        }

        impl From<$name> for [$t; $n] {
            fn from(v: $name) -> Self {
                [$(v.$f),+]
            }
        }

        // The layout is CUDA's: size n × size_of(T) (no padding), alignment as in vector_types.h.
        const _: () = assert!(std::mem::size_of::<$name>() == $n * std::mem::size_of::<$t>());
        const _: () = assert!(std::mem::align_of::<$name>() == $align);

        // SAFETY: repr(C) over `n` fields of one primitive type with no padding (asserted above),
        // so the value is passed to a kernel as its bytes, exactly like the C struct.
        unsafe impl DeviceRepr for $name {}
        // SAFETY: all-zero bytes are zero in every component.
        unsafe impl ValidAsZeroBits for $name {}
        // SAFETY: no padding, every component accepts every bit pattern, no resources.
        unsafe impl Pod for $name {}
        // SAFETY: as for `ValidAsZeroBits`: all-zero bytes are zero in every component.
        unsafe impl bytemuck::Zeroable for $name {}
        // SAFETY: as for `Pod`; so a `#[derive(bytemuck::Pod)]` struct may have vector fields.
        unsafe impl bytemuck::Pod for $name {}
    };
}

cuda_vector!(Char2, "char2", i8, 2, [x, y], 2);
cuda_vector!(Char4, "char4", i8, 4, [x, y, z, w], 4);
cuda_vector!(UChar2, "uchar2", u8, 2, [x, y], 2);
cuda_vector!(UChar4, "uchar4", u8, 4, [x, y, z, w], 4);
cuda_vector!(Short2, "short2", i16, 4, [x, y], 2);
cuda_vector!(Short4, "short4", i16, 8, [x, y, z, w], 4);
cuda_vector!(UShort2, "ushort2", u16, 4, [x, y], 2);
cuda_vector!(UShort4, "ushort4", u16, 8, [x, y, z, w], 4);
cuda_vector!(Int2, "int2", i32, 8, [x, y], 2);
cuda_vector!(Int3, "int3", i32, 4, [x, y, z], 3);
cuda_vector!(Int4, "int4", i32, 16, [x, y, z, w], 4);
cuda_vector!(UInt2, "uint2", u32, 8, [x, y], 2);
cuda_vector!(UInt3, "uint3", u32, 4, [x, y, z], 3);
cuda_vector!(UInt4, "uint4", u32, 16, [x, y, z, w], 4);
cuda_vector!(Float2, "float2", f32, 8, [x, y], 2);
cuda_vector!(Float3, "float3", f32, 4, [x, y, z], 3);
cuda_vector!(Float4, "float4", f32, 16, [x, y, z, w], 4);
cuda_vector!(LongLong2, "longlong2", i64, 16, [x, y], 2);
cuda_vector!(ULongLong2, "ulonglong2", u64, 16, [x, y], 2);
cuda_vector!(Double2, "double2", f64, 16, [x, y], 2);
cuda_vector!(Double3, "double3", f64, 8, [x, y, z], 3);
cuda_vector!(Half2, "half2", f16, 4, [x, y], 2);
cuda_vector!(Bf16x2, "nv_bfloat162", bf16, 4, [x, y], 2);

// SAFETY: `half::f16` and `half::bf16` are `repr(transparent)` over `u16`: fixed layout, every
// bit pattern is a valid value (NaNs included), no resources.
unsafe impl Pod for f16 {}
// SAFETY: as for `f16`.
unsafe impl Pod for bf16 {}
