//! A protocol violation as the record keeps it: its code and words, when in
//! the turn it happened, what was received, and the end of the runtime's
//! stderr. The record of the turn that broke the protocol carries it under
//! `system.metadata.protocolBreach`, so whoever grades the record (a run, a
//! bundle's verifier) sees the same diagnostic.

use serde::{Deserialize, Serialize};

/// The key of `system.metadata` a breach is recorded under.
pub const BREACH_KEY: &str = "protocolBreach";

/// How much of the stderr tail a record keeps, in characters (its end).
const STDERR_CHARS: usize = 2048;

/// A version of the runtime protocol a breach can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum RuntimeProtocol {
    /// `sharedos-runtime/1`: what every breach recorded before breaches
    /// named their protocol broke.
    #[serde(rename = "sharedos-runtime/1")]
    V1,
    /// `sharedos-runtime/2`, which adds the fence after each turn.
    #[serde(rename = "sharedos-runtime/2")]
    V2,
}

impl RuntimeProtocol {
    /// The version this harness speaks.
    pub const CURRENT: RuntimeProtocol = RuntimeProtocol::V2;

    /// Its name, as `hello` and `ready` say it.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            RuntimeProtocol::V1 => "sharedos-runtime/1",
            RuntimeProtocol::V2 => "sharedos-runtime/2",
        }
    }
}

/// When, in its turn, the runtime broke the protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BreachPhase {
    /// Starting the process or its handshake.
    Start,
    /// While the turn ran, before its outcome.
    Turn,
    /// After the runtime's outcome (or throw), before its report.
    AfterOutcome,
    /// After its report (or, for a prompted seat, after `closed`).
    AfterReport,
}

impl BreachPhase {
    /// The phase in words, for a diagnostic.
    #[must_use]
    pub fn words(self) -> &'static str {
        match self {
            BreachPhase::Start => "while starting",
            BreachPhase::Turn => "during the turn",
            BreachPhase::AfterOutcome => "after its outcome",
            BreachPhase::AfterReport => "after its report",
        }
    }
}

/// A violation, as recorded on the turn that committed it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Breach {
    /// The violation's code (`runtime_after_outcome`).
    pub code: String,
    /// What happened, in words.
    pub message: String,
    /// When in the turn.
    pub phase: BreachPhase,
    /// The line received that broke the protocol, quoted (at most 256
    /// characters), when one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub received: Option<String>,
    /// The end of what the runtime wrote on stderr during the turn (all it
    /// wrote, for a breach at start), when it wrote anything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stderr_tail: Option<String>,
    /// The protocol the runtime spoke; a record from before this field
    /// broke [`RuntimeProtocol::V1`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<RuntimeProtocol>,
}

impl Breach {
    /// The record of a violation of `protocol` (`code`, in `message`'s
    /// words) committed in `phase`, with the line received (quoted) and the
    /// stderr, of which only the end is kept.
    #[must_use]
    pub fn new(
        protocol: RuntimeProtocol,
        code: &str,
        message: String,
        phase: BreachPhase,
        received: Option<String>,
        stderr: &str,
    ) -> Breach {
        let stderr = stderr.trim();
        let skip = stderr.chars().count().saturating_sub(STDERR_CHARS);
        Breach {
            code: code.to_string(),
            message,
            phase,
            received,
            stderr_tail: (!stderr.is_empty()).then(|| stderr.chars().skip(skip).collect()),
            protocol: Some(protocol),
        }
    }

    /// The protocol the runtime broke, as the record names it.
    #[must_use]
    pub fn protocol(&self) -> RuntimeProtocol {
        self.protocol.unwrap_or(RuntimeProtocol::V1)
    }
}
