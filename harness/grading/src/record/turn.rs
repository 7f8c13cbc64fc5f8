//! One executed turn, as the running crate hands it over to be recorded
//! and graded.

use crate::record::receipt::AdversarialTurnReport;
use sharedos_conformance_metadata::breach::Breach;
use sharedos_conformance_metadata::witness::WitnessLog;
use sharedos_model::execution::{ExecutionRequest, ExecutionResult};

/// One executed turn and what the runtime reported about it.
#[derive(Debug, Clone)]
pub struct ExecutedTurn {
    /// 1-based turn number.
    pub turn: u32,
    /// What the envelope was asked.
    pub request: ExecutionRequest,
    /// What it returned.
    pub result: ExecutionResult,
    /// The runtime's own report, when it gave one.
    pub report: Option<AdversarialTurnReport>,
    /// What the turn's scripted model witnessed, for a live seat pointed
    /// at one.
    pub witness: Option<WitnessLog>,
    /// How a runtime seated from outside broke the protocol in this turn,
    /// whenever it did (during the turn, after its outcome or its report).
    pub breach: Option<Breach>,
}
