//! Why a cell did not pass: one variant per way a check can fall short,
//! each carrying what its report needs.

use super::turn_values::TurnValue;
use super::turn_verdict::TurnVerdict;
use crate::input::case::TurnExpectation;
use crate::input::script::Expectation;
use crate::vocab::CellStatus;
use sharedos_conformance_metadata::breach::Breach;
use sharedos_model::execution::ExecutionStatus;
use sharedos_model::tool::ToolStatus;
use sharedos_port::escalation::ESCALATION_TOOL;

/// The reason a cell got a status other than `pass`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
pub enum Finding {
    /// The row's attempts cannot be made in this column (`not_applicable`).
    AttemptUnreachable {
        /// The first unreachable adversarial attempt.
        attempt_id: String,
        /// Why it cannot be made.
        reason: String,
    },
    /// A control attempt did not succeed, so the turn never showed it could
    /// act (`not_exercised`).
    ControlDidNotSucceed {
        /// The control.
        attempt_id: String,
        /// What SharedOS answered; `None` when it was never issued.
        observed: Option<ToolStatus>,
        /// The code it answered with.
        reason_code: Option<String>,
    },
    /// An adversarial attempt never reached SharedOS (`not_exercised`).
    AttemptNeverReached {
        /// The attempt.
        attempt_id: String,
        /// What the receipt (or its absence) says.
        detail: Option<String>,
    },
    /// An attempt got an answer its expectation does not accept (`fail`).
    AttemptMissedExpectation {
        /// The attempt.
        attempt_id: String,
        /// What the script requires.
        expected: Expectation,
        /// What SharedOS answered; `None` when the receipt names no answer.
        observed: Option<ToolStatus>,
        /// The code it answered with.
        reason_code: Option<String>,
    },
    /// A tool of the CLI's own acted outside the envelope (`fail`, rules
    /// version 6).
    ActedOutsideTheEnvelope {
        /// The attempt.
        attempt_id: String,
        /// What was seen, in words.
        evidence: String,
    },
    /// A runtime seated from outside broke its protocol
    /// (`sharedos-runtime/2`) in one of the cell's turns (`fail`, rules
    /// version 7): nothing else it showed counts.
    BrokeProtocol {
        /// The 1-based turn whose record carries the breach.
        turn: u32,
        /// The breach, as the record keeps it.
        breach: Breach,
    },
    /// The record the row depends on is unusable (`fail`).
    RecordUnusable {
        /// Field paths of the required gaps.
        gaps: Vec<String>,
    },
    /// The turn ended other than the row requires, and the runtime never
    /// asked for the required ending (`not_exercised`).
    TurnEndingNeverAsked {
        /// The required ending.
        expected: TurnExpectation,
        /// The observed status.
        observed: ExecutionStatus,
        /// The observed terminal code.
        reason_code: Option<String>,
    },
    /// The turn asked for its ending (or had no choice) and ended otherwise
    /// (`fail`).
    TurnEndedWrongly {
        /// The required ending.
        expected: TurnExpectation,
        /// The observed status.
        observed: ExecutionStatus,
        /// The observed terminal code.
        reason_code: Option<String>,
    },
    /// The turn ended as required, but a value the row states about the
    /// ending (retryable, instant, annotation, lifted field, balance) differs
    /// (`fail`).
    TurnValueMissed {
        /// The observed status (the required one).
        observed: ExecutionStatus,
        /// The observed terminal code.
        reason_code: Option<String>,
        /// The first value that differs.
        value: TurnValue,
    },
    /// The column declares no guarantee on this path (`out_of_scope`).
    OutOfScope {
        /// The column's reason.
        reason: String,
    },
}

impl Finding {
    /// The cell status this finding gives.
    pub fn status(&self) -> CellStatus {
        match self {
            Finding::AttemptUnreachable { .. } => CellStatus::NotApplicable,
            Finding::ControlDidNotSucceed { .. }
            | Finding::AttemptNeverReached { .. }
            | Finding::TurnEndingNeverAsked { .. } => CellStatus::NotExercised,
            Finding::AttemptMissedExpectation { .. }
            | Finding::ActedOutsideTheEnvelope { .. }
            | Finding::BrokeProtocol { .. }
            | Finding::RecordUnusable { .. }
            | Finding::TurnEndedWrongly { .. }
            | Finding::TurnValueMissed { .. } => CellStatus::Fail,
            Finding::OutOfScope { .. } => CellStatus::OutOfScope,
        }
    }

    /// The finding in words, for a cell's detail.
    #[must_use]
    pub fn detail(&self) -> String {
        match self {
            Finding::AttemptUnreachable { attempt_id, reason } => {
                format!("attempt `{attempt_id}` cannot be made here: {reason}")
            }
            Finding::ControlDidNotSucceed { attempt_id, observed, reason_code } => {
                let answer = match observed {
                    None => "was never issued".to_string(),
                    Some(status) => format!("was answered {}", answer(status.as_str(), reason_code.as_deref())),
                };
                format!(
                    "control `{attempt_id}` {answer}, so the turn never showed it could act and the row proves nothing"
                )
            }
            Finding::AttemptNeverReached { attempt_id, detail } => match detail {
                Some(detail) => format!("attempt `{attempt_id}` never reached SharedOS ({detail})"),
                None => format!("attempt `{attempt_id}` never reached SharedOS"),
            },
            Finding::AttemptMissedExpectation { attempt_id, expected, observed, reason_code } => {
                let got = match (observed, reason_code) {
                    (Some(status), _) => format!("was answered {}", answer(status.as_str(), reason_code.as_deref())),
                    (None, Some(code)) => format!("got the rejection `{code}`"),
                    (None, None) => "was issued but its receipt names no answer".to_string(),
                };
                format!("attempt `{attempt_id}` {got} where the script requires {}", expectation(expected))
            }
            Finding::ActedOutsideTheEnvelope { attempt_id, evidence } => format!("attempt `{attempt_id}`: {evidence}"),
            Finding::BrokeProtocol { turn, breach } => broke_protocol(*turn, breach),
            Finding::RecordUnusable { gaps } if gaps.is_empty() => {
                "the turn's execution record is unusable".to_string()
            }
            Finding::RecordUnusable { gaps } => {
                format!("the turn's execution record is unusable (missing {})", ticked(gaps.iter().map(String::as_str)))
            }
            Finding::TurnEndingNeverAsked { expected, observed, reason_code } => format!(
                "{}; nothing named or announced `{ESCALATION_TOOL}`, so that ending was never asked for",
                ending_mismatch(expected, *observed, reason_code.as_deref())
            ),
            Finding::TurnEndedWrongly { expected, observed, reason_code } => {
                ending_mismatch(expected, *observed, reason_code.as_deref())
            }
            Finding::TurnValueMissed { observed, reason_code, value } => format!(
                "the turn ended {} as the row requires, but its {} is {} where the row requires {}",
                answer(observed.as_str(), reason_code.as_deref()),
                value.name,
                value.observed,
                value.expected
            ),
            Finding::OutOfScope { reason } => reason.clone(),
        }
    }
}

/// How much of the stderr tail a cell's detail quotes (its end), in
/// characters; the record keeps more.
const DETAIL_STDERR_CHARS: usize = 400;

/// "turn 1: the runtime broke sharedos-runtime/2 after its outcome
/// (`runtime_after_outcome`): ...; received `...`; its stderr ended with `...`".
fn broke_protocol(turn: u32, breach: &Breach) -> String {
    let mut text = format!(
        "turn {turn}: the runtime broke {} {} (`{}`): {}",
        breach.protocol().name(),
        breach.phase.words(),
        breach.code,
        breach.message
    );
    if let Some(received) = &breach.received {
        text.push_str(&format!("; received `{received}`"));
    }
    if let Some(stderr) = &breach.stderr_tail {
        let skip = stderr.chars().count().saturating_sub(DETAIL_STDERR_CHARS);
        let tail: String = stderr.chars().skip(skip).collect();
        let cut = if skip > 0 { "…" } else { "" };
        text.push_str(&format!("; its stderr ended with `{cut}{tail}`"));
    }
    text
}

/// The detail of a turn that ended as its row requires, naming every other
/// value the row states about the ending.
#[must_use]
pub fn ending_met(turn: &TurnVerdict) -> String {
    let mut text = format!("the turn ended {}", answer(turn.observed.as_str(), turn.reason_code.as_deref()));
    for value in &turn.values {
        text.push_str(", ");
        text.push_str(&value.met_text());
    }
    text.push_str(", as the row requires");
    if !turn.runtime_started {
        text.push_str(", before its runtime started");
    }
    text
}

fn ending_mismatch(expected: &TurnExpectation, observed: ExecutionStatus, reason_code: Option<&str>) -> String {
    format!(
        "the turn ended {} where the row requires {}",
        answer(observed.as_str(), reason_code),
        answer(expected.status.as_str(), expected.reason_code.as_deref())
    )
}

/// "`denied` with `no_matching_grant`", or just "`succeeded`".
fn answer(status: &str, code: Option<&str>) -> String {
    match code {
        Some(code) => format!("`{status}` with `{code}`"),
        None => format!("`{status}`"),
    }
}

fn expectation(expected: &Expectation) -> String {
    if let Some(rejection) = expected.rejection {
        return format!("the rejection `{}`", rejection.code());
    }
    let statuses = expected.statuses.iter().map(|s| s.as_str());
    let mut text = match &expected.reason_codes {
        Some(codes) => format!("{} with {}", one_of(statuses), one_of(codes.iter().map(String::as_str))),
        None => one_of(statuses),
    };
    if let Some(boundary) = expected.refused_by {
        text.push_str(&format!(" refused by `{}`", boundary.as_str()));
    }
    text
}

fn one_of<'a>(items: impl Iterator<Item = &'a str>) -> String {
    let items: Vec<&str> = items.collect();
    match items.as_slice() {
        [only] => format!("`{only}`"),
        _ => format!("one of {}", ticked(items.into_iter())),
    }
}

fn ticked<'a>(items: impl Iterator<Item = &'a str>) -> String {
    items.map(|i| format!("`{i}`")).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::Finding;
    use sharedos_conformance_metadata::breach::{Breach, BreachPhase, RuntimeProtocol};

    /// A record from before breaches named their protocol reads as
    /// `sharedos-runtime/1`, as it did when it was graded, so its bundle
    /// still verifies; a breach names its own protocol.
    #[test]
    fn a_breach_is_quoted_as_breaking_the_protocol_its_record_names() {
        let mut breach = Breach::new(
            RuntimeProtocol::V2,
            "runtime_exited",
            "the runtime exited or closed its output mid-turn".into(),
            BreachPhase::Turn,
            None,
            "giving up",
        );
        let detail = |breach: &Breach| Finding::BrokeProtocol { turn: 1, breach: breach.clone() }.detail();
        assert_eq!(
            detail(&breach),
            "turn 1: the runtime broke sharedos-runtime/2 during the turn (`runtime_exited`): the runtime exited or \
             closed its output mid-turn; its stderr ended with `giving up`"
        );
        breach.protocol = None;
        assert!(detail(&breach).starts_with("turn 1: the runtime broke sharedos-runtime/1 during the turn"));
    }
}
