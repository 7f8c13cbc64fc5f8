//! What an attempt or a host operation is for in grading: the roles of
//! SharedOS's attack scripts, shared by scripts, world options and receipts.

use serde::{Deserialize, Serialize};

/// What an attempt is for in grading.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The adversarial attempt the row is about.
    Attack,
    /// Graded like an attack; used when the row's point is an attempt that
    /// must succeed without granting anything.
    Probe,
    /// Proves the turn could act at all.
    Control,
}
