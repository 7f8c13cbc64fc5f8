//! What other tools read of a `sharedos-conformance` run, in a crate that
//! depends on `serde`, `serde_json`, `thiserror` and the record's own
//! vocabulary (`sharedos-model`) only: the manifest (its rows, cells and
//! repeats) and a bundle's evidence line, a cell's name and verdict, the
//! rules version, the exit codes, every way a bundle fails to verify, and
//! the parts of an evidence line that are not the judge's own (the witness
//! log a scripted model keeps of a live turn, a protocol breach as a
//! record keeps it); the closed vocabularies cases and seat files are
//! written in (rule families, move kinds, turn expectations, the vendors,
//! how a seat's process is launched and bounded). The JSON Schemas of the
//! files and outputs the harness writes and reads (manifest, evidence line,
//! statement, the run events and each command's `--format json` output,
//! baseline, and the two sides of the `sharedos-runtime/2` protocol) are in
//! this crate's `schemas/` folder (`docs/reference/schemas.md`).
//!
//! ```
//! use sharedos_conformance_metadata::{CellKey, CellStatus, Exit};
//!
//! let key = CellKey { case: "bounded-grant".into(), condition: "baseline".into(), column: "process:mine".into() };
//! assert_eq!(key.trial_name(), "bounded-grant/baseline/process:mine");
//! assert_eq!(key.relative_path(), std::path::Path::new("bounded-grant/baseline.process.mine.json"));
//!
//! let status: CellStatus = serde_json::from_str("\"fail\"").unwrap();
//! assert!(status.breaks_build());
//! assert_eq!(Exit::ConformanceFailure.code(), 1);
//! ```
//!
//! Everything here is an API: a change to a name, a wire spelling or an
//! exit code is a change for every script that reads them.

pub mod breach;
pub mod cell;
pub mod cell_key;
pub mod column_runtime;
pub mod evidence_line;
pub mod exit;
pub mod failure;
pub mod family;
pub mod launch;
pub mod manifest;
pub mod move_kind;
pub mod repeats;
pub mod status;
pub mod turn_expectation;
pub mod vendor;
pub mod witness;

pub use cell::Cell;
pub use cell_key::CellKey;
pub use evidence_line::EvidenceLine;
pub use exit::Exit;
pub use failure::{Failure, Place};
pub use manifest::Manifest;
pub use status::{CellStatus, ADOPTED_JUDGE_VERSION, RULES_VERSION};
pub use vendor::Vendor;
