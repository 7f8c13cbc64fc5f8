//! Golden snapshots: one JSON file per run cell under `golden/`, compared
//! byte for byte with what the harness produces now.
//!
//! A snapshot is pretty-printed JSON with object keys sorted and a final
//! newline, so it is deterministic and its diffs read line by line.

use crate::output::{write_if_changed, WriteError};
use serde_json::Value;
use similar::TextDiff;
use std::path::{Path, PathBuf};

/// Identifies one cell of the matrix.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CellKey {
    /// Case id.
    pub case: String,
    /// Condition id.
    pub condition: String,
    /// Column id.
    pub column: String,
}

impl CellKey {
    /// `case/condition/column`, the name of the cell's test trial.
    #[must_use]
    pub fn trial_name(&self) -> String {
        format!("{}/{}/{}", self.case, self.condition, self.column)
    }

    /// Where its snapshot lives below the golden directory.
    #[must_use]
    pub fn relative_path(&self) -> PathBuf {
        PathBuf::from(&self.case).join(format!("{}.{}.json", self.condition, self.column))
    }
}

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
    /// The snapshot of `value`.
    #[must_use]
    pub fn of(value: &Value) -> Snapshot {
        // serde_json keeps object keys sorted (BTreeMap-backed maps), so
        // pretty printing is deterministic.
        let mut bytes = serde_json::to_vec_pretty(value).unwrap_or_else(|_| b"null".to_vec());
        bytes.push(b'\n');
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
    let Ok(existing) = std::fs::read(&path) else {
        return GoldenComparison::Missing { path };
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

/// Writes a cell's snapshot as its golden file; returns whether it changed.
///
/// # Errors
/// When the file cannot be written.
pub fn bless(golden_dir: &Path, key: &CellKey, snapshot: &Snapshot) -> Result<bool, WriteError> {
    write_if_changed(&golden_dir.join(key.relative_path()), snapshot.as_bytes())
}
