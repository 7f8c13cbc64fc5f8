//! The cell table: one row per (case, condition), grouped by family, one
//! column per manifest column; each cell a button named by its key
//! (`data-cell="case/condition/column"`) that opens the drill-down.

use crate::page::groups::Group;
use crate::page::html::escape_html as esc;
use crate::page::moved::Moves;
use crate::page::status;
use sharedos_grading::grade::judge::cell::Cell;
use sharedos_grading::output::manifest::{Manifest, ManifestRow};
use std::fmt::Write;

fn cell_markup(row: &ManifestRow, cell: &Cell, moves: &Moves<'_>) -> String {
    let key = row.key_of(cell).trial_name();
    let moved = moves.get(&key);
    let mut class = format!("c {}", status::class(cell.status));
    if moved.is_some() {
        class.push_str(" moved");
    }
    let mut out = format!(
        "<td data-column=\"{}\"><button type=\"button\" class=\"{class}\" data-cell=\"{}\"><span aria-hidden=\"true\">{}</span> {}",
        esc(&cell.column_id),
        esc(&key),
        status::glyph(cell.status),
        status::short(cell.status)
    );
    if !cell.driver_issued.is_empty() {
        out.push_str(" <small title=\"the attacking call was issued by the column's driver\">drv</small>");
    }
    if moved.is_some() {
        out.push_str(" <span class=\"mark\" title=\"moved\">\u{394}</span>");
    }
    out.push_str("</button></td>");
    out
}

fn row_markup(manifest: &Manifest, row: &ManifestRow, moves: &Moves<'_>) -> String {
    let mut out = format!(
        "<tr><th scope=\"row\"><span class=\"case\">{}</span><span class=\"cond\">{}</span></th>",
        esc(&row.case_id),
        esc(&row.condition_id)
    );
    for column in &manifest.columns {
        match row.cells.iter().find(|c| c.column_id == column.id) {
            Some(cell) => out.push_str(&cell_markup(row, cell, moves)),
            None => {
                let _ = write!(out, "<td data-column=\"{}\" class=\"none\">\u{2014}</td>", esc(&column.id));
            }
        }
    }
    out.push_str("</tr>\n");
    out
}

/// The table section, with its filter bar.
#[must_use]
pub fn table(manifest: &Manifest, groups: &[Group<'_>], moves: &Moves<'_>) -> String {
    let mut out = String::from(
        "<section id=\"table\" class=\"panel\" aria-labelledby=\"table-title\">\n\
         <div class=\"table-head\"><h2 id=\"table-title\">Cells</h2>\
         <p id=\"filter\" class=\"filter\" hidden><span id=\"filter-text\"></span> \
         <button type=\"button\" id=\"filter-clear\">Show all cells</button></p></div>\n\
         <p class=\"hint\">Click a cell for its finding, its records in short and its golden comparison.</p>\n\
         <noscript><p class=\"hint\">The drill-down and the filters need JavaScript; the counts and cells above do not.</p></noscript>\n\
         <table class=\"cells\" id=\"cells\">\n<thead><tr><th scope=\"col\">Case / condition</th>",
    );
    for column in &manifest.columns {
        let _ = write!(
            out,
            "<th scope=\"col\" data-column=\"{}\">{}<small>{}</small></th>",
            esc(&column.id),
            esc(&column.label),
            esc(&column.id)
        );
    }
    out.push_str("</tr></thead>\n");
    for group in groups {
        let _ = writeln!(
            out,
            "<tbody data-family=\"{}\"><tr class=\"fam\"><th scope=\"rowgroup\" colspan=\"{}\">{}<small>{} rows</small></th></tr>",
            esc(&group.family),
            manifest.columns.len() + 1,
            esc(&group.title()),
            group.rows.len()
        );
        for row in &group.rows {
            out.push_str(&row_markup(manifest, row, moves));
        }
        out.push_str("</tbody>\n");
    }
    out.push_str("</table>\n</section>\n");
    out
}
