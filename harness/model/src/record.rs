//! The execution record: one comparable artefact per turn.
//!
//! A record is assembled from what the envelope returned and what the kernel
//! audited; it never re-decides an authorization outcome. It holds references
//! and outcomes only — never tool arguments, results or message payloads
//! (the runtime's own answer under `execution.output` excepted).
//!
//! Every object is strict (unknown keys are refused); bounds that serde cannot
//! express are checked by [`ExecutionRecord::issues`], which lists every
//! problem at once so a completeness check can report each as a gap.
//!
//! Fields are declared in canonical (RFC 8785) key order, so hashing a
//! record writes each object as it comes, without reordering its members
//! (`tests/field_order.rs` keeps it so).

use crate::address::Address;
use crate::audit::Source;
use crate::canonical::is_content_hash;
use crate::capability::ResourceRef;
use crate::execution::{Escalation, ExecutionEvent, ExecutionStatus, RuntimeManifest};
use crate::instant::is_timestamp;
use crate::message::PROTOCOL_VERSION;
use crate::validate::{child, index, Validate, ValidationError};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::sync::Arc;

/// The record schema version.
pub const RECORD_VERSION: &str = "1";
/// Most authority snapshots a record may hold.
pub const MAX_SNAPSHOTS: usize = 256;
/// Most exposed (or requested) tool names a record may hold.
pub const MAX_TOOLS: usize = 512;
/// Most decisions a record may hold.
pub const MAX_DECISIONS: usize = 4096;
/// Most operations a record may hold.
pub const MAX_OPERATIONS: usize = 4096;
/// Most envelope events a record may hold.
pub const MAX_EVENTS: usize = 8192;

/// One turn's execution record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExecutionRecord {
    /// Whose authority the turn exercised, and the snapshots it saw.
    pub authority: AuthorityRecord,
    /// Counts and timings.
    pub cost: CostRecord,
    /// What happened.
    pub execution: ExecutionSection,
    /// Which experiment this turn belongs to.
    pub experiment: ExperimentIdentity,
    /// When the record was taken (a virtual instant).
    pub recorded_at: String,
    /// State references; SharedOS never captures state itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<StateRecord>,
    /// What ran the turn.
    pub system: SystemIdentity,
    /// Schema version ([`RECORD_VERSION`]).
    pub version: String,
}

/// Either spelling a seed may take.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Seed {
    /// A textual seed.
    Text(String),
    /// A numeric seed.
    Number(i64),
}

/// The experiment a record belongs to, and the hashes that make two records
/// comparable.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExperimentIdentity {
    /// Hash of the grading rules.
    pub evaluator_hash: String,
    /// The experiment (e.g. `kernel-conformance`).
    pub experiment_id: String,
    /// Free-form metadata: carried as given, never interpreted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
    /// The run (condition and column, plus the turn of a multi-turn move).
    pub run_id: String,
    /// Seed, when the experiment has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<Seed>,
    /// Hash of the question asked.
    pub spec_hash: String,
    /// The task (the case id).
    pub task_id: String,
    /// Hash of the world it was asked in.
    pub world_hash: String,
}

/// The software that ran the turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SystemIdentity {
    /// The adapter (the column id).
    pub adapter_id: String,
    /// The adapter's version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adapter_version: Option<String>,
    /// Hash of the model-facing catalogue, when one crossed a published boundary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub catalog_hash: Option<String>,
    /// Free-form metadata: carried as given, never interpreted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
    /// The model, when one was in the seat.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The model's provider.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_provider: Option<String>,
    /// Hash of the tool policy (enabled namespaces and tools).
    pub policy_hash: String,
    /// Hash of the instructions and prompt the runtime stated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_hash: Option<String>,
    /// Protocol epoch (`"1"`).
    pub protocol_version: String,
    /// The runtime in the seat.
    pub runtime: RuntimeManifest,
    /// Version of the kernel and envelope under test.
    pub shared_os_version: String,
    /// Number of tools exposed, alongside `catalogHash`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_count: Option<u64>,
    /// The declared tool surface (e.g. whether a shell was also available).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_policy: Option<Map<String, Value>>,
}

/// The principals of the turn and the authority snapshots it decided against.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AuthorityRecord {
    /// Who acted.
    pub actor: Address,
    /// The world.
    pub namespace_id: String,
    /// Whose resources.
    pub owner: Address,
    /// Whose issued grants were exercised (the context's authority).
    pub principal: Address,
    /// The purpose (1..=512 characters).
    pub purpose: String,
    /// Distinct snapshots, in first-seen order.
    pub snapshots: Vec<AuthoritySnapshot>,
    /// The snapshot hash, present only when exactly one snapshot was seen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stable_authority_hash: Option<String>,
}

/// One distinct authority state the turn was decided against.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AuthoritySnapshot {
    /// First time it was resolved.
    pub first_seen_at: String,
    /// How many grants it held.
    pub grant_count: u64,
    /// The grants it held.
    pub grant_ids: Vec<String>,
    /// The snapshot hash.
    pub hash: String,
    /// Last time it was resolved.
    pub last_seen_at: String,
    /// How often it was resolved (at least 1).
    pub observations: u64,
}

/// Who ended a failed turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EndedBy {
    /// The envelope refused the outcome, the runtime threw, or an outage ended it.
    Envelope,
    /// The runtime reported its own failure.
    Runtime,
}

impl EndedBy {
    /// The wire spelling.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            EndedBy::Envelope => "envelope",
            EndedBy::Runtime => "runtime",
        }
    }

    /// Parses the wire spelling.
    #[must_use]
    pub fn parse(text: &str) -> Option<EndedBy> {
        match text {
            "envelope" => Some(EndedBy::Envelope),
            "runtime" => Some(EndedBy::Runtime),
            _ => None,
        }
    }
}

/// A runtime's own claim that it asked for a human (stated through `annotate`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EscalationAsked {
    // Out of key order: the manifest prints it as declared, tool first.
    /// The affordance it recognised (e.g. `sharedos.escalate`).
    pub tool: String,
    /// Why it asked.
    pub reason: String,
}

/// What happened in the turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExecutionSection {
    /// The executing agent.
    pub agent: Address,
    /// Where the full audit trail lives.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audit_ref: Option<AuditRef>,
    /// Every authorization decision.
    pub decisions: Vec<Decision>,
    /// Who ended a failed turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_by: Option<EndedBy>,
    /// The recorded escalation on `escalated`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub escalation: Option<Escalation>,
    /// The runtime's claim that it asked for a human.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub escalation_asked: Option<EscalationAsked>,
    /// Every envelope event, in order; shared with the turn's result.
    pub events: Arc<[ExecutionEvent]>,
    /// The turn's execution id.
    pub execution_id: String,
    /// The catalogue the runtime was shown.
    pub exposed_tools: Vec<String>,
    /// Every operation outcome, in time order.
    pub operations: Vec<Operation>,
    /// The runtime's answer on `succeeded` (`null` when it answered `null`).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "crate::execution::present_value")]
    pub output: Option<Value>,
    /// The tools the host asked for.
    pub requested_tools: Vec<String>,
    /// How it ended.
    pub status: ExecutionStatus,
    /// The ending's reason code, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminal_reason_code: Option<String>,
    /// The turn's trace.
    pub trace_id: String,
}

/// A decision's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DecisionOutcome {
    /// A grant covered the requirement.
    Allowed,
    /// Refused.
    Denied,
}

/// One authorization decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Decision {
    /// The action decided on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    /// The operation instant.
    pub at: String,
    /// The snapshot decided against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authority_hash: Option<String>,
    /// True when a fact could not be established rather than policy decided;
    /// such denials must stay out of denial rates.
    pub fail_closed: bool,
    /// Matched or overridden grant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant_id: Option<String>,
    /// The call the decision was about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operation_id: Option<String>,
    /// Allowed or denied.
    pub outcome: DecisionOutcome,
    /// The code (`allowed` on allow).
    pub reason_code: String,
    /// The resource decided on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<ResourceRef>,
}

/// What an operation was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OperationKind {
    /// A tool call.
    Tool,
    /// A direct resource operation.
    Resource,
    /// A message handed to the transport.
    Message,
}

/// How an operation ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OperationOutcome {
    /// Ran and answered.
    Succeeded,
    /// Refused; nothing ran.
    Denied,
    /// Broke (or was aborted inside a port).
    Failed,
}

impl OperationOutcome {
    /// The wire spelling.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            OperationOutcome::Succeeded => "succeeded",
            OperationOutcome::Denied => "denied",
            OperationOutcome::Failed => "failed",
        }
    }
}

/// One operation outcome. Never arguments, results or payloads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Operation {
    /// The action.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    /// When it ended.
    pub at: String,
    /// The specific situation behind a shared code (e.g. `not_offered`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<String>,
    /// True for infrastructure refusals.
    pub fail_closed: bool,
    /// The grant exercised.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant_id: Option<String>,
    /// Tool, resource or message.
    pub kind: OperationKind,
    /// The call id (or message id).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operation_id: Option<String>,
    /// How it ended.
    pub outcome: OperationOutcome,
    /// The code the caller was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason_code: Option<String>,
    /// The resource.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<ResourceRef>,
    /// Which boundary answered.
    pub source: Source,
    /// Tool name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
}

/// Where the audit trail of the turn is kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AuditRef {
    /// How many audit events the turn wrote.
    pub event_count: u64,
    /// The sink's name.
    pub sink: String,
    /// The trace the trail is filed under.
    pub trace_id: String,
}

/// References to state before and after the turn.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StateRecord {
    /// State after the turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<StateReference>,
    /// State before the turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<StateReference>,
    /// The difference between them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff_ref: Option<DiffRef>,
}

/// A reference to a captured state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StateReference {
    /// When it was taken.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub captured_at: Option<String>,
    /// Its content hash.
    pub hash: String,
    /// The snapshot.
    pub snapshot_id: String,
}

/// A reference to a state difference.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DiffRef {
    /// The diff.
    pub diff_id: String,
    /// Its content hash.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hash: Option<String>,
}

/// Counts and (virtual) timings of the turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CostRecord {
    /// Audit events written under the turn's trace.
    pub audit_events: u64,
    /// Authority loads (`authority.resolved` audit events).
    pub authority_loads: u64,
    /// Envelope clock at the end.
    pub completed_at: String,
    /// Difference of the two, in milliseconds.
    pub elapsed_ms: u64,
    /// Time spent in infrastructure, when measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub infrastructure_ms: Option<u64>,
    /// Model input tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u64>,
    /// Free-form metadata: carried as given, never interpreted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
    /// Model output tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    /// Envelope clock at the start.
    pub started_at: String,
    /// Calls the runtime asked for (`tool.requested` events).
    pub tool_calls: u64,
}

impl ExecutionRecord {
    /// Every bound the record breaks, each at its JSON pointer.
    #[must_use]
    pub fn issues(&self) -> Vec<ValidationError> {
        let mut issues = Issues::default();
        if self.version != RECORD_VERSION {
            issues.push("/version", format!("the record version \"{RECORD_VERSION}\""));
        }
        issues.timestamp(&self.recorded_at, "/recordedAt");
        experiment_issues(&self.experiment, &mut issues);
        system_issues(&self.system, &mut issues);
        authority_issues(&self.authority, &mut issues);
        execution_issues(&self.execution, &mut issues);
        if let Some(state) = &self.state {
            state_issues(state, &mut issues);
        }
        issues.timestamp(&self.cost.started_at, "/cost/startedAt");
        issues.timestamp(&self.cost.completed_at, "/cost/completedAt");
        issues.0
    }
}

impl Validate for ExecutionRecord {
    fn validate_at(&self, pointer: &str) -> Result<(), ValidationError> {
        match self.issues().into_iter().next() {
            Some(issue) => Err(ValidationError::new(&format!("{pointer}{}", issue.pointer), issue.expected)),
            None => Ok(()),
        }
    }
}

/// Collects issues instead of stopping at the first.
#[derive(Default)]
struct Issues(Vec<ValidationError>);

/// Where a checked value sits: its pointer is written out only when the
/// value has an issue, since almost every record has none.
#[derive(Clone, Copy)]
enum At<'a> {
    /// A pointer as written.
    Path(&'a str),
    /// `/{array}/{index}/{key}`: a member of an array element.
    Element(&'static str, usize, &'static str),
}

impl<'a> From<&'a str> for At<'a> {
    fn from(path: &'a str) -> At<'a> {
        At::Path(path)
    }
}

impl At<'_> {
    fn pointer(self) -> String {
        match self {
            At::Path(path) => path.to_string(),
            At::Element(array, i, key) => child(&index(array, i), key),
        }
    }
}

impl Issues {
    fn push(&mut self, pointer: &str, expected: impl Into<String>) {
        self.0.push(ValidationError::new(pointer, expected));
    }

    fn push_at(&mut self, at: At<'_>, expected: impl Into<String>) {
        self.0.push(ValidationError { pointer: at.pointer(), expected: expected.into() });
    }

    fn hash<'a>(&mut self, text: &str, at: impl Into<At<'a>>) {
        if !is_content_hash(text) {
            self.push_at(at.into(), "a content hash (64 lowercase hex characters)");
        }
    }

    fn timestamp<'a>(&mut self, text: &str, at: impl Into<At<'a>>) {
        if !is_timestamp(text) {
            self.push_at(at.into(), "an RFC 3339 timestamp with an offset");
        }
    }

    fn identifier<'a>(&mut self, text: &str, at: impl Into<At<'a>>) {
        if let Err(e) = crate::validate::identifier(text, "") {
            self.push_at(at.into(), e.expected);
        }
    }

    fn at_most(&mut self, len: usize, max: usize, pointer: &str) {
        if len > max {
            self.push(pointer, format!("at most {max} entries"));
        }
    }
}

fn experiment_issues(experiment: &ExperimentIdentity, issues: &mut Issues) {
    issues.identifier(&experiment.experiment_id, "/experiment/experimentId");
    issues.identifier(&experiment.task_id, "/experiment/taskId");
    issues.identifier(&experiment.run_id, "/experiment/runId");
    issues.hash(&experiment.spec_hash, "/experiment/specHash");
    issues.hash(&experiment.world_hash, "/experiment/worldHash");
    issues.hash(&experiment.evaluator_hash, "/experiment/evaluatorHash");
}

fn system_issues(system: &SystemIdentity, issues: &mut Issues) {
    if system.protocol_version != PROTOCOL_VERSION {
        issues.push("/system/protocolVersion", format!("the protocol version \"{PROTOCOL_VERSION}\""));
    }
    issues.identifier(&system.shared_os_version, "/system/sharedOsVersion");
    if let Err(e) = system.runtime.validate_at("/system/runtime") {
        issues.0.push(e);
    }
    issues.identifier(&system.adapter_id, "/system/adapterId");
    issues.hash(&system.policy_hash, "/system/policyHash");
    if let Some(hash) = &system.catalog_hash {
        issues.hash(hash, "/system/catalogHash");
    }
    if let Some(hash) = &system.prompt_hash {
        issues.hash(hash, "/system/promptHash");
    }
}

fn authority_issues(authority: &AuthorityRecord, issues: &mut Issues) {
    issues.identifier(&authority.namespace_id, "/authority/namespaceId");
    if let Err(e) = crate::validate::bounded_text(&authority.purpose, 512, "/authority/purpose") {
        issues.0.push(e);
    }
    issues.at_most(authority.snapshots.len(), MAX_SNAPSHOTS, "/authority/snapshots");
    for (i, snapshot) in authority.snapshots.iter().enumerate() {
        let at = |key| At::Element("/authority/snapshots", i, key);
        issues.hash(&snapshot.hash, at("hash"));
        issues.timestamp(&snapshot.first_seen_at, at("firstSeenAt"));
        issues.timestamp(&snapshot.last_seen_at, at("lastSeenAt"));
        if snapshot.observations == 0 {
            issues.push_at(at("observations"), "at least one observation");
        }
    }
    match (&authority.stable_authority_hash, authority.snapshots.as_slice()) {
        (None, _) => {}
        (Some(hash), [only]) if *hash == only.hash => {}
        (Some(_), _) => issues.push("/authority/stableAuthorityHash", "the hash of the one and only snapshot"),
    }
}

fn execution_issues(execution: &ExecutionSection, issues: &mut Issues) {
    issues.identifier(&execution.execution_id, "/execution/executionId");
    issues.identifier(&execution.trace_id, "/execution/traceId");
    issues.at_most(execution.exposed_tools.len(), MAX_TOOLS, "/execution/exposedTools");
    issues.at_most(execution.requested_tools.len(), MAX_TOOLS, "/execution/requestedTools");
    issues.at_most(execution.decisions.len(), MAX_DECISIONS, "/execution/decisions");
    issues.at_most(execution.operations.len(), MAX_OPERATIONS, "/execution/operations");
    issues.at_most(execution.events.len(), MAX_EVENTS, "/execution/events");
    for (i, decision) in execution.decisions.iter().enumerate() {
        let at = |key| At::Element("/execution/decisions", i, key);
        issues.timestamp(&decision.at, at("at"));
        issues.identifier(&decision.reason_code, at("reasonCode"));
        if let Some(hash) = &decision.authority_hash {
            issues.hash(hash, at("authorityHash"));
        }
    }
    for (i, operation) in execution.operations.iter().enumerate() {
        issues.timestamp(&operation.at, At::Element("/execution/operations", i, "at"));
    }
    if let Some(asked) = &execution.escalation_asked {
        issues.identifier(&asked.tool, "/execution/escalationAsked/tool");
        if let Err(e) = crate::validate::bounded_text(&asked.reason, 512, "/execution/escalationAsked/reason") {
            issues.0.push(e);
        }
    }
    if execution.ended_by.is_some() && execution.status != ExecutionStatus::Failed {
        issues.push("/execution/endedBy", "no endedBy on a turn that did not fail");
    }
}

fn state_issues(state: &StateRecord, issues: &mut Issues) {
    for (reference, at) in [(&state.before, "/state/before"), (&state.after, "/state/after")] {
        if let Some(reference) = reference {
            issues.identifier(&reference.snapshot_id, child(at, "snapshotId").as_str());
            issues.hash(&reference.hash, child(at, "hash").as_str());
            if let Some(captured) = &reference.captured_at {
                issues.timestamp(captured, child(at, "capturedAt").as_str());
            }
        }
    }
    if let Some(diff) = &state.diff_ref {
        issues.identifier(&diff.diff_id, "/state/diffRef/diffId");
        if let Some(hash) = &diff.hash {
            issues.hash(hash, "/state/diffRef/hash");
        }
    }
}
