//! Golden snapshots: one JSON file per run cell under `golden/`, compared
//! byte for byte with what the harness produces now.
//!
//! A snapshot is pretty-printed JSON with object keys sorted and a final
//! newline, so it is deterministic and its diffs read line by line.

use crate::input::file::{read_regular, Links};
use crate::output::atomic::{temporary, write_if_changed, Temporary, WriteError};
use crate::vocab::CellKey;
use serde::Serialize;
use serde_json::Value;
use sharedos_model::canonical::sorted_pretty_json;
use similar::TextDiff;
use std::path::{Path, PathBuf};

/// How a cell's snapshot compares with its golden file.
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
pub enum GoldenComparison {
    /// Byte-identical.
    Same,
    /// No golden file exists yet.
    Missing {
        /// Where it was expected.
        path: PathBuf,
    },
    /// The golden file is there but cannot be read (not a regular file,
    /// unreadable): an input problem, not a changed cell.
    Unreadable {
        /// The golden file.
        path: PathBuf,
        /// Why.
        detail: String,
    },
    /// The file differs; `diff` is a unified diff from golden to current.
    Differs {
        /// The golden file.
        path: PathBuf,
        /// Unified diff, golden first.
        diff: String,
    },
}

/// A cell's golden snapshot, held as the exact bytes of its golden file:
/// pretty-printed JSON with object keys sorted and a final newline.
///
/// Written once, on the worker that ran the cell, so the comparison with the
/// committed file is a byte comparison.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot(Vec<u8>);

impl Snapshot {
    /// The snapshot of `value`: its JSON with every object's keys sorted,
    /// pretty-printed as `serde_json` prints a `serde_json::Value`.
    #[must_use]
    pub fn of<T: Serialize + ?Sized>(value: &T) -> Snapshot {
        let mut bytes = match sorted_pretty_json(value) {
            Some(text) => text,
            // Through a `Value`, whose maps keep keys sorted.
            None => serde_json::to_value(value)
                .and_then(|value| serde_json::to_vec_pretty(&value))
                .unwrap_or_else(|_| b"null".to_vec()),
        };
        bytes.push(b'\n');
        // Kept until the run ends, so hold no spare capacity.
        bytes.shrink_to_fit();
        Snapshot(bytes)
    }

    /// The bytes its golden file holds.
    #[must_use]
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The snapshot read back as JSON, for a reader that wants one value.
    #[must_use]
    pub fn value(&self) -> Value {
        // The bytes were written from a `Value`, so they always parse.
        serde_json::from_slice(&self.0).unwrap_or(Value::Null)
    }
}

/// Compares a cell's current snapshot with its golden file.
#[must_use = "a golden comparison is a verdict"]
pub fn compare(golden_dir: &Path, key: &CellKey, snapshot: &Snapshot) -> GoldenComparison {
    let path = golden_dir.join(key.relative_path());
    let current = snapshot.as_bytes();
    let existing = match read_regular(&path, Links::Follow) {
        Ok(existing) => existing,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return GoldenComparison::Missing { path },
        Err(error) => return GoldenComparison::Unreadable { path, detail: error.to_string() },
    };
    if existing == current {
        return GoldenComparison::Same;
    }
    let old = String::from_utf8_lossy(&existing);
    let new = String::from_utf8_lossy(current);
    let diff = TextDiff::from_lines(old.as_ref(), new.as_ref())
        .unified_diff()
        .context_radius(3)
        .header("golden", "current")
        .to_string();
    GoldenComparison::Differs { path, diff }
}

/// A file below the golden folder that no cell of the run writes.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Stray {
    /// A golden file of no cell the suite runs (a case, condition or column
    /// that went away, or a cell now decided without running).
    Orphan(PathBuf),
    /// A temporary file an interrupted write left behind.
    Leftover(PathBuf),
}

impl Stray {
    /// Its path.
    #[must_use]
    pub fn path(&self) -> &Path {
        match self {
            Stray::Orphan(path) | Stray::Leftover(path) => path,
        }
    }
}

/// Every stray file below `golden_dir`: neither the golden file of a cell
/// in `expected` (paths relative to the folder) nor a golden file of a
/// column `foreign` says another run owns (a seat this run does not seat).
///
/// # Errors
/// When the folder cannot be listed.
pub fn strays(
    golden_dir: &Path,
    expected: &std::collections::BTreeSet<PathBuf>,
    foreign: impl Fn(&str) -> bool,
) -> std::io::Result<Vec<Stray>> {
    let mut found = Vec::new();
    let Ok(cases) = std::fs::read_dir(golden_dir) else { return Ok(found) };
    for case in cases {
        let case = case?;
        if !case.file_type()?.is_dir() {
            continue;
        }
        for file in std::fs::read_dir(case.path())? {
            let file = file?;
            let name = file.file_name().to_string_lossy().into_owned();
            let relative = PathBuf::from(case.file_name()).join(&name);
            if let Some(temporary) = temporary(&name) {
                if temporary == Temporary::LeftOver {
                    found.push(Stray::Leftover(golden_dir.join(relative)));
                }
            } else if name.ends_with(".json") && !expected.contains(&relative) && !foreign(&name) {
                found.push(Stray::Orphan(golden_dir.join(relative)));
            }
        }
    }
    found.sort();
    Ok(found)
}

/// Writes a cell's snapshot as its golden file; returns whether it changed.
///
/// # Errors
/// When the file cannot be written.
pub fn bless(golden_dir: &Path, key: &CellKey, snapshot: &Snapshot) -> Result<bool, WriteError> {
    write_if_changed(&golden_dir.join(key.relative_path()), snapshot.as_bytes())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn snapshot_text_is_serde_jsons_pretty_text_of_the_sorted_value() {
        let values = [
            json!({"b": [], "a": {}, "c": [{}, [], [1, [2, {"z": null, "y": "}{,:[]\"\\\\"}]]]}),
            json!({"text": "line\nbreak \u{1} \"quoted\" \\ ]", "n": -12, "t": true, "u": "\u{e9}"}),
            json!([]),
            json!("plain"),
            json!({"float": 1.5, "big": u64::MAX}),
        ];
        for value in values {
            let mut expected = serde_json::to_vec_pretty(&value).unwrap();
            expected.push(b'\n');
            assert_eq!(String::from_utf8(Snapshot::of(&value).0).unwrap(), String::from_utf8(expected).unwrap());
        }
    }
}
