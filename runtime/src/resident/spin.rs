//! How the host waits for a word the device writes: spin first (the answer usually comes within
//! microseconds), then yield, then sleep in short steps, with a timeout; every so often it asks
//! the device's stream, without blocking, whether the work has ended or faulted, so a fault is
//! an error at once and never a spin until the timeout.

use std::time::{Duration, Instant};

use crate::error::Result;

/// The back-off and timeout of a spinning wait ([`crate::resident::Resident::wait`], a graph
/// struct's done-word wait).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpinPolicy {
    /// Give up after this long: [`crate::WaitError::Timeout`].
    pub timeout: Duration,
    /// Spin (`std::hint::spin_loop`) this long first: the latency path.
    pub spin: Duration,
    /// Then yield the thread (`std::thread::yield_now`) until this much time has passed.
    pub yield_until: Duration,
    /// Then sleep this long between looks.
    pub sleep: Duration,
    /// Ask the stream (`cuStreamQuery`, non-blocking) whether the work ended or faulted at most
    /// this often while spinning (every look once sleeping).
    pub poll_every: Duration,
}

impl Default for SpinPolicy {
    /// A 10 s timeout; 200 us of spinning, yields up to 2 ms, then 50 us sleeps; the stream
    /// asked every 100 us.
    fn default() -> Self {
        SpinPolicy {
            timeout: Duration::from_secs(10),
            spin: Duration::from_micros(200),
            yield_until: Duration::from_millis(2),
            sleep: Duration::from_micros(50),
            poll_every: Duration::from_micros(100),
        }
    }
}

impl SpinPolicy {
    /// The default policy with another timeout.
    pub fn with_timeout(timeout: Duration) -> Self {
        SpinPolicy { timeout, ..SpinPolicy::default() }
    }
}

/// What the device's stream says when asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StreamState {
    /// Work is still running on it.
    Busy,
    /// Everything issued on it has ended.
    Idle,
}

/// How a spin ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SpinEnd {
    /// `published()` held.
    Published,
    /// The stream became idle and `published()` still did not hold after it.
    StreamIdle,
    /// The timeout ran out; how long it waited.
    TimedOut(Duration),
}

/// How many looks between two reads of the clock while spinning (a look is a few ns; a clock
/// read about 20 ns).
const LOOKS_PER_CLOCK: u32 = 64;

/// Spins until `published()` holds, following `policy`; `poll()` (the stream query) runs at
/// most every `policy.poll_every` and its error (a device fault) ends the wait. Seeing the
/// stream idle, it looks once more (the word may have landed just before the stream ended).
pub(crate) fn spin_until(
    policy: &SpinPolicy,
    mut published: impl FnMut() -> bool,
    mut poll: impl FnMut() -> Result<StreamState>,
) -> Result<SpinEnd> {
    let start = Instant::now();
    let mut last_poll = Duration::ZERO;
    let (mut looks, mut spinning) = (0u32, true);
    loop {
        if published() {
            return Ok(SpinEnd::Published);
        }
        looks = looks.wrapping_add(1);
        if spinning && looks % LOOKS_PER_CLOCK != 0 {
            std::hint::spin_loop();
            continue;
        }
        let elapsed = start.elapsed();
        spinning = elapsed < policy.spin;
        if !spinning || elapsed.saturating_sub(last_poll) >= policy.poll_every {
            last_poll = elapsed;
            if poll()? == StreamState::Idle {
                return Ok(if published() { SpinEnd::Published } else { SpinEnd::StreamIdle });
            }
        }
        if elapsed >= policy.timeout {
            if published() {
                return Ok(SpinEnd::Published);
            }
            // One last question to the stream, however recently it was asked: a timeout shorter
            // than `poll_every` would otherwise end every wait without asking at all (a kernel
            // long gone would read as stuck).
            if poll()? == StreamState::Idle {
                return Ok(if published() { SpinEnd::Published } else { SpinEnd::StreamIdle });
            }
            return Ok(SpinEnd::TimedOut(elapsed));
        }
        if spinning {
            std::hint::spin_loop();
        } else if elapsed < policy.yield_until {
            std::thread::yield_now();
        } else {
            std::thread::sleep(policy.sleep);
        }
    }
}

/// Whether sequence number `seen` is at or past `target`, counting with wrap-around (the
/// numbers are `u32`s that wrap after 2^32 steps; a distance under 2^31 is "past").
pub(crate) fn reached(seen: u32, target: u32) -> bool {
    seen.wrapping_sub(target) < 1 << 31
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use std::cell::Cell;

    fn quick(timeout_ms: u64) -> SpinPolicy {
        SpinPolicy {
            timeout: Duration::from_millis(timeout_ms),
            spin: Duration::from_micros(50),
            yield_until: Duration::from_micros(200),
            sleep: Duration::from_micros(100),
            poll_every: Duration::from_micros(100),
        }
    }

    #[test]
    fn a_word_already_published_ends_the_wait_without_asking_the_stream() {
        let polls = Cell::new(0);
        let end = spin_until(
            &quick(100),
            || true,
            || {
                polls.set(polls.get() + 1);
                Ok(StreamState::Busy)
            },
        );
        assert_eq!(end.unwrap(), SpinEnd::Published);
        assert_eq!(polls.get(), 0);
    }

    #[test]
    fn the_wait_ends_when_the_word_lands_later() {
        let looks = Cell::new(0u32);
        let end = spin_until(
            &quick(1000),
            || {
                looks.set(looks.get() + 1);
                looks.get() > 5000
            },
            || Ok(StreamState::Busy),
        );
        assert_eq!(end.unwrap(), SpinEnd::Published);
        assert!(looks.get() > 5000);
    }

    #[test]
    fn a_busy_stream_that_never_publishes_times_out_after_the_timeout() {
        let start = Instant::now();
        let end = spin_until(&quick(20), || false, || Ok(StreamState::Busy)).unwrap();
        let SpinEnd::TimedOut(waited) = end else { panic!("expected a timeout, got {end:?}") };
        assert!(waited >= Duration::from_millis(20) && start.elapsed() >= Duration::from_millis(20));
        assert!(start.elapsed() < Duration::from_secs(2), "the wait ended near its timeout");
    }

    #[test]
    fn a_timeout_shorter_than_the_poll_interval_still_asks_the_stream() {
        let policy = SpinPolicy { timeout: Duration::ZERO, poll_every: Duration::from_secs(1), ..quick(0) };
        let polls = Cell::new(0);
        let end = spin_until(
            &policy,
            || false,
            || {
                polls.set(polls.get() + 1);
                Ok(StreamState::Idle)
            },
        );
        assert_eq!(end.unwrap(), SpinEnd::StreamIdle, "an ended kernel is not a timeout");
        assert_eq!(polls.get(), 1);
        let busy = spin_until(&policy, || false, || Ok(StreamState::Busy)).unwrap();
        assert!(matches!(busy, SpinEnd::TimedOut(_)), "{busy:?}");
    }

    #[test]
    fn an_idle_stream_without_the_word_ends_the_wait_at_once() {
        let start = Instant::now();
        let end = spin_until(&quick(5000), || false, || Ok(StreamState::Idle)).unwrap();
        assert_eq!(end, SpinEnd::StreamIdle);
        assert!(start.elapsed() < Duration::from_secs(1));
    }

    #[test]
    fn a_fault_reported_by_the_stream_is_the_error() {
        let end = spin_until(&quick(5000), || false, || Err(Error::graph("query", "faulted")));
        assert!(matches!(end, Err(Error::Graph(_))));
    }

    #[test]
    fn sequence_numbers_compare_across_the_wrap() {
        assert!(reached(5, 5) && reached(6, 5) && !reached(4, 5));
        assert!(reached(0, u32::MAX) && reached(2, u32::MAX - 1) && !reached(u32::MAX, 0));
        assert!(!reached(0, 1 << 31));
    }

    #[test]
    fn the_default_policy_spins_before_it_yields_before_it_sleeps() {
        let p = SpinPolicy::default();
        assert!(p.spin < p.yield_until && p.yield_until < p.timeout);
        assert_eq!(SpinPolicy::with_timeout(Duration::from_millis(3)).timeout, Duration::from_millis(3));
    }
}
