//! Families in the reports: the manifest groups rows by family in report
//! order, and the Markdown prints a family × column summary of verdicts and
//! then the rows family by family.

use sharedos_grading::grade::judge::cell::declared_cell;
use sharedos_grading::grade::judge::cell::Cell;
use sharedos_grading::input::case::Family;
use sharedos_grading::input::script::MoveKind;
use sharedos_grading::output::manifest::{build_manifest, ColumnHeader, FamilyRow, ManifestInput, ManifestRow};
use sharedos_grading::output::markdown::render_markdown;
use sharedos_grading::vocab::CellStatus;

const HASH: &str = "1111111111111111111111111111111111111111111111111111111111111111";

fn cell(column: &str, status: CellStatus) -> Cell {
    Cell {
        column_id: column.into(),
        status,
        refused_by: Vec::new(),
        reason_codes: Vec::new(),
        causes: Vec::new(),
        declared: 1,
        attempted: 1,
        driver_issued: Vec::new(),
        not_applicable: 0,
        record_usable: true,
        record_gaps: Vec::new(),
        turns: 1,
        detail: None,
        repeats: None,
    }
}

fn row(family: Family, case: &str, kind: MoveKind, cells: Vec<Cell>) -> FamilyRow {
    FamilyRow {
        family,
        row: ManifestRow {
            case_id: case.into(),
            condition_id: "baseline".into(),
            kind,
            invariant: format!("Invariant of {case}"),
            expected_outcome: "Outcome".into(),
            condition: "Prose.".into(),
            turn_expectation: None,
            cells,
        },
    }
}

/// Rows in case-id order, as the runner produces them: the families interleave.
fn input() -> ManifestInput {
    let na = |column: &str| declared_cell(column, CellStatus::NotApplicable, 1, "The seat cannot read draining.");
    ManifestInput {
        case_set_hash: HASH.into(),
        world_set_hash: HASH.into(),
        columns: vec![
            ColumnHeader { id: "adversary-embedded".into(), label: "Adversary".into() },
            ColumnHeader { id: "model-scripted".into(), label: "Standard".into() },
        ],
        rows: vec![
            row(
                Family::Annotate,
                "annotate-a",
                MoveKind::Annotate,
                vec![cell("adversary-embedded", CellStatus::Pass), na("model-scripted")],
            ),
            row(
                Family::Matrix,
                "bounded-grant",
                MoveKind::BoundedGrantExhausted,
                vec![cell("adversary-embedded", CellStatus::Pass), cell("model-scripted", CellStatus::Pass)],
            ),
            row(
                Family::Drain,
                "drain-a",
                MoveKind::Drain,
                vec![cell("adversary-embedded", CellStatus::Pass), na("model-scripted")],
            ),
            row(Family::Drain, "drain-b", MoveKind::Drain, vec![cell("adversary-embedded", CellStatus::Fail)]),
            row(
                Family::Matrix,
                "forged-grant",
                MoveKind::ForgedGrant,
                vec![cell("adversary-embedded", CellStatus::Pass), cell("model-scripted", CellStatus::Pass)],
            ),
        ],
        evidence: Vec::new(),
    }
}

#[test]
fn the_manifest_groups_rows_by_family_in_report_order_and_keeps_row_order() {
    let manifest = build_manifest(input()).unwrap();
    let families: Vec<Family> = manifest.families.iter().map(|g| g.family).collect();
    assert_eq!(families, [Family::Matrix, Family::Drain, Family::Annotate]);
    let matrix: Vec<&str> = manifest.families[0].rows.iter().map(|r| r.case_id.as_str()).collect();
    assert_eq!(matrix, ["bounded-grant", "forged-grant"]);
    let rows: Vec<&str> = manifest.rows.iter().map(|r| r.case_id.as_str()).collect();
    assert_eq!(rows, ["annotate-a", "bounded-grant", "drain-a", "drain-b", "forged-grant"], "rows keep declared order");
}

#[test]
fn the_markdown_summarises_verdicts_per_family_and_column() {
    let text = render_markdown(&build_manifest(input()).unwrap());
    let summary = "\
| Family | Rows | Adversary | Standard |
| --- | --- | --- | --- |
| `matrix` | 2 | 2 pass | 2 pass |
| `drain` | 2 | 1 pass, 1 fail | 1 not applicable |
| `annotate` | 1 | 1 pass | 1 not applicable |
";
    assert!(text.contains(summary), "{text}");
    assert!(text.contains("- Families: `matrix` (2 rows), `drain` (2 rows), `annotate` (1 row)\n"));
}

#[test]
fn the_markdown_lists_rows_family_by_family() {
    let text = render_markdown(&build_manifest(input()).unwrap());
    let headings: Vec<usize> =
        ["## Family `matrix`", "## Family `drain`", "## Family `annotate`", "## Evidence per row"]
            .iter()
            .map(|h| text.find(h).unwrap())
            .collect();
    assert!(headings.windows(2).all(|w| w[0] < w[1]), "{text}");
    let evidence = &text[headings[3]..];
    let order: Vec<usize> =
        ["Invariant of bounded-grant", "Invariant of forged-grant", "Invariant of drain-a", "Invariant of annotate-a"]
            .iter()
            .map(|h| evidence.find(h).unwrap())
            .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "evidence follows the family order");
    assert!(
        text.contains("| Invariant of drain-b | Outcome | `baseline` | fail | — |"),
        "a column without a cell shows a dash"
    );
}
