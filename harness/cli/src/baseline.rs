//! The `--baseline` helpers the commands share.

use crate::exit::Exit;
use sharedos_grading::input::baseline::{load_baseline, Baseline};
use sharedos_grading::input::loader::Suite;
use std::path::Path;

/// The baseline `--baseline` names (an empty one without it).
///
/// # Errors
/// `InvalidInput` when it does not load.
pub fn read_baseline(path: Option<&Path>, suite: &Suite) -> Result<Baseline, Exit> {
    let Some(path) = path else { return Ok(Baseline::default()) };
    load_baseline(path, suite).map_err(|error| {
        tell!("error: {error}");
        Exit::InvalidInput
    })
}
