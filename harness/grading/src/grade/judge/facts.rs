//! What the graded turn left outside its record: the ending's `retryable`,
//! how long it ran, its result metadata, the world effects, and whether
//! anything of it ran after its result.
//!
//! The record keeps none of these (it is about authority and operations),
//! yet the drain, retryable and annotate rules are stated on exactly them.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sharedos_model::execution::ExecutionResult;
use sharedos_model::instant::Instant;
use sharedos_world::ledger::Ledger;
use std::collections::BTreeMap;

/// The facts of the last turn of a cell, besides its record.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TurnFacts {
    /// The ending error's `retryable` (`None` when absent or there is no error).
    pub retryable: Option<bool>,
    /// Milliseconds from `startedAt` to `completedAt`, when both parse.
    pub ended_at_ms: Option<i64>,
    /// The result metadata.
    pub metadata: Map<String, Value>,
    /// Ledger balances after the cell's turns, when the world has a ledger.
    pub balances: Option<BTreeMap<String, i64>>,
    /// What still happened after the result, when the cell looked
    /// (`None`: not observed; `Some(empty)`: nothing).
    pub after_result: Option<Vec<String>>,
}

impl TurnFacts {
    /// Reads the facts of `result` and the ledger (if any).
    #[must_use]
    pub fn read(result: &ExecutionResult, ledger: Option<&Ledger>) -> TurnFacts {
        let started = Instant::parse(&result.started_at);
        let completed = Instant::parse(&result.completed_at);
        TurnFacts {
            retryable: result.error.as_ref().and_then(|e| e.retryable),
            ended_at_ms: started.zip(completed).map(|(s, c)| c.0 - s.0),
            metadata: result.metadata.clone().unwrap_or_default(),
            balances: ledger.map(Ledger::balances),
            after_result: None,
        }
    }

    /// The same facts with what was seen after the result.
    #[must_use]
    pub fn with_after_result(mut self, activity: Vec<String>) -> TurnFacts {
        self.after_result = Some(activity);
        self
    }
}
