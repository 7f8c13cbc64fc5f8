//! How a status is shown on the page: its severity (a heatmap square takes
//! the colour of the worst status among its cells), a short label for a
//! table cell, and a glyph, so that no status is told by colour alone.

use sharedos_grading::vocab::CellStatus;

/// Every status, worst first: the order the header's totals and a square's
/// counts are listed in.
pub const WORST_FIRST: [CellStatus; 6] = [
    CellStatus::Fail,
    CellStatus::NotExercised,
    CellStatus::OutOfScope,
    CellStatus::NotImplemented,
    CellStatus::NotApplicable,
    CellStatus::Pass,
];

/// How bad a status is: higher is worse.
#[must_use]
pub fn severity(status: CellStatus) -> usize {
    WORST_FIRST.len() - WORST_FIRST.iter().position(|s| *s == status).unwrap_or(0)
}

/// The worst of `statuses`, if any.
#[must_use]
pub fn worst(statuses: impl IntoIterator<Item = CellStatus>) -> Option<CellStatus> {
    statuses.into_iter().max_by_key(|s| severity(*s))
}

/// The CSS class that colours a status (`s-not_applicable`).
#[must_use]
pub fn class(status: CellStatus) -> String {
    format!("s-{}", status.as_str())
}

/// The few characters a table cell shows.
#[must_use]
pub fn short(status: CellStatus) -> &'static str {
    match status {
        CellStatus::Pass => "pass",
        CellStatus::Fail => "FAIL",
        CellStatus::NotExercised => "n/ex",
        CellStatus::NotApplicable => "n/a",
        CellStatus::NotImplemented => "n/i",
        CellStatus::OutOfScope => "oos",
    }
}

/// A glyph beside the label, the same in every colour scheme.
#[must_use]
pub fn glyph(status: CellStatus) -> &'static str {
    match status {
        CellStatus::Pass => "\u{2713}",
        CellStatus::Fail => "\u{2717}",
        CellStatus::NotExercised => "!",
        CellStatus::NotApplicable => "\u{2298}",
        CellStatus::NotImplemented => "\u{2205}",
        CellStatus::OutOfScope => "\u{25cb}",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fail_is_the_worst_and_pass_the_least() {
        assert_eq!(worst([CellStatus::Pass, CellStatus::Fail, CellStatus::NotApplicable]), Some(CellStatus::Fail));
        assert_eq!(worst([CellStatus::Pass, CellStatus::NotApplicable]), Some(CellStatus::NotApplicable));
        assert_eq!(worst([]), None);
        assert!(CellStatus::ALL.iter().all(|s| WORST_FIRST.contains(s)));
    }
}
