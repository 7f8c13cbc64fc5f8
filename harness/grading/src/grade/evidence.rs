//! What a run cell is graded from, kept whole: whoever holds it grades the
//! cell again with [`grade_cell`] and gets the same verdict, which is how a
//! certification bundle's verdicts are checked without trusting them.
//!
//! The records are the cell's execution records; the receipts, facts and
//! messaging observation are what the run observed outside them (the
//! adversary's own report, the turn's ending and world effects, a messaging
//! world's host operations and message ports), each graded here rather than
//! while the cell ran.

use crate::grade::completeness::{check_completeness, Completeness};
use crate::grade::judge::cell::assemble_cell;
use crate::grade::judge::cell::Cell;
use crate::grade::judge::{judge, GradingInput, Judgement, TurnFacts};
use crate::grade::messaging::{grade_messaging, MessagingGrade};
use crate::input::case::TurnExpectation;
use crate::input::script::AttackScript;
use crate::messaging::MessagingObservation;
use crate::record::receipt::AttemptReceipt;
use crate::vocab::GradingLimits;
use serde::{Deserialize, Serialize};
use sharedos_conformance_metadata::witness::WitnessLog;
use sharedos_model::record::ExecutionRecord;
use sharedos_world::options::messaging::MessagingOptions;

/// Everything one run cell is graded from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GradingEvidence {
    /// One record per turn, in turn order; the last is graded.
    pub records: Vec<ExecutionRecord>,
    /// What each attempt was answered, every turn's concatenated.
    pub receipts: Vec<AttemptReceipt>,
    /// The last turn's facts outside its record.
    pub facts: TurnFacts,
    /// What a messaging world's host operations and message ports showed;
    /// absent for every other world.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub messaging: Option<MessagingObservation>,
    /// What a scripted model witnessed, one log per turn, for a live seat
    /// pointed at one; empty for every other column.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub witness: Vec<WitnessLog>,
}

/// What the row and the column say about grading, besides the evidence.
#[derive(Debug, Clone, Copy)]
pub struct GradingRules<'a> {
    /// The column.
    pub column_id: &'a str,
    /// The row's script.
    pub script: &'a AttackScript,
    /// The ending the condition requires, when the row grades it.
    pub expect_turn: Option<&'a TurnExpectation>,
    /// What the column declares about attempts.
    pub limits: &'a GradingLimits,
    /// The world's messaging option, when the condition arms one.
    pub messaging: Option<&'a MessagingOptions>,
}

/// A graded run cell.
#[derive(Debug, Clone)]
#[must_use]
pub struct GradedCell {
    /// The judge's reasoning.
    pub judgement: Judgement,
    /// The last record's completeness.
    pub completeness: Completeness,
    /// The cell as the manifest holds it.
    pub cell: Cell,
    /// A messaging world's host operations and effects, graded.
    pub messaging: Option<MessagingGrade>,
}

/// Grades one run cell from its evidence; `None` when it holds no record.
pub fn grade_cell(evidence: &GradingEvidence, rules: GradingRules<'_>) -> Option<GradedCell> {
    let (last, earlier_records) = evidence.records.split_last()?;
    let completeness = check_completeness(last);
    // An armed option graded against no observation fails each declared
    // operation rather than dropping it.
    let unobserved = MessagingObservation::default();
    let observed = evidence.messaging.as_ref().unwrap_or(&unobserved);
    let messaging = rules.messaging.map(|options| grade_messaging(options, observed));
    let host_attempts = messaging.as_ref().map_or(&[][..], |m| m.attempts.as_slice());
    let judgement = judge(&GradingInput {
        script: rules.script,
        expect_turn: rules.expect_turn,
        receipts: &evidence.receipts,
        record: last,
        earlier_records,
        completeness: &completeness,
        limits: rules.limits,
        facts: &evidence.facts,
        host_attempts,
        // One log per turn when the seat has a scripted model; the last is
        // the graded turn's.
        witness: (evidence.witness.len() == evidence.records.len()).then(|| evidence.witness.last()).flatten(),
    });
    let turns = u32::try_from(evidence.records.len()).unwrap_or(u32::MAX);
    let cell = assemble_cell(rules.column_id, &judgement, &completeness, turns, None);
    Some(GradedCell { judgement, completeness, cell, messaging })
}
