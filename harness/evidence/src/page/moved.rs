//! The page against another run (`--against`): `diff`'s answer, whether the
//! verdicts are comparable and why not, in its own words, then each moved
//! cell with its change and its status before and after; and the moved
//! cells by key, for the heatmap's and the table's marks.

use crate::compare::diff::{CellChange, CellView, Change, Diff};
use crate::compare::render::human;
use crate::page::html::escape_html as esc;
use crate::page::status;
use crate::page::Against;
use sharedos_grading::output::manifest::Manifest;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

/// The moved cells, by `case/condition/column`.
#[derive(Debug, Clone, Default)]
pub struct Moves<'d> {
    /// Each moved cell.
    pub cells: BTreeMap<String, &'d CellChange>,
}

impl<'d> Moves<'d> {
    /// The moved cells of `diff` (none without one).
    #[must_use]
    pub fn of(diff: Option<&'d Diff>) -> Moves<'d> {
        let cells = diff
            .map(|d| d.cells.iter().map(|c| (format!("{}/{}/{}", c.case, c.condition, c.column), c)).collect())
            .unwrap_or_default();
        Moves { cells }
    }

    /// How the cell at `key` moved, if it did.
    #[must_use]
    pub fn get(&self, key: &str) -> Option<&'d CellChange> {
        self.cells.get(key).copied()
    }
}

/// A change's name on the page.
#[must_use]
pub fn change_name(change: Change) -> &'static str {
    match change {
        Change::Regression => "regression",
        Change::Fix => "fix",
        Change::Added => "added",
        Change::Removed => "removed",
        Change::Other => "other move",
        Change::Flaky => "flaky",
    }
}

fn view_markup(view: Option<&CellView>) -> String {
    let Some(view) = view else { return "<span class=\"absent\">absent</span>".to_string() };
    let mut out = format!(
        "<span class=\"badge {}\">{} {}</span>",
        status::class(view.status),
        status::glyph(view.status),
        esc(view.status.label())
    );
    if !view.reason_codes.is_empty() {
        let _ = write!(out, " <code>{}</code>", esc(&view.reason_codes.join(", ")));
    }
    if !view.refused_by.is_empty() {
        let _ = write!(out, " by {}", esc(&view.refused_by.join(", ")));
    }
    if let Some(causes) = view.causes.as_ref().filter(|c| !c.is_empty()) {
        let _ = write!(out, " cause {}", esc(&causes.join(", ")));
    }
    out
}

fn move_row(cell: &CellChange, keys: &BTreeSet<String>) -> String {
    let key = format!("{}/{}/{}", cell.case, cell.condition, cell.column);
    let name = if keys.contains(&key) {
        format!("<button type=\"button\" class=\"goto\" data-goto=\"{0}\">{0}</button>", esc(&key))
    } else {
        format!("<code>{}</code>", esc(&key))
    };
    format!(
        "<tr class=\"ch-{}\"><td>{name}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
        change_name(cell.change).replace(' ', "-"),
        change_name(cell.change),
        view_markup(cell.before.as_ref()),
        view_markup(cell.after.as_ref())
    )
}

fn notes(diff: &Diff) -> String {
    let mut notes: Vec<String> = diff.meaning.clone();
    if !diff.columns_added.is_empty() {
        notes.push(format!("Columns only in this run: {}.", diff.columns_added.join(", ")));
    }
    if !diff.columns_removed.is_empty() {
        notes.push(format!("Columns only in the other run: {}.", diff.columns_removed.join(", ")));
    }
    if notes.is_empty() {
        return String::new();
    }
    let items: String = notes.iter().map(|n| format!("<li>{}</li>", esc(n))).collect();
    format!("<ul class=\"meaning\">{items}</ul>\n")
}

/// The diff view; empty without `--against`.
#[must_use]
pub fn section(against: Option<Against<'_>>, manifest: &Manifest) -> String {
    let Some(Against { name, diff }) = against else { return String::new() };
    let verdict = human(diff).lines().next().unwrap_or_default().to_string();
    let tone = if !diff.comparable || diff.regressed() { "warn" } else { "ok" };
    let mut out = format!(
        "<section id=\"against\" class=\"panel\" aria-labelledby=\"against-title\">\n\
         <h2 id=\"against-title\">Against <code>{}</code></h2>\n\
         <p class=\"hint\">What moved from that run (before) to this one (after), as <code>diff</code> reports it.</p>\n\
         <p class=\"verdict {tone}\">{}</p>\n{}",
        esc(name),
        esc(&verdict),
        notes(diff)
    );
    if !diff.cells.is_empty() {
        let keys: BTreeSet<String> =
            manifest.rows.iter().flat_map(|r| r.cells.iter().map(|c| r.key_of(c).trial_name())).collect();
        out.push_str(
            "<table class=\"moves\"><thead><tr><th>Cell</th><th>Change</th><th>Before</th><th>After</th></tr></thead><tbody>\n",
        );
        for cell in &diff.cells {
            out.push_str(&move_row(cell, &keys));
        }
        out.push_str("</tbody></table>\n");
    }
    out.push_str("</section>\n");
    out
}
