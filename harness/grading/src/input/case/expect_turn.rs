//! A condition's turn expectation (defined in `sharedos-conformance-metadata`,
//! since the manifest's rows carry it) and the bounds on it that its serde
//! shape cannot express, checked when the case is loaded.

use crate::input::error::{LoadError, Site};
pub use sharedos_conformance_metadata::turn_expectation::TurnExpectation;
use sharedos_envelope::events::EventKind;

/// The metadata key the envelope reserves for its provenance; graded with
/// `runtimeProvenance`, never as an annotation.
pub const PROVENANCE_KEY: &str = "runtime";

/// Longest ending instant a row may state (the longest allowed turn).
pub const MAX_ENDED_AT_MS: u64 = 600_000;

/// Checks every bound of `expectation` its serde shape cannot express.
pub(crate) fn check(expectation: &TurnExpectation, site: &Site<'_>) -> Result<(), LoadError> {
    if let Some(code) = &expectation.reason_code {
        site.child("reasonCode").reason_code(code)?;
    }
    if let Some(ms) = expectation.ended_at_ms {
        if ms > MAX_ENDED_AT_MS {
            return Err(site.child("endedAtMs").out_of_bounds(format!("an integer from 0 to {MAX_ENDED_AT_MS}")));
        }
    }
    if let Some(annotations) = &expectation.annotations {
        let at = site.child("annotations");
        at.length(annotations.len(), 1, 32, "annotations")?;
        if annotations.contains_key(PROVENANCE_KEY) {
            return Err(at
                .child(PROVENANCE_KEY)
                .out_of_bounds("an annotation key other than `runtime` (use `runtimeProvenance`)"));
        }
    }
    if let Some(keys) = &expectation.annotations_absent {
        let at = site.child("annotationsAbsent");
        at.length(keys.len(), 1, 32, "keys")?;
        for (i, key) in keys.iter().enumerate() {
            if keys[..i].contains(key) {
                return Err(at.index(i).duplicate_entry(format!("a key not listed before (`{key}` repeats)")));
            }
        }
    }
    if let Some(Some(hash)) = &expectation.prompt_hash {
        let hex = hash.len() == 64 && hash.chars().all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c));
        if !hex {
            return Err(site.child("promptHash").out_of_bounds("64 lowercase hex characters, or null"));
        }
    }
    if let Some(Some(asked)) = &expectation.escalation_asked {
        let at = site.child("escalationAsked");
        at.child("tool").text(&asked.tool, 256)?;
        at.child("reason").text(&asked.reason, 512)?;
    }
    if let Some(counts) = &expectation.event_counts {
        let at = site.child("eventCounts");
        at.length(counts.len(), 1, EventKind::ALL.len(), "event types")?;
        for kind in counts.keys() {
            if !EventKind::ALL.iter().any(|known| known.as_str() == kind) {
                let known: Vec<&str> = EventKind::ALL.iter().map(|known| known.as_str()).collect();
                return Err(at.child(kind).unknown_value(format!(
                    "an event type the envelope emits, not `{kind}` (one of {})",
                    known.join(", ")
                )));
            }
        }
    }
    if let Some(balances) = &expectation.balances {
        site.child("balances").length(balances.len(), 1, 32, "accounts")?;
    }
    Ok(())
}
