//! The columns of the matrix: which runtime sits in the seat, and what that
//! runtime structurally cannot do (`10-conformance.md` §4.1–§4.3).

use crate::case::Condition;
use crate::judge::attempt::GradingLimits;
use crate::script::{AttackScript, MoveKind};
use sharedos_drivers::vendor::Vendor;

/// Which runtime a column seats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ColumnKind {
    /// The scripted adversary: calls the host directly and owns its outcome.
    Adversary,
    /// The standard loop with the model driver replaying scripted replies.
    ModelScripted,
    /// The standard loop with the eval driver reading a vendor's frames from
    /// a transcript written by that vendor's frame writer.
    VendorScripted(Vendor),
}

/// A column of the matrix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnSpec {
    /// Column id (SharedOS's spelling).
    pub id: &'static str,
    /// Display label.
    pub label: &'static str,
    /// The runtime it seats.
    pub kind: ColumnKind,
}

/// The scripted adversary column.
pub const ADVERSARY: ColumnSpec = ColumnSpec { id: "adversary-embedded", label: "Adversary", kind: ColumnKind::Adversary };

/// Every column this harness runs, in manifest order.
#[must_use]
pub fn columns() -> Vec<ColumnSpec> {
    vec![ADVERSARY]
}

/// The driven columns, seated once their runtimes are wired in.
#[must_use]
pub fn driven_columns() -> Vec<ColumnSpec> {
    vec![
        ColumnSpec { id: "model-scripted", label: "Standard", kind: ColumnKind::ModelScripted },
        ColumnSpec { id: "codex-scripted", label: "Codex", kind: ColumnKind::VendorScripted(Vendor::Codex) },
        ColumnSpec {
            id: "claude-code-scripted",
            label: "Claude Code",
            kind: ColumnKind::VendorScripted(Vendor::ClaudeCode),
        },
        ColumnSpec { id: "deepseek-scripted", label: "DeepSeek", kind: ColumnKind::VendorScripted(Vendor::DeepSeek) },
        ColumnSpec { id: "pi-scripted", label: "Pi", kind: ColumnKind::VendorScripted(Vendor::Pi) },
    ]
}

/// The column with this id.
#[must_use]
pub fn column(id: &str) -> Option<ColumnSpec> {
    columns().into_iter().find(|c| c.id == id)
}

/// What a column declares about one row before it runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ColumnLimits {
    /// The whole row cannot run here: decided `not_applicable` with this reason.
    pub unsupported: Option<String>,
    /// What the judge needs: unreachable and driver-issued attempts.
    pub grading: GradingLimits,
}

impl ColumnKind {
    /// Whether a driver sits between the script and the host.
    #[must_use]
    pub fn is_driven(self) -> bool {
        !matches!(self, ColumnKind::Adversary)
    }

    fn seat_noun(self) -> &'static str {
        match self {
            ColumnKind::Adversary => "the adversary",
            ColumnKind::ModelScripted => "a model",
            ColumnKind::VendorScripted(_) => "a harness",
        }
    }

    /// The limits of this column for one row (`10-conformance.md` §4.3:
    /// `harnessLimits` and `modelLimits`). The adversary has none.
    #[must_use]
    pub fn limits(self, script: &AttackScript, condition: &Condition) -> ColumnLimits {
        let mut limits = ColumnLimits::default();
        if !self.is_driven() {
            return limits;
        }
        let seat = self.seat_noun();
        limits.unsupported = match script.kind {
            MoveKind::EscalationRefused => Some(format!(
                "{seat} in the standard loop escalates through the catalogued affordance, so an ungranted \
                 escalation is an ordinary refused call rather than the ending this row grades"
            )),
            MoveKind::RuntimeCrashed => {
                Some(format!("the standard loop contains a failure of {seat}; the runtime itself never throws"))
            }
            MoveKind::TurnDraining => Some(format!(
                "the loop stops asking {seat} once the turn drains, so no new call can be made while draining"
            )),
            _ => None,
        };
        for attempt in &script.attempts {
            if attempt.inspect.is_some() {
                limits.grading.unreachable.insert(
                    attempt.id.clone(),
                    format!("{seat} speaks tool calls and is never handed the runtime surfaces to enumerate"),
                );
            } else if attempt.over_budget && condition.requires_declared_steps.is_some() {
                limits.grading.driver_issued.insert(
                    attempt.id.clone(),
                    "the loop's own index never reaches the step ceiling, so the driver declares the step".to_string(),
                );
            }
        }
        limits
    }
}
