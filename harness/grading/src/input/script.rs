//! Attack scripts: what a scripted runtime attempts during a row, and what
//! SharedOS must answer to each attempt (a SharedOS "move").
//!
//! Besides SharedOS's attempts, a script can say
//! *when* (a step waits for a virtual instant; a call runs alongside the
//! next steps), state facts for the record (`annotate`), emit runtime
//! events, read `draining`, act after the turn closed, and end with any
//! outcome a runtime can give ([`terminal`]).

pub mod expect;
pub mod step;
pub mod terminal;

pub use expect::{Expectation, Rejection};
pub use step::{Annotation, Attempt, Emission, Forge, Inspection, ReadTarget, StepKind};
pub use terminal::{StallUntil, Terminal, TerminalError, TerminalKind};

use crate::input::error::{LoadError, Site};
use serde::{Deserialize, Serialize};
pub use sharedos_conformance_metadata::move_kind::MoveKind;

/// Most attempts one script declares.
pub const MAX_ATTEMPTS: usize = 32;
/// Highest turn an attempt may belong to.
pub const MAX_TURN: u32 = 8;
/// Longest prose or reason text.
pub const MAX_TEXT: usize = 512;

/// An adversary file: one row's attack script.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AttackScript {
    /// Editor hint pointing at the JSON Schema; ignored.
    #[serde(rename = "$schema", default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// Script id; equals the file name without `.json`.
    pub id: String,
    /// What the row is about.
    pub kind: MoveKind,
    /// The property under test, in the matrix's wording.
    pub invariant: String,
    /// What SharedOS must do, in the matrix's wording.
    pub expected_outcome: String,
    /// Prose (not hashed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The attempts, in issue order (1..=32).
    pub attempts: Vec<Attempt>,
    /// How the last turn ends besides completing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminal: Option<Terminal>,
}

impl AttackScript {
    /// How many turns a cell runs: the highest turn any attempt names.
    #[must_use]
    pub fn turn_count(&self) -> u32 {
        self.attempts.iter().map(|a| a.turn).max().unwrap_or(1)
    }

    /// The attempts of one turn, in declared order.
    pub fn attempts_for_turn(&self, turn: u32) -> impl Iterator<Item = &Attempt> {
        self.attempts.iter().filter(move |a| a.turn == turn)
    }

    /// Checks every bound the serde shape cannot express.
    pub(crate) fn check(&self, site: &Site<'_>) -> Result<(), LoadError> {
        site.child("id").id(&self.id)?;
        site.child("invariant").text(&self.invariant, MAX_TEXT)?;
        site.child("expectedOutcome").text(&self.expected_outcome, MAX_TEXT)?;
        if let Some(text) = &self.description {
            site.child("description").text(text, MAX_TEXT)?;
        }
        if let Some(terminal) = &self.terminal {
            terminal.check(&site.child("terminal"))?;
        }
        let attempts = site.child("attempts");
        attempts.length(self.attempts.len(), 1, MAX_ATTEMPTS, "attempts")?;
        for (i, attempt) in self.attempts.iter().enumerate() {
            let at = attempts.index(i);
            attempt.check(&at)?;
            if self.attempts[..i].iter().any(|a| a.id == attempt.id) {
                return Err(at.child("id").duplicate_entry(format!(
                    "an attempt id not used before in this script (`{}` repeats)",
                    attempt.id
                )));
            }
            let earlier_call = self.attempts[..i].iter().any(|a| a.turn == attempt.turn && a.tool.is_some());
            if attempt.step_behind && !earlier_call {
                return Err(at.child("stepBehind").invalid_attempt(
                    "a step behind only on a call after another call of the same turn (the first call is at step 0)",
                ));
            }
        }
        Ok(())
    }
}

/// `site` extended by a relative JSON pointer from the model's validators.
pub(crate) fn at_pointer<'a>(site: &Site<'a>, pointer: &str) -> Site<'a> {
    pointer
        .split('/')
        .skip(1)
        .map(|s| s.replace("~1", "/").replace("~0", "~"))
        .fold(site.clone(), |at, segment| at.child(&segment))
}
