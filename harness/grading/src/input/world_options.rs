//! Bounds of a condition's world options that serde's shape cannot state:
//! ranges, grant ids the world issues, pairs that cannot be armed together.
//! The option types are the world crate's ([`sharedos_world::options`]).

mod audit;
mod classify;
mod ledger;
mod messaging;

use crate::input::error::{LoadError, Site};
use sharedos_model::execution::{MAX_EXECUTION_TIMEOUT_MS, MAX_EXECUTION_TOOL_CALLS, MAX_STEPS};
use sharedos_model::instant::Instant;
use sharedos_world::options::WorldOptions;
use sharedos_world::vocabulary::is_known_grant;

/// Most grant ids one option may name.
const MAX_GRANT_IDS: usize = 32;
/// Largest count an outage or lease option may wait for.
const MAX_COUNT: u32 = 1000;
/// Highest turn a multi-turn option may name (matches an attempt's turn bound).
const MAX_TURN: u32 = 8;

/// Checks bounds and that every grant id names a grant the world issues.
pub(crate) fn check(options: &WorldOptions, site: &Site<'_>) -> Result<(), LoadError> {
    if let Some(ids) = &options.revoked {
        check_grant_ids(ids, &site.child("revoked"))?;
    }
    if let Some(ids) = &options.expired {
        check_grant_ids(ids, &site.child("expired"))?;
    }
    if let Some(option) = &options.revoked_after_turn {
        let at = site.child("revokedAfterTurn");
        check_range(u64::from(option.turn), 1, u64::from(MAX_TURN), &at.child("turn"))?;
        check_grant_ids(&option.grant_ids, &at.child("grantIds"))?;
    }
    if let Some(option) = &options.expires_after_operations {
        let at = site.child("expiresAfterOperations");
        check_range(u64::from(option.operations), 1, u64::from(MAX_COUNT), &at.child("operations"))?;
        check_grant_ids(&option.grant_ids, &at.child("grantIds"))?;
    }
    let counts = [
        ("authorityFailsAfterLoads", options.authority_fails_after_loads),
        ("auditFailsAfterOperations", options.audit_fails_after_operations),
        ("routeRevokedAfterDeliveries", options.route_revoked_after_deliveries),
    ];
    for (key, value) in counts {
        if let Some(n) = value {
            check_range(u64::from(n), 0, u64::from(MAX_COUNT), &site.child(key))?;
        }
    }
    if let Some(n) = options.max_tool_calls {
        check_range(u64::from(n), 1, u64::from(MAX_EXECUTION_TOOL_CALLS), &site.child("maxToolCalls"))?;
    }
    if let Some(n) = options.max_steps {
        check_range(u64::from(n), 1, u64::from(MAX_STEPS), &site.child("maxSteps"))?;
    }
    if let Some(n) = options.drain_grace_ms {
        check_range(n, 0, MAX_EXECUTION_TIMEOUT_MS, &site.child("drainGraceMs"))?;
    }
    check_envelope_world(options, site)?;
    if let Some(messaging) = &options.messaging {
        messaging::check(messaging, &site.child("messaging"))?;
    }
    if let Some(now) = &options.now {
        let in_range = Instant::parse(now).is_some_and(|at| (EARLIEST_NOW..=LATEST_NOW).contains(&at.0));
        if !in_range {
            return Err(site.child("now").out_of_bounds(
                "an RFC 3339 timestamp with an offset, from 1970-01-01T00:00:00Z to 9000-01-01T00:00:00Z \
                 (so every instant a turn derives from it, grant lifetimes and deadlines included, stays \
                 writable as RFC 3339)",
            ));
        }
    }
    Ok(())
}

/// The earliest `now` a world may state: 1970-01-01T00:00:00Z, in ms.
const EARLIEST_NOW: i64 = 0;
/// The latest: 9000-01-01T00:00:00Z, in ms, a millennium before RFC 3339's
/// four-digit years end.
const LATEST_NOW: i64 = 221_845_392_000_000;

/// Checks the deadline, host-signal, audit-write, ledger and request
/// options, including the pairs that cannot be armed together.
fn check_envelope_world(options: &WorldOptions, site: &Site<'_>) -> Result<(), LoadError> {
    if let Some(n) = options.timeout_ms {
        check_range(n, 1, MAX_EXECUTION_TIMEOUT_MS, &site.child("timeoutMs"))?;
    }
    if let Some(n) = options.host_cancels_at_ms {
        check_range(n, 0, MAX_EXECUTION_TIMEOUT_MS, &site.child("hostCancelsAtMs"))?;
        if options.host_signal_aborted {
            return Err(site
                .child("hostCancelsAtMs")
                .out_of_bounds("no cancellation instant when the host signal is already aborted"));
        }
    }
    if let Some(fault) = &options.audit_fails_at {
        audit::check(fault, &site.child("auditFailsAt"))?;
        if options.audit_fails_after_operations.is_some() {
            return Err(site
                .child("auditFailsAt")
                .out_of_bounds("one audit fault per world (auditFailsAfterOperations is also set)"));
        }
    }
    if let Some(ledger) = &options.ledger {
        ledger::check(ledger, &site.child("ledger"))?;
    }
    if let Some(list) = &options.request_classifies {
        classify::check(list, &site.child("requestClassifies"))?;
    }
    if let Some(names) = &options.handler_throws {
        check_throwing_handlers(names, &site.child("handlerThrows"))?;
    }
    Ok(())
}

/// File tools only (the others are not the world's to break), each once.
fn check_throwing_handlers(names: &[String], site: &Site<'_>) -> Result<(), LoadError> {
    site.length(names.len(), 1, 8, "tools")?;
    for (i, name) in names.iter().enumerate() {
        let at = site.index(i);
        if !sharedos_world::options::handler::is_file_tool(name) {
            return Err(at.unknown_value(format!("a file tool (`files.read`, ...), not `{name}`")));
        }
        if names[..i].contains(name) {
            return Err(at.duplicate_entry(format!("a tool not listed before (`{name}` repeats)")));
        }
    }
    Ok(())
}

fn check_range(value: u64, min: u64, max: u64, site: &Site<'_>) -> Result<(), LoadError> {
    if (min..=max).contains(&value) {
        Ok(())
    } else {
        Err(site.out_of_bounds(format!("an integer from {min} to {max}")))
    }
}

fn check_grant_ids(ids: &[String], site: &Site<'_>) -> Result<(), LoadError> {
    if ids.is_empty() || ids.len() > MAX_GRANT_IDS {
        return Err(site.out_of_bounds(format!("between 1 and {MAX_GRANT_IDS} grant ids")));
    }
    for (i, id) in ids.iter().enumerate() {
        let at = site.index(i);
        if !is_known_grant(id) {
            return Err(at.unknown_grant(id));
        }
        if ids[..i].contains(id) {
            return Err(at.duplicate_entry(format!("a grant id not listed before (`{id}` repeats)")));
        }
    }
    Ok(())
}
