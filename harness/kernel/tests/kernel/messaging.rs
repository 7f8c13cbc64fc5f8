//! Messaging: `sendMessage`, delivery and `messages.request` (M1–M28 but
//! M13, which is the executor's; K75–K77).

use crate::support;

use serde_json::{json, Value};
use sharedos_authz::memory::InMemoryUsage;
use sharedos_kernel::kernel::Kernel;
use sharedos_kernel::ports::{MessageCapabilityResolver, ParsedCall};
use sharedos_model::access::AccessContext;
use sharedos_model::address::Address;
use sharedos_model::audit::{AuditOutcome, AuditType};
use sharedos_model::capability::{Grant, Requirement};
use sharedos_model::message::{MessageDeliveryResult, MessageEnvelope};
use sharedos_model::tool::{ToolOutcome, ToolResult, ToolStatus};
use sharedos_port::error::KernelError;
use sharedos_port::signal::{AbortReason, AbortSignal};
use sharedos_testkit::call::call;
use sharedos_world::constants::{agent, owner, NOW};
use std::cell::RefCell;
use std::rc::Rc;
use support::*;

fn send_grant(id: &str, recipient: &Address) -> Grant {
    let path = recipient.path();
    grant(id, "sharedos.messaging", &[path[0].as_str(), path[1].as_str()], &["send"])
}

fn alice_grant() -> Grant {
    send_grant("grant-message", &owner())
}

fn envelope() -> Value {
    json!({"version": "1", "id": "msg-1", "sender": agent(), "receiver": owner(), "purpose": "probe",
           "payload": {"q": 1}, "traceId": "trace-1", "createdAt": NOW})
}

struct World {
    grants: Rc<Grants>,
    sink: Rc<Sink>,
    transport: Rc<Transport>,
    router: Rc<Router>,
    usage: Rc<InMemoryUsage>,
    kernel: Kernel,
}

fn world(grants: &[Grant]) -> World {
    let (grants, sink, transport, router, usage) =
        (Grants::of(grants), Sink::new(), Transport::new(), Router::new(), Rc::new(InMemoryUsage::new()));
    let kernel = builder(&grants, &sink)
        .usage_store(usage.clone())
        .message_transport(transport.clone())
        .message_router(router.clone())
        .build()
        .unwrap();
    World { grants, sink, transport, router, usage, kernel }
}

fn request(id: &str, recipient: &Address) -> sharedos_model::tool::ToolCall {
    call(id, "messages.request", json!({"recipient": recipient, "payload": {"question": "status?"}}))
}

async fn ask(w: &World, id: &str, recipient: &Address) -> ToolResult {
    w.kernel.invoke_tool(&ctx(), &request(id, recipient), &AbortSignal::new()).await.unwrap()
}

fn code(result: &ToolResult) -> &str {
    result.error().map_or("", |e| e.code.as_str())
}

#[tokio::test]
async fn m1_m4_a_non_strict_envelope_is_a_thrown_type_error_with_no_audit() {
    let w = world(&[alice_grant()]);
    let mut with_intent = envelope();
    with_intent["intent"] = json!("do it");
    let outcome = w.kernel.send_message(&ctx(), &with_intent, &AbortSignal::new()).await;
    assert!(matches!(outcome, Err(KernelError::InvalidInput(_))));
    assert!(w.sink.events.borrow().is_empty());
    assert!(w.transport.delivered.borrow().is_empty());
}

#[tokio::test]
async fn m2_envelope_field_bounds_are_enforced() {
    let w = world(&[alice_grant()]);
    let breaks: [fn(&mut Value); 5] = [
        |e| e["purpose"] = json!(""),
        |e| e["version"] = json!("2"),
        |e| e["createdAt"] = json!("yesterday"),
        |e| e["id"] = json!(""),
        |e| e["provenance"] = json!({"source": "hop", "parentIds": vec!["p"; 65]}),
    ];
    for broken in breaks {
        let mut value = envelope();
        broken(&mut value);
        assert!(w.kernel.send_message(&ctx(), &value, &AbortSignal::new()).await.is_err(), "{value}");
    }
}

#[tokio::test]
async fn m3_addresses_are_strict_and_compare_by_kind_and_id() {
    let w = world(&[alice_grant()]);
    let mut value = envelope();
    value["receiver"] = json!({"kind": "human", "userId": "user-alice", "extra": 1});
    assert!(w.kernel.send_message(&ctx(), &value, &AbortSignal::new()).await.is_err());
    assert_ne!(Address::human("same"), Address::agent("same"));
}

#[tokio::test]
async fn m5_k75_a_message_that_does_not_match_its_context_is_denied_without_spending() {
    let mut bounded = alice_grant();
    bounded.constraints.max_uses = Some(1);
    let w = world(&[bounded]);
    let breaks: [fn(&mut Value); 3] = [
        |e| e["sender"] = json!({"kind": "agent", "agentId": "someone"}),
        |e| e["purpose"] = json!("other"),
        |e| e["traceId"] = json!("trace-9"),
    ];
    for broken in breaks {
        let mut value = envelope();
        broken(&mut value);
        let result = w.kernel.send_message(&ctx(), &value, &AbortSignal::new()).await.unwrap();
        assert!(
            matches!(&result, MessageDeliveryResult::Denied { error, .. } if error.code == "message_context_mismatch")
        );
    }
    assert_eq!(w.sink.count(AuditType::MessageSent), 3);
    assert!(w.sink.of(AuditType::MessageSent).iter().all(|e| e.outcome == AuditOutcome::Denied));
    assert_eq!(w.usage.spent("world-test", "grant-message"), 0);
    assert!(w.transport.delivered.borrow().is_empty());
}

struct ThrowingResolver;
impl MessageCapabilityResolver for ThrowingResolver {
    fn resolve(&self, _c: &AccessContext, _e: &MessageEnvelope) -> Result<Requirement, String> {
        Err(SECRET.into())
    }
}

#[tokio::test]
async fn m6_a_throwing_resolver_fails_the_send() {
    let (grants, sink) = (Grants::of(&[alice_grant()]), Sink::new());
    let reports = Rc::new(RefCell::new(0));
    let seen = reports.clone();
    let kernel = builder(&grants, &sink)
        .message_transport(Transport::new())
        .message_capability_resolver(Rc::new(ThrowingResolver))
        .on_provider_error(Rc::new(move |_| *seen.borrow_mut() += 1))
        .build()
        .unwrap();
    let result = kernel.send_message(&ctx(), &envelope(), &AbortSignal::new()).await.unwrap();
    assert_eq!(result.error().unwrap().code, "message_requirement_resolution_failed");
    assert!(matches!(result, MessageDeliveryResult::Failed { .. }));
    assert_eq!((*reports.borrow(), sink.count(AuditType::MessageSent)), (1, 1));
}

#[tokio::test]
async fn m7_unavailable_authority_denies_the_send() {
    let w = world(&[alice_grant()]);
    w.grants.set(Err("down".into()));
    let result = w.kernel.send_message(&ctx(), &envelope(), &AbortSignal::new()).await.unwrap();
    assert!(matches!(&result, MessageDeliveryResult::Denied { error, .. } if error.code == "authority_unavailable"));
    assert_eq!(w.sink.last(AuditType::MessageSent).fail_closed, Some(true));
    assert!(w.transport.delivered.borrow().is_empty());
}

#[tokio::test]
async fn m8_a_single_use_send_grant_allows_exactly_one_send() {
    let mut bounded = alice_grant();
    bounded.constraints.max_uses = Some(1);
    let w = world(&[bounded]);
    let first = w.kernel.send_message(&ctx(), &envelope(), &AbortSignal::new()).await.unwrap();
    assert!(first.is_accepted());
    let second = w.kernel.send_message(&ctx(), &envelope(), &AbortSignal::new()).await.unwrap();
    assert_eq!(second.error().unwrap().code, "grant_exhausted");
    assert_eq!(w.transport.delivered.borrow().len(), 1);
}

#[tokio::test]
async fn m9_no_transport_fails_after_the_use_was_spent() {
    let mut bounded = alice_grant();
    bounded.constraints.max_uses = Some(2);
    let (grants, sink, usage) = (Grants::of(&[bounded]), Sink::new(), Rc::new(InMemoryUsage::new()));
    let kernel = builder(&grants, &sink).usage_store(usage.clone()).build().unwrap();
    let result = kernel.send_message(&ctx(), &envelope(), &AbortSignal::new()).await.unwrap();
    assert_eq!(result.error().unwrap().code, "message_transport_not_configured");
    assert_eq!(usage.spent("world-test", "grant-message"), 1);
    assert_eq!(sink.last(AuditType::AuthorizationChecked).outcome, AuditOutcome::Allowed);
}

#[tokio::test]
async fn m10_a_mismatched_or_malformed_receipt_is_invalid() {
    for receipt in [Receipt::WrongId, Receipt::Malformed] {
        let w = world(&[alice_grant()]);
        w.transport.answer(receipt);
        let result = w.kernel.send_message(&ctx(), &envelope(), &AbortSignal::new()).await.unwrap();
        assert_eq!(result.error().unwrap().code, "invalid_message_receipt");
        assert_eq!(result.message_id(), "msg-1");
    }
}

#[tokio::test]
async fn m11_a_throwing_transport_fails_unless_the_signal_fired() {
    let w = world(&[alice_grant()]);
    w.transport.answer(Receipt::Throw);
    let result = w.kernel.send_message(&ctx(), &envelope(), &AbortSignal::new()).await.unwrap();
    assert_eq!(result.error().unwrap().code, "message_delivery_failed");
    assert!(!w.sink.text().contains(SECRET));
    w.transport.answer(Receipt::AbortThenThrow);
    let aborted = w.kernel.send_message(&ctx(), &envelope(), &AbortSignal::new()).await;
    assert_eq!(aborted, Err(KernelError::Aborted(AbortReason::HostCancelled)));
}

#[tokio::test]
async fn m12_each_delivery_writes_one_message_sent_record() {
    let w = world(&[alice_grant()]);
    w.kernel.send_message(&ctx(), &envelope(), &AbortSignal::new()).await.unwrap();
    let sent = w.sink.last(AuditType::MessageSent);
    assert_eq!(
        (sent.outcome, sent.message_id.as_deref(), sent.receiver.clone()),
        (AuditOutcome::Succeeded, Some("msg-1"), Some(owner()))
    );
    assert_eq!(sent.grant_id.as_deref(), Some("grant-message"));
    assert_eq!(ask(&w, "call-7", &owner()).await.status(), ToolStatus::Succeeded);
    let sent = w.sink.of(AuditType::MessageSent);
    assert_eq!(sent.len(), 2);
    assert_eq!((sent[1].operation_id.as_deref(), sent[1].grant_id.as_deref()), (Some("call-7"), None));
}

#[tokio::test]
async fn m14_an_inbound_turn_needs_an_execution_grant_consumed_at_admission() {
    let mut invoke = grant("grant-turn", "sharedos.execution", &["agent", "agent-mallory"], &["invoke"]);
    invoke.constraints.max_uses = Some(1);
    let w = world(&[invoke, alice_grant()]);
    let signal = AbortSignal::new();
    assert!(w.kernel.admit_turn(&ctx(), &agent(), &signal).await.unwrap().allowed);
    assert_eq!(w.usage.spent("world-test", "grant-turn"), 1);
    let other = w.kernel.admit_turn(&ctx(), &Address::agent("agent-bob"), &signal).await.unwrap();
    assert_eq!(other.reason_code.as_str(), "no_matching_grant");
}

#[tokio::test]
async fn m15_messages_request_exists_only_with_transport_and_router() {
    let (grants, sink) = (Grants::of(&[alice_grant()]), Sink::new());
    let only_transport = builder(&grants, &sink).message_transport(Transport::new()).build().unwrap();
    let only_router = builder(&grants, &sink).message_router(Router::new()).build().unwrap();
    for kernel in [only_transport, only_router] {
        assert!(kernel.messages_request_handler().is_none());
        let result = kernel.invoke_tool(&ctx(), &request("c1", &owner()), &AbortSignal::new()).await.unwrap();
        assert_eq!(code(&result), "tool_unavailable");
        assert_eq!(sink.last(AuditType::ToolInvoked).cause.as_deref(), Some("not_registered"));
    }
    let w = world(&[alice_grant()]);
    let listed = w.kernel.list_tools(&ctx(), &AbortSignal::new()).await.unwrap();
    assert_eq!(listed.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), vec!["messages.request"]);
}

#[tokio::test]
async fn m16_discovery_needs_the_namespace_and_an_unspent_grant() {
    let mut bounded = alice_grant();
    bounded.constraints.max_uses = Some(1);
    let w = world(&[bounded]);
    let mut off = ctx();
    off.enabled_tool_namespaces = vec!["files".into()];
    assert!(w.kernel.list_tools(&off, &AbortSignal::new()).await.unwrap().is_empty());
    assert_eq!(ask(&w, "c1", &owner()).await.status(), ToolStatus::Succeeded);
    let second = ask(&w, "c2", &owner()).await;
    assert_eq!((second.status(), code(&second)), (ToolStatus::Denied, "tool_unavailable"));
    assert_eq!(w.sink.last(AuditType::ToolInvoked).cause.as_deref(), Some("grant_exhausted"));
}

#[tokio::test]
async fn m17_only_recipient_and_payload_may_be_authored() {
    let w = world(&[alice_grant()]);
    for extra in ["sender", "purpose", "traceId", "messageId", "intent", "replyTo", "other"] {
        let mut c = request("c1", &owner());
        c.arguments.insert(extra.into(), json!("x"));
        let result = w.kernel.invoke_tool(&ctx(), &c, &AbortSignal::new()).await.unwrap();
        assert_eq!((result.status(), code(&result)), (ToolStatus::Failed, "invalid_tool_arguments"), "{extra}");
    }
    let long: String = "é".repeat(257);
    for bad in [
        json!({"kind": "human", "userId": " user-alice"}),
        json!({"kind": "human", "userId": long}),
        json!({"kind": "human"}),
    ] {
        let c = call("c1", "messages.request", json!({"recipient": bad, "payload": 1}));
        assert_eq!(
            code(&w.kernel.invoke_tool(&ctx(), &c, &AbortSignal::new()).await.unwrap()),
            "invalid_tool_arguments"
        );
    }
    let missing = call("c1", "messages.request", json!({"recipient": owner()}));
    assert_eq!(
        code(&w.kernel.invoke_tool(&ctx(), &missing, &AbortSignal::new()).await.unwrap()),
        "invalid_tool_arguments"
    );
    assert!(w.transport.delivered.borrow().is_empty());
}

#[tokio::test]
async fn m18_the_request_envelope_is_built_from_the_trusted_context() {
    let w = world(&[alice_grant()]);
    assert_eq!(ask(&w, "call-1", &owner()).await.status(), ToolStatus::Succeeded);
    let sent = w.transport.delivered.borrow()[0].clone();
    assert_eq!((sent.sender, sent.receiver), (agent(), owner()));
    assert_eq!(
        (sent.purpose.as_str(), sent.trace_id.as_str(), sent.created_at.as_str(), sent.version.as_str()),
        ("probe", "trace-1", NOW, "1")
    );
    assert_eq!(sent.id, "trace-1-message-request");
    assert_ne!(sent.id, "call-1");
    assert_eq!(sent.payload, json!({"question": "status?"}));
}

#[tokio::test]
async fn m19_k76_the_recipient_scoped_requirement_is_consumed_once_per_call() {
    let mut bounded = alice_grant();
    bounded.constraints.max_uses = Some(5);
    let w = world(&[bounded]);
    assert_eq!(ask(&w, "c1", &owner()).await.status(), ToolStatus::Succeeded);
    assert_eq!(w.usage.spent("world-test", "grant-message"), 1);
    let checked = w.sink.of(AuditType::AuthorizationChecked);
    assert_eq!(checked.len(), 1, "delivery is not authorized again");
    let resource = checked[0].resource.clone().unwrap();
    assert_eq!(
        (resource.namespace.as_str(), resource.path.clone(), resource.owner),
        ("sharedos.messaging", owner().path(), Some(owner()))
    );
    assert_eq!(checked[0].action.as_deref(), Some("send"));
}

#[tokio::test]
async fn m20_an_ungranted_recipient_is_denied_without_touching_other_grants() {
    let mut bounded = alice_grant();
    bounded.constraints.max_uses = Some(5);
    let w = world(&[bounded]);
    let result = ask(&w, "c1", &Address::agent("agent-bob")).await;
    assert_eq!((result.status(), code(&result)), (ToolStatus::Denied, "no_matching_grant"));
    assert_eq!(w.usage.spent("world-test", "grant-message"), 0);
    assert!(w.transport.delivered.borrow().is_empty());
}

#[tokio::test]
async fn m21_a_single_use_grant_and_its_replay_deliver_exactly_once() {
    let mut bounded = alice_grant();
    bounded.constraints.max_uses = Some(1);
    let w = world(&[bounded]);
    let signal = AbortSignal::new();
    let (context, first, second) = (ctx(), request("c1", &owner()), request("c1", &owner()));
    let (a, b) =
        tokio::join!(w.kernel.invoke_tool(&context, &first, &signal), w.kernel.invoke_tool(&context, &second, &signal));
    let statuses = [a.unwrap().status(), b.unwrap().status()];
    assert_eq!(statuses.iter().filter(|s| **s == ToolStatus::Succeeded).count(), 1);
    assert_eq!(statuses.iter().filter(|s| **s == ToolStatus::Denied).count(), 1);
    assert_eq!(w.usage.spent("world-test", "grant-message"), 1);
    assert_eq!(w.transport.delivered.borrow().len(), 1);
}

#[tokio::test]
async fn m22_a_bounded_grant_without_a_usage_store_never_reaches_the_transport() {
    let mut bounded = alice_grant();
    bounded.constraints.max_uses = Some(3);
    let (grants, sink, transport) = (Grants::of(&[bounded]), Sink::new(), Transport::new());
    let kernel =
        builder(&grants, &sink).message_transport(transport.clone()).message_router(Router::new()).build().unwrap();
    let via_tool = kernel.invoke_tool(&ctx(), &request("c1", &owner()), &AbortSignal::new()).await.unwrap();
    assert_eq!(via_tool.status(), ToolStatus::Denied);
    let direct = kernel.send_message(&ctx(), &envelope(), &AbortSignal::new()).await.unwrap();
    assert_eq!(direct.error().unwrap().code, "usage_store_unavailable");
    assert!(transport.delivered.borrow().is_empty());
}

#[tokio::test]
async fn m23_invoke_without_a_prepared_envelope_fails() {
    let w = world(&[alice_grant()]);
    let handler = w.kernel.messages_request_handler().unwrap();
    let c = request("c1", &owner());
    let arguments = handler.parse_arguments(&c.arguments).unwrap();
    let parsed = ParsedCall::new(&c, arguments.clone());
    let signal = AbortSignal::new();
    let result = handler.invoke(&ctx(), &parsed, &signal).await.unwrap();
    assert_eq!(code(&result), "message_request_not_prepared");
    // Prepared on one call object, invoked with another that shares its id.
    let prepared = ParsedCall::new(&c, arguments.clone());
    assert!(handler.resolve_requirement(&ctx(), &prepared).unwrap().is_ok());
    let other = ParsedCall::new(&c, arguments);
    assert_eq!(code(&handler.invoke(&ctx(), &other, &signal).await.unwrap()), "message_request_not_prepared");
    assert!(w.transport.delivered.borrow().is_empty());
}

#[tokio::test]
async fn m24_k77_a_refused_delivery_fails_the_request_with_the_transport_code_as_cause() {
    let w = world(&[alice_grant()]);
    w.transport.answer(Receipt::Deny("route_lease_revoked"));
    let result = ask(&w, "c1", &owner()).await;
    assert_eq!((result.status(), code(&result)), (ToolStatus::Failed, "message_request_not_accepted"));
    let invoked = w.sink.last(AuditType::ToolInvoked);
    assert_eq!(
        (invoked.reason.as_deref(), invoked.cause.as_deref()),
        (Some("message_request_not_accepted"), Some("route_lease_revoked"))
    );
    let sent = w.sink.last(AuditType::MessageSent);
    assert_eq!((sent.outcome, sent.reason.as_deref()), (AuditOutcome::Denied, Some("route_lease_revoked")));
    let direct = w.kernel.send_message(&ctx(), &envelope(), &AbortSignal::new()).await.unwrap();
    let verbatim: MessageDeliveryResult =
        serde_json::from_value(json!({"status": "denied", "messageId": "msg-1", "timestamp": NOW,
        "error": {"code": "route_lease_revoked", "message": "route is gone"}}))
        .unwrap();
    assert_eq!(direct, verbatim);
}

#[tokio::test]
async fn m25_a_throwing_router_fails_the_request_and_is_reported() {
    let (grants, sink, router) = (Grants::of(&[alice_grant()]), Sink::new(), Router::new());
    router.answer(Reply::Throw);
    let reports = Rc::new(RefCell::new(Vec::new()));
    let seen = reports.clone();
    let kernel = builder(&grants, &sink)
        .message_transport(Transport::new())
        .message_router(router)
        .on_provider_error(Rc::new(move |e| seen.borrow_mut().push(e.origin.clone())))
        .build()
        .unwrap();
    let result = kernel.invoke_tool(&ctx(), &request("c1", &owner()), &AbortSignal::new()).await.unwrap();
    assert_eq!(code(&result), "message_reply_resolution_failed");
    assert_eq!(*reports.borrow(), vec![sharedos_kernel::ports::ProviderErrorOrigin::MessageRouter]);
}

#[tokio::test]
async fn m26_only_a_correlated_strict_reply_is_accepted() {
    let mutations: [fn(&mut Value); 7] = [
        |r| r["replyTo"] = json!("msg-other"),
        |r| r["sender"] = json!({"kind": "agent", "agentId": "agent-eve"}),
        |r| r["receiver"] = json!({"kind": "human", "userId": "user-alice"}),
        |r| r["purpose"] = json!("other"),
        |r| r["traceId"] = json!("trace-9"),
        |r| r["intent"] = json!("x"),
        |r| r["version"] = json!("2"),
    ];
    for mutate in mutations {
        let w = world(&[alice_grant()]);
        w.router.answer(Reply::Mutate(mutate));
        let result = ask(&w, "c1", &owner()).await;
        assert_eq!((result.status(), code(&result)), (ToolStatus::Failed, "invalid_message_reply"));
    }
}

#[tokio::test]
async fn m27_success_returns_only_the_reply_payload() {
    let w = world(&[alice_grant()]);
    let result = w.kernel.invoke_tool(&ctx().at(LATER), &request("c1", &owner()), &AbortSignal::new()).await.unwrap();
    assert_eq!(result.outcome, ToolOutcome::Succeeded { output: json!({"status": "green"}) });
    assert_eq!(result.completed_at, LATER);
}

#[tokio::test]
async fn m28_revoking_one_recipient_leaves_another_usable() {
    let bob = Address::agent("agent-bob");
    let mut revoked = alice_grant();
    revoked.revoked_at = Some("2026-08-18T08:30:00.000Z".into());
    let w = world(&[revoked, send_grant("grant-bob", &bob)]);
    let to_alice = ask(&w, "c1", &owner()).await;
    assert_eq!(code(&to_alice), "no_matching_grant");
    assert_eq!(ask(&w, "c2", &bob).await.status(), ToolStatus::Succeeded);
}
