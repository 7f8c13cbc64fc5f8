//! Rules version 7: a runtime seated from outside that broke its protocol
//! (`sharedos-runtime/2`; `/1` in records from before the breach named
//! it) fails its cell. The breach is read from the record of the turn
//! that committed it (`system.metadata.protocolBreach`), so a bundle's
//! verifier grades it as the run did; a breach after the outcome or the
//! report counts as much as one that ended the turn.

use super::Finding;
use sharedos_conformance_metadata::breach::{Breach, BREACH_KEY};
use sharedos_model::record::ExecutionRecord;

/// The first turn's breach among the cell's records, in turn order.
pub fn first_breach(earlier: &[ExecutionRecord], last: &ExecutionRecord) -> Option<Finding> {
    earlier.iter().chain(std::iter::once(last)).zip(1u32..).find_map(|(record, turn)| {
        let recorded = record.system.metadata.as_ref()?.get(BREACH_KEY)?;
        // A record whose breach does not read is still a breach.
        let breach = serde_json::from_value::<Breach>(recorded.clone()).unwrap_or_else(|error| Breach {
            code: "runtime_breach_unreadable".to_string(),
            message: format!("the record's {BREACH_KEY} does not read: {error}"),
            phase: sharedos_conformance_metadata::breach::BreachPhase::Turn,
            received: None,
            stderr_tail: None,
            protocol: None,
        });
        Some(Finding::BrokeProtocol { turn, breach })
    })
}
