//! What SharedOS must answer to one step, and the synthetic codes of the
//! answers that are not tool results.

use crate::input::error::{LoadError, Site};
use serde::{Deserialize, Serialize};
use sharedos_model::audit::Source;
use sharedos_model::tool::ToolStatus;

/// Synthetic code of an `annotate` the host refused (E86, E87).
pub const ANNOTATION_REFUSED: &str = "annotation_refused";
/// Synthetic code of an `emit` the host refused (E25, E29).
pub const EMIT_REFUSED: &str = "emit_refused";
/// Synthetic code of a `draining` read that found the signal fired; the
/// signal's own reason is what the receipt carries, and the envelope's fixed
/// drain reason reads as this code (E59).
pub const TURN_DRAINING: &str = "turn_draining";

/// How a call can end without any tool result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rejection {
    /// The turn's hard stop cut the call while the kernel had it; the record
    /// must show the call `interrupted` (E45, E50, E55, E100).
    Interrupted,
    /// The kernel could not record the call's decision (a pre-effect audit
    /// outage), so nothing ran (E65, E71).
    AuditUnavailable,
    /// The host refused the call because the turn had already closed (E25).
    HostClosed,
}

impl Rejection {
    /// The code a receipt carries for this rejection.
    #[must_use]
    pub fn code(self) -> &'static str {
        match self {
            Rejection::Interrupted => "interrupted",
            Rejection::AuditUnavailable => "audit_unavailable",
            Rejection::HostClosed => "host_closed",
        }
    }

    /// The rejection a receipt code names, if it names one.
    #[must_use]
    pub fn from_code(code: &str) -> Option<Rejection> {
        [Rejection::Interrupted, Rejection::AuditUnavailable, Rejection::HostClosed]
            .into_iter()
            .find(|r| r.code() == code)
    }
}

/// What SharedOS must answer to an attempt.
///
/// A step whose answer is not a tool result is receipted with a synthetic
/// status and code, graded the same way: an accepted `annotate`, `emit` or
/// quiet `draining` read is `succeeded`; a refused one is `denied` with
/// [`ANNOTATION_REFUSED`], [`EMIT_REFUSED`] or the signal's reason code. A
/// call that gets a rejection instead of a tool result is receipted with no
/// status and the [`Rejection`]'s code, and graded by `rejection`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Expectation {
    /// Acceptable statuses (1..=3, distinct); none when `rejection` is set.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub statuses: Vec<ToolStatus>,
    /// Acceptable reason codes for a non-success (1..=8); absent accepts any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason_codes: Option<Vec<String>>,
    /// The boundary that must have refused (read from the record's tool
    /// operation under the call id); only for a refused call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused_by: Option<Source>,
    /// The call must end with this rejection instead of a tool result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rejection: Option<Rejection>,
}

impl Expectation {
    /// An expectation of statuses and, optionally, codes.
    #[must_use]
    pub fn new(statuses: Vec<ToolStatus>, reason_codes: Option<Vec<String>>) -> Expectation {
        Expectation { statuses, reason_codes, refused_by: None, rejection: None }
    }

    /// True when an observed answer meets the expectation: its status is
    /// listed and, unless it succeeded or no codes are listed, its reason
    /// code is present and listed. (The refusing boundary and rejections are
    /// graded by the judge, which reads the record.)
    #[must_use]
    pub fn accepts(&self, status: ToolStatus, reason_code: Option<&str>) -> bool {
        if !self.statuses.contains(&status) {
            return false;
        }
        match (&self.reason_codes, status) {
            (None, _) | (_, ToolStatus::Succeeded) => true,
            (Some(codes), _) => reason_code.is_some_and(|c| codes.iter().any(|k| k == c)),
        }
    }

    /// Checks bounds and the combinations the shape cannot express.
    pub(crate) fn check(&self, site: &Site<'_>, calls_a_tool: bool) -> Result<(), LoadError> {
        if let Some(rejection) = self.rejection {
            let at = site.child("rejection");
            if !calls_a_tool {
                return Err(at.invalid_attempt("a rejection only on a step that calls a tool"));
            }
            if !self.statuses.is_empty() || self.reason_codes.is_some() || self.refused_by.is_some() {
                return Err(at.invalid_attempt(format!(
                    "either a rejection (`{}`) or statuses, codes and a refusing boundary, not both",
                    rejection.code()
                )));
            }
            return Ok(());
        }
        if self.refused_by.is_some() && !calls_a_tool {
            return Err(site
                .child("refusedBy")
                .invalid_attempt("a refusing boundary only on a step that calls a tool"));
        }
        let statuses = site.child("statuses");
        statuses.length(self.statuses.len(), 1, 3, "statuses")?;
        for (i, status) in self.statuses.iter().enumerate() {
            if self.statuses[..i].contains(status) {
                return Err(statuses
                    .index(i)
                    .duplicate_entry(format!("a status not listed before (`{}` repeats)", status.as_str())));
            }
        }
        if let Some(codes) = &self.reason_codes {
            let at = site.child("reasonCodes");
            at.length(codes.len(), 1, 8, "reason codes")?;
            for (i, code) in codes.iter().enumerate() {
                at.index(i).reason_code(code)?;
                if codes[..i].contains(code) {
                    return Err(at
                        .index(i)
                        .duplicate_entry(format!("a reason code not listed before (`{code}` repeats)")));
                }
            }
        }
        Ok(())
    }
}
