//! The doorbell: 32 `u32` words of mapped pinned memory shared by the host and a resident
//! kernel (`kg_resident.cuh` holds the same indices). The host writes `stop` and the idle
//! limit; the kernel writes `done` and `exit`. (A step's input and output travel as pairs
//! carrying its sequence number, `pairs.rs`, so no word announces a step.) Host accesses are atomic loads and stores
//! of single words through the host pointer (acquire / release), never references.

use std::sync::atomic::{AtomicU32, Ordering};

use crate::error::Result;
use crate::memory::device::Device;
use crate::memory::mapped::MappedBuffer;

/// Non-zero: the loop exits at its next look (read with every poll of the input).
pub(crate) const STOP: usize = 1;
/// The idle limit in nanoseconds, low and high halves (read once at launch).
pub(crate) const IDLE_LO: usize = 2;
pub(crate) const IDLE_HI: usize = 3;
/// The sequence number of the last step the kernel finished (in its own 64-byte line).
pub(crate) const DONE: usize = 16;
/// Why the loop exited (0 while it runs).
pub(crate) const EXIT: usize = 17;
/// Words in the doorbell.
pub(crate) const WORDS: usize = 32;

// The host-written words and the device-written ones sit in different 64-byte lines.
const _: () = assert!((DONE * 4) / 64 != (STOP * 4) / 64 && (DONE * 4) / 64 != (IDLE_HI * 4) / 64 && EXIT < WORDS);

/// Why a resident loop exited, as its `exit` word says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Exit {
    /// Running (or not launched yet).
    None,
    /// The host asked it to stop.
    Stop,
    /// No doorbell within the idle limit.
    Idle,
    /// Launched with more than one block.
    Shape,
    /// A value the loop never writes.
    Unknown(u32),
}

impl Exit {
    pub(crate) fn from_word(w: u32) -> Exit {
        match w {
            0 => Exit::None,
            1 => Exit::Stop,
            2 => Exit::Idle,
            3 => Exit::Shape,
            other => Exit::Unknown(other),
        }
    }
}

/// The next sequence number after `seq`: wraps past `u32::MAX` to 1 (0 means "none" to the
/// kernel).
pub(crate) fn next_seq(seq: u32) -> u32 {
    match seq.wrapping_add(1) {
        0 => 1,
        n => n,
    }
}

/// The doorbell's mapped words. Its device address is handed out unlent (the buffer never
/// waits for the context: the resident kernel runs until stopped, so a context wait would wait
/// for it); the owner keeps the buffer alive until the kernel has exited.
pub(crate) struct Bell {
    words: MappedBuffer<u32>,
}

impl Bell {
    pub(crate) fn new(device: &Device, idle_ns: u64) -> Result<Bell> {
        let bell = Bell { words: MappedBuffer::new(device, WORDS)? };
        bell.store(IDLE_LO, idle_ns as u32);
        bell.store(IDLE_HI, (idle_ns >> 32) as u32);
        Ok(bell)
    }

    fn word(&self, i: usize) -> &AtomicU32 {
        assert!(i < WORDS);
        // SAFETY: `i < WORDS`, so the pointer is in bounds of the live, page-aligned buffer
        // (aligned for `u32`); the memory is only ever accessed atomically by the host (here)
        // and by the device's own loads and stores, never through a Rust reference to `u32`.
        unsafe { AtomicU32::from_ptr(self.words.host_ptr().add(i)) }
    }

    pub(crate) fn load(&self, i: usize) -> u32 {
        self.word(i).load(Ordering::Acquire)
    }

    pub(crate) fn store(&self, i: usize, v: u32) {
        self.word(i).store(v, Ordering::Release)
    }

    /// The device address of word 0 (the kernel's `KgResidentBell*`).
    pub(crate) fn device_addr(&self) -> u64 {
        self.words.device_addr_unlent()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequence_numbers_skip_zero_when_they_wrap() {
        assert_eq!(next_seq(0), 1);
        assert_eq!(next_seq(41), 42);
        assert_eq!(next_seq(u32::MAX), 1);
    }

    #[test]
    fn the_word_layout_matches_the_device_header() {
        let header = crate::resident::HEADER;
        for (name, value) in [
            ("KG_BELL_STOP", STOP),
            ("KG_BELL_IDLE_LO", IDLE_LO),
            ("KG_BELL_IDLE_HI", IDLE_HI),
            ("KG_BELL_DONE", DONE),
            ("KG_BELL_EXIT", EXIT),
            ("KG_BELL_WORDS", WORDS),
        ] {
            assert!(header.contains(&format!("#define {name} {value}\n")), "{name} is not {value} in kg_resident.cuh");
        }
    }

    #[test]
    fn exit_words_read_as_the_header_defines_them() {
        let header = crate::resident::HEADER;
        for (name, word, exit) in [
            ("KG_RESIDENT_EXIT_STOP", 1, Exit::Stop),
            ("KG_RESIDENT_EXIT_IDLE", 2, Exit::Idle),
            ("KG_RESIDENT_EXIT_SHAPE", 3, Exit::Shape),
        ] {
            assert!(header.contains(&format!("#define {name} {word}\n")));
            assert_eq!(Exit::from_word(word), exit);
        }
        assert_eq!(Exit::from_word(0), Exit::None);
        assert_eq!(Exit::from_word(9), Exit::Unknown(9));
    }
}
