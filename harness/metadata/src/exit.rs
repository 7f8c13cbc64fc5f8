//! Exit codes are an API: scripts and CI read them.

/// How a `sharedos-conformance` invocation ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Everything selected passed (or stood as not applicable, not
    /// implemented, out of scope) and matched its golden file.
    Success,
    /// A cell failed or was not exercised, or a report or golden file drifted.
    ConformanceFailure,
    /// The command line was wrong.
    Usage,
    /// A case, adversary, golden or manifest file does not parse or validate.
    InvalidInput,
    /// The filters selected no cell.
    NothingSelected,
    /// A seat's runtime could not be started, or did not say `ready`.
    SeatCannotStart,
    /// A file could not be written (a full disk, a read-only folder).
    Io,
    /// The harness itself went wrong; this is a bug to report.
    HarnessBug,
    /// SIGINT came, and everything the command started was stopped.
    Interrupted,
    /// SIGTERM came, and everything the command started was stopped.
    Terminated,
}

impl Exit {
    /// The process exit code.
    #[must_use]
    pub fn code(self) -> u8 {
        match self {
            Exit::Success => 0,
            Exit::ConformanceFailure => 1,
            Exit::Usage => 2,
            Exit::InvalidInput => 3,
            Exit::NothingSelected => 4,
            Exit::SeatCannotStart => 5,
            Exit::Io => 74,
            Exit::HarnessBug => 70,
            // The shell's code for a process a signal ended: 128 + its number.
            Exit::Interrupted => 130,
            Exit::Terminated => 143,
        }
    }
}
