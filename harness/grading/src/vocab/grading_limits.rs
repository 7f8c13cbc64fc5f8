//! What a column declares about a row's attempts before it runs: the
//! column states it, the judge reads it.

use std::collections::BTreeMap;

/// What the column declares about attempts, as the judge needs it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GradingLimits {
    /// Attempts this column cannot issue, with the reason.
    pub unreachable: BTreeMap<String, String>,
    /// Attempts the column's driver issues on the seat's behalf, with the reason.
    pub driver_issued: BTreeMap<String, String>,
}
