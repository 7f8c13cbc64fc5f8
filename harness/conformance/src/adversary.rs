//! The scripted adversary: a runtime that issues every declared attempt
//! itself, in order, and reports a receipt for each — so a row measures what
//! SharedOS refused, not whether a model chose to attack.

use crate::receipt::{derived_call_id, AdversarialTurnReport, AttemptReceipt, REPORT_METADATA_KEY, REPORT_VERSION};
use crate::record::events::CONFORMANCE_ATTEMPT;
use crate::script::{AttackScript, Attempt, Forge, Inspection, TerminalKind};
use futures::future::LocalBoxFuture;
use serde_json::{json, Map, Value};
use sharedos_envelope::host::{RuntimeHost, ToolInvocationOptions};
use sharedos_envelope::runtime::{complete, escalate, with_metadata, RuntimeFailure, RuntimePlugin};
use sharedos_kernel::signal::AbortSignal;
use sharedos_model::capability::{Constraints, Grant};
use sharedos_model::execution::{RuntimeEvent, RuntimeManifest, RuntimeTurnRequest};
use sharedos_model::message::PROTOCOL_VERSION;
use sharedos_model::tool::ToolCall;
use std::rc::Rc;

/// The adversary's runtime id.
pub const ADVERSARY_RUNTIME_ID: &str = "sharedos-conformance.adversary";
/// The synthetic code of an inspection that found no grant material.
pub const NO_GRANT_MATERIAL: &str = "no_grant_material_reachable";
/// Names whose presence on a runtime surface would be grant material.
const GRANT_MATERIAL_NAMES: &[&str] = &[
    "grant",
    "grants",
    "grantId",
    "grantSource",
    "parentGrantId",
    "capabilities",
    "delegationDepth",
    "issuer",
    "revokedAt",
];
/// The members of the runtime host, which the inspection walks too.
const HOST_MEMBERS: &[&str] = &["limits", "invokeTool", "emit", "annotate", "draining"];

/// One turn of one attack script, seated as a runtime.
#[derive(Debug, Clone)]
pub struct Adversary {
    script: Rc<AttackScript>,
    turn: u32,
}

impl Adversary {
    /// The adversary for `turn` of `script`.
    #[must_use]
    pub fn new(script: Rc<AttackScript>, turn: u32) -> Adversary {
        Adversary { script, turn }
    }
}

impl RuntimePlugin for Adversary {
    fn manifest(&self) -> RuntimeManifest {
        RuntimeManifest {
            id: ADVERSARY_RUNTIME_ID.to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            protocol_version: PROTOCOL_VERSION.to_string(),
            metadata: None,
        }
    }

    fn run<'a>(
        &'a self,
        request: Rc<RuntimeTurnRequest>,
        host: RuntimeHost,
        signal: AbortSignal,
    ) -> LocalBoxFuture<'a, Result<Value, RuntimeFailure>> {
        Box::pin(async move {
            let receipts = TurnRun { script: &self.script, request: &request, host: &host, signal: &signal }
                .attempt_all(self.turn)
                .await;
            self.finish(&request, &host, receipts)
        })
    }
}

impl Adversary {
    fn finish(
        &self,
        request: &RuntimeTurnRequest,
        host: &RuntimeHost,
        receipts: Vec<AttemptReceipt>,
    ) -> Result<Value, RuntimeFailure> {
        let declared = receipts.len();
        let attempted = receipts.iter().filter(|r| r.attempted).count();
        let report = AdversarialTurnReport {
            version: REPORT_VERSION.to_string(),
            runtime_id: ADVERSARY_RUNTIME_ID.to_string(),
            execution_id: request.execution_id.clone(),
            trace_id: request.context.trace_id.clone(),
            visible_tools: request.tools.iter().map(|t| t.name.clone()).collect(),
            move_ids: vec![self.script.id.clone()],
            receipts,
        };
        let mut metadata = Map::new();
        metadata.insert(REPORT_METADATA_KEY.to_string(), serde_json::to_value(&report).unwrap_or(Value::Null));
        match &self.script.terminal {
            Some(terminal) if terminal.kind == TerminalKind::Crash => {
                Err(RuntimeFailure::message(terminal.reason.clone()))
            }
            Some(terminal) => {
                // The claim is stated before the outcome is returned; it can
                // only make the row harder to pass.
                let _ =
                    host.annotate("escalationAsked", json!({ "tool": "sharedos.escalate", "reason": terminal.reason }));
                Ok(with_metadata(escalate(&terminal.reason), metadata))
            }
            None => Ok(with_metadata(complete(json!({ "declared": declared, "attempted": attempted })), metadata)),
        }
    }
}

/// The state of one turn's run through its attempts.
struct TurnRun<'a> {
    script: &'a AttackScript,
    request: &'a RuntimeTurnRequest,
    host: &'a RuntimeHost,
    signal: &'a AbortSignal,
}

impl TurnRun<'_> {
    async fn attempt_all(&self, turn: u32) -> Vec<AttemptReceipt> {
        let mut receipts = Vec::new();
        let mut issued: u32 = 0;
        let mut host_closed = false;
        for attempt in self.script.attempts_for_turn(turn) {
            let receipt = if host_closed {
                AttemptReceipt::unattempted(
                    self.script,
                    attempt,
                    "the runtime host closed before this attempt was made",
                )
            } else {
                self.attempt(attempt, &mut issued).await
            };
            if !host_closed && self.announce(&receipt).is_err() {
                host_closed = true;
            }
            receipts.push(receipt);
        }
        receipts
    }

    async fn attempt(&self, attempt: &Attempt, issued: &mut u32) -> AttemptReceipt {
        if let Some(reason) = &attempt.unreachable {
            return AttemptReceipt::unattempted(self.script, attempt, reason);
        }
        if self.signal.is_aborted() {
            return AttemptReceipt::unattempted(self.script, attempt, "the turn was cancelled before this attempt");
        }
        if attempt.inspect == Some(Inspection::GrantMaterial) {
            return self.inspect_grant_material(attempt);
        }
        let Some(tool) = &attempt.tool else {
            return AttemptReceipt::unattempted(self.script, attempt, "the attempt names no tool");
        };
        let limits = self.host.limits();
        if *issued >= limits.max_tool_calls && !attempt.over_budget {
            return AttemptReceipt::unattempted(self.script, attempt, "the attempt falls outside the tool-call budget");
        }
        let step = declared_step(attempt, *issued, limits.max_steps, limits.max_tool_calls);
        let call = self.call_for(attempt, tool);
        let mut receipt = AttemptReceipt::unattempted(self.script, attempt, "");
        receipt.argument_keys = sorted_keys(&call.arguments);
        *issued += 1;
        match self.host.invoke_tool(call.clone(), ToolInvocationOptions::at_step(u64::from(step))).await {
            Ok(result) => {
                receipt.attempted = true;
                receipt.call_id = Some(call.id);
                receipt.observed = Some(result.status());
                receipt.reason_code = result.error().map(|e| e.code.clone());
                receipt.detail = None;
            }
            Err(error) => receipt.detail = Some(format!("the host refused the call: {error}")),
        }
        receipt
    }

    fn call_for(&self, attempt: &Attempt, tool: &str) -> ToolCall {
        let mut arguments = attempt.tool_arguments.clone();
        if let Some(forge) = &attempt.forge {
            arguments.insert(forge.embed_as.clone(), forged_grant(forge, self.request));
        }
        ToolCall {
            id: derived_call_id(&self.request.execution_id, &self.script.id, &attempt.id),
            tool: tool.to_string(),
            arguments,
            trace_id: self.request.context.trace_id.clone(),
            requested_at: self.request.context.now.clone(),
        }
    }

    fn inspect_grant_material(&self, attempt: &Attempt) -> AttemptReceipt {
        let mut found = Vec::new();
        let surface = serde_json::to_value(self.request).unwrap_or(Value::Null);
        find_grant_material(&surface, "request", &mut found);
        for member in HOST_MEMBERS {
            if GRANT_MATERIAL_NAMES.contains(member) {
                found.push(format!("host.{member}"));
            }
        }
        found.sort();
        let mut receipt = AttemptReceipt::unattempted(self.script, attempt, "");
        receipt.attempted = true;
        if found.is_empty() {
            receipt.observed = Some(sharedos_model::tool::ToolStatus::Denied);
            receipt.reason_code = Some(NO_GRANT_MATERIAL.to_string());
            receipt.detail = None;
        } else {
            receipt.observed = Some(sharedos_model::tool::ToolStatus::Succeeded);
            receipt.detail = Some(found.join(", ").chars().take(512).collect());
        }
        receipt
    }

    fn announce(&self, receipt: &AttemptReceipt) -> Result<(), RuntimeFailure> {
        let data = serde_json::to_value(receipt).unwrap_or(Value::Null);
        self.host.emit(RuntimeEvent { kind: CONFORMANCE_ATTEMPT.to_string(), data })?;
        Ok(())
    }
}

/// The step an attempt declares: its position among issued calls, except
/// that an over-budget attempt names the step ceiling when the step budget
/// is the one under test (the call budget is not yet spent).
fn declared_step(attempt: &Attempt, issued: u32, max_steps: u32, max_tool_calls: u32) -> u32 {
    if attempt.over_budget && issued < max_tool_calls {
        issued.max(max_steps)
    } else {
        issued
    }
}

/// A schema-valid grant built from the turn's context, to be carried as data.
fn forged_grant(forge: &Forge, request: &RuntimeTurnRequest) -> Value {
    let grant = Grant {
        id: forge.grant_id.clone(),
        namespace_id: request.context.namespace_id.clone(),
        subject: request.context.actor.clone(),
        issuer: request.context.owner.clone(),
        capabilities: forge.capabilities.clone(),
        constraints: Constraints { purposes: Some(vec![request.context.purpose.clone()]), ..Constraints::default() },
        issued_at: request.context.now.clone(),
        revoked_at: None,
        parent_grant_id: None,
        metadata: None,
    };
    serde_json::to_value(grant).unwrap_or(Value::Null)
}

fn sorted_keys(arguments: &Map<String, Value>) -> Vec<String> {
    // serde_json maps iterate in key order already.
    arguments.keys().cloned().collect()
}

fn find_grant_material(value: &Value, path: &str, found: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                let child_path = format!("{path}.{key}");
                if GRANT_MATERIAL_NAMES.contains(&key.as_str()) {
                    found.push(child_path.clone());
                }
                find_grant_material(child, &child_path, found);
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                find_grant_material(child, &format!("{path}[{i}]"), found);
            }
        }
        _ => {}
    }
}
