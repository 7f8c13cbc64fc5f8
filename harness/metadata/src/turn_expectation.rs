//! What a condition requires of the turn itself: how it ended, and the
//! values the ending carries (retryable, the instant, annotations, what the
//! record lifted) and the world effects it left (ledger balances).
//!
//! Every value besides the status is optional: a row states only what its
//! rule is about, and only stated values are graded and named in the
//! evidence line. A value that must be *absent* is written `null`
//! (`"retryable": null`, `"promptHash": null`), which is why those fields
//! are read as a present-or-absent pair rather than a plain option.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};
use sharedos_model::execution::ExecutionStatus;
use sharedos_model::record::EscalationAsked;
use std::collections::BTreeMap;

/// A turn-level expectation: the row is graded on how the turn ended as well
/// as on its attempts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TurnExpectation {
    /// The turn's ending status.
    pub status: ExecutionStatus,
    /// The terminal reason code, when the ending carries one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason_code: Option<String>,
    /// The ending error's `retryable`: `true`, `false`, or `null` for a
    /// `retryable` that must be absent.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "present")]
    pub retryable: Option<Option<bool>>,
    /// Milliseconds from the turn's start to its end (`completedAt − startedAt`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_at_ms: Option<u64>,
    /// Annotations the result metadata must hold, with their values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Map<String, Value>>,
    /// Keys the result metadata must not hold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations_absent: Option<Vec<String>>,
    /// The result's `runtime` metadata must be the provenance the envelope
    /// announced when the turn started.
    #[serde(default, skip_serializing_if = "is_false")]
    pub runtime_provenance: bool,
    /// The record's `system.promptHash`; `null` when it must be absent.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "present")]
    pub prompt_hash: Option<Option<String>>,
    /// Every turn's record carries a `system.promptHash`: the standard loop
    /// states one for its seat's words on every turn, however it ends, so
    /// the column's prompt set misses no turn. Only the columns that seat
    /// the loop can run such a row.
    #[serde(default, skip_serializing_if = "is_false")]
    pub prompt_hash_stated: bool,
    /// The record's `execution.escalationAsked`; `null` when it must be absent.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "present")]
    pub escalation_asked: Option<Option<EscalationAsked>>,
    /// How many events of each listed type the result carries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_counts: Option<BTreeMap<String, u32>>,
    /// Ledger balances after the cell's turns, by account.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub balances: Option<BTreeMap<String, i64>>,
    /// Nothing of the turn runs after its result: advancing virtual time by
    /// the longest allowed turn adds no audit record, event, delivery or
    /// ledger movement.
    #[serde(default, skip_serializing_if = "is_false")]
    pub quiet_after: bool,
}

impl TurnExpectation {
    /// An expectation of only a status and an optional code.
    #[must_use]
    pub fn ending(status: ExecutionStatus, reason_code: Option<&str>) -> TurnExpectation {
        TurnExpectation {
            status,
            reason_code: reason_code.map(str::to_string),
            retryable: None,
            ended_at_ms: None,
            annotations: None,
            annotations_absent: None,
            runtime_provenance: false,
            prompt_hash: None,
            prompt_hash_stated: false,
            escalation_asked: None,
            event_counts: None,
            balances: None,
            quiet_after: false,
        }
    }

    /// True when the expectation states anything besides status and code.
    #[must_use]
    pub fn grades_values(&self) -> bool {
        self != &TurnExpectation::ending(self.status, self.reason_code.as_deref())
    }
}

/// Reads a field that is present (possibly `null`) as `Some(value)`; serde
/// leaves an absent field at its default, `None`.
fn present<'de, D, T>(deserializer: D) -> Result<Option<Option<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(deserializer).map(Some)
}

// serde's `skip_serializing_if` hands the field by reference.
#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_false(flag: &bool) -> bool {
    !*flag
}
