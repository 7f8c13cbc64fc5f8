//! What a long command tells whoever watches it as it goes: each run of a
//! cell as it starts and ends. The runner and the verifier call it; the
//! command line draws it on a terminal. Nothing it is told changes what
//! is run, graded or written.

use super::{CellKey, CellStatus};
use std::time::Duration;

/// One run of one cell, as it starts.
#[derive(Debug, Clone, Copy)]
pub struct RunStart<'a> {
    /// The cell.
    pub key: &'a CellKey,
    /// Which run of it, from 1.
    pub run: u32,
    /// How many runs it has.
    pub runs: u32,
    /// How long it may be expected to take; longer is worth showing.
    pub expected: Duration,
}

/// An observer of a command's cells, called from every worker.
pub trait Progress: Sync + std::fmt::Debug {
    /// The work is known: each column's cells, in the order to show them,
    /// and the runs of every cell together. Called once, before any run
    /// starts, by a command that learns its work only once it has read
    /// its input (`verify`); a run's plan is known from the start.
    fn begin(&self, _columns: &[(String, u64)], _runs: u64) {}

    /// A run of a cell starts.
    fn started(&self, run: RunStart<'_>);
    /// That run ended with `status`.
    fn finished(&self, key: &CellKey, run: u32, status: CellStatus);
}
