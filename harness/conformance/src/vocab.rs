//! The words every stage shares, defined below all of them: a cell's name,
//! its verdict and the rules version, and what a column declares to the
//! judge. Nothing here imports another stage.

pub mod cell_key;
pub mod grading_limits;
pub mod status;

pub use cell_key::CellKey;
pub use grading_limits::GradingLimits;
pub use status::{CellStatus, ADOPTED_JUDGE_VERSION, RULES_VERSION};
