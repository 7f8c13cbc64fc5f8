//! What a live CLI said besides its frames, kept within fixed bounds: a
//! tail of stderr, the latest non-JSON stdout lines, counts of skipped
//! lines, and how the process and the channel ended.

use super::lines::SkippedLine;
use serde::Serialize;
use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// Longest stdout note kept, in bytes; longer ones are cut.
const MAX_NOTE_BYTES: usize = 1024;

/// Why a channel over a live CLI ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChannelEnd {
    /// The CLI closed its stdout; reads then give no frame.
    OutputClosed,
    /// The CLI exited; reads then give no frame.
    Exited,
    /// The deadline passed; the process group was killed and reads fail.
    DeadlineExceeded,
    /// Too many stdout lines gave no frame; the process group was killed
    /// and reads fail.
    TooManyIgnoredLines,
    /// The signal the channel was opened under fired; the process group was
    /// killed and reads fail with the abort.
    Aborted,
    /// The channel was closed (or dropped); the process group was killed.
    Closed,
}

/// How the process exited.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ExitReport {
    /// The exit code, when it exited on its own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<i32>,
    /// The signal that ended it, when one did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
}

/// A snapshot of one process's diagnostics.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProcessDiagnostics {
    /// The command that was started.
    pub command: String,
    /// Its process id (also its process group id) while it was known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// Frames read from stdout.
    pub frames: usize,
    /// Stdout lines that gave no frame, by kind.
    pub skipped: BTreeMap<SkippedLine, usize>,
    /// The latest non-JSON stdout lines, each cut to 1 KiB.
    pub stdout_notes: Vec<String>,
    /// Non-JSON stdout lines no longer kept.
    pub stdout_notes_dropped: usize,
    /// The last bytes of stderr, decoded lossily.
    pub stderr_tail: String,
    /// Every stderr byte seen, kept or not.
    pub stderr_bytes: u64,
    /// Frames written to stdin (opening frames and results).
    pub writes: usize,
    /// Frames the driver wrote that observe mode did not send.
    pub dropped_writes: usize,
    /// Why the channel ended, once it has.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end: Option<ChannelEnd>,
    /// How the process exited, once it was reaped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit: Option<ExitReport>,
}

/// The live, shared record behind [`ProcessDiagnostics`]; written by the
/// task that reads the process, read by anyone holding a clone.
#[derive(Debug, Clone, Default)]
pub struct DiagnosticsLog {
    inner: Arc<Mutex<LogState>>,
}

#[derive(Debug, Default)]
struct LogState {
    snapshot: ProcessDiagnostics,
    notes: VecDeque<String>,
    stderr: VecDeque<u8>,
    stderr_cap: usize,
    notes_cap: usize,
}

impl DiagnosticsLog {
    /// An empty log for `command` with the given bounds.
    #[must_use]
    pub fn new(command: &str, stderr_cap: usize, notes_cap: usize) -> DiagnosticsLog {
        let state = LogState {
            snapshot: ProcessDiagnostics { command: command.to_string(), ..ProcessDiagnostics::default() },
            stderr_cap,
            notes_cap,
            ..LogState::default()
        };
        DiagnosticsLog { inner: Arc::new(Mutex::new(state)) }
    }

    // A panic while holding the lock leaves counters, never a broken
    // invariant, so a poisoned lock is still read.
    fn state(&self) -> MutexGuard<'_, LogState> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The current snapshot.
    #[must_use]
    pub fn snapshot(&self) -> ProcessDiagnostics {
        let state = self.state();
        let mut snapshot = state.snapshot.clone();
        snapshot.stdout_notes = state.notes.iter().cloned().collect();
        let (front, back) = state.stderr.as_slices();
        snapshot.stderr_tail = String::from_utf8_lossy(&[front, back].concat()).into_owned();
        snapshot
    }

    /// Records the process id.
    pub fn set_pid(&self, pid: Option<u32>) {
        self.state().snapshot.pid = pid;
    }

    /// Counts one frame read.
    pub fn frame(&self) {
        self.state().snapshot.frames += 1;
    }

    /// Counts one skipped line; returns how many have been skipped so far.
    pub fn skipped(&self, kind: SkippedLine, note: Option<String>) -> usize {
        let mut state = self.state();
        *state.snapshot.skipped.entry(kind).or_insert(0) += 1;
        if let Some(mut note) = note {
            if note.len() > MAX_NOTE_BYTES {
                let cut = (0..=MAX_NOTE_BYTES).rev().find(|at| note.is_char_boundary(*at)).unwrap_or(0);
                note.truncate(cut);
            }
            state.notes.push_back(note);
            if state.notes.len() > state.notes_cap {
                state.notes.pop_front();
                state.snapshot.stdout_notes_dropped += 1;
            }
        }
        state.snapshot.skipped.values().sum()
    }

    /// Keeps the tail of one stderr chunk.
    pub fn stderr(&self, chunk: &[u8]) {
        let mut state = self.state();
        state.snapshot.stderr_bytes += chunk.len() as u64;
        let cap = state.stderr_cap;
        let keep = &chunk[chunk.len().saturating_sub(cap)..];
        let overflow = (state.stderr.len() + keep.len()).saturating_sub(cap);
        state.stderr.drain(..overflow);
        state.stderr.extend(keep);
    }

    /// Counts one frame written to stdin.
    pub fn wrote(&self) {
        self.state().snapshot.writes += 1;
    }

    /// Counts one frame observe mode did not send.
    pub fn dropped_write(&self) {
        self.state().snapshot.dropped_writes += 1;
    }

    /// Records why the channel ended; the first reason stays.
    pub fn end(&self, end: ChannelEnd) {
        self.state().snapshot.end.get_or_insert(end);
    }

    /// Records how the process exited.
    pub fn exit(&self, exit: ExitReport) {
        self.state().snapshot.exit = Some(exit);
    }
}
