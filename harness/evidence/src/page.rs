//! The matrix as one self-contained HTML page (`sharedos-conformance report
//! --html`): a header (rules and judge versions, case-set hash, columns,
//! totals by status), a family × column heatmap of counts, every cell in a
//! table whose cells open a drill-down (the finding, the records in short,
//! the golden comparison), and, against another run, what moved.
//!
//! The page needs nothing outside itself: its style and script are inline,
//! its data is one JSON document in a `<script type="application/json">`
//! element (every `<` written `\u003c`, so no text in it can close the
//! element), and a Content-Security-Policy forbids every fetch. Text put in
//! markup is HTML-escaped here; the script writes data with `textContent`
//! only. The same inputs give the same bytes: no clock, maps sorted.
//!
//! The header, the heatmap's counts, the table and the diff view are
//! markup, readable with scripts off; the drill-down and the filters need
//! the script.

mod data;
pub mod golden;
mod groups;
mod heatmap;
mod html;
pub mod input;
mod moved;
pub mod records;
mod status;
mod table;

use crate::compare::diff::Diff;
use golden::GoldenFiles;
use records::TurnSummary;
use sharedos_grading::output::manifest::Manifest;
use sharedos_grading::vocab::CellKey;
use std::collections::BTreeMap;

pub use html::{escape_html, escape_script_json, GENERATOR};

/// The other run a page is compared with (`--against`).
#[derive(Debug, Clone, Copy)]
pub struct Against<'a> {
    /// How the page names it (the path as given).
    pub name: &'a str,
    /// What moved from it (before) to the page's manifest (after).
    pub diff: &'a Diff,
}

/// Everything a page shows.
#[derive(Debug, Clone, Copy)]
pub struct Page<'a> {
    /// The manifest.
    pub manifest: &'a Manifest,
    /// Each run cell's turns in short, from a bundle's records.
    pub records: Option<&'a BTreeMap<CellKey, Vec<TurnSummary>>>,
    /// The golden files; their turns stand in for records a bundle would have.
    pub golden: Option<&'a GoldenFiles>,
    /// The other run, and what moved.
    pub against: Option<Against<'a>>,
}

/// The page, as one HTML document.
#[must_use]
pub fn render(page: &Page<'_>) -> String {
    let groups = groups::groups(page.manifest);
    let moved = moved::Moves::of(page.against.map(|a| a.diff));
    let data = data::page_data(page, &groups, &moved);
    let body = [
        html::header(page.manifest),
        moved::section(page.against, page.manifest),
        heatmap::heatmap(page.manifest, &groups, &moved),
        table::table(page.manifest, &groups, &moved),
    ]
    .concat();
    html::document(&body, &data)
}
