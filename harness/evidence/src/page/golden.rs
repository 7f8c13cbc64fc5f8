//! The golden files beside a manifest: each run cell's snapshot, found
//! where `run` writes it ([`CellKey::relative_path`] below `golden/`), its
//! `cell` compared with the manifest's cell field by field, and its
//! `turns` summarised for a page whose input holds no records.

use crate::page::records::{of_golden_turns, TurnSummary};
use serde::Serialize;
use serde_json::Value;
use sharedos_grading::grade::judge::cell::Cell;
use sharedos_grading::input::file::{read_regular, Links};
use sharedos_grading::output::manifest::Manifest;
use sharedos_grading::vocab::CellKey;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The golden folder, below the repository root.
pub const GOLDEN_DIR: &str = "golden";

/// A golden file that is there.
#[derive(Debug, Clone, PartialEq)]
pub enum GoldenEntry {
    /// Read: its `cell`, and its turns in short.
    Found {
        /// The `cell` object.
        cell: Value,
        /// Its `turns`, summarised.
        turns: Vec<TurnSummary>,
    },
    /// There, but not readable as a snapshot.
    Unreadable {
        /// Why.
        detail: String,
    },
}

/// The golden files of a manifest's cells; a cell with none is absent.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GoldenFiles {
    /// Each cell's file that is there.
    pub entries: BTreeMap<CellKey, GoldenEntry>,
}

/// Where a cell's golden file is, as the page names it (relative to the root).
#[must_use]
pub fn shown_path(key: &CellKey) -> String {
    Path::new(GOLDEN_DIR).join(key.relative_path()).to_string_lossy().into_owned()
}

fn entry_of(bytes: &[u8]) -> GoldenEntry {
    match serde_json::from_slice::<Value>(bytes) {
        Ok(mut value) => match value.get_mut("cell").map(Value::take) {
            Some(cell) if cell.is_object() => GoldenEntry::Found { turns: of_golden_turns(value.get("turns")), cell },
            _ => GoldenEntry::Unreadable { detail: "not a golden snapshot: it has no `cell` object".to_string() },
        },
        Err(error) => GoldenEntry::Unreadable { detail: format!("not JSON ({error})") },
    }
}

/// Reads the golden file of every cell of `manifest` below `root`; `None`
/// when `root` has no golden folder.
#[must_use]
pub fn read_golden(root: &Path, manifest: &Manifest) -> Option<GoldenFiles> {
    let dir = root.join(GOLDEN_DIR);
    if !dir.is_dir() {
        return None;
    }
    let mut entries = BTreeMap::new();
    for row in &manifest.rows {
        for cell in &row.cells {
            let key = row.key_of(cell);
            let entry = match read_regular(&dir.join(key.relative_path()), Links::Follow) {
                Ok(bytes) => entry_of(&bytes),
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => continue,
                Err(error) => GoldenEntry::Unreadable { detail: error.to_string() },
            };
            entries.insert(key, entry);
        }
    }
    Some(GoldenFiles { entries })
}

/// One field of a cell that its golden file holds otherwise.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FieldDiff {
    /// The field (`status`, `reasonCodes`).
    pub field: String,
    /// Its JSON in the golden file; absent when the file lacks it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub golden: Option<String>,
    /// Its JSON in the manifest; absent when the manifest's cell lacks it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub manifest: Option<String>,
}

fn json_text(value: Option<&Value>) -> Option<String> {
    value.map(|v| serde_json::to_string(v).unwrap_or_default())
}

/// The fields in which `cell` and a golden file's `cell` differ, in name
/// order; empty when they match.
#[must_use]
pub fn compare_cell(cell: &Cell, golden: &Value) -> Vec<FieldDiff> {
    let ours = serde_json::to_value(cell).unwrap_or(Value::Null);
    let empty = serde_json::Map::new();
    let ours = ours.as_object().unwrap_or(&empty);
    let theirs = golden.as_object().unwrap_or(&empty);
    let fields: BTreeSet<&String> = ours.keys().chain(theirs.keys()).collect();
    fields
        .into_iter()
        .filter(|field| ours.get(*field) != theirs.get(*field))
        .map(|field| FieldDiff {
            field: field.clone(),
            golden: json_text(theirs.get(field)),
            manifest: json_text(ours.get(field)),
        })
        .collect()
}

/// How a cell stands against its golden file, as the page shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum GoldenView {
    /// Every field matches.
    Matches {
        /// The file.
        path: String,
    },
    /// These fields differ.
    Differs {
        /// The file.
        path: String,
        /// The fields, golden first.
        fields: Vec<FieldDiff>,
    },
    /// No golden file: `declared` when the cell was decided without
    /// running, which never has one.
    Missing {
        /// Where it would be.
        path: String,
        /// Whether the cell was decided without running.
        declared: bool,
    },
    /// The file is there but cannot be read as a snapshot.
    Unreadable {
        /// The file.
        path: String,
        /// Why.
        detail: String,
    },
    /// No golden folder was given or found.
    NoFolder,
}

/// How `cell` (at `key`) stands against its golden file in `golden`.
#[must_use]
pub fn view(golden: Option<&GoldenFiles>, key: &CellKey, cell: &Cell) -> GoldenView {
    let Some(golden) = golden else { return GoldenView::NoFolder };
    let path = shown_path(key);
    match golden.entries.get(key) {
        None => GoldenView::Missing { path, declared: cell.is_declared() },
        Some(GoldenEntry::Unreadable { detail }) => GoldenView::Unreadable { path, detail: detail.clone() },
        Some(GoldenEntry::Found { cell: theirs, .. }) => {
            let fields = compare_cell(cell, theirs);
            if fields.is_empty() {
                GoldenView::Matches { path }
            } else {
                GoldenView::Differs { path, fields }
            }
        }
    }
}

/// The turns a golden file records for `key`, if it is there.
#[must_use]
pub fn golden_turns<'g>(golden: Option<&'g GoldenFiles>, key: &CellKey) -> Option<&'g [TurnSummary]> {
    match golden?.entries.get(key)? {
        GoldenEntry::Found { turns, .. } => Some(turns),
        GoldenEntry::Unreadable { .. } => None,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use sharedos_grading::grade::judge::cell::declared_cell;
    use sharedos_grading::vocab::CellStatus;

    #[test]
    fn a_cell_compared_with_its_golden_cell_names_each_field_that_differs() {
        let cell = declared_cell("adversary-embedded", CellStatus::NotApplicable, 1, "cannot");
        let same = serde_json::to_value(&cell).unwrap();
        assert!(compare_cell(&cell, &same).is_empty());
        let mut other = same.clone();
        other["status"] = Value::from("pass");
        other.as_object_mut().unwrap().remove("detail");
        let fields = compare_cell(&cell, &other);
        let names: Vec<&str> = fields.iter().map(|f| f.field.as_str()).collect();
        assert_eq!(names, ["detail", "status"]);
        assert_eq!(fields[0].golden, None);
        assert_eq!(fields[1].golden.as_deref(), Some("\"pass\""));
        assert_eq!(fields[1].manifest.as_deref(), Some("\"not_applicable\""));
    }
}
