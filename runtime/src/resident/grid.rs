//! The grid-wide resident loop's host-side sizing: how many blocks a cooperative launch of it
//! gets ([`co_resident_blocks`]) and the step words it keeps in device memory
//! ([`scratch_words`], the layout `kg_resident_grid.cuh` reads).

use cudarc::driver::sys::CUfunction_attribute_enum::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK;
use cudarc::driver::CudaFunction;

use crate::context::Stream;
use crate::error::{Error, LaunchError, Result};

/// The shape of a grid-wide resident loop ([`Resident::new_grid`](super::Resident::new_grid)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GridShape {
    /// Threads per block (every block alike; a multiple of 32).
    pub block: (u32, u32, u32),
    /// At most this many blocks (at least 1); `None`: one per multiprocessor the resident's
    /// stream may use (all of the GPU's, or its green context's). Never more than the device
    /// keeps resident at once.
    pub max_blocks: Option<u32>,
}

impl GridShape {
    /// One block of `threads` per multiprocessor.
    pub fn per_sm(threads: u32) -> Self {
        GridShape { block: (threads, 1, 1), max_blocks: None }
    }
}

/// The blocks of `shape` a cooperative launch of `function` on `stream` gets: `max_blocks` (or
/// one per multiprocessor of the stream), at least 1 and at most the blocks its multiprocessors
/// keep resident at once.
pub(crate) fn co_resident_blocks(
    stream: &Stream,
    function: &CudaFunction,
    kernel: &'static str,
    shape: GridShape,
) -> Result<u32> {
    // First: it makes the stream's context current, which the occupancy query reads.
    let sms = stream.sm_count()?;
    let (x, y, z) = shape.block;
    let threads = x.saturating_mul(y).saturating_mul(z);
    let refused = Error::Launch(LaunchError::NotCoResident { kernel, block: threads });
    let bound = function
        .get_attribute(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)
        .map_err(|e| Error::driver(format!("`{kernel}`: its most threads per block"), e))?;
    if threads == 0 || i64::from(threads) > i64::from(bound) {
        return Err(refused);
    }
    let per_sm = function.occupancy_max_active_blocks_per_multiprocessor(threads, 0, None).map_err(|e| {
        Error::driver(format!("`{kernel}`: the blocks of {threads} threads one multiprocessor holds"), e)
    })?;
    fitted_blocks(shape.max_blocks, sms, per_sm).ok_or(refused)
}

/// `asked` (or `sms`) clamped to 1..=`sms * per_sm`; `None` when not one block fits.
fn fitted_blocks(asked: Option<u32>, sms: u32, per_sm: u32) -> Option<u32> {
    let fit = sms.saturating_mul(per_sm);
    (fit > 0).then(|| asked.unwrap_or(sms).clamp(1, fit))
}

/// Words of the grid loop's scratch for records of `in_words` and `out_words` words:
/// `KG_GRID_SCRATCH_WORDS` of `kg_resident_grid.cuh` (the sequence number in a 16-byte slot,
/// the input rounded up to 16 bytes, then the output).
pub(crate) const fn scratch_words(in_words: usize, out_words: usize) -> usize {
    4 + in_words.div_ceil(4) * 4 + out_words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_clamped_to_what_stays_resident() {
        assert_eq!(fitted_blocks(None, 132, 2), Some(132), "one per multiprocessor by default");
        assert_eq!(fitted_blocks(Some(10_000), 132, 2), Some(264), "at most what is resident at once");
        assert_eq!(fitted_blocks(Some(0), 132, 2), Some(1), "at least one");
        assert_eq!(fitted_blocks(Some(7), 8, 1), Some(7));
        assert_eq!(fitted_blocks(None, 132, 0), None, "not one block fits");
    }

    #[test]
    fn scratch_matches_the_header_layout() {
        // KG_GRID_OUT_OFFSET(in) = 4 + round_up(in, 4); the output follows.
        assert_eq!(scratch_words(1, 1), 4 + 4 + 1);
        assert_eq!(scratch_words(4, 3), 4 + 4 + 3);
        assert_eq!(scratch_words(5, 2), 4 + 8 + 2);
        let header = crate::resident::GRID_HEADER;
        assert!(header.contains("#define KG_GRID_IN_OFFSET 4u"));
        assert!(
            header.contains("#define KG_GRID_OUT_OFFSET(in_words) (KG_GRID_IN_OFFSET + (((in_words) + 3u) / 4u) * 4u)")
        );
    }
}
