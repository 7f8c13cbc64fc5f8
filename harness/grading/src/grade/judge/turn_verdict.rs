//! How the turn ended, read against the ending its row requires.

use super::facts::TurnFacts;
use super::turn_values::{grade_values, TurnValue};
use crate::input::case::TurnExpectation;
use crate::input::script::{AttackScript, TerminalKind};
use crate::record::events::{self, ESCALATION_ASKED};
use sharedos_model::execution::ExecutionStatus;
use sharedos_model::record::{EndedBy, ExecutionRecord};
use sharedos_port::escalation::ESCALATION_TOOL;

/// How the turn ended, against what its row requires.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnVerdict {
    /// The required ending.
    pub expected: TurnExpectation,
    /// The observed status.
    pub observed: ExecutionStatus,
    /// The observed terminal code.
    pub reason_code: Option<String>,
    /// Status matches, and the code too when one is required.
    pub met: bool,
    /// The runtime asked for the ending (always true unless the script ends
    /// by escalating).
    pub asked: bool,
    /// A `turn.started` event exists.
    pub runtime_started: bool,
    /// Who ended a failed turn.
    pub ended_by: Option<EndedBy>,
    /// Every other value the row states about the ending, graded.
    pub values: Vec<TurnValue>,
}

impl TurnVerdict {
    /// Reads the ending of the last record (and the turn's `facts`) against
    /// `expected`; the earlier records count only for every-turn values.
    #[must_use]
    pub fn read(
        script: &AttackScript,
        expected: &TurnExpectation,
        (earlier, record): (&[ExecutionRecord], &ExecutionRecord),
        facts: &TurnFacts,
    ) -> TurnVerdict {
        let execution = &record.execution;
        let reason_code = execution.terminal_reason_code.clone();
        let code_met = expected.reason_code.is_none() || expected.reason_code == reason_code;
        TurnVerdict {
            expected: expected.clone(),
            observed: execution.status,
            met: execution.status == expected.status && code_met,
            asked: ending_asked(script, record),
            runtime_started: events::runtime_started(&execution.events),
            ended_by: execution.ended_by,
            reason_code,
            values: grade_values(expected, (earlier, record), facts),
        }
    }

    /// The first stated value the turn does not show.
    #[must_use]
    pub fn first_missed_value(&self) -> Option<&TurnValue> {
        self.values.iter().find(|v| !v.met)
    }

    /// True when the envelope ended the turn with the very ending the row
    /// requires: attempts left unissued by that ending are unreachable.
    #[must_use]
    pub fn ended_as_expected_by_envelope(&self) -> bool {
        self.met && self.observed == ExecutionStatus::Failed && self.ended_by == Some(EndedBy::Envelope)
    }
}

/// Whether the runtime asked for its script's ending. Only an escalation can
/// go unasked: a call naming the affordance, an announcement, or the
/// runtime's `escalationAsked` claim each count. A crash is never treated
/// this way, since no trace tells "declined to crash" from "the throw was
/// swallowed". The runtime's own claim can only make grading stricter (a
/// pass still needs the envelope to record the escalation).
fn ending_asked(script: &AttackScript, record: &ExecutionRecord) -> bool {
    if script.terminal.as_ref().map(|t| t.kind) != Some(TerminalKind::Escalate) {
        return true;
    }
    let execution = &record.execution;
    execution.escalation_asked.is_some()
        || execution.operations.iter().any(|o| o.tool.as_deref() == Some(ESCALATION_TOOL))
        || events::announcements(&execution.events).any(|a| a.kind == ESCALATION_ASKED)
}
