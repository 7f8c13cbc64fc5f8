//! The driven columns against SharedOS's v6 table (R56, R85): over the
//! matrix family each driven column has 28 pass (exactly one of them
//! `pass (driver)`, on the step-ceiling row), 4 not applicable
//! with a reason, and 2 not implemented; and every scripted column grades
//! every row identically in status, refusing layers and reason codes.

use crate::support;

use support::cells_by_column;

use sharedos_grading::column::columns;
use sharedos_grading::grade::judge::cell::Cell;
use sharedos_grading::plan::Selection;
use sharedos_grading::vocab::CellStatus;
use std::collections::BTreeMap;

/// Every driven cell of the matrix family: column -> row -> cell.
fn driven_cells() -> BTreeMap<String, BTreeMap<String, Cell>> {
    let driven: Vec<String> =
        columns(&[]).iter().filter(|c| c.kind.runs_the_standard_loop()).map(|c| c.id.to_string()).collect();
    assert_eq!(driven.len(), 5);
    cells_by_column(&Selection { families: vec!["matrix".into()], columns: driven, ..Selection::default() })
}

#[test]
fn r85_each_driven_column_matches_the_v6_totals() {
    for (column, rows) in driven_cells() {
        assert_eq!(rows.len(), 34, "{column}");
        let count = |status: CellStatus| rows.values().filter(|c| c.status == status).count();
        assert_eq!(count(CellStatus::Pass), 28, "{column}");
        assert_eq!(count(CellStatus::NotApplicable), 4, "{column}");
        assert_eq!(count(CellStatus::NotImplemented), 2, "{column}");
        let by_driver: Vec<&String> =
            rows.iter().filter(|(_, c)| !c.driver_issued.is_empty()).map(|(r, _)| r).collect();
        assert_eq!(by_driver, vec!["budget-exceeded/step-ceiling"], "{column}");
        for (row, cell) in rows.iter().filter(|(_, c)| c.status == CellStatus::NotApplicable) {
            assert!(cell.detail.as_deref().is_some_and(|d| !d.is_empty()), "{column} {row}: a reason is carried");
        }
        let not_applicable: Vec<&str> =
            rows.iter().filter(|(_, c)| c.status == CellStatus::NotApplicable).map(|(r, _)| r.as_str()).collect();
        assert_eq!(
            not_applicable,
            [
                "escalation-refused/escalation-withheld",
                "grant-material/baseline",
                "runtime-crashed/baseline",
                "turn-draining/draining-from-the-start"
            ],
            "{column}"
        );
    }
}

#[test]
fn every_scripted_column_grades_every_row_identically() {
    let cells = driven_cells();
    let reference = &cells["model-scripted"];
    for (column, rows) in &cells {
        for (row, cell) in rows {
            let model = &reference[row];
            assert_eq!(cell.status, model.status, "{column} {row}");
            assert_eq!(cell.refused_by, model.refused_by, "{column} {row}");
            assert_eq!(cell.reason_codes, model.reason_codes, "{column} {row}");
        }
    }
}
