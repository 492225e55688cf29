//! Module images checked before the driver sees them. `cuModuleLoadData` takes a bare pointer
//! and reads until the format says stop: an ELF cubin's header and section table, a fatbin's
//! size fields, PTX text's terminating NUL. A truncated image, or one whose header announces
//! more bytes than the slice holds, would make the driver read past the slice (a host
//! over-read). So every image kgraph loads is framed here first: each length the format
//! declares must lie within the slice, and PTX is handed over with its NUL.

/// Why an image was refused (the text of `ModuleError::Load`'s detail).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ImageError(pub(crate) String);

/// ELF magic (`\x7fELF`).
const ELF_MAGIC: [u8; 4] = [0x7f, b'E', b'L', b'F'];
/// A fatbin's magic (`0xBA55ED50`, little-endian).
const FATBIN_MAGIC: u32 = 0xBA55_ED50;
/// Bytes of an ELF64 header, of one section header and of one program header.
const ELF64_HEADER: usize = 64;
const ELF64_SECTION: usize = 64;
const ELF64_SEGMENT: usize = 56;
/// A section that occupies no bytes in the file (`.bss`-like): its size is not in the image.
const SHT_NOBITS: u32 = 8;
/// Bytes of a fatbin's header (magic, version, header size, fat size) and of an entry's
/// leading fields (kind, version, header size, padded payload size).
const FATBIN_HEADER: usize = 16;
const FATBIN_ENTRY: usize = 16;

/// The bytes to give `cuModuleLoadData` for `image`: the image itself for a cubin or fatbin
/// whose declared lengths all lie within it, or PTX text with a NUL appended when it has none.
/// One copy (the driver wants an owned buffer through cudarc anyway), no other work.
pub(crate) fn checked_image(image: &[u8]) -> Result<Vec<u8>, ImageError> {
    if image.starts_with(&ELF_MAGIC) {
        check_elf(image)?;
        return Ok(image.to_vec());
    }
    if read_u32(image, 0) == Some(FATBIN_MAGIC) {
        check_fatbin(image)?;
        return Ok(image.to_vec());
    }
    check_ptx(image)
}

/// A little-endian integer of `N` bytes at `at`, if the slice holds it.
fn read_le<const N: usize>(image: &[u8], at: usize) -> Option<[u8; N]> {
    image.get(at..at.checked_add(N)?)?.try_into().ok()
}

fn read_u16(image: &[u8], at: usize) -> Option<u16> {
    read_le::<2>(image, at).map(u16::from_le_bytes)
}

fn read_u32(image: &[u8], at: usize) -> Option<u32> {
    read_le::<4>(image, at).map(u32::from_le_bytes)
}

fn read_u64(image: &[u8], at: usize) -> Option<u64> {
    read_le::<8>(image, at).map(u64::from_le_bytes)
}

/// `Ok` when `count` records of `size` bytes from `offset` lie within `len` bytes.
fn within(len: usize, offset: u64, count: u64, size: u64, what: &str) -> Result<(), ImageError> {
    let end = count.checked_mul(size).and_then(|bytes| bytes.checked_add(offset));
    match end {
        Some(end) if end <= len as u64 => Ok(()),
        _ => Err(ImageError(format!(
            "truncated or corrupt image: {what} ({count} x {size} bytes at offset {offset}) ends past its {len} bytes"
        ))),
    }
}

/// An ELF64 little-endian cubin: the header, the section and program header tables, and every
/// section's and segment's bytes within the slice.
fn check_elf(image: &[u8]) -> Result<(), ImageError> {
    let len = image.len();
    if len < ELF64_HEADER {
        return Err(ImageError(format!("truncated cubin: {len} bytes, less than the 64-byte ELF header")));
    }
    if image[4] != 2 || image[5] != 1 {
        return Err(ImageError("not a cubin: only 64-bit little-endian ELF images are loaded".into()));
    }
    let field = |at, what: &str| read_u64(image, at).ok_or_else(|| ImageError(format!("cubin header lacks {what}")));
    let half = |at| u64::from(read_u16(image, at).unwrap_or(0));
    let (phoff, shoff) = (field(0x20, "e_phoff")?, field(0x28, "e_shoff")?);
    let (ehsize, phentsize, phnum, shentsize, shnum) = (half(0x34), half(0x36), half(0x38), half(0x3a), half(0x3c));
    within(len, 0, 1, ehsize.max(ELF64_HEADER as u64), "the ELF header")?;
    if (phnum > 0 && phentsize < ELF64_SEGMENT as u64) || (shnum > 0 && shentsize < ELF64_SECTION as u64) {
        return Err(ImageError("corrupt cubin: ELF table entries smaller than ELF64's".into()));
    }
    within(len, phoff, phnum, phentsize, "the program header table")?;
    within(len, shoff, shnum, shentsize, "the section header table")?;
    for i in 0..shnum {
        // In bounds: the whole table was checked above.
        let at = (shoff + i * shentsize) as usize;
        let kind = read_u32(image, at + 4).unwrap_or(0);
        let (offset, size) = (read_u64(image, at + 24).unwrap_or(0), read_u64(image, at + 32).unwrap_or(0));
        if kind != SHT_NOBITS {
            within(len, offset, 1, size, &format!("section {i}"))?;
        }
    }
    for i in 0..phnum {
        let at = (phoff + i * phentsize) as usize;
        let (offset, file_size) = (read_u64(image, at + 8).unwrap_or(0), read_u64(image, at + 32).unwrap_or(0));
        within(len, offset, 1, file_size, &format!("segment {i}"))?;
    }
    Ok(())
}

/// A fatbin: its header, the fat size it declares, and each entry (header and padded payload)
/// within the slice.
fn check_fatbin(image: &[u8]) -> Result<(), ImageError> {
    let len = image.len();
    let (Some(header), Some(fat)) = (read_u16(image, 6), read_u64(image, 8)) else {
        return Err(ImageError(format!("truncated fatbin: {len} bytes, less than its 16-byte header")));
    };
    let header = u64::from(header);
    if header < FATBIN_HEADER as u64 {
        return Err(ImageError(format!("corrupt fatbin: a header size of {header} bytes")));
    }
    within(len, header, 1, fat, "the fatbin's entries")?;
    let (mut at, end) = (header, header + fat);
    while at < end {
        within(end as usize, at, 1, FATBIN_ENTRY as u64, "a fatbin entry's header")?;
        let entry_header = u64::from(read_u32(image, at as usize + 4).unwrap_or(0));
        let payload = u64::from(read_u32(image, at as usize + 8).unwrap_or(0));
        if entry_header < FATBIN_ENTRY as u64 {
            return Err(ImageError(format!("corrupt fatbin: an entry header of {entry_header} bytes")));
        }
        within(end as usize, at, 1, entry_header + payload, "a fatbin entry")?;
        at += entry_header + payload;
    }
    Ok(())
}

/// PTX text: handed over up to its first NUL, with one appended when the slice has none.
fn check_ptx(image: &[u8]) -> Result<Vec<u8>, ImageError> {
    let text = match image.iter().position(|&b| b == 0) {
        Some(nul) => &image[..nul],
        None => image,
    };
    if text.trim_ascii().is_empty() {
        return Err(ImageError("empty image: neither a cubin, a fatbin nor PTX text".into()));
    }
    let mut owned = Vec::with_capacity(text.len() + 1);
    owned.extend_from_slice(text);
    owned.push(0);
    Ok(owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A minimal ELF64 LE image: header, one section of `payload` bytes, its section table.
    fn elf(payload: usize) -> Vec<u8> {
        let mut image = vec![0u8; ELF64_HEADER];
        image[..4].copy_from_slice(&ELF_MAGIC);
        image[4] = 2;
        image[5] = 1;
        image[0x34..0x36].copy_from_slice(&(ELF64_HEADER as u16).to_le_bytes());
        let data_at = image.len();
        image.extend(std::iter::repeat(0xAB).take(payload));
        let shoff = image.len() as u64;
        image[0x28..0x30].copy_from_slice(&shoff.to_le_bytes());
        image[0x3a..0x3c].copy_from_slice(&(ELF64_SECTION as u16).to_le_bytes());
        image[0x3c..0x3e].copy_from_slice(&1u16.to_le_bytes());
        let mut section = [0u8; ELF64_SECTION];
        section[4..8].copy_from_slice(&1u32.to_le_bytes()); // SHT_PROGBITS
        section[24..32].copy_from_slice(&(data_at as u64).to_le_bytes());
        section[32..40].copy_from_slice(&(payload as u64).to_le_bytes());
        image.extend_from_slice(&section);
        image
    }

    /// A fatbin with one entry of `payload` bytes.
    fn fatbin(payload: u32) -> Vec<u8> {
        let mut entry = vec![0u8; 64];
        entry[4..8].copy_from_slice(&64u32.to_le_bytes());
        entry[8..12].copy_from_slice(&payload.to_le_bytes());
        entry.extend(std::iter::repeat(0xCD).take(payload as usize));
        let mut image = FATBIN_MAGIC.to_le_bytes().to_vec();
        image.extend_from_slice(&1u16.to_le_bytes());
        image.extend_from_slice(&(FATBIN_HEADER as u16).to_le_bytes());
        image.extend_from_slice(&(entry.len() as u64).to_le_bytes());
        image.extend_from_slice(&entry);
        image
    }

    #[test]
    fn a_whole_cubin_is_passed_as_it_is() {
        let image = elf(100);
        assert_eq!(checked_image(&image).unwrap(), image);
    }

    #[test]
    fn a_truncated_cubin_is_refused() {
        let image = elf(100);
        // Cut inside the section table, inside the section's bytes, inside the header.
        for cut in [image.len() - 1, ELF64_HEADER + 50, 40] {
            let err = checked_image(&image[..cut]).unwrap_err();
            assert!(err.0.contains("truncated") || err.0.contains("past"), "cut {cut}: {}", err.0);
        }
    }

    #[test]
    fn a_cubin_whose_section_claims_more_bytes_than_it_has_is_refused() {
        let mut image = elf(100);
        let at = image.len() - ELF64_SECTION + 32;
        image[at..at + 8].copy_from_slice(&(1u64 << 40).to_le_bytes());
        assert!(checked_image(&image).unwrap_err().0.contains("section 0"));
        // A section table announced past the end, or with an overflowing size.
        let mut image = elf(8);
        image[0x28..0x30].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(checked_image(&image).unwrap_err().0.contains("section header table"));
    }

    #[test]
    fn a_whole_fatbin_is_passed_and_an_oversized_one_is_refused() {
        let image = fatbin(32);
        assert_eq!(checked_image(&image).unwrap(), image);
        // Header announcing more than the slice holds.
        let mut big = image.clone();
        big[8..16].copy_from_slice(&(image.len() as u64 * 4).to_le_bytes());
        assert!(checked_image(&big).unwrap_err().0.contains("fatbin's entries"));
        // An entry whose payload runs past the fat size.
        let mut entry = image.clone();
        entry[FATBIN_HEADER + 8..FATBIN_HEADER + 12].copy_from_slice(&1000u32.to_le_bytes());
        assert!(checked_image(&entry).unwrap_err().0.contains("a fatbin entry"));
        // Truncated inside its own header.
        assert!(checked_image(&image[..10]).unwrap_err().0.contains("truncated fatbin"));
    }

    #[test]
    fn ptx_gets_its_terminating_nul() {
        let ptx = b".version 8.0\n.target sm_90\n";
        let checked = checked_image(ptx).unwrap();
        assert_eq!(checked.last(), Some(&0));
        assert_eq!(&checked[..ptx.len()], ptx);
        // Already terminated: handed over up to the first NUL, once.
        let mut terminated = ptx.to_vec();
        terminated.extend_from_slice(b"\0garbage");
        assert_eq!(checked_image(&terminated).unwrap(), checked);
        assert!(checked_image(b"  \n").is_err());
    }
}
