//! The one-line evidence summary of a cell, as the Markdown manifest prints
//! it under each row.
//!
//! Three shapes, chosen by the cell alone:
//!
//! - not implemented: `- **L** — not implemented; N attempts declared, none
//!   runnable; <detail>`;
//! - decided without running (no turn ran): `- **L** — <status>; N attempts
//!   declared, none issued; <detail>`;
//! - run: `- **L** — <status>; A of N attempts issued[, K structurally
//!   unreachable][ over T turns]; refused by <list|nothing>; reason
//!   <list|none>; [cause <list>; ]record usable|record unusable (<gaps>)[;
//!   <detail>]`.
//!
//! "attempt" is singular only in the declared shapes with exactly one
//! attempt; the run shape always says "attempts". The status never carries
//! "(driver)" here: that is a table rendering only.

use crate::grade::judge::cell::Cell;
use crate::vocab::CellStatus;

/// Said when a declared cell carries no detail.
const NO_REASON: &str = "no reason given";

/// The evidence bullet for `cell` under the column label `label`.
#[must_use]
pub fn evidence_line(label: &str, cell: &Cell) -> String {
    let head = format!("- **{label}** — ");
    if cell.status == CellStatus::NotImplemented {
        return format!(
            "{head}not implemented; {} declared, none runnable; {}",
            counted(cell.declared),
            cell.detail.as_deref().unwrap_or(NO_REASON)
        );
    }
    if cell.is_declared() {
        return format!(
            "{head}{}; {} declared, none issued; {}",
            cell.status.label(),
            counted(cell.declared),
            cell.detail.as_deref().unwrap_or(NO_REASON)
        );
    }
    let mut line = format!("{head}{}; {} of {} attempts issued", cell.status.label(), cell.attempted, cell.declared);
    if cell.not_applicable > 0 {
        line.push_str(&format!(", {} structurally unreachable", cell.not_applicable));
    }
    if cell.turns > 1 {
        line.push_str(&format!(" over {} turns", cell.turns));
    }
    let refused: Vec<&str> = cell.refused_by.iter().map(|s| s.as_str()).collect();
    line.push_str(&format!("; refused by {}", listed(&refused, "nothing")));
    line.push_str(&format!("; reason {}; ", listed(&cell.reason_codes, "none")));
    if !cell.causes.is_empty() {
        line.push_str(&format!("cause {}; ", listed(&cell.causes, "")));
    }
    if cell.record_usable {
        line.push_str("record usable");
    } else {
        line.push_str(&format!("record unusable ({})", listed(&cell.record_gaps, "unknown")));
    }
    if let Some(detail) = &cell.detail {
        line.push_str("; ");
        line.push_str(detail);
    }
    line
}

fn counted(n: u32) -> String {
    if n == 1 {
        "1 attempt".to_string()
    } else {
        format!("{n} attempts")
    }
}

fn listed<S: AsRef<str>>(items: &[S], empty: &str) -> String {
    if items.is_empty() {
        return empty.to_string();
    }
    items.iter().map(|item| format!("`{}`", item.as_ref())).collect::<Vec<_>>().join(", ")
}
