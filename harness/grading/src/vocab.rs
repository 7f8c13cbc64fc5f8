//! The words every stage shares, defined below all of them: a cell's name,
//! its verdict and the rules version (defined in the small public
//! `sharedos-conformance-metadata` crate, which other tools read, and
//! named here for the stages), and what a column declares to the judge.
//! Nothing here imports another stage.

pub mod grading_limits;

pub use grading_limits::GradingLimits;
pub use sharedos_conformance_metadata::{CellKey, CellStatus, ADOPTED_JUDGE_VERSION, RULES_VERSION};
