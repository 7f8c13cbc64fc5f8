//! A bundle sealed: its statement over its files, and the statement
//! signed when a key is given. `certify` and `merge` seal alike.

use crate::bundle::{BundleFile, ENVELOPE_FILE, STATEMENT_FILE};
use crate::dsse::{sign, SigningKey};
use crate::statement::{Claim, Statement};

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
