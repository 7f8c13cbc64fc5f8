//! The conformance core: a cell's whole life, stage by stage.
//!
//! ```text
//! vocab     CellKey, CellStatus and RULES_VERSION, GradingLimits: words every stage shares
//!   │
//! input     cases/*.json, adversaries/*.json ──> Suite (refused whole, with file and pointer);
//!   │       World::build arms a condition's kernel
//! identity  every hash a manifest or record carries, and every domain tag
//!   │
//! run       seat ──> turns on a paused clock ──> an ExecutionRecord per turn
//!   │       (plus host-driven messaging), receipts a runtime files
//! grade     receipts + the last record + host attempts ──> judge (once) ──> Cell
//!   │
//! output    snapshot ──> golden compare; manifest ──> Markdown; atomic file writes
//!   │
//! suite     one cell's whole life, the matrix, and the report built from a run
//! ```
//!
//! Each stage reads only the ones above it: `grade` reads records and
//! receipts but never runs a turn, `output` renders what `grade` decided,
//! and only `suite` calls them all ([`suite::matrix`] drives a run,
//! [`suite::report`] turns it into the manifest).
//! `scripts/module-graph.py --check` fails on an import that runs back up.
#![forbid(unsafe_code)]

pub mod grade;
pub mod identity;
pub mod input;
pub mod output;
pub mod run;
pub mod suite;
pub mod vocab;
