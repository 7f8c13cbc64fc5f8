//! A bundle sealed: its statement over its files, and the statement
//! signed when a key is given. `certify` and `merge` seal alike.

use crate::bundle::{BundleFile, WriteError, ENVELOPE_FILE, STATEMENT_FILE};
use crate::dsse::{sign, SigningKey};
use crate::statement::{Claim, Statement};
use std::path::{Path, PathBuf};

/// Adds the statement making `claim` over `files`, and its signature with
/// `key` if one is given, to `files`. The statement goes last: a folder
/// written in this order that holds one holds every file.
///
/// # Errors
/// When a value has no JSON form (none has).
pub fn seal(
    mut files: Vec<BundleFile>,
    claim: Claim<'_>,
    key: Option<&SigningKey>,
) -> Result<Vec<BundleFile>, serde_json::Error> {
    let statement = Statement::certifying(&files, claim);
    let mut statement_bytes = serde_json::to_vec_pretty(&statement)?;
    statement_bytes.push(b'\n');
    if let Some(key) = key {
        let mut envelope = serde_json::to_vec_pretty(&sign(&statement_bytes, key))?;
        envelope.push(b'\n');
        files.push(BundleFile { name: ENVELOPE_FILE.to_string(), bytes: envelope });
    }
    files.push(BundleFile { name: STATEMENT_FILE.to_string(), bytes: statement_bytes });
    Ok(files)
}

/// A sealed bundle made in memory, not yet written, and what its maker
/// reports once it is. Kept apart from the writing so a caller can hold
/// off an interruption for the writing alone, never for the work before.
#[derive(Debug)]
#[must_use]
pub struct Unwritten<T> {
    files: Vec<BundleFile>,
    out: PathBuf,
    outcome: T,
}

impl<T> Unwritten<T> {
    /// `files`, to be written at `out`, reporting `outcome`.
    pub fn new(files: Vec<BundleFile>, out: &Path, outcome: T) -> Unwritten<T> {
        Unwritten { files, out: out.to_path_buf(), outcome }
    }

    /// Writes the bundle at `out`, where nothing may be (see
    /// [`crate::archive::write_to`]).
    ///
    /// # Errors
    /// When it cannot be written; nothing is left at `out` then.
    pub fn write(self) -> Result<T, WriteError> {
        crate::archive::write_to(&self.out, &self.files)?;
        Ok(self.outcome)
    }
}
