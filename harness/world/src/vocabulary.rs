//! The closed vocabularies the conformance world answers to: the tool names an
//! attempt may call and the grant ids a world option may arm.
//!
//! A script naming a tool outside this list would only ever be refused
//! `tool_unavailable`, which would look like a passing "hidden tool" row while
//! testing nothing, so the loader refuses it instead. The same goes for a
//! world option revoking a grant the world never issues. Both lists are read
//! off the world's fixtures, so a new fixture cannot be forgotten here.

use crate::broker::NOTION_SEARCH;
use crate::file_store::FileAction;
use crate::file_tools::tool_name;
use crate::fixture_tools::{Fixture, ADMIN_GRANT_ISSUE};
use crate::grants::{grant_set, GrantOptions};
use crate::ledger_tools::LedgerTool;
use sharedos_kernel::message_tool::MESSAGES_REQUEST;
use sharedos_port::escalation::ESCALATION_TOOL;

/// Every tool name the conformance world registers, offers in its turn
/// request, or deliberately leaves unregistered, in registration order: the
/// twelve file tools, the misbehaving fixtures, the escalation affordance,
/// the kernel's request tool, the brokered tool, a control-plane name
/// that is listed in the request but never registered, and the ledger tools
/// a condition can attach.
#[must_use]
pub fn known_tools() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = FileAction::ALL.iter().map(|a| tool_name(*a)).collect();
    names.extend(Fixture::ALL.iter().map(|f| f.name()));
    names.extend([ESCALATION_TOOL, MESSAGES_REQUEST, NOTION_SEARCH, ADMIN_GRANT_ISSUE]);
    names.extend(LedgerTool::ALL.iter().map(|t| t.name()));
    names
}

/// True when the conformance world knows a tool of this name.
#[must_use]
pub fn is_known_tool(name: &str) -> bool {
    known_tools().contains(&name)
}

/// Every grant id some condition of the suite can issue, roots first, in
/// store order.
#[must_use]
pub fn known_grants() -> Vec<String> {
    let every_conditional_grant = GrantOptions {
        bounded: true,
        usage_store_unavailable: false,
        over_broad_delegation: true,
        restorable: true,
        broker_granted: true,
        escalation_withheld: false,
        ledger_accounts: true,
    };
    grant_set(&every_conditional_grant).all().into_iter().map(|g| g.id.clone()).collect()
}

/// True when some world of the suite can issue a grant with this id.
#[must_use]
pub fn is_known_grant(id: &str) -> bool {
    known_grants().iter().any(|g| g == id)
}
