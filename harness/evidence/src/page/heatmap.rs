//! The family × column heatmap: one square per family and column, counting
//! the cells by status, coloured by the worst status among them, with a bar
//! of their proportions and a mark when cells moved; a click shows only
//! that square's cells in the table.

use crate::page::groups::Group;
use crate::page::html::escape_html as esc;
use crate::page::moved::Moves;
use crate::page::status;
use sharedos_grading::output::manifest::{Manifest, ManifestColumn};
use sharedos_grading::vocab::CellStatus;
use std::collections::BTreeMap;
use std::fmt::Write;

/// One square's cells: counts by status, and how many moved.
#[derive(Debug, Default)]
struct Square {
    counts: BTreeMap<CellStatus, usize>,
    moved: usize,
}

fn square_of(group: &Group<'_>, column: &ManifestColumn, moves: &Moves<'_>) -> Square {
    let mut square = Square::default();
    for row in &group.rows {
        for cell in row.cells.iter().filter(|c| c.column_id == column.id) {
            *square.counts.entry(cell.status).or_default() += 1;
            if moves.get(&row.key_of(cell).trial_name()).is_some() {
                square.moved += 1;
            }
        }
    }
    square
}

fn square_markup(group: &Group<'_>, column: &ManifestColumn, square: &Square) -> String {
    let worst = status::worst(square.counts.keys().copied());
    let class = worst.map_or_else(|| "s-none".to_string(), status::class);
    let in_order: Vec<(CellStatus, usize)> =
        status::WORST_FIRST.iter().filter_map(|s| square.counts.get(s).map(|n| (*s, *n))).collect();
    let spoken: Vec<String> = in_order.iter().map(|(s, n)| format!("{n} {}", s.label())).collect();
    let mut label = format!("{} \u{d7} {}: {}", group.title(), column.label, spoken.join(", "));
    if square.moved > 0 {
        let _ = write!(label, "; {} moved", square.moved);
    }
    let mut out = format!(
        "<td><button type=\"button\" class=\"sq {class}\" data-square data-family=\"{}\" data-column=\"{}\" \
         aria-label=\"{}\"><span class=\"counts\">",
        esc(&group.family),
        esc(&column.id),
        esc(&label)
    );
    if in_order.is_empty() {
        out.push_str("<span class=\"n\">no cells</span>");
    }
    for (s, n) in &in_order {
        let _ = write!(out, "<span class=\"n\" title=\"{n} {}\"><b>{n}</b> {}</span>", s.label(), status::short(*s));
    }
    out.push_str("</span><span class=\"bar\" aria-hidden=\"true\">");
    for (s, n) in &in_order {
        let _ = write!(out, "<i class=\"{}\" style=\"flex:{n}\"></i>", status::class(*s));
    }
    out.push_str("</span>");
    if square.moved > 0 {
        let _ = write!(out, "<span class=\"mark\" title=\"cells that moved\">\u{394} {}</span>", square.moved);
    }
    out.push_str("</button></td>");
    out
}

/// The heatmap section.
#[must_use]
pub fn heatmap(manifest: &Manifest, groups: &[Group<'_>], moves: &Moves<'_>) -> String {
    let mut out = String::from(
        "<section id=\"heatmap\" class=\"panel\" aria-labelledby=\"heatmap-title\">\n\
         <h2 id=\"heatmap-title\">Families \u{d7} columns</h2>\n\
         <p class=\"hint\">Each square counts its cells by status and takes the colour of the worst of them. \
         Click a square to show only its cells in the table below.</p>\n\
         <div class=\"scroll\"><table class=\"heatmap\">\n<thead><tr><th scope=\"col\">Family</th>",
    );
    for column in &manifest.columns {
        let _ = write!(out, "<th scope=\"col\">{}<small>{}</small></th>", esc(&column.label), esc(&column.id));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for group in groups {
        let _ =
            write!(out, "<tr><th scope=\"row\">{}<small>{} rows</small></th>", esc(&group.title()), group.rows.len());
        for column in &manifest.columns {
            out.push_str(&square_markup(group, column, &square_of(group, column, moves)));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table></div>\n</section>\n");
    out
}
