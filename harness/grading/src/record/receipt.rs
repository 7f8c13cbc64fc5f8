//! Attempt receipts as a self-reporting runtime files them: whether each
//! declared attempt was made and what SharedOS answered.
//!
//! The scripted adversary (and a scripted process seat) states its receipts
//! in its outcome metadata under `conformance`, and announces each one as it
//! happens as a `conformance.attempt` runtime event, so a turn that was
//! cancelled or crashed still leaves them. Every scripted call carries a
//! derived call id (`<executionId>.<moveId>.<attemptId>`), so a column that
//! cannot report on itself is graded from the record's operation under that
//! id instead (`grade::receipt`).

use crate::input::script::terminal::REPORT_METADATA_KEY;
use crate::input::script::{AttackScript, Attempt, Expectation, MoveKind};
use crate::record::events::{self, CONFORMANCE_ATTEMPT};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sharedos_model::execution::ExecutionResult;
use sharedos_model::role::Role;
use sharedos_model::tool::ToolStatus;
use sharedos_model::validate::{self, ValidationError};

/// The report schema version.
pub const REPORT_VERSION: &str = "1";
/// Most argument keys a receipt lists.
pub const MAX_ARGUMENT_KEYS: usize = 64;
/// Longest receipt detail, in characters.
pub const MAX_DETAIL: usize = 512;

/// Whether one declared attempt was made, and what SharedOS answered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AttemptReceipt {
    /// Sorted argument keys; never values.
    pub argument_keys: Vec<String>,
    /// The attempt.
    pub attempt_id: String,
    /// Whether it was issued.
    pub attempted: bool,
    /// The call id it was issued under.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    /// A refusal the kernel let stand behind the code (e.g. the transport's
    /// `route_lease_revoked` behind `message_request_not_accepted`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<String>,
    /// Why it was not issued, or what an inspection found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// The expectation, copied from the attempt.
    pub expect: Expectation,
    /// The id of a forged grant it carried.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forged_grant_id: Option<String>,
    /// The script's kind.
    pub kind: MoveKind,
    /// The script.
    pub move_id: String,
    /// What SharedOS answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed: Option<ToolStatus>,
    /// The code of a non-success.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason_code: Option<String>,
    /// Its role.
    pub role: Role,
    /// The tool it called.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// Its turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<u32>,
}

impl AttemptReceipt {
    /// An unissued receipt for `attempt`, with a reason.
    #[must_use]
    pub fn unattempted(script: &AttackScript, attempt: &Attempt, detail: &str) -> AttemptReceipt {
        AttemptReceipt {
            move_id: script.id.clone(),
            kind: script.kind,
            attempt_id: attempt.id.clone(),
            role: attempt.role,
            tool: attempt.tool.clone(),
            turn: Some(attempt.turn),
            attempted: false,
            call_id: None,
            argument_keys: declared_argument_keys(attempt),
            forged_grant_id: None,
            observed: None,
            reason_code: None,
            cause: None,
            expect: attempt.expect.clone(),
            detail: Some(detail.to_string()),
        }
    }

    /// Checks the bounds serde cannot express.
    ///
    /// # Errors
    /// The first bound that does not hold, at its JSON pointer.
    pub fn check(&self) -> Result<(), ValidationError> {
        validate::identifier(&self.move_id, "/moveId")?;
        validate::identifier(&self.attempt_id, "/attemptId")?;
        validate::length(self.argument_keys.len(), 0, MAX_ARGUMENT_KEYS, "/argumentKeys")?;
        if let Some(detail) = &self.detail {
            if detail.chars().count() > MAX_DETAIL {
                return Err(ValidationError::new("/detail", format!("at most {MAX_DETAIL} characters")));
            }
        }
        if !self.attempted && self.observed.is_some() {
            return Err(ValidationError::new("/observed", "no observed status on an attempt that was not issued"));
        }
        Ok(())
    }

    /// Parses untrusted JSON strictly and checks its bounds.
    ///
    /// # Errors
    /// When the value is not a receipt.
    pub fn from_value(value: &Value) -> Result<AttemptReceipt, ValidationError> {
        let receipt = AttemptReceipt::deserialize(value)
            .map_err(|e| ValidationError::new("", format!("an attempt receipt ({e})")))?;
        receipt.check()?;
        Ok(receipt)
    }
}

/// What a self-reporting runtime says about its turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AdversarialTurnReport {
    /// The turn's execution id.
    pub execution_id: String,
    /// The scripts it ran.
    pub move_ids: Vec<String>,
    /// One receipt per attempt of the turn.
    pub receipts: Vec<AttemptReceipt>,
    /// The runtime's id.
    pub runtime_id: String,
    /// The turn's trace.
    pub trace_id: String,
    /// Schema version ([`REPORT_VERSION`]).
    pub version: String,
    /// The catalogue names the runtime was shown.
    pub visible_tools: Vec<String>,
}

impl AdversarialTurnReport {
    /// Parses untrusted JSON strictly and checks every receipt.
    ///
    /// # Errors
    /// When the value is not a report.
    pub fn from_value(value: &Value) -> Result<AdversarialTurnReport, ValidationError> {
        let report = AdversarialTurnReport::deserialize(value)
            .map_err(|e| ValidationError::new("", format!("an adversarial turn report ({e})")))?;
        if report.version != REPORT_VERSION {
            return Err(ValidationError::new("/version", format!("the report version \"{REPORT_VERSION}\"")));
        }
        for (i, receipt) in report.receipts.iter().enumerate() {
            receipt.check().map_err(|e| ValidationError::new(&format!("/receipts/{i}{}", e.pointer), e.expected))?;
        }
        Ok(report)
    }
}

/// Reads a self-reporting runtime's report from a turn's result: the outcome
/// metadata when it holds a valid report, else a report rebuilt from the
/// `conformance.attempt` announcements (each checked; malformed ones are
/// skipped), with the visible tools taken from `turn.started`. `None` when
/// neither source says anything.
#[must_use]
pub fn read_adversarial_report(result: &ExecutionResult) -> Option<AdversarialTurnReport> {
    let stated = result
        .metadata
        .as_ref()
        .and_then(|m| m.get(REPORT_METADATA_KEY))
        .and_then(|v| AdversarialTurnReport::from_value(v).ok());
    if stated.is_some() {
        return stated;
    }
    let mut runtime_id = events::started_runtime_id(&result.events).map(str::to_string);
    let mut receipts = Vec::new();
    for announcement in events::announcements(&result.events).filter(|a| a.kind == CONFORMANCE_ATTEMPT) {
        if let Ok(receipt) = AttemptReceipt::from_value(announcement.data) {
            if runtime_id.is_none() {
                runtime_id = announcement.runtime_id.map(str::to_string);
            }
            receipts.push(receipt);
        }
    }
    if receipts.is_empty() && !events::runtime_started(&result.events) {
        return None;
    }
    let mut move_ids: Vec<String> = Vec::new();
    for receipt in &receipts {
        if !move_ids.contains(&receipt.move_id) {
            move_ids.push(receipt.move_id.clone());
        }
    }
    Some(AdversarialTurnReport {
        version: REPORT_VERSION.to_string(),
        runtime_id: runtime_id.unwrap_or_default(),
        execution_id: result.execution_id.clone(),
        trace_id: result.trace_id.clone(),
        visible_tools: events::visible_tools(&result.events),
        move_ids,
        receipts,
    })
}

/// The call id a scripted attempt is issued under.
#[must_use]
pub fn derived_call_id(execution_id: &str, move_id: &str, attempt_id: &str) -> String {
    format!("{execution_id}.{move_id}.{attempt_id}")
}

/// The declared argument keys of an attempt, sorted (a forgery's key
/// included, since the issued call carries it).
#[must_use]
pub fn declared_argument_keys(attempt: &Attempt) -> Vec<String> {
    let mut keys: Vec<String> = attempt.tool_arguments.keys().cloned().collect();
    if let Some(forge) = &attempt.forge {
        keys.push(forge.embed_as.clone());
    }
    keys.sort();
    keys.dedup();
    keys
}
