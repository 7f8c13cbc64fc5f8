//! A protocol violation as the record keeps it ([`Breach`], defined with
//! the other evidence types in `sharedos-conformance-metadata`), made from
//! the [`Violation`] that was committed.

use crate::violation::Violation;
pub use sharedos_conformance_metadata::breach::{Breach, BreachPhase, RuntimeProtocol, BREACH_KEY};

impl Violation {
    /// The record of this violation, committed in `phase`, with the line
    /// received (quoted; the violation's own when none is given) and the
    /// stderr tail.
    #[must_use]
    pub fn breach(&self, phase: BreachPhase, received: Option<String>, stderr: &str) -> Breach {
        let received = received.or_else(|| self.received().map(str::to_string));
        Breach::new(RuntimeProtocol::CURRENT, self.code(), self.to_string(), phase, received, stderr)
    }
}
