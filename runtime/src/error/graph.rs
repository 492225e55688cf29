//! Buffers' lengths and sizes ([`MemoryError`]), graphs ([`GraphError`]) and spinning waits
//! ([`WaitError`]).

use std::fmt;

/// A length, size or index does not fit ([`Error::Memory`](super::Error::Memory)).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MemoryError {
    /// Host and device lengths disagree.
    #[error("{what}: length mismatch, expected {expected} elements, got {actual}")]
    LengthMismatch {
        /// Which buffer or operation.
        what: String,
        /// The length required.
        expected: usize,
        /// The length given.
        actual: usize,
    },
    /// A buffer's size in bytes does not fit in `usize`.
    #[error("{what}: {len} elements of {elem_bytes} bytes overflow the address space")]
    SizeOverflow {
        /// Which buffer or operation.
        what: String,
        /// The number of elements asked for.
        len: usize,
        /// The size of one element in bytes.
        elem_bytes: usize,
    },
    /// An index (slot, element) is out of range.
    #[error("{what}: index {index} out of range (len {len})")]
    OutOfRange {
        /// Which slot bus, buffer or table.
        what: String,
        /// The index asked for.
        index: usize,
        /// How many there are.
        len: usize,
    },
    /// A resident step's input or output is not a whole number of 4-byte words (it travels
    /// as one 8-byte pair per word).
    #[error("{what}: a resident step's record travels as 4-byte words, and {record} is {bytes} bytes")]
    RecordSize {
        /// Which resident and record.
        what: String,
        /// The Rust type.
        record: &'static str,
        /// Its size.
        bytes: usize,
    },
}

/// Capturing, building, replaying or updating a graph failed ([`Error::Graph`](super::Error::Graph)).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GraphError {
    /// Stream capture, graph building or graph execution failed.
    #[error("graph {op}: {detail}")]
    Failed {
        /// What was being done (`"begin capture"`, `"replay"`, a node name...).
        op: String,
        /// Why.
        detail: String,
    },
    /// An instantiated graph could not be updated in place (`cuGraphExecUpdate` refused: the
    /// topology, a node's type or its kernel changed); rebuild and re-instantiate instead.
    #[error("{op}: the instantiated graph cannot be updated in place ({reason}); rebuild it")]
    Update {
        /// What was being updated.
        op: String,
        /// The driver's verdict (`CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED`, ...).
        reason: String,
    },
    /// `set_<scalar>` of a generated graph struct was given a value for which a node's extent
    /// that the scalar feeds (`x: &[f32; n]` with `n` bound to the scalar) does not fit the
    /// buffer bound to the parameter, or cannot be evaluated; the scalar and the captured graph
    /// are unchanged, so the next replay runs with the old value.
    #[error(
        "{graph}::set_{scalar}: refused (nothing changed): the extent `{expr}` of `{param}` in node `{node}` {}",
        ExtentVerdict { required: *.required, buffer, len: *.len }
    )]
    ScalarBreaksExtent {
        /// The graph struct's name.
        graph: &'static str,
        /// The scalar.
        scalar: &'static str,
        /// The node whose extent it breaks.
        node: &'static str,
        /// The node kernel's pointer parameter.
        param: &'static str,
        /// The parameter's extent as declared (`batch * n_in`).
        expr: &'static str,
        /// The buffer bound to the parameter.
        buffer: &'static str,
        /// The extent's value for the new scalar value, in elements; `None` when it has none
        /// (it overflows the C type it is computed in, divides by zero, or is negative).
        required: Option<u64>,
        /// The buffer's length in elements.
        len: u64,
    },
    /// `into_resident` of a generated graph struct whose node runs with a launch configuration
    /// other than the spec's (`set_launch`, `apply_tuning`): the resident kernel runs the
    /// spec's, which the scalars' current values were not checked against.
    #[error(
        "{graph}::into_resident: refused: node `{node}` runs with a launch configuration other than the spec's, and the resident kernel runs the spec's; set it back with `set_launch` first"
    )]
    LaunchChanged {
        /// The graph struct's name.
        graph: &'static str,
        /// The node.
        node: &'static str,
    },
}

/// A spinning wait got no answer, or a resident kernel cannot take work ([`Error::Wait`](super::Error::Wait)).
/// A device fault seen while waiting is [`Error::Driver`](super::Error::Driver) (the stream's error as its source).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WaitError {
    /// The device had not published `seq` when the timeout ran out (it last published `seen`).
    /// Nothing is lost: the work is still in flight, and the next wait or submit waits for it
    /// again before the host touches what it uses.
    #[error("{what}: no answer after {waited:?} (waiting for sequence {seq}, the device last published {seen})")]
    Timeout {
        /// What was waited for (`"PerceptionResident::wait"`, `"Perception::read_probs"`).
        what: String,
        /// The sequence number waited for.
        seq: u32,
        /// The last sequence number the device published.
        seen: u32,
        /// How long the host waited.
        waited: std::time::Duration,
    },
    /// The resident kernel was stopped (by `stop`, or a fault broke it): it takes no more work.
    #[error("{what}: the resident kernel is stopped{}", if *.faulted { " (a device fault stopped it)" } else { "" })]
    Stopped {
        /// The call refused.
        what: String,
        /// A device fault stopped it (the error was returned by the wait that saw it).
        faulted: bool,
    },
    /// The device finished the work (its stream is idle) without publishing the sequence
    /// number: the graph or kernel does not follow the done-word protocol.
    #[error("{what}: the device finished without publishing sequence {seq} (it last published {seen})")]
    NotPublished {
        /// What was waited for.
        what: String,
        /// The sequence number waited for.
        seq: u32,
        /// The last sequence number the device published.
        seen: u32,
    },
}

/// The end of [`GraphError::ScalarBreaksExtent`]'s message: the extent's value, or why it has none.
struct ExtentVerdict<'a> {
    required: Option<u64>,
    buffer: &'a str,
    len: u64,
}

impl fmt::Display for ExtentVerdict<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ExtentVerdict { buffer, len, .. } = self;
        match self.required {
            Some(required) => write!(f, "would be {required} elements, but buffer `{buffer}` holds {len}"),
            None => write!(
                f,
                "could not be evaluated (it overflows the C type it is computed in, divides by zero, or is negative); buffer `{buffer}` holds {len}"
            ),
        }
    }
}
