//! Ledger tools that take virtual time and honour the abort.

use serde_json::{json, Value};
use sharedos_kernel::ports::{HandlerError, ParsedCall, ToolHandler};
use sharedos_model::tool::{ReadWrite, ToolCall, ToolStatus};
use sharedos_model::validate::Validate;
use sharedos_port::signal::{AbortReason, AbortSignal};
use sharedos_world::constants::{context, owner, NOW, TRACE_ID};
use sharedos_world::ledger::{Ledger, Movement, ACCOUNT_A, ACCOUNT_B};
use sharedos_world::ledger_tools::{LedgerHandler, LedgerTimings, LedgerTool};
use std::rc::Rc;
use std::time::Duration;

fn handler(tool: LedgerTool) -> (Rc<Ledger>, LedgerHandler) {
    let ledger = Rc::new(Ledger::seeded());
    (Rc::clone(&ledger), LedgerHandler::new(tool, ledger, LedgerTimings::default()))
}

fn parsed(tool: &dyn ToolHandler, arguments: Value) -> ParsedCall {
    let call = ToolCall {
        id: "call-t".into(),
        tool: tool.definition().name.clone(),
        arguments: arguments.as_object().cloned().unwrap(),
        trace_id: TRACE_ID.into(),
        requested_at: NOW.into(),
    };
    let clean = tool.parse_arguments(&call.arguments).unwrap();
    ParsedCall::new(&call, clean)
}

fn transfer_args() -> Value {
    json!({"from": ACCOUNT_A, "to": ACCOUNT_B, "amount": 40})
}

#[test]
fn definitions_classify_transfer_limit_and_balance() {
    let transfer = LedgerTool::Transfer.definition();
    let limit = LedgerTool::SetLimit.definition();
    let balance = LedgerTool::Balance.definition();
    for def in [&transfer, &limit, &balance] {
        def.validate().unwrap();
    }
    assert_eq!(transfer.read_write, ReadWrite::Write);
    assert!(!transfer.is_repeatable(), "a transfer is not idempotent");
    assert!(limit.is_repeatable(), "setting a limit is an idempotent write");
    assert_eq!(balance.read_write, ReadWrite::Read);
}

#[test]
fn the_transfer_requires_transfer_on_the_debited_account() {
    let (_, transfer) = handler(LedgerTool::Transfer);
    let call = parsed(&transfer, transfer_args());
    let requirement = transfer.resolve_requirement(&context(NOW, TRACE_ID), &call).unwrap().unwrap().requirement;
    assert_eq!(requirement.resource.namespace, "ledger");
    assert_eq!(requirement.resource.path, ["accounts", ACCOUNT_A]);
    assert_eq!(requirement.resource.owner, Some(owner()));
    assert_eq!(requirement.action, "transfer");
    assert!(transfer
        .parse_arguments(&json!({"from": ACCOUNT_A, "to": ACCOUNT_B, "amount": 0}).as_object().cloned().unwrap())
        .is_err());
}

#[tokio::test(start_paused = true)]
async fn a_transfer_debits_waits_then_credits() {
    let (ledger, transfer) = handler(LedgerTool::Transfer);
    let call = parsed(&transfer, transfer_args());
    let started = tokio::time::Instant::now();
    let result =
        transfer.invoke(&context("2026-08-18T09:01:54.000Z", TRACE_ID), &call, &AbortSignal::new()).await.unwrap();
    assert_eq!(started.elapsed(), Duration::from_millis(3000));
    assert_eq!(result.status(), ToolStatus::Succeeded);
    assert_eq!(result.completed_at, "2026-08-18T09:01:57.000Z");
    assert_eq!(ledger.balance(ACCOUNT_A).unwrap(), 60);
    assert_eq!(ledger.balance(ACCOUNT_B).unwrap(), 40);
}

#[tokio::test(start_paused = true)]
async fn an_abort_between_debit_and_credit_leaves_the_transfer_half_done() {
    let (ledger, transfer) = handler(LedgerTool::Transfer);
    let call = parsed(&transfer, transfer_args());
    let signal = AbortSignal::new();
    let trigger = signal.clone();
    let ctx = context(NOW, TRACE_ID);
    let run = transfer.invoke(&ctx, &call, &signal);
    let abort = async move {
        tokio::time::sleep(Duration::from_millis(2000)).await;
        trigger.abort(AbortReason::Timeout);
    };
    let (outcome, ()) = tokio::join!(run, abort);
    assert_eq!(outcome.unwrap_err(), HandlerError::Aborted);
    assert_eq!(ledger.balance(ACCOUNT_A).unwrap(), 60, "debited");
    assert_eq!(ledger.balance(ACCOUNT_B).unwrap(), 0, "never credited");
    let movements: Vec<Movement> = ledger.journal().iter().map(|l| l.movement).collect();
    assert_eq!(movements, [Movement::Debit]);
}

#[tokio::test(start_paused = true)]
async fn a_pre_aborted_signal_moves_no_money() {
    let (ledger, transfer) = handler(LedgerTool::Transfer);
    let call = parsed(&transfer, transfer_args());
    let signal = AbortSignal::new();
    signal.abort(AbortReason::HostCancelled);
    assert!(transfer.invoke(&context(NOW, TRACE_ID), &call, &signal).await.is_err());
    assert!(ledger.journal().is_empty());
}

#[tokio::test(start_paused = true)]
async fn the_balance_read_takes_time_and_the_limit_is_idempotent() {
    let (ledger, balance) = handler(LedgerTool::Balance);
    let call = parsed(&balance, json!({"account": ACCOUNT_A}));
    let started = tokio::time::Instant::now();
    let result = balance.invoke(&context(NOW, TRACE_ID), &call, &AbortSignal::new()).await.unwrap();
    assert_eq!(started.elapsed(), Duration::from_millis(1000));
    assert_eq!(result.status(), ToolStatus::Succeeded);
    let limit = LedgerHandler::new(LedgerTool::SetLimit, Rc::clone(&ledger), LedgerTimings::default());
    let call = parsed(&limit, json!({"account": ACCOUNT_B, "limit": 10}));
    for _ in 0..2 {
        limit.invoke(&context(NOW, TRACE_ID), &call, &AbortSignal::new()).await.unwrap();
    }
    assert_eq!(ledger.limits().get(ACCOUNT_B), Some(&10));
    let unknown = parsed(&limit, json!({"account": "account-z", "limit": 1}));
    let failed = limit.invoke(&context(NOW, TRACE_ID), &unknown, &AbortSignal::new()).await.unwrap();
    assert_eq!(failed.error().unwrap().code, "account_absent");
}
