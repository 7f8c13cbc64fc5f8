//! Who sits in a column's seat for one turn: the adversary itself, or the
//! standard loop with a driver fed what the script says the seat says.

use super::cache::RunCache;
use crate::run::adversary::Adversary;
use crate::run::attempt_call::IssueContext;
use crate::run::transcript::{
    declared_step_position, seat_calls, seat_ending, seat_prompt, step_behind_position, vendor_batches, SeatCall,
    SeatEnding, NEVER_MS,
};
use serde_json::{json, Value};
use sharedos_conformance_metadata::witness::WitnessLog;
use sharedos_drivers::child_process::ProcessLimits;
use sharedos_drivers::eval_driver::{EvalHarnessDriver, EvalHarnessDriverOptions};
use sharedos_drivers::model_client::{TimedReply, TranscriptModelClient};
use sharedos_drivers::model_driver::{model_manifest, ModelDriver, ModelDriverOptions};
use sharedos_drivers::model_wire::{ModelReply, ModelToolCall, FINISH_LENGTH, FINISH_STOP};
use sharedos_drivers::seat::DeclareStep;
use sharedos_drivers::standard_loop::{StandardLoop, StandardLoopOptions};
use sharedos_drivers::transcript::TranscriptTransport;
use sharedos_drivers::vendor::{Vendor, VendorWire};
use sharedos_envelope::runtime::RuntimePlugin;
use sharedos_grading::column::ColumnKind;
use sharedos_grading::input::script::AttackScript;
use sharedos_grading::input::seat::{McpTransport, Seat, SeatModel};
use sharedos_mcp::bridge::CallIdMinter;
use sharedos_mcp::harness::Transport;
use sharedos_mcp::live::{LiveCli, LiveHarness, ScriptedModel};
use sharedos_mcp::recipe::{recipe_digest, SeatRecipe};
use sharedos_mcp::runtime::{CliIdentity, DeclaredModel, McpHarnessRuntime};
use sharedos_mcp::scripted_client::{ScriptedCall, ScriptedEnding, ScriptedMcpClient};
use sharedos_mcp::serve::ServeOptions;
use sharedos_model::execution::{ExecutionRequest, RuntimeManifest};
use sharedos_process::runtime::CallIdFor;
use sharedos_scripted_model::play::{Play, PlayCall, PlayEnding};
use std::rc::Rc;
use std::sync::{Arc, Mutex};

/// The model name a scripted model column's records show.
pub const TRANSCRIPT_MODEL: &str = "transcript";
/// The provider a scripted model column states.
pub const TRANSCRIPT_PROVIDER: &str = "sharedos-conformance";
/// The model a live seat's records show when it is pointed at the
/// scripted model.
pub const SCRIPTED_MODEL: &str = "scripted";

/// A seat that could not be built (a harness bug, never a verdict).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SeatError {
    /// A tool name cannot travel through the model's wire names and back.
    #[error("write a model transcript: tool `{tool}` has an underscore, which the wire name cannot carry back")]
    UnderscoreInToolName {
        /// The tool.
        tool: String,
    },
    /// The driver or loop refused its options.
    #[error("seat the driver: {0}")]
    Driver(String),
}

/// What a driven seat says in one turn.
#[derive(Debug, Clone)]
pub struct SeatScript {
    calls: Vec<SeatCall>,
    ending: SeatEnding,
    declared_at: Option<usize>,
    behind_at: Option<usize>,
    execution_id: String,
}

impl SeatScript {
    /// The calls, escalation and declared-step position of `turn`, with
    /// arguments built for the request's context.
    #[must_use]
    pub fn new(script: &AttackScript, turn: u32, request: &ExecutionRequest) -> SeatScript {
        let context = IssueContext::from(&request.context);
        let max_tool_calls = request.options.as_ref().and_then(|o| o.max_tool_calls);
        SeatScript {
            calls: seat_calls(script, turn, &request.execution_id, &context),
            ending: seat_ending(script, turn, &request.execution_id),
            declared_at: declared_step_position(script, turn, max_tool_calls),
            behind_at: step_behind_position(script, turn),
            execution_id: request.execution_id.clone(),
        }
    }

    /// The derived call id of the next listed call with this tool and these
    /// arguments not yet claimed, for a seat that makes the listed calls
    /// under ids of its own.
    #[must_use]
    pub fn call_ids(&self) -> CallIdFor {
        let calls: Vec<(String, String, serde_json::Map<String, Value>)> =
            self.calls.iter().map(|c| (c.call_id.clone(), c.tool.clone(), c.arguments.clone())).collect();
        let claimed = std::cell::RefCell::new(vec![false; calls.len()]);
        Rc::new(move |tool: &str, arguments: &serde_json::Map<String, Value>| {
            let mut claimed = claimed.borrow_mut();
            let (index, (id, _, _)) =
                calls.iter().enumerate().find(|(i, (_, t, a))| !claimed[*i] && t == tool && a == arguments)?;
            claimed[index] = true;
            Some(id.clone())
        })
    }

    /// The message payload a driven turn carries: the prompt a live seat
    /// would be given, so the request equals a live one.
    #[must_use]
    pub fn payload(&self) -> Value {
        json!({ "text": seat_prompt(&self.calls, &self.ending) })
    }

    /// The scripted model's play: the calls and the ending a live seat's
    /// model says, as the model column's transcript says them.
    #[must_use]
    pub fn play(&self) -> Play {
        let play_call = |call: &SeatCall| PlayCall {
            tool: call.tool.clone(),
            arguments: call.arguments.clone(),
            at_ms: call.at_ms,
            // A tool of the CLI's own (`cli.*`) is named by the live seat,
            // which knows whose CLI it is.
            own_tool: false,
        };
        let ending = match &self.ending {
            SeatEnding::Complete { at_ms } => PlayEnding::Complete { at_ms: *at_ms },
            SeatEnding::Escalate(ask) => PlayEnding::Escalate(play_call(ask)),
            SeatEnding::Stall => PlayEnding::Stall,
            SeatEnding::HangUp => PlayEnding::HangUp,
            SeatEnding::ReportFailure => PlayEnding::Failure,
        };
        Play { calls: self.calls.iter().map(play_call).collect(), ending, secrets: Vec::new() }
    }

    /// The step policy: at the over-budget attempt's release index, declare
    /// the request's step ceiling; at the `stepBehind` call's, the step
    /// before the loop's own.
    pub fn declare_step(&self) -> Option<DeclareStep> {
        let position = |at: Option<usize>| at.and_then(|p| u64::try_from(p).ok());
        let (ceiling_at, behind_at) = (position(self.declared_at), position(self.behind_at));
        if ceiling_at.is_none() && behind_at.is_none() {
            return None;
        }
        Some(Rc::new(move |index, request| {
            if Some(index) == behind_at {
                return index.checked_sub(1);
            }
            (Some(index) == ceiling_at)
                .then(|| request.options.as_ref().and_then(|o| o.max_steps))
                .flatten()
                .map(u64::from)
        }))
    }
}

/// The runtime seated in `kind` for one turn; a vendor's catalogue
/// renderings are remembered in `cache`.
///
/// # Errors
/// When a driver cannot be built from the script.
pub fn seat(
    kind: ColumnKind,
    script: &Rc<AttackScript>,
    turn: u32,
    seat_script: &SeatScript,
    cache: &Arc<RunCache>,
) -> Result<Rc<dyn RuntimePlugin>, SeatError> {
    match kind {
        ColumnKind::Adversary => Ok(Rc::new(Adversary::new(Rc::clone(script), turn))),
        ColumnKind::ModelScripted => model_seat(seat_script),
        ColumnKind::VendorScripted(vendor) => vendor_seat(vendor, seat_script, cache),
        ColumnKind::McpScripted => Ok(mcp_seat(seat_script)),
        ColumnKind::Process(_) | ColumnKind::PromptedProcess(_) | ColumnKind::LiveMcp(..) => {
            Err(SeatError::Driver("a seat from outside is started by the runner".into()))
        }
    }
}

fn model_seat(seat_script: &SeatScript) -> Result<Rc<dyn RuntimePlugin>, SeatError> {
    let replies = model_replies(seat_script)?;
    let client = Rc::new(TranscriptModelClient::timed(replies));
    let mut options = ModelDriverOptions::new(model_column_manifest(), client, TRANSCRIPT_MODEL);
    options.provider = Some(TRANSCRIPT_PROVIDER.to_string());
    options.declare_step = seat_script.declare_step();
    let driver = ModelDriver::new(options);
    let seated =
        StandardLoop::new(driver, StandardLoopOptions::default()).map_err(|e| SeatError::Driver(e.to_string()))?;
    Ok(Rc::new(seated))
}

fn vendor_seat(
    vendor: Vendor,
    seat_script: &SeatScript,
    cache: &Arc<RunCache>,
) -> Result<Rc<dyn RuntimePlugin>, SeatError> {
    let writer = vendor.writer();
    let batches = vendor_batches(writer.as_ref(), &seat_script.calls, &seat_script.ending, &seat_script.execution_id);
    let transport = TranscriptTransport::new(batches).map_err(|e| SeatError::Driver(e.to_string()))?;
    let mut options = EvalHarnessDriverOptions::new(vendor.manifest(), Rc::from(vendor.protocol()), Rc::new(transport));
    options.declare_step = seat_script.declare_step();
    let cache = Arc::clone(cache);
    options.render_tools = Some(Rc::new(move |protocol, tools| cache.rendered_tools(protocol, tools)));
    let driver = EvalHarnessDriver::new(options).map_err(|e| SeatError::Driver(e.to_string()))?;
    let seated =
        StandardLoop::new(driver, StandardLoopOptions::default()).map_err(|e| SeatError::Driver(e.to_string()))?;
    Ok(Rc::new(seated))
}

/// A scripted MCP client writing Claude Code's stream, seated behind the
/// MCP runtime.
fn mcp_seat(seat_script: &SeatScript) -> Rc<dyn RuntimePlugin> {
    let scripted = |call: &SeatCall| ScriptedCall { tool: call.tool.clone(), arguments: call.arguments.clone() };
    let ending = match &seat_script.ending {
        SeatEnding::Complete { .. } => ScriptedEnding::Complete,
        SeatEnding::Escalate(ask) => ScriptedEnding::Escalate(scripted(ask)),
        SeatEnding::Stall => ScriptedEnding::Stall,
        SeatEnding::HangUp => ScriptedEnding::HangUp,
        SeatEnding::ReportFailure => ScriptedEnding::Failure,
    };
    let calls = seat_script.calls.iter().map(scripted).collect();
    let client = ScriptedMcpClient::new(Vendor::ClaudeCode, calls, ending);
    Rc::new(McpHarnessRuntime::new(Vendor::ClaudeCode, Rc::new(client), mcp_call_ids(seat_script)))
}

/// Where a live seat's scripted model records what it witnesses.
pub type WitnessSink = Arc<Mutex<WitnessLog>>;

/// A vendor CLI seated live behind MCP: started for each turn by its
/// vendor's recipe, with only the seat's variables, on a real clock; with
/// the scripted model, where it keeps what it witnesses.
///
/// # Errors
/// When `seat` is not an MCP seat.
pub fn live_mcp_seat(
    seat: &Seat,
    seat_script: &SeatScript,
) -> Result<(Rc<dyn RuntimePlugin>, Option<WitnessSink>), SeatError> {
    let Some(mcp) = &seat.mcp else {
        return Err(SeatError::Driver(format!("seat `{}` is not an MCP seat", seat.column_id)));
    };
    let bounds = &seat.launch.limits;
    let limits = ProcessLimits {
        max_line_bytes: bounds.max_line_bytes,
        max_ignored_lines: bounds.max_ignored_lines,
        stderr_tail_bytes: bounds.stderr_tail_bytes,
        kill_grace: bounds.shutdown_grace,
        ..ProcessLimits::default()
    };
    let cli_transport = match mcp.transport {
        McpTransport::Http => Transport::Http,
        McpTransport::Stdio => Transport::Stdio,
    };
    let cli = LiveCli {
        vendor: mcp.vendor,
        transport: cli_transport,
        command: Some(seat.launch.command.clone()),
        args: seat.launch.args.clone(),
        env: seat.launch.env.clone(),
        limits,
        idle_timeout: mcp.idle_timeout,
    };
    let options = ServeOptions { token: mcp.token, relay: mcp.relay.clone(), workspace_root: None };
    let mut harness = LiveHarness::new(cli);
    let mut witness = None;
    if mcp.model == SeatModel::Scripted {
        let log = WitnessSink::default();
        harness = harness.with_scripted_model(ScriptedModel { play: seat_script.play(), witness: Arc::clone(&log) });
        witness = Some(log);
    }
    let name = std::path::Path::new(&seat.launch.command)
        .file_name()
        .map_or_else(|| seat.launch.command.clone(), |name| name.to_string_lossy().into_owned());
    let recipe_digest = recipe_digest(SeatRecipe {
        vendor: mcp.vendor,
        transport: cli_transport,
        scripted_model: mcp.model == SeatModel::Scripted,
        args: &seat.launch.args,
    })
    .ok();
    let runtime = McpHarnessRuntime::new(mcp.vendor, Rc::new(harness), mcp_call_ids(seat_script))
        .with_serve_options(options)
        .with_cli(CliIdentity { name, version: mcp.cli_version.clone(), recipe_digest });
    let runtime = match mcp.model {
        SeatModel::Scripted => {
            runtime.with_model(DeclaredModel { id: SCRIPTED_MODEL.into(), provider: Some(TRANSCRIPT_PROVIDER.into()) })
        }
        SeatModel::Vendor => runtime,
    };
    Ok((Rc::new(runtime), witness))
}

/// The SharedOS ids of an MCP seat's calls: those the other columns derive,
/// so the records of both compare, and a numbered one for any other call.
fn mcp_call_ids(seat_script: &SeatScript) -> CallIdMinter {
    let derived = seat_script.call_ids();
    let (prefix, minted) = (format!("{}.mcp-call", seat_script.execution_id), std::cell::Cell::new(0_u64));
    Rc::new(move |tool, arguments| {
        derived(tool, arguments).unwrap_or_else(|| {
            minted.set(minted.get() + 1);
            format!("{prefix}-{}", minted.get())
        })
    })
}

/// The model column's identity: the standard loop with a scripted model.
fn model_column_manifest() -> RuntimeManifest {
    let mut manifest = model_manifest();
    if let Some(metadata) = &mut manifest.metadata {
        metadata.insert("modelProvider".into(), json!(TRANSCRIPT_PROVIDER));
    }
    manifest
}

/// One reply per call (wire name, arguments as JSON text, held until the
/// call's instant), then the ending: the escalation ask and a `done`, a
/// final `done` (held past any deadline for a stall), a reply cut short by its token
/// budget (the model's failed turn), or nothing at all (a hang-up: the next
/// model call finds the conversation spent).
fn model_replies(seat_script: &SeatScript) -> Result<Vec<TimedReply>, SeatError> {
    let ask = match &seat_script.ending {
        SeatEnding::Escalate(ask) => Some(ask),
        _ => None,
    };
    let mut replies = Vec::new();
    for call in seat_script.calls.iter().chain(ask) {
        if call.tool.contains('_') {
            return Err(SeatError::UnderscoreInToolName { tool: call.tool.clone() });
        }
        let reply = ModelReply {
            model: Some(TRANSCRIPT_MODEL.to_string()),
            content: String::new(),
            tool_calls: vec![ModelToolCall {
                id: call.call_id.clone(),
                name: call.tool.replace('.', "_"),
                arguments: Value::Object(call.arguments.clone()).to_string(),
            }],
            finish_reason: Some("tool_calls".to_string()),
            usage: None,
        };
        replies.push(TimedReply { at_ms: call.at_ms, reply });
    }
    let (done_at, finish) = match &seat_script.ending {
        SeatEnding::Complete { at_ms } => (*at_ms, FINISH_STOP),
        SeatEnding::Stall => (Some(NEVER_MS), FINISH_STOP),
        SeatEnding::Escalate(_) => (None, FINISH_STOP),
        SeatEnding::ReportFailure => (None, FINISH_LENGTH),
        SeatEnding::HangUp => return Ok(replies),
    };
    let done = ModelReply {
        model: Some(TRANSCRIPT_MODEL.to_string()),
        content: "done".to_string(),
        tool_calls: Vec::new(),
        finish_reason: Some(finish.to_string()),
        usage: None,
    };
    replies.push(TimedReply { at_ms: done_at, reply: done });
    Ok(replies)
}
