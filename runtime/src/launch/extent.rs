//! What a checked `#[kernel]` launch calls before it launches: evaluating the declared extents
//! (`x: &[f32; batch * n]`) from the scalar arguments, comparing them with the arguments'
//! lengths, and checking that what the kernel writes overlaps no other argument.
//!
//! Everything here is a few integer operations, with no allocation and no formatting unless a
//! launch is refused: the error paths are `#[cold]` functions of their own.
//!
//! Each operation of an extent is computed in the type C computes it in: `int` (`i32`) when
//! both operands are `int` or narrower, `unsigned int` (`u32`) when one is unsigned and none is
//! 64-bit, `long long` (`i64`) when one is 64-bit and signed, `unsigned long long` (`u64`) when
//! one is `u64` (the usual arithmetic conversions, operation by operation: in `(end - start) +
//! offset` with `u32` `end`, `start` and an `i64` `offset`, the subtraction is `u32`, the
//! addition `i64`, [`convert`] between them); an extent of integer literals only is `i64`. Every
//! operation is checked: where C would overflow (or wrap, for unsigned types, or wrap a negative
//! value converting it to unsigned) the launch is refused with
//! [`LaunchError::ExtentArithmetic`], as it is for division by zero and a negative result. So an
//! extent that a kernel's own 32-bit index arithmetic could not reach is never accepted.

use cudarc::driver::LaunchConfig;

use crate::error::{Error, LaunchError, Result};

/// The most threads one checked launch may have: 2^31, so that a thread index computed in C's
/// `int` (`blockIdx.x * blockDim.x + threadIdx.x`, the common idiom) cannot overflow and go
/// negative. The `unsafe(extents)` promise is made for launches up to this size.
pub const MAX_THREADS_PER_LAUNCH: u64 = 1 << 31;

/// Why an extent could not be evaluated; becomes [`LaunchError::ExtentArithmetic`] when a launch is
/// refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExtentFault {
    /// An operation overflowed (or, for an unsigned type, went below zero).
    Overflow {
        /// The operator: `"+"`, `"-"`, `"*"`, `"/"` or `"%"`.
        op: &'static str,
        /// The type the extent is computed in (`"i32"`...).
        ty: &'static str,
    },
    /// `/` or `%` by zero.
    DivisionByZero {
        /// The operator: `"/"` or `"%"`.
        op: &'static str,
    },
    /// A scalar argument does not fit in the type the extent is computed in (a negative value
    /// where C would convert it to unsigned).
    Conversion {
        /// The scalar parameter.
        scalar: &'static str,
        /// Its value in this launch.
        value: i128,
        /// The type the extent is computed in.
        ty: &'static str,
    },
    /// The value of a part of the extent, computed in its own type, does not fit in the wider
    /// type the operation it is an operand of is computed in (a negative value where C would
    /// convert it to unsigned, and wrap it).
    Wrap {
        /// The part's value in this launch.
        value: i128,
        /// The type C converts it to.
        ty: &'static str,
    },
}

impl std::fmt::Display for ExtentFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExtentFault::Overflow { op, ty } => write!(f, "`{op}` overflows `{ty}`"),
            ExtentFault::DivisionByZero { op } => write!(f, "`{op}` by zero"),
            ExtentFault::Conversion { scalar, value, ty } => {
                write!(f, "`{scalar}` = {value} does not fit in `{ty}`")
            }
            ExtentFault::Wrap { value, ty } => {
                write!(f, "an operand of value {value} does not fit in `{ty}`, which C converts it to")
            }
        }
    }
}

mod sealed {
    pub trait Sealed {}
}

/// The integer types an extent is computed in: `i32`, `u32`, `i64`, `u64` (C's `int`,
/// `unsigned int`, `long long`, `unsigned long long`).
pub trait ExtentInt: Copy + Into<i128> + sealed::Sealed {
    /// The Rust name, for messages.
    const NAME: &'static str;
    /// `self + rhs`, or `None` on overflow.
    fn extent_add(self, rhs: Self) -> Option<Self>;
    /// `self - rhs`, or `None` on overflow (below zero for unsigned types).
    fn extent_sub(self, rhs: Self) -> Option<Self>;
    /// `self * rhs`, or `None` on overflow.
    fn extent_mul(self, rhs: Self) -> Option<Self>;
    /// `self / rhs` (truncating, as C does), or `None` on overflow or division by zero.
    fn extent_div(self, rhs: Self) -> Option<Self>;
    /// `self % rhs` (the sign of `self`, as C does), or `None` on overflow or division by zero.
    fn extent_rem(self, rhs: Self) -> Option<Self>;
    /// True for zero.
    fn is_zero(self) -> bool;
}

macro_rules! extent_int {
    ($($ty:ident),*) => {$(
        impl sealed::Sealed for $ty {}
        impl ExtentInt for $ty {
            const NAME: &'static str = stringify!($ty);
            #[inline(always)]
            fn extent_add(self, rhs: Self) -> Option<Self> { self.checked_add(rhs) }
            #[inline(always)]
            fn extent_sub(self, rhs: Self) -> Option<Self> { self.checked_sub(rhs) }
            #[inline(always)]
            fn extent_mul(self, rhs: Self) -> Option<Self> { self.checked_mul(rhs) }
            #[inline(always)]
            fn extent_div(self, rhs: Self) -> Option<Self> { self.checked_div(rhs) }
            #[inline(always)]
            fn extent_rem(self, rhs: Self) -> Option<Self> { self.checked_rem(rhs) }
            #[inline(always)]
            fn is_zero(self) -> bool { self == 0 }
        }
    )*};
}
extent_int!(i32, u32, i64, u64);

/// A partly evaluated extent: its value so far, or why it has none.
pub type Partial<I> = std::result::Result<I, ExtentFault>;

/// Scalar argument `name` converted to the extent's type `I`.
#[inline(always)]
pub fn scalar<I, S>(name: &'static str, value: S) -> Partial<I>
where
    I: ExtentInt + TryFrom<S>,
    S: Copy + Into<i128>,
{
    I::try_from(value).map_err(|_| ExtentFault::Conversion { scalar: name, value: value.into(), ty: I::NAME })
}

/// A part of the extent computed in type `J` (`end - start` in `u32`), as an operand of an
/// operation computed in the wider type `I` (`+ offset` in `i64`): C's usual arithmetic
/// conversions, operation by operation. Exact, but for a negative value into an unsigned type,
/// which C would wrap: a fault.
#[inline(always)]
pub fn convert<I, J>(value: Partial<J>) -> Partial<I>
where
    I: ExtentInt + TryFrom<J>,
    J: ExtentInt,
{
    let v = value?;
    I::try_from(v).map_err(|_| ExtentFault::Wrap { value: v.into(), ty: I::NAME })
}

/// An integer literal of the extent.
#[inline(always)]
pub fn lit<I: ExtentInt>(value: I) -> Partial<I> {
    Ok(value)
}

#[inline(always)]
fn binary<I: ExtentInt>(a: Partial<I>, b: Partial<I>, op: &'static str, f: fn(I, I) -> Option<I>) -> Partial<I> {
    let (a, b) = (a?, b?);
    f(a, b).ok_or(ExtentFault::Overflow { op, ty: I::NAME })
}

/// `a + b`, checked.
#[inline(always)]
pub fn add<I: ExtentInt>(a: Partial<I>, b: Partial<I>) -> Partial<I> {
    binary(a, b, "+", I::extent_add)
}

/// `a - b`, checked.
#[inline(always)]
pub fn sub<I: ExtentInt>(a: Partial<I>, b: Partial<I>) -> Partial<I> {
    binary(a, b, "-", I::extent_sub)
}

/// `a * b`, checked.
#[inline(always)]
pub fn mul<I: ExtentInt>(a: Partial<I>, b: Partial<I>) -> Partial<I> {
    binary(a, b, "*", I::extent_mul)
}

/// `a / b`, checked (truncating).
#[inline(always)]
pub fn div<I: ExtentInt>(a: Partial<I>, b: Partial<I>) -> Partial<I> {
    let (a, b) = (a?, b?);
    if b.is_zero() {
        return Err(ExtentFault::DivisionByZero { op: "/" });
    }
    a.extent_div(b).ok_or(ExtentFault::Overflow { op: "/", ty: I::NAME })
}

/// `a % b`, checked.
#[inline(always)]
pub fn rem<I: ExtentInt>(a: Partial<I>, b: Partial<I>) -> Partial<I> {
    let (a, b) = (a?, b?);
    if b.is_zero() {
        return Err(ExtentFault::DivisionByZero { op: "%" });
    }
    a.extent_rem(b).ok_or(ExtentFault::Overflow { op: "%", ty: I::NAME })
}

/// `min(a, b)`.
#[inline(always)]
pub fn min<I: ExtentInt + Ord>(a: Partial<I>, b: Partial<I>) -> Partial<I> {
    Ok(Ord::min(a?, b?))
}

/// `max(a, b)`.
#[inline(always)]
pub fn max<I: ExtentInt + Ord>(a: Partial<I>, b: Partial<I>) -> Partial<I> {
    Ok(Ord::max(a?, b?))
}

/// The evaluated extent of parameter `param` of `kernel` (declared as `expr`), as a number of
/// elements.
///
/// # Errors
///
/// [`LaunchError::ExtentArithmetic`] when the evaluation failed or the value is negative.
#[inline(always)]
pub fn extent<I: ExtentInt>(
    kernel: &'static str,
    param: &'static str,
    expr: &'static str,
    value: Partial<I>,
) -> Result<u64> {
    match value {
        Ok(v) => {
            let v: i128 = v.into();
            // Every `ExtentInt` fits in `i128`, and a non-negative one in `u64`.
            if v < 0 {
                Err(negative_extent(kernel, param, expr, v))
            } else {
                Ok(v as u64)
            }
        }
        Err(fault) => Err(faulty_extent(kernel, param, expr, fault)),
    }
}

#[cold]
#[inline(never)]
fn negative_extent(kernel: &'static str, param: &'static str, expr: &'static str, value: i128) -> Error {
    Error::Launch(LaunchError::ExtentArithmetic {
        kernel,
        param,
        detail: format!("`{expr}` is {value}, which is negative"),
    })
}

#[cold]
#[inline(never)]
fn faulty_extent(kernel: &'static str, param: &'static str, expr: &'static str, fault: ExtentFault) -> Error {
    Error::Launch(LaunchError::ExtentArithmetic { kernel, param, detail: format!("in `{expr}`, {fault}") })
}

/// Checks that the argument of `param` holds at least `required` elements.
///
/// # Errors
///
/// [`LaunchError::Extent`] when it holds fewer.
#[inline(always)]
pub fn check_len(kernel: &'static str, param: &'static str, required: u64, actual: usize) -> Result<()> {
    // `usize` is at most 64 bits on every target CUDA supports.
    if (actual as u64) < required {
        return Err(too_short(kernel, param, required, actual));
    }
    Ok(())
}

#[cold]
#[inline(never)]
fn too_short(kernel: &'static str, param: &'static str, required: u64, actual: usize) -> Error {
    Error::Launch(LaunchError::Extent { kernel, param, required, actual })
}

/// Checks that the launch gives the kernel at least the `required` bytes of dynamic shared
/// memory its declaration states (`shared = expr`), `given` being `cfg.shared_mem_bytes`.
///
/// # Errors
///
/// [`LaunchError::SharedMemory`] when it gives fewer.
#[inline(always)]
pub fn check_shared(kernel: &'static str, expr: &'static str, required: u64, given: u32) -> Result<()> {
    if u64::from(given) < required {
        return Err(too_little_shared(kernel, expr, required, given));
    }
    Ok(())
}

#[cold]
#[inline(never)]
fn too_little_shared(kernel: &'static str, expr: &'static str, required: u64, given: u32) -> Error {
    Error::Launch(LaunchError::SharedMemory { kernel, expr, required, given })
}

/// Checks that `cfg` launches at most [`MAX_THREADS_PER_LAUNCH`] threads in all.
///
/// # Errors
///
/// [`LaunchError::TooManyThreads`] when it launches more.
#[inline(always)]
pub fn check_threads(kernel: &'static str, cfg: &LaunchConfig) -> Result<()> {
    let (g, b) = (cfg.grid_dim, cfg.block_dim);
    // Six factors below 2^32 each: a product of two fits in u64, the rest saturate.
    let blocks = (u64::from(g.0) * u64::from(g.1)).saturating_mul(u64::from(g.2));
    let per_block = (u64::from(b.0) * u64::from(b.1)).saturating_mul(u64::from(b.2));
    let total = blocks.saturating_mul(per_block);
    if total > MAX_THREADS_PER_LAUNCH {
        return Err(too_many_threads(kernel, total));
    }
    Ok(())
}

#[cold]
#[inline(never)]
fn too_many_threads(kernel: &'static str, threads: u64) -> Error {
    Error::Launch(LaunchError::TooManyThreads { kernel, threads, max: MAX_THREADS_PER_LAUNCH })
}

/// For the setters of generated graph structs (`set_<scalar>`): whether the extent `value` is a
/// number of elements of at most `len`.
///
/// # Errors
///
/// The extent's value when it is larger than `len`; `None` when it has none (the evaluation
/// failed, or the value is negative). The setter turns it into [`GraphError::ScalarBreaksExtent`](crate::GraphError::ScalarBreaksExtent).
#[inline(always)]
pub fn within<I: ExtentInt>(value: Partial<I>, len: u64) -> std::result::Result<(), Option<u64>> {
    let v: i128 = value.map_err(|_| None)?.into();
    if v < 0 {
        return Err(None);
    }
    // Every non-negative `ExtentInt` fits in `u64`.
    let v = v as u64;
    if v > len {
        return Err(Some(v));
    }
    Ok(())
}

/// The device bytes `[start, end)` an argument's extent covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ByteRange {
    /// The argument's device address.
    pub start: u64,
    /// One past its extent's last byte.
    pub end: u64,
}

impl ByteRange {
    /// The bytes of `extent` elements of `T` from device address `addr`.
    #[inline(always)]
    pub fn of<T>(addr: u64, extent: u64) -> Self {
        // `extent` elements fit in the argument's allocation (checked first), so neither
        // operation saturates for a real argument.
        let bytes = extent.saturating_mul(std::mem::size_of::<T>() as u64);
        ByteRange { start: addr, end: addr.saturating_add(bytes) }
    }

    /// True when the two ranges share a byte (an empty range shares none).
    #[inline(always)]
    pub fn overlaps(self, other: ByteRange) -> bool {
        self.start < other.end && other.start < self.end && self.start < self.end && other.start < other.end
    }
}

/// Checks that `written` (a parameter the kernel writes) and `other` do not overlap.
///
/// # Errors
///
/// [`LaunchError::Aliasing`] when they do.
#[inline(always)]
pub fn check_disjoint(
    kernel: &'static str,
    written: &'static str,
    written_bytes: ByteRange,
    other: &'static str,
    other_bytes: ByteRange,
) -> Result<()> {
    if written_bytes.overlaps(other_bytes) {
        return Err(aliasing(kernel, written, other));
    }
    Ok(())
}

#[cold]
#[inline(never)]
fn aliasing(kernel: &'static str, written: &'static str, other: &'static str) -> Error {
    Error::Launch(LaunchError::Aliasing { kernel, written, other })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::GraphError;

    #[test]
    fn extents_are_computed_checked_in_their_type() {
        let batch_times_n = mul(scalar::<i32, i32>("batch", 1 << 10), scalar::<i32, i32>("n", 1 << 10));
        assert!(matches!(extent("k", "x", "batch * n", batch_times_n), Ok(0x10_0000)));
        // 2^16 * 2^16 overflows C's `int`: refused even though it fits in 64 bits.
        let too_big = mul(scalar::<i32, i32>("n", 1 << 16), scalar::<i32, i32>("n", 1 << 16));
        let err = extent("k", "x", "n * n", too_big).unwrap_err();
        assert!(matches!(&err, Error::Launch(LaunchError::ExtentArithmetic { kernel: "k", param: "x", .. })), "{err}");
        assert_eq!(
            err.to_string(),
            "launching kernel `k`: the extent of `x` cannot be evaluated: in `n * n`, `*` overflows `i32`"
        );
        let negative = sub(lit(1i32), scalar::<i32, i32>("n", 3));
        assert_eq!(
            extent("k", "x", "1 - n", negative).unwrap_err().to_string(),
            "launching kernel `k`: the extent of `x` cannot be evaluated: `1 - n` is -2, which is negative"
        );
        assert_eq!(div(lit(4u32), lit(0u32)), Err(ExtentFault::DivisionByZero { op: "/" }));
        assert_eq!(rem(lit(i64::MIN), lit(-1i64)), Err(ExtentFault::Overflow { op: "%", ty: "i64" }));
        assert_eq!(sub(lit(1u32), lit(2u32)), Err(ExtentFault::Overflow { op: "-", ty: "u32" }));
        assert_eq!(scalar::<u64, i64>("n", -1), Err(ExtentFault::Conversion { scalar: "n", value: -1, ty: "u64" }));
        assert_eq!(min(lit(3i32), max(lit(1i32), lit(2i32))), Ok(2));
    }

    #[test]
    fn parts_convert_to_wider_types_as_c_converts_them() {
        // `(end - start) + offset`, `end`, `start` `u32` and `offset` `i64`: C subtracts in
        // `unsigned int` (1 - 2 wraps to 4294967295) and adds in `long long`.
        let span = |end: u32, start: u32, offset: i64| {
            add(
                convert::<i64, u32>(sub(scalar("end", end), scalar("start", start))),
                scalar::<i64, i64>("offset", offset),
            )
        };
        assert_eq!(span(5, 2, 10), Ok(13));
        assert_eq!(span(1, 2, 10), Err(ExtentFault::Overflow { op: "-", ty: "u32" }));
        // `(a - b) * c`, `a`, `b` `int` and `c` `unsigned int`: a negative `a - b` converts to
        // a huge `unsigned int` in C.
        let wrapped = convert::<u32, i32>(sub(scalar("a", 1i32), scalar("b", 2i32)));
        assert_eq!(wrapped, Err(ExtentFault::Wrap { value: -1, ty: "u32" }));
        assert_eq!(
            extent("k", "x", "(a - b) * c", mul(wrapped, scalar::<u32, u32>("c", 1))).unwrap_err().to_string(),
            "launching kernel `k`: the extent of `x` cannot be evaluated: in `(a - b) * c`, an operand of value -1 \
             does not fit in `u32`, which C converts it to"
        );
        assert_eq!(convert::<u64, i64>(lit(-1i64)), Err(ExtentFault::Wrap { value: -1, ty: "u64" }));
        assert_eq!(convert::<i64, i32>(lit(-1i32)), Ok(-1));
        assert_eq!(convert::<u64, u32>(lit(u32::MAX)), Ok(u64::from(u32::MAX)));
        assert_eq!(within(convert::<i64, i32>(mul(lit(1i32 << 16), lit(1 << 16))), u64::MAX), Err(None));
    }

    #[test]
    fn setter_extents_are_within_their_buffers() {
        assert_eq!(within(scalar::<i32, i32>("n", 16), 16), Ok(()));
        assert_eq!(within(scalar::<i32, i32>("n", 17), 16), Err(Some(17)));
        assert_eq!(within(scalar::<i32, i32>("n", -1), 16), Err(None));
        assert_eq!(within(mul(scalar::<i32, i32>("n", 1 << 16), lit(1 << 16)), u64::MAX), Err(None));
        assert_eq!(within(scalar::<u64, u64>("n", u64::MAX), u64::MAX), Ok(()));
        let err = Error::Graph(GraphError::ScalarBreaksExtent {
            graph: "G",
            scalar: "n",
            node: "affine",
            param: "x",
            expr: "n",
            buffer: "x",
            required: Some(4096),
            len: 256,
        });
        assert_eq!(
            err.to_string(),
            "G::set_n: refused (nothing changed): the extent `n` of `x` in node `affine` would be 4096 elements, but buffer `x` holds 256"
        );
    }

    #[test]
    fn lengths_and_overlaps() {
        assert!(check_len("k", "x", 4, 4).is_ok());
        let err = check_len("k", "x", 1 << 20, 1).unwrap_err();
        assert!(matches!(
            err,
            Error::Launch(LaunchError::Extent { kernel: "k", param: "x", required: 0x10_0000, actual: 1 })
        ));
        let a = ByteRange::of::<f32>(0x1000, 4);
        assert_eq!(a, ByteRange { start: 0x1000, end: 0x1010 });
        assert!(!a.overlaps(ByteRange::of::<f32>(0x1010, 4)), "adjacent ranges are disjoint");
        assert!(a.overlaps(ByteRange::of::<f32>(0x100c, 1)));
        assert!(!a.overlaps(ByteRange::of::<f32>(0x1004, 0)), "an empty range overlaps nothing");
        let err = check_disjoint("k", "y", a, "x", ByteRange::of::<u8>(0x1000, 1)).unwrap_err();
        assert!(matches!(err, Error::Launch(LaunchError::Aliasing { kernel: "k", written: "y", other: "x" })));
        assert!(check_disjoint("k", "y", a, "x", ByteRange::of::<u8>(0x2000, 16)).is_ok());
    }

    #[test]
    fn thread_counts() {
        let cfg = |grid: (u32, u32, u32), block: (u32, u32, u32)| LaunchConfig {
            grid_dim: grid,
            block_dim: block,
            shared_mem_bytes: 0,
        };
        assert!(check_threads("k", &cfg((1 << 21, 1, 1), (1024, 1, 1))).is_ok(), "exactly 2^31");
        let err = check_threads("k", &cfg((1 << 21, 1, 1), (1024, 2, 1))).unwrap_err();
        assert!(
            matches!(err, Error::Launch(LaunchError::TooManyThreads { kernel: "k", threads: 0x1_0000_0000, .. })),
            "{err}"
        );
        let huge = cfg((u32::MAX, u32::MAX, u32::MAX), (u32::MAX, u32::MAX, u32::MAX));
        assert!(matches!(
            check_threads("k", &huge),
            Err(Error::Launch(LaunchError::TooManyThreads { threads: u64::MAX, .. }))
        ));
    }
}
