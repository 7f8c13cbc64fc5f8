//! Running cells: seating each column's runtime, executing its turns on a
//! paused clock, and turning the matrix into a report. What a cell is
//! graded with (the suite, records, the judge, the manifest) is in
//! `sharedos-grading`, which this crate drives and never redefines.
//!
//! ```text
//! run      seat ──> turns on a paused clock (the adversary, driven
//!   │      transcripts, process and MCP seats) ──> executed turns
//! suite    one cell's whole life (world, turns, records, grading, snapshot),
//!   │      the matrix on a worker pool, the report, the golden lifecycle,
//!   │      and one event stream every reporter renders
//! certify  one column beside the Adversary, sealed as a bundle
//! ```
//!
//! Each stage reads only the ones above it; `scripts/module-graph.py
//! --check` fails on an import that runs back up.

#![forbid(unsafe_code)]

pub mod certify;
pub mod run;
pub mod suite;
