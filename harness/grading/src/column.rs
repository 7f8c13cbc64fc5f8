//! The columns of the matrix: which runtime sits in the seat, and what that
//! runtime structurally cannot do (R46, R47, R57).

use crate::input::built_in_column::BuiltInColumn;
use crate::input::case::Condition;
use crate::input::script::{AttackScript, MoveKind, TerminalKind};
use crate::input::seat::{Seat, SeatKind, SeatModel};
use crate::vocab::GradingLimits;
use sharedos_conformance_metadata::vendor::Vendor;
use sharedos_envelope::events::EventKind;
use sharedos_envelope::options::DEFAULT_TIMEOUT_MS;

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
    /// A runtime seated from outside (the suite's seat at this index),
    /// speaking `sharedos-runtime/2`; a scripted seat makes every step
    /// itself and reports its receipts, as the adversary does.
    Process(usize),
    /// A runtime seated from outside and given what a live seat is given
    /// (the turn request, its message carrying the prompt): graded from
    /// the record, with the limits of the driven columns.
    PromptedProcess(usize),
    /// A harness running its own loop, served the turn's catalogue over MCP:
    /// rmcp's client, in memory on the cell's clock, makes the script's
    /// calls as `tools/call` and writes its ending as Claude Code does.
    McpScripted,
    /// A vendor CLI seated live behind MCP (the suite's seat at this
    /// index): prompted, on a real clock, graded from the record; the
    /// flag says its CLI talks to the scripted model.
    LiveMcp(usize, bool),
}

/// A column of the matrix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnSpec {
    /// Column id (SharedOS's spelling; `process:<name>` for a seat).
    pub id: String,
    /// Display label.
    pub label: String,
    /// The runtime it seats.
    pub kind: ColumnKind,
}

/// Every column of a run, in manifest order: the built-in ones, then one
/// per seat, in column-id order.
#[must_use]
pub fn columns(seats: &[Seat]) -> Vec<ColumnSpec> {
    let built_in = BuiltInColumn::ALL.into_iter().map(|column| ColumnSpec {
        id: column.id(),
        label: column.label().to_string(),
        kind: ColumnKind::built_in(column),
    });
    let seated = seats.iter().enumerate().map(|(index, seat)| ColumnSpec {
        id: seat.column_id.clone(),
        label: seat.label.clone(),
        kind: match seat.kind {
            SeatKind::Scripted => ColumnKind::Process(index),
            SeatKind::Prompted => ColumnKind::PromptedProcess(index),
            SeatKind::Mcp => {
                ColumnKind::LiveMcp(index, seat.mcp.as_ref().is_some_and(|mcp| mcp.model == SeatModel::Scripted))
            }
        },
    });
    built_in.chain(seated).collect()
}

/// The column with this id.
#[must_use]
pub fn column(seats: &[Seat], id: &str) -> Option<ColumnSpec> {
    columns(seats).into_iter().find(|c| c.id == id)
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
    /// What a built-in column seats.
    #[must_use]
    pub fn built_in(column: BuiltInColumn) -> ColumnKind {
        match column {
            BuiltInColumn::Adversary => ColumnKind::Adversary,
            BuiltInColumn::Standard => ColumnKind::ModelScripted,
            BuiltInColumn::VendorScripted(vendor) => ColumnKind::VendorScripted(vendor),
            BuiltInColumn::Mcp => ColumnKind::McpScripted,
        }
    }

    /// Whether one run stands for any number (`--repeat`): a built-in
    /// column runs in this process on the simulated clock, so a second
    /// run repeats the first byte for byte. A seated runtime is another
    /// program, and runs as many times as asked.
    #[must_use]
    pub fn runs_once(self) -> bool {
        matches!(
            self,
            ColumnKind::Adversary | ColumnKind::ModelScripted | ColumnKind::VendorScripted(_) | ColumnKind::McpScripted
        )
    }

    /// Whether a driver sits between the script and the host.
    #[must_use]
    pub fn is_driven(self) -> bool {
        !matches!(self, ColumnKind::Adversary | ColumnKind::Process(_))
    }

    fn seat_noun(self) -> &'static str {
        match self {
            ColumnKind::Adversary => "the adversary",
            ColumnKind::ModelScripted => "a model",
            ColumnKind::VendorScripted(_) => "a harness",
            ColumnKind::Process(_) | ColumnKind::PromptedProcess(_) => "a process",
            ColumnKind::McpScripted | ColumnKind::LiveMcp(..) => "a harness over MCP",
        }
    }

    /// Whether the seat is a harness served the catalogue over MCP.
    #[must_use]
    pub fn serves_mcp(self) -> bool {
        matches!(self, ColumnKind::McpScripted | ColumnKind::LiveMcp(..))
    }

    /// A model's wire names turn dots into underscores, so a tool whose name
    /// already has one could not be decoded back exactly (R49).
    fn unwritable_tool(self, script: &AttackScript) -> Option<String> {
        if self != ColumnKind::ModelScripted {
            return None;
        }
        let tool = script.attempts.iter().filter_map(|a| a.tool.as_deref()).find(|t| t.contains('_'))?;
        Some(format!(
            "a model's wire name for `{tool}` replaces its dots with underscores, so the name it already has \
             could not be read back exactly"
        ))
    }

    /// A prompted process is told what to call, never when: a row whose
    /// calls or ending wait for an instant cannot be said to it.
    fn untimed_seat(self, script: &AttackScript) -> Option<String> {
        if !matches!(self, ColumnKind::PromptedProcess(_)) && !self.serves_mcp() {
            return None;
        }
        let timed = script.attempts.iter().find(|a| a.at_ms.is_some()).map(|a| format!("step `{}`", a.id));
        let timed = timed.or_else(|| script.terminal.as_ref()?.at_ms.map(|_| "the ending".to_string()))?;
        Some(format!("{timed} waits for an instant, and a prompt says what to call, never when"))
    }

    /// What a harness that runs its own loop cannot be made to do: declare
    /// a step, since the MCP path gives up loop control.
    fn beyond_mcp(self, script: &AttackScript, condition: &Condition) -> Option<String> {
        if !self.serves_mcp() {
            return None;
        }
        let own = "a harness over MCP runs its own loop and declares no step";
        if let Some(step) = script.attempts.iter().find(|a| a.step_behind) {
            return Some(format!("step `{}` is a call declaring a step behind the loop's own; {own}", step.id));
        }
        let issued = script.attempts.iter().find(|a| a.over_budget && condition.requires_declared_steps.is_some());
        issued.map(|step| {
            format!("step `{}` is the over-budget call a driver issues by declaring the step ceiling; {own}", step.id)
        })
    }

    /// Whether the standard loop sits in the seat, stating `promptHash` and
    /// `escalationAsked` itself.
    #[must_use]
    pub fn runs_the_standard_loop(self) -> bool {
        matches!(self, ColumnKind::ModelScripted | ColumnKind::VendorScripted(_))
    }

    /// Why a column without the standard loop cannot run a row about the
    /// loop: one that grades what the loop states, or ends the way only a
    /// seat behind the loop's driver can.
    fn without_the_loop(self, script: &AttackScript, condition: &Condition) -> Option<String> {
        // The MCP runtime states `promptHash` and `escalationAsked` as the
        // loop does, and its harness ends a turn in its own stream.
        if self.runs_the_standard_loop() || self.serves_mcp() {
            return None;
        }
        // One wording for every such column, so a process seat's cell reads
        // as the adversary's.
        let own = "a runtime that calls the host itself runs no standard loop";
        let terminal = script.terminal.as_ref().map(|t| t.kind);
        if let Some(ending) = terminal.filter(|kind| kind.is_seat_only()) {
            let ending = if ending == TerminalKind::HangUp {
                "hangs up before it says how its turn ends"
            } else {
                "reports a failed turn in its own wire format"
            };
            return Some(format!(
                "the script's seat {ending}, which only a seat behind the standard loop's driver can do; {own}"
            ));
        }
        if let Some(step) = script.attempts.iter().find(|a| a.step_behind) {
            return Some(format!(
                "step `{}` is a decision declaring a step behind the loop's own, which only a seat behind the \
                 standard loop's driver can make; {own}",
                step.id
            ));
        }
        let grades_the_loop = condition.expect_turn.as_ref().is_some_and(|t| t.prompt_hash_stated);
        grades_the_loop.then(|| {
            format!(
                "the row grades the prompt hash the standard loop states on every turn; {own} and states only \
                 what it is told to (rows `annotate-prompt-hash-*` grade that)"
            )
        })
    }

    /// Why a live CLI on a real clock cannot be held to the row's instants:
    /// its start-up (0.3 to 6 s before its first call) and each model round
    /// trip are wall time inside the turn, so a row that fixes when the turn
    /// ends by the seat's own calls, gives the turn less time than a CLI
    /// takes to start, or lets a grant expire mid-turn grades the CLI's
    /// speed, not the envelope. An ending at the time limit is the
    /// envelope's own deadline, and a turn ended before it starts no CLI
    /// touches: both are still graded.
    fn real_clock_timing(self, condition: &Condition) -> Option<String> {
        if !matches!(self, ColumnKind::LiveMcp(..)) {
            return None;
        }
        let cli = "a live CLI spends its start-up and model round trips in real time inside the turn";
        let timeout = condition.world.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS);
        if timeout < LIVE_START_UP_MS {
            return Some(format!("the turn's time limit is {timeout} ms, less than {LIVE_START_UP_MS} ms; {cli}"));
        }
        // A turn the row expects never to start (its host aborted it first)
        // ends before any CLI is started, so no start-up can move its end.
        let starts = condition.expect_turn.as_ref().is_none_or(|turn| {
            turn.event_counts.as_ref().and_then(|counts| counts.get(EventKind::TurnStarted.as_str())) != Some(&0)
        });
        let ended_at = condition.expect_turn.as_ref().and_then(|turn| turn.ended_at_ms).filter(|ms| *ms < timeout);
        if let Some(ms) = ended_at.filter(|_| starts) {
            return Some(format!("the row fixes the turn's end at {ms} ms, before its time limit; {cli}"));
        }
        condition
            .world
            .expires_after_operations
            .as_ref()
            .map(|_| format!("a grant expires mid-turn at an instant the turn's own operations set; {cli}"))
    }

    /// Why a containment row cannot run here: only a real CLI has tools of
    /// its own, and only the scripted model asks it for them.
    fn without_own_tools(self, script: &AttackScript) -> Option<String> {
        if script.kind != MoveKind::Containment || matches!(self, ColumnKind::LiveMcp(_, true)) {
            return None;
        }
        Some(
            "the row asks a live CLI for tools of its own through the scripted model, and only a live MCP seat \
             whose CLI talks to the scripted model has both"
                .to_string(),
        )
    }

    /// The reason a condition declares for this column, if any; what it
    /// declares for the MCP column holds for every live MCP seat.
    fn declared_not_applicable(self, condition: &Condition) -> Option<String> {
        let kind = if self.serves_mcp() { ColumnKind::McpScripted } else { self };
        let column = BuiltInColumn::ALL.into_iter().find(|column| ColumnKind::built_in(*column) == kind)?;
        condition.not_applicable_reason(&column.id()).map(str::to_string)
    }

    /// The limits of this column for one row (R57: `harnessLimits` and
    /// `modelLimits`). The adversary has none.
    #[must_use]
    pub fn limits(self, script: &AttackScript, condition: &Condition) -> ColumnLimits {
        let unsupported = self.without_own_tools(script).or_else(|| self.without_the_loop(script, condition));
        let mut limits = ColumnLimits { unsupported, ..ColumnLimits::default() };
        if !self.is_driven() {
            return limits;
        }
        let seat = self.seat_noun();
        limits.unsupported = limits
            .unsupported
            .or_else(|| match script.kind {
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
                _ if drains_from_the_start(condition) => Some(format!(
                "the grace is not less than the time limit, so the turn drains from its first instant and the loop \
                 never asks {seat} for a call"
            )),
                _ => None,
            })
            .or_else(|| self.declared_not_applicable(condition))
            .or_else(|| beyond_a_seat(script))
            .or_else(|| self.unwritable_tool(script))
            .or_else(|| self.untimed_seat(script))
            .or_else(|| self.beyond_mcp(script, condition))
            .or_else(|| self.real_clock_timing(condition));
        for attempt in &script.attempts {
            if attempt.inspect.is_some() {
                limits.grading.unreachable.insert(
                    attempt.id.clone(),
                    format!("{seat} speaks tool calls and is never handed the runtime surfaces to enumerate"),
                );
            } else if attempt.step_behind {
                limits.grading.unreachable.insert(
                    attempt.id.clone(),
                    "the loop refuses a decision that declares a step behind its own, so the call never reaches \
                     the host"
                        .to_string(),
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

/// The least time limit a row may give a live CLI's turn: more than the
/// slowest pinned CLI was seen to take to start (Pi, up to 6 s loaded).
pub const LIVE_START_UP_MS: u64 = 10_000;

/// Whether the condition's grace swallows its whole time limit (E62).
fn drains_from_the_start(condition: &Condition) -> bool {
    let timeout = condition.world.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS);
    condition.world.drain_grace_ms.is_some_and(|grace| grace >= timeout)
}

/// Why a seat that only speaks tool calls, one after another, cannot say
/// what `script` says, if it cannot. Timed calls and endings are sayable
/// (frames and replies are held until their instant), and so is a stall
/// (the seat says nothing more); a step that speaks to the host itself, a
/// call left running alongside the next steps, and an ending only a
/// runtime in the host can produce are not.
fn beyond_a_seat(script: &AttackScript) -> Option<String> {
    if let Some(step) = script.attempts.iter().find(|a| a.needs_the_host()) {
        return Some(format!(
            "step `{}` speaks to the runtime host itself (annotate, emit, read, or after the turn closed), which a \
             seat that only speaks tool calls cannot do",
            step.id
        ));
    }
    if let Some(step) = script.attempts.iter().find(|a| a.trace_id.is_some()) {
        return Some(format!(
            "step `{}` is a call under another trace, and the loop stamps every call its seat asks for with the \
             turn's own",
            step.id
        ));
    }
    if let Some(step) = script.attempts.iter().find(|a| a.concurrent) {
        return Some(format!(
            "step `{}` is left running alongside the next steps, while the loop hands the seat one result \
             before it asks for the next call",
            step.id
        ));
    }
    let terminal = script.terminal.as_ref()?;
    let ending = match terminal.kind {
        TerminalKind::Crash => "throws out of its turn",
        TerminalKind::Malformed => "returns an outcome that does not parse",
        TerminalKind::Fail => "returns a `fail` outcome of its own",
        TerminalKind::Complete if terminal.metadata.is_some() || terminal.output.is_some() => {
            "returns a `complete` outcome with chosen output or metadata"
        }
        TerminalKind::Complete
        | TerminalKind::Escalate
        | TerminalKind::Stall
        | TerminalKind::HangUp
        | TerminalKind::ReportFailure => return None,
    };
    Some(format!("the script's runtime {ending}, which only a runtime seated in the host can do"))
}
