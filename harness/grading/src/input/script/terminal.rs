//! How a script's last turn ends: any outcome a runtime can give, when it
//! gives it, and what it carries.

use crate::input::error::{LoadError, Site};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use sharedos_model::execution::RuntimeTurnOutcome;
use sharedos_model::validate::Validate;

use super::MAX_TEXT;

/// The outcome metadata key a self-reporting runtime files its report
/// under, so a script's ending may not claim it.
pub const REPORT_METADATA_KEY: &str = "conformance";

/// Latest instant (ms from turn start) a step or ending may wait for.
pub const MAX_AT_MS: u64 = 600_000;
/// Longest error message a `fail` ending may carry.
const MAX_MESSAGE: usize = 4096;

/// How the script's last turn ends, besides its steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TerminalKind {
    /// End the turn asking a human (`reason`); the runtime states
    /// `escalationAsked` first.
    Escalate,
    /// Throw out of the turn with `reason` as the message.
    Crash,
    /// Return `complete` with `output` (default: the declared and attempted
    /// counts) and optional `metadata`.
    Complete,
    /// Return `fail` with `error` (code, message, `retryable` true, false or
    /// absent) and optional `metadata`.
    Fail,
    /// Never return: wait for the turn's hard stop; with `until: draining`,
    /// throw (`reason`) as soon as the turn drains instead.
    Stall,
    /// Return `outcome`, a value that is not a runtime outcome.
    Malformed,
    /// A seat behind a driver only: its channel ends before it says how
    /// the turn ends (a vendor stream closes, a model stops answering).
    HangUp,
    /// A seat behind a driver only: it reports a failed turn in its own
    /// wire format (a vendor's failure event, a model reply cut short).
    ReportFailure,
}

impl TerminalKind {
    /// Whether only a seat behind the standard loop's driver can end this
    /// way: a runtime in the host has no channel to close and no wire
    /// format to fail in.
    #[must_use]
    pub fn is_seat_only(self) -> bool {
        matches!(self, TerminalKind::HangUp | TerminalKind::ReportFailure)
    }
}

/// What a stall waits for before it throws.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StallUntil {
    /// The `draining` signal: a cooperative runtime giving up when told to.
    Draining,
}

/// The error a `fail` ending returns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TerminalError {
    /// The reason code.
    pub code: String,
    /// The message.
    pub message: String,
    /// The runtime's own `retryable`: true, false, or absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retryable: Option<bool>,
}

/// The script's ending.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Terminal {
    /// Which ending.
    #[serde(rename = "type")]
    pub kind: TerminalKind,
    /// The escalation reason, or the message thrown (crash, stall until draining).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// Wait until this many milliseconds after the turn's start before ending.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_ms: Option<u64>,
    /// A `complete` ending's output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<Value>,
    /// Outcome metadata of `complete`, `fail` or `escalate`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
    /// A `fail` ending's error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<TerminalError>,
    /// What a `stall` waits for before throwing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<StallUntil>,
    /// A `malformed` ending's returned value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Value>,
}

impl Terminal {
    /// The value a `malformed` ending returns when the script names none.
    #[must_use]
    pub fn default_malformed() -> Value {
        json!({ "type": "finish" })
    }

    /// Checks the fields each ending needs and refuses the ones it ignores.
    pub(crate) fn check(&self, site: &Site<'_>) -> Result<(), LoadError> {
        let needs_reason = matches!(self.kind, TerminalKind::Escalate | TerminalKind::Crash)
            || (self.kind == TerminalKind::Stall && self.until.is_some());
        if needs_reason {
            site.child("reason").text(&self.reason, MAX_TEXT)?;
        } else if !self.reason.is_empty() {
            return Err(site.child("reason").invalid_attempt("no reason on this ending"));
        }
        if self.at_ms.is_some_and(|ms| ms > MAX_AT_MS) {
            return Err(site.child("atMs").out_of_bounds(format!("an integer from 0 to {MAX_AT_MS}")));
        }
        let only = |present: bool, key: &str, kinds: &[TerminalKind], what: &str| -> Result<(), LoadError> {
            if present && !kinds.contains(&self.kind) {
                return Err(site.child(key).invalid_attempt(format!("`{key}` only on {what}")));
            }
            Ok(())
        };
        use TerminalKind::{Complete, Escalate, Fail, Malformed, Stall};
        only(self.output.is_some(), "output", &[Complete], "a `complete` ending")?;
        only(
            self.metadata.is_some(),
            "metadata",
            &[Complete, Fail, Escalate],
            "a `complete`, `fail` or `escalate` ending",
        )?;
        only(self.error.is_some(), "error", &[Fail], "a `fail` ending")?;
        only(self.until.is_some(), "until", &[Stall], "a `stall` ending")?;
        only(self.outcome.is_some(), "outcome", &[Malformed], "a `malformed` ending")?;
        if let Some(metadata) = &self.metadata {
            if metadata.contains_key(REPORT_METADATA_KEY) {
                return Err(site
                    .child("metadata")
                    .child(REPORT_METADATA_KEY)
                    .invalid_attempt(format!("a key other than `{REPORT_METADATA_KEY}`, where the report is filed")));
            }
        }
        match (self.kind, &self.error) {
            (Fail, None) => return Err(site.child("error").invalid_attempt("the error a `fail` ending returns")),
            (Fail, Some(error)) => {
                site.child("error").child("code").reason_code(&error.code)?;
                site.child("error").child("message").text(&error.message, MAX_MESSAGE)?;
            }
            _ => {}
        }
        if self.kind == Malformed {
            let value = self.outcome.clone().unwrap_or_else(Terminal::default_malformed);
            let parses = serde_json::from_value::<RuntimeTurnOutcome>(value).is_ok_and(|o| o.validate().is_ok());
            if parses {
                return Err(site.child("outcome").invalid_attempt("a value that does not parse as a runtime outcome"));
            }
        }
        Ok(())
    }
}
