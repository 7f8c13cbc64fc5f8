//! The name of one cell of the matrix: case, condition and column.

use std::path::PathBuf;

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
        // A seat's column id (`process:<name>`) holds a colon, which not every
        // file system allows in a name; it is written as a dot.
        PathBuf::from(&self.case).join(format!("{}.{}.json", self.condition, self.column.replace(':', ".")))
    }
}
