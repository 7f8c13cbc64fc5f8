//! A [`Diff`] for people (plain text) and for a pull-request comment
//! (Markdown); machines take its JSON.
//!
//! Both are tables of one line a row, and their ids, codes and file names
//! come from the manifests, untrusted: every line is written through
//! [`one_line`], so a control character in them can neither break a row
//! in two nor move a terminal's cursor.

use crate::compare::diff::{CellChange, CellView, Change, Diff};
use sharedos_grading::output::printable::{one_line, table_cell};
use std::collections::BTreeMap;
use std::fmt::Write;

/// Appends `text`, escaped to one line, and a line break.
fn line(out: &mut String, text: &str) {
    out.push_str(&one_line(text));
    out.push('\n');
}

fn column_lines(diff: &Diff) -> Vec<String> {
    let mut lines = Vec::new();
    if !diff.columns_added.is_empty() {
        lines.push(format!("Columns only in B: {}.", diff.columns_added.join(", ")));
    }
    if !diff.columns_removed.is_empty() {
        lines.push(format!("Columns only in A: {}.", diff.columns_removed.join(", ")));
    }
    lines
}

fn verdict_line(diff: &Diff) -> String {
    let same_columns = diff.columns_added.is_empty() && diff.columns_removed.is_empty();
    match (diff.comparable, diff.moved.is_empty() && same_columns, diff.cells.is_empty()) {
        (true, true, true) => "Comparable, nothing moved.".to_string(),
        (true, _, true) => "Comparable; no cell moved.".to_string(),
        (true, _, false) => format!("Comparable; {} cells moved.", diff.cells.len()),
        (false, _, _) => format!("Not comparable; {} cells differ.", diff.cells.len()),
    }
}

fn cell_text(view: Option<&CellView>) -> String {
    let Some(view) = view else { return "absent".to_string() };
    let mut text = view.status.as_str().to_string();
    if !view.reason_codes.is_empty() {
        let _ = write!(text, " [{}]", view.reason_codes.join(", "));
    }
    if !view.refused_by.is_empty() {
        let _ = write!(text, " by {}", view.refused_by.join(", "));
    }
    if let Some(causes) = view.causes.as_ref().filter(|c| !c.is_empty()) {
        let _ = write!(text, " cause {}", causes.join(", "));
    }
    if let Some(runs) = view.runs {
        let _ = write!(text, " ({} of {} runs passed)", runs.passes, runs.runs);
    }
    text
}

/// The move of a cell, from A to B, with Fisher's p for repeated cells.
fn move_text(cell: &CellChange) -> (String, String, String) {
    let (a, b) = (cell_text(cell.before.as_ref()), cell_text(cell.after.as_ref()));
    let p = cell.p_value.map(|p| format!(", p = {p:.4}")).unwrap_or_default();
    (a, b, p)
}

fn name(cell: &CellChange) -> String {
    format!("{}/{}/{}", cell.case, cell.condition, cell.column)
}

fn groups(diff: &Diff) -> impl Iterator<Item = (Change, Vec<&CellChange>)> {
    Change::ALL.into_iter().filter_map(|change| {
        let cells: Vec<&CellChange> = diff.cells.iter().filter(|c| c.change == change).collect();
        (!cells.is_empty()).then_some((change, cells))
    })
}

/// The kinds the summary counts: flaky cells only when there are any
/// (only repeated runs have them).
fn counted(diff: &Diff) -> Vec<Change> {
    let flaky = diff.cells.iter().any(|c| c.change == Change::Flaky);
    Change::ALL.into_iter().filter(|c| *c != Change::Flaky || flaky).collect()
}

fn counts(kinds: &[Change], counts: &BTreeMap<Change, usize>) -> String {
    kinds.iter().map(|c| counts.get(c).copied().unwrap_or(0).to_string()).collect::<Vec<_>>().join(" | ")
}

/// The summary's column names, lower case.
fn count_names(kinds: &[Change]) -> Vec<&'static str> {
    kinds.iter().map(|c| c.counted_as()).collect()
}

/// Plain text.
#[must_use]
pub fn human(diff: &Diff) -> String {
    let mut out = String::new();
    line(&mut out, &verdict_line(diff));
    for meaning in diff.meaning.iter().chain(&column_lines(diff)) {
        line(&mut out, &format!("  - {meaning}"));
    }
    for (change, cells) in groups(diff) {
        out.push('\n');
        line(&mut out, &format!("{} ({})", change.heading(), cells.len()));
        for cell in cells {
            let (a, b, p) = move_text(cell);
            line(&mut out, &format!("  {}: {a} -> {b}{p}", name(cell)));
        }
    }
    if !diff.cells.is_empty() {
        let kinds = counted(diff);
        out.push('\n');
        line(&mut out, &format!("Summary ({})", count_names(&kinds).join(", ")));
        for (column, by) in &diff.by_column {
            line(&mut out, &format!("  column {column}: {}", counts(&kinds, by).replace(" | ", ", ")));
        }
        for (family, by) in &diff.by_family {
            line(&mut out, &format!("  family {family}: {}", counts(&kinds, by).replace(" | ", ", ")));
        }
    }
    out
}

/// Markdown for a pull-request comment.
#[must_use]
pub fn markdown(diff: &Diff) -> String {
    let mut out = String::from("### Conformance diff\n\n");
    line(&mut out, &format!("**{}**", verdict_line(diff)));
    let notes: Vec<String> = diff.meaning.iter().cloned().chain(column_lines(diff)).collect();
    if !notes.is_empty() {
        out.push('\n');
        for meaning in &notes {
            line(&mut out, &format!("- {meaning}"));
        }
    }
    for (change, cells) in groups(diff) {
        let _ = writeln!(
            out,
            "\n#### {} ({})\n\n| Cell | Before | After |\n| --- | --- | --- |",
            change.heading(),
            cells.len()
        );
        for cell in cells {
            let (a, b, p) = move_text(cell);
            let b = format!("{b}{p}");
            line(&mut out, &format!("| `{}` | {} | {} |", table_cell(&name(cell)), table_cell(&a), table_cell(&b)));
        }
    }
    if !diff.cells.is_empty() {
        let kinds = counted(diff);
        let names: Vec<String> = count_names(&kinds).iter().map(|n| capitalised(n)).collect();
        let rule = vec!["---"; kinds.len() + 1].join(" | ");
        let _ = writeln!(out, "\n#### Summary\n\n| | {} |\n| {rule} |", names.join(" | "));
        for (column, by) in &diff.by_column {
            line(&mut out, &format!("| column `{}` | {} |", table_cell(column), counts(&kinds, by)));
        }
        for (family, by) in &diff.by_family {
            line(&mut out, &format!("| family {} | {} |", table_cell(family), counts(&kinds, by)));
        }
    }
    out
}

fn capitalised(word: &str) -> String {
    let mut chars = word.chars();
    chars.next().map(|first| first.to_uppercase().chain(chars).collect()).unwrap_or_default()
}
