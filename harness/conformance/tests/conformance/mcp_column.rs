//! The MCP column (D40–D54): a harness that runs its own
//! loop, served the turn's catalogue over MCP, graded on every row it can
//! express, and graded as the Standard column on every row both express.

use crate::support;

use support::cells_by_column;

use sharedos_grading::grade::judge::cell::Cell;
use sharedos_grading::plan::Selection;
use sharedos_grading::vocab::CellStatus;
use std::collections::BTreeMap;

const MCP: &str = "mcp-scripted";
const STANDARD: &str = "model-scripted";
const CLAUDE: &str = "claude-code-scripted";

/// Every cell of these columns, over every family: column -> row -> cell.
fn cells(columns: &[&str]) -> BTreeMap<String, BTreeMap<String, Cell>> {
    cells_by_column(&Selection { columns: columns.iter().map(|c| c.to_string()).collect(), ..Selection::default() })
}

#[test]
fn the_mcp_column_passes_or_says_why_on_every_row_and_never_passes_an_unmade_call() {
    let all = cells(&[MCP]);
    let rows = &all[MCP];
    assert_eq!(rows.len(), 131);
    let count = |status: CellStatus| rows.values().filter(|c| c.status == status).count();
    assert_eq!(count(CellStatus::Pass), 78);
    assert_eq!(count(CellStatus::NotApplicable), 51);
    assert_eq!(count(CellStatus::NotImplemented), 2);
    for (row, cell) in rows {
        if cell.status == CellStatus::NotApplicable {
            assert!(cell.detail.as_deref().is_some_and(|d| !d.is_empty()), "{row}: a reason is carried");
        }
        if cell.status == CellStatus::Pass {
            assert!(cell.driver_issued.is_empty(), "{row}: nobody declares a step over MCP");
        }
    }
    let timed = &rows["drain-late-result-ends-the-turn/grace-five-seconds-one-step"];
    assert_eq!(timed.status, CellStatus::NotApplicable);
}

#[test]
fn every_row_both_express_grades_in_the_mcp_column_as_in_the_standard_column() {
    let all = cells(&[MCP, STANDARD, CLAUDE]);
    let (mcp, standard, claude) = (&all[MCP], &all[STANDARD], &all[CLAUDE]);
    let gradable = |cell: &Cell| !matches!(cell.status, CellStatus::NotApplicable | CellStatus::NotImplemented);
    let mut compared = 0;
    let mut own_endings = Vec::new();
    for (row, cell) in mcp.iter().filter(|(_, c)| gradable(c)) {
        let Some(other) = standard.get(row).filter(|c| gradable(c)) else { continue };
        compared += 1;
        assert_eq!(cell.status, other.status, "{row}");
        assert_eq!((cell.declared, cell.attempted), (other.declared, other.attempted), "{row}");
        assert_eq!(cell.refused_by, other.refused_by, "{row}");
        assert_eq!(cell.causes, other.causes, "{row}");
        if cell.reason_codes != other.reason_codes {
            own_endings.push(row.as_str());
        }
    }
    assert_eq!(compared, 77);
    // Where the seat itself ends the turn badly, the code is the harness's
    // own: Claude Code's failed-turn code, or an exit without an ending (D49).
    assert_eq!(
        own_endings,
        ["annotate-loop-prompt-hash-on-failed/baseline", "annotate-loop-prompt-hash-on-hung-up/baseline"]
    );
    let failed = "annotate-loop-prompt-hash-on-failed/baseline";
    assert_eq!(mcp[failed].reason_codes, claude[failed].reason_codes);
    assert_eq!(mcp["annotate-loop-prompt-hash-on-hung-up/baseline"].reason_codes, ["harness_exited_without_outcome"]);
}

/// Containment (rules version 6): only a live CLI talking to the scripted
/// model has tools of its own to be asked for, so every built-in column
/// declares the four rows not applicable, with that reason.
#[test]
fn v6_containment_rows_are_not_applicable_on_every_built_in_column_with_their_reason() {
    let ids = sharedos_grading::input::built_in_column::column_ids(&[]);
    let all = cells(&ids.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(all.len(), ids.len());
    for (column, rows) in &all {
        let containment: Vec<(&String, &Cell)> =
            rows.iter().filter(|(row, _)| row.starts_with("containment-")).collect();
        assert_eq!(containment.len(), 4, "{column}");
        for (row, cell) in containment {
            assert_eq!(cell.status, CellStatus::NotApplicable, "{column} {row}");
            let reason = cell.detail.as_deref().unwrap_or_default();
            assert!(reason.contains("tools of its own through the scripted model"), "{column} {row}: {reason}");
        }
    }
}
