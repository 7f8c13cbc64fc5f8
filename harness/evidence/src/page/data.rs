//! The data the page's script reads: one JSON document with the columns,
//! each row's prose, and each cell's finding, turns in short, golden
//! comparison and move, keyed by `case/condition/column`. Maps are sorted
//! and empty lists left out, so the same inputs give the same bytes.

use crate::compare::diff::CellChange;
use crate::page::golden::{golden_turns, view, GoldenView};
use crate::page::groups::{family_of, Group};
use crate::page::moved::Moves;
use crate::page::records::{RecordSource, TurnSummary};
use crate::page::Page;
use serde::Serialize;
use sharedos_conformance_metadata::repeats::Repeats;
use sharedos_grading::grade::judge::cell::Cell;
use sharedos_grading::input::case::TurnExpectation;
use sharedos_grading::input::script::MoveKind;
use sharedos_grading::output::manifest::ManifestRow;
use sharedos_grading::vocab::CellStatus;
use std::collections::BTreeMap;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PageData<'a> {
    columns: Vec<ColumnData<'a>>,
    /// How the turn summaries are introduced; absent when there are none.
    #[serde(skip_serializing_if = "Option::is_none")]
    records: Option<&'static str>,
    /// The other run's name, with `--against`.
    #[serde(skip_serializing_if = "Option::is_none")]
    against: Option<&'a str>,
    rows: BTreeMap<String, RowData<'a>>,
    cells: BTreeMap<String, CellData<'a>>,
}

#[derive(Serialize)]
struct ColumnData<'a> {
    id: &'a str,
    label: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RowData<'a> {
    family: String,
    kind: &'a MoveKind,
    invariant: &'a str,
    expected_outcome: &'a str,
    condition: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    turn_expectation: Option<&'a TurnExpectation>,
}

fn is_empty(list: &[String]) -> bool {
    list.is_empty()
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CellData<'a> {
    case: &'a str,
    condition: &'a str,
    column: &'a str,
    status: CellStatus,
    label: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    detail: Option<&'a str>,
    #[serde(skip_serializing_if = "is_empty")]
    reason_codes: &'a [String],
    #[serde(skip_serializing_if = "Vec::is_empty")]
    refused_by: Vec<&'static str>,
    #[serde(skip_serializing_if = "is_empty")]
    causes: &'a [String],
    declared: u32,
    attempted: u32,
    #[serde(skip_serializing_if = "is_empty")]
    driver_issued: &'a [String],
    not_applicable: u32,
    record_usable: bool,
    #[serde(skip_serializing_if = "is_empty")]
    record_gaps: &'a [String],
    turns: u32,
    /// The turns in short (see `PageData::records` for their source).
    #[serde(skip_serializing_if = "Option::is_none")]
    records: Option<&'a [TurnSummary]>,
    golden: GoldenView,
    #[serde(skip_serializing_if = "Option::is_none")]
    moved: Option<&'a CellChange>,
    /// Every run's verdict, when the cell ran more than once (`--repeat`);
    /// the script shows a "Repeats" section only when this key is present.
    #[serde(skip_serializing_if = "Option::is_none")]
    repeats: Option<&'a Repeats>,
}

fn row_data<'a>(row: &'a ManifestRow, family: &str) -> RowData<'a> {
    RowData {
        family: family.to_string(),
        kind: &row.kind,
        invariant: &row.invariant,
        expected_outcome: &row.expected_outcome,
        condition: &row.condition,
        turn_expectation: row.turn_expectation.as_ref(),
    }
}

fn cell_data<'a>(page: &Page<'a>, row: &'a ManifestRow, cell: &'a Cell, moves: &Moves<'a>) -> CellData<'a> {
    let key = row.key_of(cell);
    let records = match page.records {
        Some(records) => records.get(&key).map(Vec::as_slice),
        None => golden_turns(page.golden, &key),
    };
    CellData {
        case: &row.case_id,
        condition: &row.condition_id,
        column: &cell.column_id,
        status: cell.status,
        label: cell.label(),
        detail: cell.detail.as_deref(),
        reason_codes: &cell.reason_codes,
        refused_by: cell.refused_by.iter().map(|s| s.as_str()).collect(),
        causes: &cell.causes,
        declared: cell.declared,
        attempted: cell.attempted,
        driver_issued: &cell.driver_issued,
        not_applicable: cell.not_applicable,
        record_usable: cell.record_usable,
        record_gaps: &cell.record_gaps,
        turns: cell.turns,
        records,
        golden: view(page.golden, &key, cell),
        moved: moves.get(&key.trial_name()),
        repeats: cell.repeats.as_ref(),
    }
}

/// The page's data, as JSON text (not yet escaped for the script element).
#[must_use]
pub fn page_data<'a>(page: &Page<'a>, groups: &[Group<'a>], moves: &Moves<'a>) -> String {
    let families = family_of(groups);
    let source = match (page.records, page.golden) {
        (Some(_), _) => Some(RecordSource::Bundle),
        (None, Some(_)) => Some(RecordSource::Golden),
        (None, None) => None,
    };
    let mut rows = BTreeMap::new();
    let mut cells = BTreeMap::new();
    for row in &page.manifest.rows {
        let row_key = format!("{}/{}", row.case_id, row.condition_id);
        let family = families.get(&row_key).copied().unwrap_or(crate::page::groups::OTHER);
        for cell in &row.cells {
            cells.insert(row.key_of(cell).trial_name(), cell_data(page, row, cell, moves));
        }
        rows.insert(row_key, row_data(row, family));
    }
    let data = PageData {
        columns: page.manifest.columns.iter().map(|c| ColumnData { id: &c.id, label: &c.label }).collect(),
        records: source.map(RecordSource::caption),
        against: page.against.map(|a| a.name),
        rows,
        cells,
    };
    serde_json::to_string(&data).unwrap_or_else(|_| "{}".to_string())
}
