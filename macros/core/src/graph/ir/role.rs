//! Buffer roles and the host methods each gives its buffer: what a buffer is for, in one place
//! for the checks (which reject clashing names) and the emitters.

/// What a buffer is for; decides its Rust type, its host methods and what kernels may do to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Filled from the host each step (`upload_<name>`); kernels only read it.
    Input,
    /// Written by kernels, read back (`download_<name>`).
    Output,
    /// Weights: loaded once (`load_<name>`); kernels only read it.
    Parameter,
    /// Kept across replays (`load_<name>`, `download_<name>`); kernels read and write it.
    State,
    /// Internal; must be written before it is read.
    Scratch,
    /// Mapped pinned host memory (`MappedBuffer`), written by the host (`write_<name>`), read
    /// zero-copy by kernels through `Pinned<T>` parameters.
    Pinned,
    /// One mapped pinned value (`PinnedSlot`), written by the host (`write_<name>`), read
    /// zero-copy by kernels through `Pinned<T>` parameters.
    Slot,
    /// Mapped pinned host memory (`MappedBuffer`) written by kernels through `PinnedMut<T>`
    /// parameters (and readable by later nodes through `Pinned<T>`); the host reads it after
    /// synchronizing (`read_<name>`): a result with no download copy.
    PinnedOut,
}

impl Role {
    /// Every role with its spec spelling.
    pub const ALL: [(Role, &'static str); 8] = [
        (Role::Input, "input"),
        (Role::Output, "output"),
        (Role::Parameter, "parameter"),
        (Role::State, "state"),
        (Role::Scratch, "scratch"),
        (Role::Pinned, "pinned"),
        (Role::Slot, "slot"),
        (Role::PinnedOut, "pinned_out"),
    ];

    /// The spec spelling.
    pub fn name(self) -> &'static str {
        Role::ALL.iter().find(|(r, _)| *r == self).map_or("?", |(_, n)| n)
    }

    /// Mapped pinned host memory, which kernels reach through `Pinned<T>`/`PinnedMut<T>`
    /// (pinned, slot, pinned_out).
    pub fn is_host(self) -> bool {
        matches!(self, Role::Pinned | Role::Slot | Role::PinnedOut)
    }

    /// Kernels may write it through `&mut [T]`.
    pub fn kernel_writable(self) -> bool {
        matches!(self, Role::Output | Role::State | Role::Scratch)
    }

    /// Device memory the struct owns as a `DeviceBuffer`, which `replace_<buffer>` may exchange.
    pub fn is_replaceable(self) -> bool {
        !self.is_host()
    }

    /// Kernels may write it through `PinnedMut<T>`.
    pub fn kernel_writable_pinned(self) -> bool {
        self == Role::PinnedOut
    }

    /// Holds meaningful data before the first node runs (host-filled or kept).
    pub fn defined_at_start(self) -> bool {
        !matches!(self, Role::Output | Role::Scratch | Role::PinnedOut)
    }

    /// A result the host reads back, which some node must write (output, pinned_out).
    pub fn must_be_written(self) -> bool {
        matches!(self, Role::Output | Role::PinnedOut)
    }

    /// The host methods a buffer of this role gets, in the order they are generated.
    pub fn host_methods(self) -> &'static [HostMethod] {
        match self {
            Role::Input => &[HostMethod::Upload],
            Role::Output => &[HostMethod::Download, HostMethod::DownloadInto],
            Role::Parameter => &[HostMethod::Load],
            Role::State => &[HostMethod::Load, HostMethod::Download, HostMethod::DownloadInto],
            Role::Scratch => &[],
            Role::Pinned | Role::Slot => &[HostMethod::Write],
            Role::PinnedOut => &[HostMethod::Read, HostMethod::ReadInto],
        }
    }
}

/// A generated method that moves a buffer's data between host and device (see
/// [`Role::host_methods`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostMethod {
    /// `upload_<buffer>(src)`: fills an input buffer.
    Upload,
    /// `load_<buffer>(src)`: fills a parameter buffer, or overwrites a state buffer.
    Load,
    /// `download_<buffer>()`: reads an output or state buffer back.
    Download,
    /// `download_<buffer>_into(dst)`: the same, without allocating.
    DownloadInto,
    /// `write_<buffer>(...)`: writes mapped host memory (a slice for pinned, a value for slot).
    Write,
    /// `read_<buffer>()`: reads a pinned_out buffer kernels wrote into mapped host memory.
    Read,
    /// `read_<buffer>_into(dst)`: the same, without allocating.
    ReadInto,
}

impl HostMethod {
    /// The method's name for `buffer`: `upload_x`, `download_x_into`, ...
    pub fn name(self, buffer: &str) -> String {
        match self {
            HostMethod::Upload => format!("upload_{buffer}"),
            HostMethod::Load => format!("load_{buffer}"),
            HostMethod::Download => format!("download_{buffer}"),
            HostMethod::DownloadInto => format!("download_{buffer}_into"),
            HostMethod::Write => format!("write_{buffer}"),
            HostMethod::Read => format!("read_{buffer}"),
            HostMethod::ReadInto => format!("read_{buffer}_into"),
        }
    }
}
