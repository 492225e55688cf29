//! [`DeviceStruct`]: a `#[repr(C)]` Rust twin of a C struct that kernels take by value or by
//! pointer, and the `const fn` helpers the code `#[kernel]` generates uses to check, at compile
//! time, that the twin's layout is the one nvcc compiled (field offsets, sizes, size and
//! alignment), with messages that name both numbers.
//!
//! `#[derive(kgraph::DeviceStruct)]` implements the trait (and [`crate::Pod`] and cudarc's
//! `DeviceRepr`, `ValidAsZeroBits`) on a struct that is `bytemuck::Pod`; see the derive.

use crate::memory::pod::Pod;

/// A `#[repr(C)]` struct of [`Pod`] fields with no padding, with its layout as Rust laid it out.
///
/// Implement it with `#[derive(kgraph::DeviceStruct)]`, which also requires
/// `bytemuck::Pod` (`#[derive(bytemuck::Pod, bytemuck::Zeroable, Clone, Copy)]`): bytemuck's
/// derive refuses padding and non-`Pod` fields, which is exactly what makes every bit pattern
/// a valid value.
///
/// The trait is safe to implement because nothing unsafe trusts its constants: `#[kernel]`
/// checks a twin through `size_of`, `align_of` and `offset_of!` of the type itself, and reads
/// `FIELDS` only to compare a nested twin's fields by name, offset and size, inside a field
/// whose own offset and size are checked that way (what the bytes mean is `Pod`'s promise).
pub trait DeviceStruct: Pod {
    /// The struct's Rust name.
    const NAME: &'static str;
    /// Each field: name, offset in bytes, size in bytes, in declaration order.
    const FIELDS: &'static [(&'static str, usize, usize)];
    /// `size_of::<Self>()`.
    const SIZE: usize;
    /// `align_of::<Self>()`.
    const ALIGN: usize;
}

/// A message built at compile time (a `const` panic cannot format numbers itself).
#[doc(hidden)]
pub struct Message {
    buf: [u8; 512],
    len: usize,
}

#[doc(hidden)]
impl Message {
    /// An empty message.
    pub const fn new() -> Self {
        Message { buf: [0; 512], len: 0 }
    }

    /// Appends `s` (cut at 512 bytes).
    pub const fn push(mut self, s: &str) -> Self {
        let bytes = s.as_bytes();
        let mut i = 0;
        while i < bytes.len() && self.len < self.buf.len() {
            self.buf[self.len] = bytes[i];
            self.len += 1;
            i += 1;
        }
        self
    }

    /// Appends `n` in decimal.
    pub const fn num(mut self, mut n: usize) -> Self {
        let mut digits = [0u8; 20];
        let mut k = 0;
        if n == 0 {
            digits[0] = b'0';
            k = 1;
        }
        while n > 0 {
            digits[k] = b'0' + (n % 10) as u8;
            n /= 10;
            k += 1;
        }
        while k > 0 && self.len < self.buf.len() {
            k -= 1;
            self.buf[self.len] = digits[k];
            self.len += 1;
        }
        self
    }

    /// The text (ASCII and whole UTF-8 pieces only; a cut multi-byte character reads `?`).
    pub const fn as_str(&self) -> &str {
        let (head, _) = self.buf.split_at(self.len);
        match core::str::from_utf8(head) {
            Ok(s) => s,
            Err(_) => "kgraph: struct layout mismatch",
        }
    }
}

impl Default for Message {
    fn default() -> Self {
        Message::new()
    }
}

/// Panics (at compile time, in a `const`) with "`context`: C `what` N, Rust `what` M" when
/// `c != rust`, e.g. "kgraph: struct `Params` field `dt` (C `Params`, kernels/x.cu:3): C offset 8,
/// Rust offset 12".
#[doc(hidden)]
pub const fn expect_eq(context: &str, what: &str, c: usize, rust: usize) {
    if c != rust {
        let m = Message::new().push(context).push(": C ").push(what).push(" ").num(c);
        let m = m.push(", Rust ").push(what).push(" ").num(rust);
        panic!("{}", m.as_str());
    }
}

/// The size of the field a projection `|s| &s.field` points at, without naming its type.
#[doc(hidden)]
pub const fn field_size<S, F>(_project: fn(&S) -> &F) -> usize {
    core::mem::size_of::<F>()
}

/// The alignment of the field a projection `|s| &s.field` points at.
#[doc(hidden)]
pub const fn field_align<S, F>(_project: fn(&S) -> &F) -> usize {
    core::mem::align_of::<F>()
}

/// The fields of the [`DeviceStruct`] a projection points at (a nested struct field).
#[doc(hidden)]
pub const fn nested_fields<S, F: DeviceStruct>(_project: fn(&S) -> &F) -> &'static [(&'static str, usize, usize)] {
    F::FIELDS
}

/// The fields of the [`DeviceStruct`] element of an array field `|s| &s.field` (`[F; N]`).
#[doc(hidden)]
pub const fn nested_array_fields<S, F: DeviceStruct, const N: usize>(
    _project: fn(&S) -> &[F; N],
) -> &'static [(&'static str, usize, usize)] {
    F::FIELDS
}

const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Checks a nested struct's Rust fields against the C struct's (`c`: name, offset, size each):
/// every C field is a Rust field of the same name, offset and size. The Rust twin may have more
/// fields (explicit padding where C pads implicitly, which bytemuck requires); the sizes of the
/// two structs are compared separately.
#[doc(hidden)]
pub const fn expect_fields(context: &str, rust: &[(&str, usize, usize)], c: &[(&str, usize, usize)]) {
    let mut i = 0;
    while i < c.len() {
        let (name, c_offset, c_size) = c[i];
        let mut j = 0;
        while j < rust.len() && !str_eq(rust[j].0, name) {
            j += 1;
        }
        if j == rust.len() {
            let m = Message::new().push(context).push(": the Rust twin has no field `").push(name).push("`");
            panic!("{}", m.as_str());
        }
        let (_, offset, size) = rust[j];
        let what = Message::new().push(context).push(" field `").push(name).push("`");
        expect_eq(what.as_str(), "offset", c_offset, offset);
        expect_eq(what.as_str(), "size", c_size, size);
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_formats_numbers() {
        let m = Message::new().push("a ").num(0).push(" ").num(48).push(" ").num(usize::MAX);
        assert_eq!(m.as_str(), format!("a 0 48 {}", usize::MAX));
    }

    #[test]
    #[should_panic(expected = "ctx field `dt`: C offset 8, Rust offset 12")]
    fn expect_eq_names_both_numbers() {
        expect_eq("ctx field `dt`", "offset", 8, 12);
    }

    #[test]
    fn expect_fields_accepts_equal_lists_and_explicit_padding() {
        expect_fields("ctx", &[("a", 0, 4), ("b", 4, 4)], &[("a", 0, 4), ("b", 4, 4)]);
        expect_fields("ctx", &[("a", 0, 1), ("_pad", 1, 3), ("b", 4, 4)], &[("a", 0, 1), ("b", 4, 4)]);
    }

    #[test]
    #[should_panic(expected = "ctx: the Rust twin has no field `b`")]
    fn expect_fields_names_a_missing_field() {
        expect_fields("ctx", &[("a", 0, 4), ("c", 4, 4)], &[("a", 0, 4), ("b", 4, 4)]);
    }

    #[test]
    #[should_panic(expected = "ctx field `a`: C offset 0, Rust offset 4")]
    fn expect_fields_names_a_moved_field() {
        expect_fields("ctx", &[("b", 0, 4), ("a", 4, 4)], &[("a", 0, 4), ("b", 4, 4)]);
    }
}
