//! The Markdown manifest, rendered from the JSON manifest alone.
//!
//! Rendering is a pure function: the same manifest gives the same bytes, and
//! nothing outside the manifest (clock, environment, run order) can reach the
//! text. The document ends in exactly one newline.
//!
//! When the manifest groups rows by family, a family × column summary of
//! verdict counts precedes the rows, and the rows (table and evidence) are
//! listed family by family; a manifest of one family keeps a single table.

use crate::grade::judge::cell::Cell;
use crate::output::evidence::evidence_line;
use crate::output::manifest::{Manifest, ManifestRow};
use crate::output::printable::table_cell;
use crate::vocab::CellStatus;

/// The first line of every manifest's Markdown.
pub const TITLE: &str = "# Kernel conformance manifest";

const ABOUT_ROWS: &str = "Each row is one attempt to break an invariant of SharedOS, under one \
condition of the world it runs in. The row declares what the attacker tries, what SharedOS \
must answer, and whether every declared attempt was actually made; an attack nobody made \
proves nothing, so it is counted, never assumed.";

const ABOUT_ADVERSARY: &str = "The `Adversary` column seats a scripted attacker directly in the \
runtime position. It calls the envelope's host itself, with no model driver and no rendered \
catalogue, and reports a receipt for every attempt. Every other column is read against it.";

const ABOUT_STANDARD: &str = "The `Standard` column runs SharedOS's own agent loop with a model \
driver. The model is replaced by a transcript written from the declared attempts, so the seat \
makes exactly the calls a live model would be asked to make; its receipts are read back from the \
execution record.";

const ABOUT_VENDORS: &str = "Vendor columns (`Codex`, `Claude Code`, `DeepSeek`, `Pi`, and any \
other) write the declared attempts as frames in that vendor's wire format and parse them back \
through the adapter's real protocol translation. They show what the adapter does with what a \
vendor says; they make no claim about a live session with the vendor's tool.";

const ABOUT_HASHES: &str = "Two manifests are comparable only when their case-set and world-set hashes and their \
grading-rules versions match. The case set covers every case and attack script as declared, prose \
left out; the world set covers every world a condition built, grants and tool definitions \
included; a column's prompt set covers the prompts its runtime stated, turn by turn, and is \
absent for a column that stated none. The evidence root ties the manifest to the execution \
records behind its cells. Every hash is SHA-256 over a domain tag and the canonical (RFC 8785) \
JSON of what it covers.";

const ABOUT_VERDICTS: &str = "Verdicts: `pass` means every declared attempt got the answer the row \
requires, every control attempt succeeded, and a row that grades the turn's ending saw that \
ending. `fail` means SharedOS answered otherwise, or the record a row depends on was unusable. \
`not exercised` means something the row needs never happened, so it proves nothing; it fails the \
build like `fail`. `not applicable` means the runtime structurally cannot make the attempt. \
`not implemented` means SharedOS does not provide what the row is about; the row is declared and \
never run. `out of scope` means the row ran and was recorded, but SharedOS promises nothing on \
this path for this column. `pass (driver)` is a pass whose attacking call the column's driver \
had to issue on the seat's behalf, because the seat's own loop could never go past the limit \
under test.";

const ABOUT_FAMILIES: &str = "Rows are grouped by rule family: `matrix` is SharedOS's own authority \
matrix; `drain`, `retryable` and `annotate` grade the envelope's contract near a turn's end, on \
whether an ending offers a retry, and on what a runtime states for the record; `messaging` grades \
messages between principals; `fail_closed` grades the paths a broken dependency or a misused affordance \
must end on, which SharedOS's matrix leaves out; `containment` grades that a live CLI has no tool of its own \
to act with outside the envelope. Each cell counts the verdicts of one family in one column.";

/// Renders the manifest as Markdown.
#[must_use]
pub fn render_markdown(manifest: &Manifest) -> String {
    let mut lines: Vec<String> = vec![TITLE.to_string(), String::new()];
    for paragraph in [ABOUT_ROWS, ABOUT_ADVERSARY, ABOUT_STANDARD, ABOUT_VENDORS] {
        lines.push(paragraph.to_string());
        lines.push(String::new());
    }
    header(manifest, &mut lines);
    lines.push(String::new());
    for paragraph in [ABOUT_HASHES, ABOUT_VERDICTS] {
        lines.push(paragraph.to_string());
        lines.push(String::new());
    }
    let groups = family_groups(manifest);
    if !manifest.families.is_empty() {
        family_summary(manifest, &groups, &mut lines);
        lines.push(String::new());
    }
    if groups.len() > 1 {
        for (family, rows) in &groups {
            lines.push(format!("## Family `{family}`"));
            lines.push(String::new());
            table(manifest, rows, &mut lines);
            lines.push(String::new());
        }
    } else {
        let rows: Vec<&ManifestRow> = manifest.rows.iter().collect();
        table(manifest, &rows, &mut lines);
        lines.push(String::new());
    }
    if !manifest.reason_codes.is_empty() {
        reason_codes(manifest, &mut lines);
        lines.push(String::new());
    }
    lines.push("## Evidence per row".to_string());
    lines.push(String::new());
    for row in groups.iter().flat_map(|(_, rows)| rows) {
        evidence(manifest, row, &mut lines);
    }
    let mut text = lines.join("\n").trim_end().to_string();
    text.push('\n');
    text
}

fn header(manifest: &Manifest, lines: &mut Vec<String>) {
    lines.push(format!("- Case set: `{}`", manifest.case_set_hash));
    lines.push(format!("- World set: `{}`", manifest.world_set_hash));
    match &manifest.rules_version {
        Some(rules) => lines.push(format!(
            "- Grading rules: version `{rules}` (SharedOS judge version `{}` semantics)",
            manifest.judge_version
        )),
        None => lines.push(format!("- Grading rules: version `{}`", manifest.judge_version)),
    }
    if let Some(scheme) = &manifest.hash_scheme {
        lines.push(format!("- Hash scheme: `{scheme}`"));
    }
    if let Some(root) = &manifest.evidence_root {
        lines.push(format!("- Evidence root: `{root}`"));
    }
    let labels: Vec<String> = manifest.columns.iter().map(|c| format!("`{}`", c.label)).collect();
    lines.push(format!("- Columns: {}", labels.join(", ")));
    for column in &manifest.columns {
        if let Some(hash) = &column.prompt_set_hash {
            lines.push(format!("- Prompt set, `{}`: `{hash}`", column.label));
        }
    }
    for column in &manifest.columns {
        if let Some(runtime) = &column.runtime {
            lines.push(format!("- Runtime, `{}`: {}", column.label, runtime.describe()));
        }
    }
    if !manifest.families.is_empty() {
        let families: Vec<String> = manifest
            .families
            .iter()
            .map(|g| format!("`{}` ({})", g.family.as_str(), plural(g.rows.len(), "row")))
            .collect();
        lines.push(format!("- Families: {}", families.join(", ")));
    }
}

fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// The rows of each family, in the manifest's family order; a manifest
/// without families is one group holding every row.
fn family_groups(manifest: &Manifest) -> Vec<(&'static str, Vec<&ManifestRow>)> {
    if manifest.families.is_empty() {
        return vec![("", manifest.rows.iter().collect())];
    }
    manifest
        .families
        .iter()
        .map(|group| {
            let rows = group
                .rows
                .iter()
                .filter_map(|r| {
                    manifest.rows.iter().find(|row| row.case_id == r.case_id && row.condition_id == r.condition_id)
                })
                .collect();
            (group.family.as_str(), rows)
        })
        .collect()
}

/// `| Family | Rows | <column>… |`: per family and column, how many cells
/// took each verdict (a pass the driver helped is still a pass).
fn family_summary(manifest: &Manifest, groups: &[(&'static str, Vec<&ManifestRow>)], lines: &mut Vec<String>) {
    lines.push("## Families".to_string());
    lines.push(String::new());
    lines.push(ABOUT_FAMILIES.to_string());
    lines.push(String::new());
    let mut head = String::from("| Family | Rows |");
    let mut rule = String::from("| --- | --- |");
    for column in &manifest.columns {
        head.push_str(&format!(" {} |", table_cell(&column.label)));
        rule.push_str(" --- |");
    }
    lines.push(head);
    lines.push(rule);
    for (family, rows) in groups {
        let mut line = format!("| `{family}` | {} |", rows.len());
        for column in &manifest.columns {
            let statuses: Vec<CellStatus> = rows
                .iter()
                .filter_map(|row| row.cells.iter().find(|c| c.column_id == column.id))
                .map(|c| c.status)
                .collect();
            line.push_str(&format!(" {} |", verdict_counts(&statuses)));
        }
        lines.push(line);
    }
}

const ABOUT_REASON_CODES: &str = "Every reason code the kernel and envelope can decide, with the rows and \
columns whose cells show it. A code no row can produce is declared unreachable, with the reason; a code that \
is neither seen nor declared fails the harness's own tests, so a new fail-closed path cannot go unexercised \
unnoticed.";

fn reason_codes(manifest: &Manifest, lines: &mut Vec<String>) {
    lines.push("## Reason codes".to_string());
    lines.push(String::new());
    lines.push(ABOUT_REASON_CODES.to_string());
    lines.push(String::new());
    lines.push("| Code | Rows | Columns |".to_string());
    lines.push("| --- | --- | --- |".to_string());
    for coverage in &manifest.reason_codes {
        let rows = match (&coverage.unreachable, coverage.rows.is_empty()) {
            (Some(reason), true) => format!("unreachable: {}", table_cell(reason)),
            (None, true) => "**none**, and not declared unreachable".to_string(),
            _ => {
                let rows: Vec<String> =
                    coverage.rows.iter().map(|r| format!("`{}` / `{}`", r.case_id, r.condition_id)).collect();
                rows.join(", ")
            }
        };
        let columns = if coverage.columns.len() == manifest.columns.len() {
            "every column".to_string()
        } else if coverage.columns.is_empty() {
            "—".to_string()
        } else {
            let labels: Vec<String> = manifest
                .columns
                .iter()
                .filter(|c| coverage.columns.contains(&c.id))
                .map(|c| table_cell(&c.label).into_owned())
                .collect();
            labels.join(", ")
        };
        lines.push(format!("| `{}` | {rows} | {columns} |", coverage.code));
    }
}

/// "3 pass, 1 not implemented", in verdict order; an em dash for no cells.
fn verdict_counts(statuses: &[CellStatus]) -> String {
    let parts: Vec<String> = CellStatus::ALL
        .iter()
        .filter_map(|status| {
            let n = statuses.iter().filter(|s| *s == status).count();
            (n > 0).then(|| format!("{n} {}", status.label()))
        })
        .collect();
    if parts.is_empty() {
        "—".to_string()
    } else {
        parts.join(", ")
    }
}

fn table(manifest: &Manifest, rows: &[&ManifestRow], lines: &mut Vec<String>) {
    let mut head = String::from("| Invariant | Expected outcome | Condition |");
    let mut rule = String::from("| --- | --- | --- |");
    for column in &manifest.columns {
        head.push_str(&format!(" {} |", table_cell(&column.label)));
        rule.push_str(" --- |");
    }
    lines.push(head);
    lines.push(rule);
    for row in rows {
        let mut line = format!(
            "| {} | {} | `{}` |",
            table_cell(&row.invariant),
            table_cell(&row.expected_outcome),
            table_cell(&row.condition_id)
        );
        for column in &manifest.columns {
            let label = row.cells.iter().find(|c| c.column_id == column.id).map(Cell::label);
            line.push_str(&format!(" {} |", label.as_deref().unwrap_or("—")));
        }
        lines.push(line);
    }
}

fn evidence(manifest: &Manifest, row: &ManifestRow, lines: &mut Vec<String>) {
    lines.push(format!("### {} — `{}`", row.invariant, row.condition_id));
    lines.push(String::new());
    lines.push(row.condition.clone());
    lines.push(String::new());
    for cell in &row.cells {
        let label = manifest
            .columns
            .iter()
            .find(|c| c.id == cell.column_id)
            .map_or(cell.column_id.as_str(), |c| c.label.as_str());
        lines.push(evidence_line(label, cell));
    }
    lines.push(String::new());
}
