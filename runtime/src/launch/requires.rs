//! What a checked `#[kernel]` launch calls for its declaration's launch-time requirements:
//! `requires(<cond>, ...)` (conditions over the integer scalar arguments and the launch's
//! shape, under which the author promises the extents hold) and `align(<param> = <bytes>)` (a
//! pointer argument whose device address must be a multiple of `bytes`, for kernels that read
//! `T*` as a wider vector).
//!
//! Conditions are evaluated in `i128`, as mathematical integers, not in C's types: every
//! scalar (at most 64 bits) and every grid or block size converts exactly, and each operation
//! is checked. An operation that leaves `i128` or divides by zero has no value, and a
//! comparison with an operand without a value is false. Conditions have no negation (only
//! `&&` and `||` over comparisons), so a fault can only make a condition false: never make a
//! false condition true. A false condition refuses the launch with
//! [`LaunchError::Requirement`].
//!
//! As in [`super::extent`], the refusals are `#[cold]` functions of their own: a launch meeting
//! its requirements makes a few integer operations and compares, with no allocation.

use crate::error::{Error, LaunchError, Result};

/// A value of a condition's arithmetic: `None` when an operation overflowed `i128` or divided
/// by zero.
pub type Value = Option<i128>;

/// An integer scalar argument (any of `i8` ... `u64`) or a launch dimension.
#[inline(always)]
pub fn int<S: Into<i128>>(value: S) -> Value {
    Some(value.into())
}

/// An integer literal or constant of the condition (`256`, `i32::MAX`).
#[inline(always)]
pub fn lit(value: i128) -> Value {
    Some(value)
}

/// `a + b`.
#[inline(always)]
pub fn add(a: Value, b: Value) -> Value {
    a?.checked_add(b?)
}

/// `a - b`.
#[inline(always)]
pub fn sub(a: Value, b: Value) -> Value {
    a?.checked_sub(b?)
}

/// `a * b`.
#[inline(always)]
pub fn mul(a: Value, b: Value) -> Value {
    a?.checked_mul(b?)
}

/// `a / b`, truncating as C does; no value for `b == 0`.
#[inline(always)]
pub fn div(a: Value, b: Value) -> Value {
    a?.checked_div(b?)
}

/// `a % b`, with the sign of `a` as in C; no value for `b == 0`.
#[inline(always)]
pub fn rem(a: Value, b: Value) -> Value {
    a?.checked_rem(b?)
}

/// `min(a, b)`.
#[inline(always)]
pub fn min(a: Value, b: Value) -> Value {
    Some(Ord::min(a?, b?))
}

/// `max(a, b)`.
#[inline(always)]
pub fn max(a: Value, b: Value) -> Value {
    Some(Ord::max(a?, b?))
}

macro_rules! comparisons {
    ($($(#[$doc:meta])* $name:ident $op:tt;)*) => {$(
        $(#[$doc])*
        #[inline(always)]
        pub fn $name(a: Value, b: Value) -> bool {
            matches!((a, b), (Some(a), Some(b)) if a $op b)
        }
    )*};
}

comparisons! {
    /// `a == b`; false when either has no value.
    eq ==;
    /// `a != b`; false when either has no value.
    ne !=;
    /// `a < b`; false when either has no value.
    lt <;
    /// `a <= b`; false when either has no value.
    le <=;
    /// `a > b`; false when either has no value.
    gt >;
    /// `a >= b`; false when either has no value.
    ge >=;
}

/// The refusal of a launch whose requirement `condition` (as written) is false, with the
/// values of the names it uses (`("input_stride", -1)`, `("block.x", 128)`).
#[cold]
#[inline(never)]
pub fn refused(kernel: &'static str, condition: &'static str, values: &[(&'static str, i128)]) -> Error {
    Error::Launch(LaunchError::Requirement { kernel, condition, values: values.to_vec() })
}

/// Checks that the device address `addr` of pointer argument `param` is a multiple of `align`
/// bytes (`align(param = <bytes>)` in the declaration). A null pointer (address 0, `None` for a
/// nullable parameter) is aligned.
///
/// # Errors
///
/// [`LaunchError::Misaligned`] when it is not.
#[inline(always)]
pub fn check_align(kernel: &'static str, param: &'static str, addr: u64, align: u64) -> Result<()> {
    // `align` is a power of two from 1 to 256 (checked by `#[kernel]`).
    if addr & (align - 1) != 0 {
        return Err(misaligned(kernel, param, addr, align));
    }
    Ok(())
}

#[cold]
#[inline(never)]
fn misaligned(kernel: &'static str, param: &'static str, addr: u64, align: u64) -> Error {
    Error::Launch(LaunchError::Misaligned { kernel, param, addr, align })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_is_exact_and_faults_make_comparisons_false() {
        // `n <= i32::MAX - grid.x * block.x`, computed without C's wrap-around.
        let headroom = sub(lit(i32::MAX.into()), mul(int(65_535u32), int(1024u32)));
        assert!(le(int(i32::MAX - 65_535 * 1024), headroom));
        assert!(!le(int(i32::MAX - 65_535 * 1024 + 1), headroom));
        // u64 * u64 * u64 leaves i128: no value, so neither `<` nor `>=` holds.
        let huge = mul(mul(int(u64::MAX), int(u64::MAX)), int(u64::MAX));
        assert_eq!(huge, None);
        assert!(!lt(huge, lit(0)) && !ge(huge, lit(0)));
        assert_eq!(div(lit(7), lit(0)), None);
        assert_eq!(rem(lit(-7), lit(2)), Some(-1), "C's `%` keeps the dividend's sign");
        assert_eq!(div(lit(-7), lit(2)), Some(-3), "C's `/` truncates");
        assert_eq!(min(lit(3), max(lit(1), lit(2))), Some(2));
        assert!(eq(int(-1i64), lit(-1)) && ne(int(0u8), lit(1)) && gt(int(2i16), lit(1)));
    }

    #[test]
    fn refusals_name_the_kernel_condition_and_values() {
        let err = refused("rms_norm", "input_stride >= 0", &[("input_stride", -4)]);
        assert!(matches!(
            &err,
            Error::Launch(LaunchError::Requirement { kernel: "rms_norm", condition: "input_stride >= 0", values })
                if values == &[("input_stride", -4)]
        ));
        assert_eq!(
            err.to_string(),
            "launching kernel `rms_norm`: its requirement `input_stride >= 0` does not hold (input_stride = -4)"
        );
        assert!(check_align("k", "x", 0x1000, 16).is_ok());
        assert!(check_align("k", "x", 0, 256).is_ok(), "a null pointer is aligned");
        let err = check_align("k", "x", 0x1004, 16).unwrap_err();
        assert!(matches!(
            err,
            Error::Launch(LaunchError::Misaligned { kernel: "k", param: "x", addr: 0x1004, align: 16 })
        ));
        assert_eq!(
            err.to_string(),
            "launching kernel `k`: argument `x` is at device address 0x1004, which is not a multiple of 16 bytes (`align(x = 16)`)"
        );
    }
}
