//! The columns built into the harness, named once: the ids a condition's
//! `notApplicableIn` and a baseline may name, and the labels a manifest
//! shows. Which runtime each one seats is the run stage's business.

use crate::input::seat::Seat;
use sharedos_conformance_metadata::vendor::Vendor;

/// The scripted adversary column's id.
pub const ADVERSARY_ID: &str = "adversary-embedded";

/// A column built into the harness.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum BuiltInColumn {
    /// The scripted adversary, calling the host itself.
    Adversary,
    /// The standard loop, its model driver replaying scripted replies.
    Standard,
    /// The standard loop reading one vendor's frames from a transcript.
    VendorScripted(Vendor),
    /// A harness of its own, served the catalogue over MCP.
    Mcp,
}

impl BuiltInColumn {
    /// Every built-in column, in manifest order.
    pub const ALL: [BuiltInColumn; 7] = [
        BuiltInColumn::Adversary,
        BuiltInColumn::Standard,
        BuiltInColumn::VendorScripted(Vendor::ALL[0]),
        BuiltInColumn::VendorScripted(Vendor::ALL[1]),
        BuiltInColumn::VendorScripted(Vendor::ALL[2]),
        BuiltInColumn::VendorScripted(Vendor::ALL[3]),
        BuiltInColumn::Mcp,
    ];

    /// Its column id (`codex-scripted`).
    #[must_use]
    pub fn id(self) -> String {
        match self {
            BuiltInColumn::Adversary => ADVERSARY_ID.to_string(),
            BuiltInColumn::Standard => "model-scripted".to_string(),
            BuiltInColumn::VendorScripted(vendor) => format!("{}-scripted", vendor.id()),
            BuiltInColumn::Mcp => "mcp-scripted".to_string(),
        }
    }

    /// Its label for people (`Claude Code`).
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            BuiltInColumn::Adversary => "Adversary",
            BuiltInColumn::Standard => "Standard",
            BuiltInColumn::VendorScripted(vendor) => vendor.label(),
            BuiltInColumn::Mcp => "MCP",
        }
    }

    /// The built-in column with this id.
    #[must_use]
    pub fn from_id(id: &str) -> Option<BuiltInColumn> {
        BuiltInColumn::ALL.into_iter().find(|column| column.id() == id)
    }
}

/// Every column id of a run with these seats, in manifest order: the
/// built-in columns, then one per seat.
#[must_use]
pub fn column_ids(seats: &[Seat]) -> Vec<String> {
    let built_in = BuiltInColumn::ALL.into_iter().map(BuiltInColumn::id);
    built_in.chain(seats.iter().map(|seat| seat.column_id.clone())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The array lists every vendor once, in the vendors' own order, so a
    /// vendor added to the drivers without a column here fails.
    #[test]
    fn every_vendor_has_its_scripted_column_once() {
        let vendors: Vec<Vendor> = BuiltInColumn::ALL
            .into_iter()
            .filter_map(|column| match column {
                BuiltInColumn::VendorScripted(vendor) => Some(vendor),
                _ => None,
            })
            .collect();
        assert_eq!(vendors, Vendor::ALL);
        assert_eq!(
            BuiltInColumn::from_id("claude-code-scripted"),
            Some(BuiltInColumn::VendorScripted(Vendor::ClaudeCode))
        );
        assert_eq!(BuiltInColumn::from_id("process:x"), None);
    }
}
