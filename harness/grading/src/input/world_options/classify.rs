//! Bounds of the `requestClassifies` option: known tools, each once.

use crate::input::error::{LoadError, Site};
use sharedos_world::options::classify::RequestClassification;
use sharedos_world::vocabulary::is_known_tool;

/// Most tools one request may reclassify.
const MAX_CLASSIFICATIONS: usize = 8;

pub(crate) fn check(list: &[RequestClassification], site: &Site<'_>) -> Result<(), LoadError> {
    site.length(list.len(), 1, MAX_CLASSIFICATIONS, "classifications")?;
    for (i, entry) in list.iter().enumerate() {
        let at = site.index(i);
        if !is_known_tool(&entry.tool) {
            return Err(at.child("tool").unknown_tool(&entry.tool));
        }
        if list[..i].iter().any(|e| e.tool == entry.tool) {
            return Err(at
                .child("tool")
                .duplicate_entry(format!("a tool not listed before (`{}` repeats)", entry.tool)));
        }
    }
    Ok(())
}
