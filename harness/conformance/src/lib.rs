//! The conformance core: a cell's whole life, stage by stage.
//!
//! ```text
//! input     cases/*.json, adversaries/*.json ──> Suite (refused whole, with file and pointer)
//!   │
//! run       for each (case, condition, column): World::build ──> seat ──> turns on a
//!   │       paused clock ──> an ExecutionRecord per turn (plus host-driven messaging)
//!   │
//! grade     receipts + the last record + host attempts ──> judge (once) ──> cell verdict
//!   │
//! output    snapshot ──> golden compare; manifest ──> Markdown; atomic file writes
//!
//! identity  every hash a manifest or record carries, and every domain tag
//! ```
//!
//! `grade` reads records and receipts but never runs a turn, and `output`
//! renders what `grade` decided. [`run::matrix`] drives a whole run;
//! [`output::report`] turns it into the manifest. The stages are meant to
//! read only upward; the imports that still run back up (vocabulary types
//! defined a stage too late, and `run` driving grading) are listed by
//! `scripts/module-graph.py`, whose test lets that list only shrink.
#![forbid(unsafe_code)]

pub mod grade;
pub mod identity;
pub mod input;
pub mod output;
pub mod run;
