//! The words every stage shares, defined below all of them: a cell's name,
//! its verdict and the rules version (defined in the small public
//! `sharedos-conformance-metadata` crate, which other tools read, and
//! named here for the stages), what a column declares to the judge, and
//! what a long command tells whoever watches it (`Progress`).
//! Nothing here imports another stage.

pub mod grading_limits;
pub mod progress;

pub use grading_limits::GradingLimits;
pub use sharedos_conformance_metadata::{CellKey, CellStatus, ADOPTED_JUDGE_VERSION, RULES_VERSION};
