//! Reason-code coverage: every code of the vocabulary is shown by a cell of
//! the committed matrix or declared unreachable with a reason, never both
//! and never neither.

use crate::support::suite_root;
use sharedos_grading::output::coverage::UNREACHABLE_CODES;
use sharedos_grading::output::manifest::{reason_code_coverage, Manifest};
use sharedos_model::codes::ReasonCode;

fn committed_manifest() -> Manifest {
    serde_json::from_str(&std::fs::read_to_string(suite_root().join("reports/conformance.json")).unwrap()).unwrap()
}

#[test]
fn every_reason_code_is_produced_by_a_row_or_declared_unreachable() {
    let manifest = committed_manifest();
    let codes: Vec<&str> = manifest.reason_codes.iter().map(|c| c.code.as_str()).collect();
    let vocabulary: Vec<&str> = ReasonCode::ALL.iter().map(|c| c.as_str()).collect();
    assert_eq!(codes, vocabulary, "the committed coverage lists the whole vocabulary, in order");
    let mut produced = 0;
    for coverage in &manifest.reason_codes {
        match (coverage.rows.is_empty(), &coverage.unreachable) {
            (false, None) => produced += 1,
            (true, Some(_)) => {}
            (true, None) => panic!("`{}` is produced by no row and not declared unreachable", coverage.code),
            (false, Some(_)) => {
                panic!("`{}` is declared unreachable, yet {:?} produce it", coverage.code, coverage.rows)
            }
        }
        assert_eq!(coverage.rows.is_empty(), coverage.columns.is_empty(), "{}", coverage.code);
    }
    assert_eq!(produced + UNREACHABLE_CODES.len(), ReasonCode::ALL.len());
}

#[test]
fn the_committed_coverage_is_the_one_its_cells_give() {
    let manifest = committed_manifest();
    assert_eq!(manifest.reason_codes, reason_code_coverage(&manifest.columns, &manifest.rows));
}

#[test]
fn each_unreachable_code_is_declared_once_with_a_reason() {
    for (i, (code, reason)) in UNREACHABLE_CODES.iter().enumerate() {
        assert!(!UNREACHABLE_CODES[..i].iter().any(|(c, _)| c == code), "{code} is declared twice");
        assert!(reason.len() > 20, "{code}: a reason in words");
    }
}

#[test]
fn a_code_shown_by_a_cell_is_listed_with_its_row_and_column() {
    let mut manifest = committed_manifest();
    let cell = &mut manifest.rows[0].cells[0];
    cell.reason_codes = vec!["trace_mismatch".to_string()];
    let column = cell.column_id.clone();
    let coverage = reason_code_coverage(&manifest.columns, &manifest.rows);
    let trace = coverage.iter().find(|c| c.code == "trace_mismatch").unwrap();
    assert_eq!(trace.rows.first(), Some(&manifest.rows[0].row_ref()));
    assert!(trace.columns.contains(&column));
}
