//! Attack scripts: what a scripted runtime attempts during a row, and what
//! SharedOS must answer to each attempt (a SharedOS "move").

use crate::known_tools::is_known_tool;
use crate::loader::{LoadError, Site};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sharedos_model::capability::Capability;
use sharedos_model::tool::ToolStatus;
use sharedos_model::validate::Validate;

/// Most attempts one script declares.
pub const MAX_ATTEMPTS: usize = 32;
/// Highest turn an attempt may belong to.
pub const MAX_TURN: u32 = 8;
/// Longest prose or reason text.
pub const MAX_TEXT: usize = 512;

macro_rules! move_kinds {
    ($($(#[doc = $doc:literal])* $variant:ident => $text:literal,)*) => {
        /// What a row is about; one per canonical script.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        pub enum MoveKind {
            $($(#[doc = $doc])* #[serde(rename = $text)] $variant,)*
        }

        impl MoveKind {
            /// Every kind, in the matrix's row order.
            pub const ALL: &'static [MoveKind] = &[$(MoveKind::$variant,)*];

            /// The wire spelling.
            #[must_use]
            pub fn as_str(self) -> &'static str {
                match self { $(MoveKind::$variant => $text,)* }
            }
        }
    };
}

move_kinds! {
    /// A grant-shaped object inside arguments or a message mints nothing.
    ForgedGrant => "forged_grant",
    /// A tool the turn was not offered cannot be found or called.
    HiddenTool => "hidden_tool",
    /// A host ceiling overrides a grant.
    HostPolicyDenied => "host_policy_denied",
    /// Read authority does not cover a mutation.
    ReadToMutation => "read_to_mutation",
    /// An expired grant allows nothing.
    ExpiredGrant => "expired_grant",
    /// A revoked grant, or one under a revoked ancestor, allows nothing.
    ReplayedGrant => "replayed_grant",
    /// A revocation during a turn takes effect on the next turn.
    RevokedMidTurn => "revoked_mid_turn",
    /// Expiry during a turn takes effect on the next call.
    ExpiredMidTurn => "expired_mid_turn",
    /// A call cannot cross a namespace or owner boundary.
    NamespaceCrossing => "namespace_crossing",
    /// A bounded grant stops at its last use.
    BoundedGrantExhausted => "bounded_grant_exhausted",
    /// A failing usage store fails closed.
    UsageStoreUnavailable => "usage_store_unavailable",
    /// A failing authority store fails closed.
    AuthorityUnavailable => "authority_unavailable",
    /// A failing audit sink ends the turn before the next effect.
    AuditUnavailable => "audit_unavailable",
    /// A tool resolving a requirement outside its ceiling is rejected.
    ToolCeilingEscape => "tool_ceiling_escape",
    /// A malformed or mismatched tool result is rejected.
    InvalidToolResult => "invalid_tool_result",
    /// Tool-call and step budgets hold.
    BudgetExceeded => "budget_exceeded",
    /// A draining turn takes no new call.
    TurnDraining => "turn_draining",
    /// No runtime-visible surface carries grant material.
    GrantMaterialUnreachable => "grant_material_unreachable",
    /// A derived grant cannot exceed its parent.
    OverBroadDelegation => "over_broad_delegation",
    /// Rollback without a rollback grant is undiscoverable.
    RollbackUnavailable => "rollback_unavailable",
    /// Rollback is confined to the rollback grant's scope.
    RollbackOutOfScope => "rollback_out_of_scope",
    /// A brokered tool the grant store does not admit is undiscoverable.
    BrokerUngranted => "broker_ungranted",
    /// A brokered tool is confined to its grant's scope.
    BrokerOutOfScope => "broker_out_of_scope",
    /// A turn answers from the catalogue it published.
    CatalogueMovedMidTurn => "catalogue_moved_mid_turn",
    /// An escalation is recorded and audited.
    EscalationRecorded => "escalation_recorded",
    /// An escalation the turn was not granted is refused.
    EscalationRefused => "escalation_refused",
    /// A runtime that throws leaves a failed turn with its record.
    RuntimeCrashed => "runtime_crashed",
    /// A send whose route lease was revoked is not delivered.
    RouteLeaseRevoked => "route_lease_revoked",
    /// Allowed and refused operations leave a complete record.
    RecordCompleteness => "record_completeness",
    /// A typed view narrows disclosure (declared, not implemented).
    TypedGovernedViews => "typed_governed_views",
    /// A replayed call is refused as stale (declared, not implemented).
    ReplayFreshness => "replay_freshness",
}

impl std::fmt::Display for MoveKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What an attempt is for in grading.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The adversarial attempt the row is about.
    Attack,
    /// Graded like an attack; used when the row's point is an attempt that
    /// must succeed without granting anything.
    Probe,
    /// Proves the turn could act at all.
    Control,
}

/// A runtime surface walked instead of calling a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Inspection {
    /// Look for grant material on the turn request and the host.
    GrantMaterial,
}

/// How a script's last turn ends, besides its attempts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TerminalKind {
    /// End the turn asking a human.
    Escalate,
    /// Throw out of the turn.
    Crash,
}

/// The script's ending.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Terminal {
    /// Escalate or crash.
    #[serde(rename = "type")]
    pub kind: TerminalKind,
    /// The escalation reason or the crash message.
    pub reason: String,
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

/// What SharedOS must answer to an attempt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Expectation {
    /// Acceptable statuses (1..=3, distinct).
    pub statuses: Vec<ToolStatus>,
    /// Acceptable reason codes for a non-success (1..=8); absent accepts any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason_codes: Option<Vec<String>>,
}

impl Expectation {
    /// True when an observed answer meets the expectation: its status is
    /// listed and, unless it succeeded or no codes are listed, its reason
    /// code is present and listed.
    #[must_use]
    pub fn accepts(&self, status: ToolStatus, reason_code: Option<&str>) -> bool {
        if !self.statuses.contains(&status) {
            return false;
        }
        match (&self.reason_codes, status) {
            (None, _) | (_, ToolStatus::Succeeded) => true,
            (Some(codes), _) => reason_code.is_some_and(|c| codes.iter().any(|k| k == c)),
        }
    }
}

/// One thing a script attempts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Attempt {
    /// Unique within the script; part of the derived call id.
    pub id: String,
    /// Attack, probe or control.
    pub role: Role,
    /// Prose (not hashed).
    pub description: String,
    /// The tool to call (absent only for an inspection).
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
    /// The turn (1-based) this attempt belongs to.
    #[serde(default = "first_turn")]
    pub turn: u32,
    /// Issue it even though the runtime knows its budget is spent.
    #[serde(default)]
    pub over_budget: bool,
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
            site.child("terminal").child("reason").text(&terminal.reason, MAX_TEXT)?;
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
        }
        Ok(())
    }
}

impl Attempt {
    fn check(&self, site: &Site<'_>) -> Result<(), LoadError> {
        site.child("id").id(&self.id)?;
        site.child("description").text(&self.description, MAX_TEXT)?;
        match (&self.tool, &self.inspect) {
            (Some(tool), None) if !is_known_tool(tool) => return Err(site.child("tool").unknown_tool(tool)),
            (Some(_), None) | (None, Some(_)) => {}
            (None, None) => return Err(site.invalid_attempt("an attempt naming a `tool` or an `inspect` surface")),
            (Some(_), Some(_)) => {
                return Err(site.child("inspect").invalid_attempt("either a `tool` or an `inspect` surface, not both"))
            }
        }
        if let Some(forge) = &self.forge {
            self.check_forge(forge, &site.child("forge"))?;
        }
        if !(1..=MAX_TURN).contains(&self.turn) {
            return Err(site.child("turn").out_of_bounds(format!("an integer from 1 to {MAX_TURN}")));
        }
        self.expect.check(&site.child("expect"))?;
        if let Some(text) = &self.unreachable {
            site.child("unreachable").text(text, MAX_TEXT)?;
        }
        if let Some(text) = &self.uncatalogued {
            site.child("uncatalogued").text(text, MAX_TEXT)?;
        }
        Ok(())
    }

    fn check_forge(&self, forge: &Forge, site: &Site<'_>) -> Result<(), LoadError> {
        if self.tool.is_none() {
            return Err(site.invalid_attempt("a forgery only on an attempt that calls a tool"));
        }
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

/// `site` extended by a relative JSON pointer from the model's validators.
fn at_pointer<'a>(site: &Site<'a>, pointer: &str) -> Site<'a> {
    pointer
        .split('/')
        .skip(1)
        .map(|s| s.replace("~1", "/").replace("~0", "~"))
        .fold(site.clone(), |at, segment| at.child(&segment))
}

impl Expectation {
    fn check(&self, site: &Site<'_>) -> Result<(), LoadError> {
        let statuses = site.child("statuses");
        statuses.length(self.statuses.len(), 1, 3, "statuses")?;
        for (i, status) in self.statuses.iter().enumerate() {
            if self.statuses[..i].contains(status) {
                return Err(statuses
                    .index(i)
                    .duplicate_entry(format!("a status not listed before (`{}` repeats)", status.as_str())));
            }
        }
        if let Some(codes) = &self.reason_codes {
            let at = site.child("reasonCodes");
            at.length(codes.len(), 1, 8, "reason codes")?;
            for (i, code) in codes.iter().enumerate() {
                at.index(i).reason_code(code)?;
                if codes[..i].contains(code) {
                    return Err(at
                        .index(i)
                        .duplicate_entry(format!("a reason code not listed before (`{code}` repeats)")));
                }
            }
        }
        Ok(())
    }
}
