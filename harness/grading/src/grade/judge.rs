//! The grading rules: from receipts and a turn's record to a cell verdict.
//!
//! [`RULES_VERSION`](crate::vocab::RULES_VERSION) numbers these rules; its history is in `docs/rules/versions.md`.
//!
//! The rules are split by concern: [`attempt`] grades one declared attempt,
//! [`status`] decides a case status, [`finding`] names why a cell did not
//! pass, and [`cell`] assembles the manifest cell.

pub mod attempt;
pub mod cell;
pub mod facts;
pub mod finding;
pub mod protocol_breach;
pub mod runtime_refusal;
pub mod status;
pub mod turn_values;
pub mod turn_verdict;

pub use attempt::{AttemptGrade, AttemptOutcome};
pub use facts::TurnFacts;
pub use finding::Finding;
pub use turn_verdict::TurnVerdict;

use crate::grade::completeness::Completeness;
use crate::input::case::TurnExpectation;
use crate::input::script::AttackScript;
use crate::record::receipt::AttemptReceipt;
use crate::vocab::{CellStatus, GradingLimits};
use attempt::Excuses;
use sharedos_conformance_metadata::witness::WitnessLog;
use sharedos_model::record::ExecutionRecord;

/// Everything one cell is graded on.
#[derive(Debug, Clone, Copy)]
pub struct GradingInput<'a> {
    /// The row's script.
    pub script: &'a AttackScript,
    /// The ending the condition requires, when the row grades it.
    pub expect_turn: Option<&'a TurnExpectation>,
    /// Receipts of every turn, concatenated.
    pub receipts: &'a [AttemptReceipt],
    /// The last turn's record (the one graded).
    pub record: &'a ExecutionRecord,
    /// The records of the turns before it, in turn order: read only for
    /// what a row states about every turn.
    pub earlier_records: &'a [ExecutionRecord],
    /// Its completeness.
    pub completeness: &'a Completeness,
    /// What the column declares about attempts.
    pub limits: &'a GradingLimits,
    /// The last turn's facts outside its record (retryable, instants,
    /// metadata, world effects).
    pub facts: &'a TurnFacts,
    /// Attempts graded outside the script: a messaging world's host
    /// operations and effects expectation, listed ahead of the script's.
    pub host_attempts: &'a [AttemptOutcome],
    /// What a scripted model witnessed of the graded turn, for a live seat
    /// pointed at one.
    pub witness: Option<&'a WitnessLog>,
}

/// A cell's grading, before it is shaped into a manifest cell.
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
pub struct Judgement {
    /// The verdict.
    pub status: CellStatus,
    /// Why it is not a pass (`None` on a pass).
    pub finding: Option<Finding>,
    /// Every declared attempt, graded, in declared order.
    pub attempts: Vec<AttemptOutcome>,
    /// The ending, when the row grades it.
    pub turn: Option<TurnVerdict>,
    /// Driver-issued attempts that were actually issued, in declared order.
    pub driver_issued: Vec<String>,
}

impl Judgement {
    /// The cell detail: the finding in words, or how a graded ending was met.
    #[must_use]
    pub fn detail(&self) -> Option<String> {
        match (&self.finding, &self.turn) {
            (Some(finding), _) => Some(finding.detail()),
            (None, Some(turn)) => Some(finding::ending_met(turn)),
            (None, None) => None,
        }
    }
}

/// Grades one cell.
pub fn judge(input: &GradingInput<'_>) -> Judgement {
    let turn = input
        .expect_turn
        .map(|expected| TurnVerdict::read(input.script, expected, (input.earlier_records, input.record), input.facts));
    let excuses = Excuses {
        refused_before_start: turn.as_ref().is_some_and(|t| !t.runtime_started),
        ended_as_expected_by_envelope: turn.as_ref().is_some_and(TurnVerdict::ended_as_expected_by_envelope),
    };
    let turn_number = u32::try_from(input.earlier_records.len() + 1).unwrap_or(u32::MAX);
    let answered = runtime_refusal::runtime_answers(input.script, turn_number, input.witness);
    let mut attempts = input.host_attempts.to_vec();
    let graded = attempt::grade_attempts(input.script, input.receipts, input.record, input.limits, excuses, &answered);
    attempts.extend(graded);
    let finding = protocol_breach::first_breach(input.earlier_records, input.record).or_else(|| match &turn {
        Some(turn) => status::with_turn(&attempts, turn),
        None => status::attempts_only(input.script.kind, &attempts, input.completeness),
    });
    let driver_issued = attempts
        .iter()
        .filter(|a| a.attempted && input.limits.driver_issued.contains_key(&a.attempt_id))
        .map(|a| a.attempt_id.clone())
        .collect();
    Judgement { status: status::status_of(finding.as_ref()), finding, attempts, turn, driver_issued }
}
