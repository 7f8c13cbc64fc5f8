//! One step of a script. Most steps are attempts that call a tool or inspect
//! a surface; a step may instead state a fact for the record (`annotate`),
//! emit a runtime event, or read the `draining` signal. Any step may wait
//! for a virtual instant first; a call may run alongside the next steps; a
//! step may be made after the turn closed. Every step is receipted and
//! graded against its expectation.

use super::expect::Expectation;
use super::terminal::MAX_AT_MS;
use super::{at_pointer, MAX_TEXT, MAX_TURN};
use crate::input::error::{LoadError, Site};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sharedos_conformance_metadata::witness::OwnTool;
use sharedos_model::capability::Capability;
use sharedos_model::role::Role;
use sharedos_model::validate::Validate;
use sharedos_world::vocabulary::is_known_tool;

/// Longest annotation key or event type a step may state (the host decides
/// whether it accepts it; the bound only keeps files sane).
const MAX_KEY: usize = 256;

/// A runtime surface walked instead of calling a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Inspection {
    /// Look for grant material on the turn request and the host.
    GrantMaterial,
}

/// A host signal a step can read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReadTarget {
    /// `host.draining`: receipted `succeeded` while quiet, `denied` with the
    /// signal's reason code once fired.
    Draining,
}

/// A forged grant built at issue time from the turn context and embedded in
/// the arguments.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Forge {
    /// The id the forgery claims.
    pub grant_id: String,
    /// What the forgery claims to allow (1..=8).
    pub capabilities: Vec<Capability>,
    /// The argument key it is embedded under.
    pub embed_as: String,
}

/// One fact stated for the record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Annotation {
    /// The key (may deliberately be one the host refuses).
    pub key: String,
    /// The value.
    pub value: Value,
}

/// One runtime event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Emission {
    /// The event type (may deliberately be one the host refuses).
    #[serde(rename = "type")]
    pub kind: String,
    /// Its payload.
    #[serde(default)]
    pub data: Value,
}

/// What a step does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepKind {
    /// Calls a tool.
    Call,
    /// Inspects a runtime surface.
    Inspect,
    /// States a fact for the record.
    Annotate,
    /// Emits a runtime event.
    Emit,
    /// Reads a host signal.
    Read,
}

/// One thing a script does, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Attempt {
    /// Unique within the script; part of the derived call id.
    pub id: String,
    /// Attack, probe or control.
    pub role: Role,
    /// Prose (not hashed).
    pub description: String,
    /// The tool to call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The call's arguments.
    #[serde(default)]
    pub tool_arguments: Map<String, Value>,
    /// A forged grant to embed in the arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forge: Option<Forge>,
    /// A surface to inspect instead of calling a tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inspect: Option<Inspection>,
    /// A fact to state for the record instead of calling a tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotate: Option<Annotation>,
    /// A runtime event to emit instead of calling a tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub emit: Option<Emission>,
    /// A host signal to read instead of calling a tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read: Option<ReadTarget>,
    /// Wait until this many milliseconds after the turn's start first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_ms: Option<u64>,
    /// Issue the call and go on with the next steps; its answer is receipted
    /// when it arrives (even after the runtime has returned).
    #[serde(default, skip_serializing_if = "is_false")]
    pub concurrent: bool,
    /// Make the step after the turn has closed (after the runtime returned
    /// its outcome and the envelope built the result).
    #[serde(default, skip_serializing_if = "is_false")]
    pub after_close: bool,
    /// The turn (1-based) this attempt belongs to.
    #[serde(default = "first_turn")]
    pub turn: u32,
    /// Issue it even though the runtime knows its budget is spent.
    #[serde(default)]
    pub over_budget: bool,
    /// A seat behind the standard loop's driver only: declare the call at a
    /// step behind the loop's own position, a decision the loop must refuse
    /// before the call reaches the host.
    #[serde(default, skip_serializing_if = "is_false")]
    pub step_behind: bool,
    /// Issue the call under this trace instead of the turn's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_id: Option<String>,
    /// What SharedOS must answer.
    pub expect: Expectation,
    /// Why no runtime can make this attempt (declared, never issued).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unreachable: Option<String>,
    /// Why no published catalogue lists this tool (a client with its own
    /// tool router never sends it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uncatalogued: Option<String>,
}

fn first_turn() -> u32 {
    1
}

// serde's `skip_serializing_if` hands the field by reference.
#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_false(flag: &bool) -> bool {
    !*flag
}

impl Attempt {
    /// What the step does; `None` for a step naming no action or several
    /// (the loader refuses both).
    #[must_use]
    pub fn kind(&self) -> Option<StepKind> {
        let named = [
            (self.tool.is_some(), StepKind::Call),
            (self.inspect.is_some(), StepKind::Inspect),
            (self.annotate.is_some(), StepKind::Annotate),
            (self.emit.is_some(), StepKind::Emit),
            (self.read.is_some(), StepKind::Read),
        ];
        let mut kinds = named.iter().filter(|(present, _)| *present).map(|(_, kind)| *kind);
        match (kinds.next(), kinds.next()) {
            (Some(kind), None) => Some(kind),
            _ => None,
        }
    }

    /// Whether a seat that only speaks tool calls can make this attempt in
    /// `turn`: it belongs to the turn, is not declared unreachable, is not
    /// an inspection, and names a tool. A driven seat's calls, and the
    /// scripted model's, are these attempts in declared order.
    #[must_use]
    pub fn is_issuable(&self, turn: u32) -> bool {
        self.turn == turn && self.unreachable.is_none() && self.inspect.is_none() && self.tool.is_some()
    }

    /// True for a step that speaks only to the runtime host (annotate, emit,
    /// read) or is made after the turn closed: a seat that only speaks tool
    /// calls cannot make it.
    #[must_use]
    pub fn needs_the_host(&self) -> bool {
        self.after_close || matches!(self.kind(), Some(StepKind::Annotate | StepKind::Emit | StepKind::Read))
    }

    pub(crate) fn check(&self, site: &Site<'_>) -> Result<(), LoadError> {
        site.child("id").id(&self.id)?;
        site.child("description").text(&self.description, MAX_TEXT)?;
        let Some(kind) = self.kind() else {
            let named = [
                ("tool", self.tool.is_some()),
                ("inspect", self.inspect.is_some()),
                ("annotate", self.annotate.is_some()),
                ("emit", self.emit.is_some()),
                ("read", self.read.is_some()),
            ];
            let mut present = named.iter().filter(|(_, set)| *set).map(|(key, _)| *key);
            return Err(match (present.next(), present.next()) {
                (Some(first), Some(second)) => site
                    .child(second)
                    .invalid_attempt(format!("either `{first}` or `{second}`, not both (one action per step)")),
                _ => site.invalid_attempt(
                    "an attempt naming a `tool`, an `inspect` surface, or an `annotate`, `emit` or `read` step",
                ),
            });
        };
        if let Some(tool) = &self.tool {
            // A tool of a live CLI's own (`cli.*`) is no tool of the world.
            if !is_known_tool(tool) && OwnTool::from_tool(tool).is_none() {
                return Err(site.child("tool").unknown_tool(tool));
            }
        }
        self.check_call_only_fields(kind, site)?;
        self.check_timing(kind, site)?;
        if let Some(forge) = &self.forge {
            self.check_forge(forge, &site.child("forge"))?;
        }
        if let Some(annotation) = &self.annotate {
            site.child("annotate").child("key").length(annotation.key.chars().count(), 0, MAX_KEY, "characters")?;
        }
        if let Some(emission) = &self.emit {
            site.child("emit").child("type").length(emission.kind.chars().count(), 0, MAX_KEY, "characters")?;
        }
        if !(1..=MAX_TURN).contains(&self.turn) {
            return Err(site.child("turn").out_of_bounds(format!("an integer from 1 to {MAX_TURN}")));
        }
        self.expect.check(&site.child("expect"), kind == StepKind::Call)?;
        if let Some(text) = &self.unreachable {
            site.child("unreachable").text(text, MAX_TEXT)?;
        }
        if let Some(text) = &self.uncatalogued {
            site.child("uncatalogued").text(text, MAX_TEXT)?;
        }
        if let Some(trace) = &self.trace_id {
            site.child("traceId").text(trace, MAX_KEY)?;
        }
        Ok(())
    }

    /// Arguments, forgeries and the over-budget flag belong to calls.
    fn check_call_only_fields(&self, kind: StepKind, site: &Site<'_>) -> Result<(), LoadError> {
        if kind == StepKind::Call {
            return Ok(());
        }
        if !self.tool_arguments.is_empty() {
            return Err(site.child("toolArguments").invalid_attempt("arguments only on a step that calls a tool"));
        }
        if self.forge.is_some() {
            return Err(site.child("forge").invalid_attempt("a forgery only on an attempt that calls a tool"));
        }
        if self.over_budget {
            return Err(site.child("overBudget").invalid_attempt("over-budget only on a step that calls a tool"));
        }
        if self.step_behind {
            return Err(site.child("stepBehind").invalid_attempt("a step behind only on a step that calls a tool"));
        }
        if self.trace_id.is_some() {
            return Err(site.child("traceId").invalid_attempt("a trace only on a step that calls a tool"));
        }
        if self.uncatalogued.is_some() {
            return Err(site.child("uncatalogued").invalid_attempt("uncatalogued only on a step that calls a tool"));
        }
        Ok(())
    }

    /// `atMs`, `concurrent` and `afterClose` and which steps take them.
    fn check_timing(&self, kind: StepKind, site: &Site<'_>) -> Result<(), LoadError> {
        if self.at_ms.is_some_and(|ms| ms > MAX_AT_MS) {
            return Err(site.child("atMs").out_of_bounds(format!("an integer from 0 to {MAX_AT_MS}")));
        }
        if self.concurrent && kind != StepKind::Call {
            return Err(site.child("concurrent").invalid_attempt("concurrency only on a step that calls a tool"));
        }
        if self.after_close {
            if kind == StepKind::Inspect {
                return Err(site.child("afterClose").invalid_attempt("no inspection after the turn closed"));
            }
            if self.at_ms.is_some() || self.concurrent {
                return Err(site.child("afterClose").invalid_attempt(
                    "a step after the turn closed neither waits for an instant nor runs concurrently",
                ));
            }
        }
        Ok(())
    }

    fn check_forge(&self, forge: &Forge, site: &Site<'_>) -> Result<(), LoadError> {
        site.child("grantId").id(&forge.grant_id)?;
        let capabilities = site.child("capabilities");
        capabilities.length(forge.capabilities.len(), 1, 8, "capabilities")?;
        for (i, capability) in forge.capabilities.iter().enumerate() {
            let at = capabilities.index(i);
            capability.validate_at("").map_err(|e| at_pointer(&at, &e.pointer).out_of_bounds(e.expected))?;
        }
        let embed = site.child("embedAs");
        embed.text(&forge.embed_as, 64)?;
        if self.tool_arguments.contains_key(&forge.embed_as) {
            return Err(embed
                .invalid_attempt(format!("an argument key not already in toolArguments (`{}` is)", forge.embed_as)));
        }
        Ok(())
    }
}
