//! kgraph's own stream captures told apart from anyone else's.
//!
//! Work issued on a capturing stream is recorded into that capture's graph instead of running.
//! Whoever ends the capture can replay the recording at any time, also after the buffers it
//! names are freed: cudarc's `begin_capture`, `end_capture` and `CudaGraph::launch` on
//! kgraph's stream (reached through the `unsafe` [`crate::Stream::cuda`]) would do exactly that
//! with kgraph's checked launches. So kgraph's
//! stream work (checked launches, memsets and memcpys, graph replays, collectives) may be
//! recorded only by the captures kgraph itself begins ([`crate::Graph::capture`] and what
//! builds on it), whose callers promise the lifetimes with `unsafe`. On any other capture it is
//! refused with [`GraphError::Failed`](crate::GraphError::Failed), and nothing is recorded.
//!
//! A capture is kgraph's own on the thread running its closure, for the closure's duration:
//! its capture id (`cuStreamGetCaptureInfo`, unique per capture in the process) is registered
//! in a thread-local list. Work another thread issues onto that stream meanwhile is refused too:
//! it would be recorded into a graph whose lifetimes that thread never promised.

use std::cell::RefCell;
use std::marker::PhantomData;

use cudarc::driver::{sys, CudaStream, DriverError};

use crate::driver;
use crate::error::{Error, Result};

thread_local! {
    /// The ids of the captures kgraph's closures are running in on this thread (innermost last).
    static OWN_CAPTURES: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
}

/// Capture `id` registered as kgraph's own on this thread until dropped.
#[must_use = "the capture is kgraph's own only while this guard lives"]
pub(crate) struct OwnCapture {
    id: u64,
    /// `!Send`: the registration is this thread's, so is its removal.
    _thread: PhantomData<*const ()>,
}

impl OwnCapture {
    /// Registers the capture `stream` is in (just begun by kgraph) for this thread.
    pub(crate) fn register(stream: &CudaStream) -> Result<OwnCapture> {
        let (status, id) = capture_info(stream).map_err(|e| Error::driver("graph capture: query capture id", e))?;
        if status != sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_ACTIVE {
            return Err(Error::graph("graph capture", format!("the capture just begun is not active ({status:?})")));
        }
        Ok(OwnCapture::from_id(id))
    }

    fn from_id(id: u64) -> OwnCapture {
        OWN_CAPTURES.with(|own| own.borrow_mut().push(id));
        OwnCapture { id, _thread: PhantomData }
    }
}

impl Drop for OwnCapture {
    fn drop(&mut self) {
        OWN_CAPTURES.with(|own| {
            let mut own = own.borrow_mut();
            if let Some(i) = own.iter().rposition(|&id| id == self.id) {
                own.remove(i);
            }
        });
    }
}

fn is_own(id: u64) -> bool {
    OWN_CAPTURES.with(|own| own.borrow().contains(&id))
}

/// Refuses work `op` (its description, built only on refusal) on `stream` while a capture that
/// is not kgraph's own on this thread would record it. One `cuStreamIsCapturing` when the
/// stream is not capturing (the usual case); the caller has bound the stream's context.
#[inline]
pub(crate) fn check_stream(stream: &CudaStream, op: impl FnOnce() -> String) -> Result<()> {
    // SAFETY: the stream is live (borrowed) and its context bound (the caller's).
    let queried = unsafe { driver::stream::is_capturing(stream.cu_stream()) };
    match queried {
        Ok(sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE) => Ok(()),
        Ok(_) => check_capture(stream, op),
        Err(e) => Err(Error::driver(format!("{}: query capture status", op()), e)),
    }
}

#[cold]
#[inline(never)]
fn check_capture(stream: &CudaStream, op: impl FnOnce() -> String) -> Result<()> {
    let op = op();
    let (status, id) = capture_info(stream).map_err(|e| Error::driver(format!("{op}: query capture id"), e))?;
    // The id is defined only for an active capture.
    if status != sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_ACTIVE {
        return Err(Error::graph(op, format!("the stream's capture is {status:?}: an earlier call invalidated it")));
    }
    if is_own(id) {
        return Ok(());
    }
    Err(Error::graph(
        op,
        format!(
            "the stream is capturing ({status:?}) into a graph kgraph did not begin on this thread; kgraph's \
             stream work is recorded only inside Graph::capture (or a graph struct's capture), whose caller \
             promises the lifetimes of what the graph uses"
        ),
    ))
}

/// The capture status and id of `stream` (`cuStreamGetCaptureInfo`, CUDA 12.3's `_v3`).
fn capture_info(stream: &CudaStream) -> std::result::Result<(sys::CUstreamCaptureStatus, u64), DriverError> {
    // SAFETY: the stream is live (borrowed); its context is current (bound by the callers).
    unsafe { driver::stream::capture_info(stream.cu_stream()) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_capture_is_own_while_its_guard_lives_and_guards_nest() {
        assert!(!is_own(7));
        let outer = OwnCapture::from_id(7);
        assert!(is_own(7));
        {
            let _inner = OwnCapture::from_id(9);
            assert!(is_own(7) && is_own(9));
        }
        assert!(is_own(7) && !is_own(9), "dropping the inner guard keeps the outer capture");
        let again = OwnCapture::from_id(7);
        drop(outer);
        assert!(is_own(7), "one registration of the same id remains");
        drop(again);
        assert!(!is_own(7));
    }

    #[test]
    fn another_thread_does_not_see_this_threads_captures() {
        let _guard = OwnCapture::from_id(11);
        assert!(is_own(11));
        assert!(!std::thread::spawn(|| is_own(11)).join().unwrap());
    }
}
