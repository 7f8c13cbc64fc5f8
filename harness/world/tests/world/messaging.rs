//! The messaging arming of a conformance world: recipient-scoped send grants,
//! recipients' own execution and read grants, port modes, the counted
//! message ids, and a kernel wired to them end to end.

use futures::executor::block_on;
use serde_json::{json, Map, Value};
use sharedos_authz::ports::DelegationResolver;
use sharedos_kernel::kernel::Kernel;
use sharedos_kernel::ports::{GrantSource, ParsedCall};
use sharedos_model::access::AccessContext;
use sharedos_model::address::Address;
use sharedos_model::capability::{Grant, Scope};
use sharedos_model::message::MessageDeliveryResult;
use sharedos_port::signal::AbortSignal;
use sharedos_world::constants::{agent, context, owner, NAMESPACE_ID, NOW, PURPOSE, TRACE_ID};
use sharedos_world::fixtures::WorldFixtures;
use sharedos_world::grants::GRANT_MESSAGE;
use sharedos_world::messaging::{
    acting_context, counted_message_ids, execution_grant_id, execution_root_id, read_grant_id, send_grant_id,
    send_root_id,
};
use sharedos_world::options::messaging::{MessagingOptions, RecipientOption, SendOption};
use sharedos_world::options::WorldOptions;
use sharedos_world::transport::{
    ReplyShape, TransportMode, CARRIER_UNAVAILABLE, RECIPIENT_UNREACHABLE, ROUTE_LEASE_REVOKED,
};
use std::rc::Rc;

fn bob() -> Address {
    Address::agent("agent-bob")
}

fn carol() -> Address {
    Address::human("user-carol")
}

fn bare(address: Address) -> RecipientOption {
    RecipientOption { address, send: SendOption::None, execution: false, reads: false }
}

fn recipient(address: Address, send: SendOption) -> RecipientOption {
    RecipientOption { send, ..bare(address) }
}

fn world(arming: MessagingOptions) -> WorldFixtures {
    WorldFixtures::build(&WorldOptions { messaging: Some(arming), ..WorldOptions::default() })
}

fn load(world: &WorldFixtures, context: &AccessContext) -> Vec<Grant> {
    let value = block_on(world.grant_source.load(context, &AbortSignal::new())).unwrap();
    serde_json::from_value(value).unwrap()
}

fn kernel(world: &WorldFixtures, arming: &MessagingOptions) -> Kernel {
    let mut builder = Kernel::builder(world.grant_source.clone(), world.audit.clone())
        .usage_store(Rc::clone(&world.usage))
        .delegation_resolver(world.chain.clone())
        .message_ids(counted_message_ids());
    if arming.transport_attached() {
        builder = builder.message_transport(world.transport.clone());
    }
    if arming.router_attached() {
        builder = builder.message_router(world.router.clone());
    }
    builder.build().unwrap()
}

fn envelope(receiver: &Address, id: &str) -> Value {
    json!({
        "version": "1", "id": id, "sender": agent(), "receiver": receiver, "purpose": PURPOSE,
        "payload": {"question": "status"}, "traceId": TRACE_ID, "createdAt": NOW
    })
}

fn send(kernel: &Kernel, receiver: &Address, id: &str) -> MessageDeliveryResult {
    block_on(kernel.send_message(&context(NOW, TRACE_ID), &envelope(receiver, id), &AbortSignal::new())).unwrap()
}

fn code(result: &MessageDeliveryResult) -> Option<&str> {
    result.error().map(|e| e.code.as_str())
}

#[test]
fn m19_m20_send_grants_are_exact_recipient_scoped_and_issued_to_the_sender() {
    let arming = MessagingOptions {
        recipients: vec![recipient(bob(), SendOption::Granted), recipient(carol(), SendOption::Bounded)],
        ..MessagingOptions::default()
    };
    let world = world(arming);
    for (address, max_uses) in [(bob(), None), (carol(), Some(1))] {
        let grant = world.grants.find(&send_grant_id(&address)).unwrap();
        assert_eq!(grant.subject, agent());
        assert_eq!(grant.parent_grant_id.as_deref(), Some(send_root_id(&address).as_str()));
        assert_eq!(grant.constraints.max_uses, max_uses);
        let capability = &grant.capabilities[0];
        assert_eq!(capability.resource.namespace, "sharedos.messaging");
        assert_eq!(capability.resource.path, address.path());
        assert_eq!(capability.resource.owner, Some(owner()));
        assert_eq!(capability.actions, ["send"]);
        assert_eq!(capability.scope, Scope::Exact);
        assert!(world.chain.resolve(NAMESPACE_ID, &send_root_id(&address)).unwrap().is_some());
    }
    let ids: Vec<String> = load(&world, &context(NOW, TRACE_ID)).into_iter().map(|g| g.id).collect();
    assert!(ids.contains(&send_grant_id(&bob())) && ids.contains(&GRANT_MESSAGE.to_string()));
}

#[test]
fn m16_withholding_the_owner_send_grant_leaves_only_the_recipients() {
    let arming = MessagingOptions {
        recipients: vec![recipient(bob(), SendOption::Bounded)],
        owner_send_withheld: true,
        ..MessagingOptions::default()
    };
    let world = world(arming);
    let ids: Vec<String> = load(&world, &context(NOW, TRACE_ID)).into_iter().map(|g| g.id).collect();
    assert!(!ids.contains(&GRANT_MESSAGE.to_string()));
    assert!(ids.contains(&send_grant_id(&bob())));
}

#[test]
fn a_withheld_send_grant_is_never_issued() {
    let world = world(MessagingOptions { recipients: vec![bare(carol())], ..MessagingOptions::default() });
    assert!(world.grants.find(&send_grant_id(&carol())).is_none());
    assert!(world.grants.find(&send_root_id(&carol())).is_none());
}

#[test]
fn m28_a_revoked_send_grant_is_revoked_in_store_and_chain_at_the_start() {
    let arming = MessagingOptions {
        recipients: vec![recipient(bob(), SendOption::Revoked), recipient(carol(), SendOption::Granted)],
        ..MessagingOptions::default()
    };
    let world = world(arming);
    let grants = load(&world, &context(NOW, TRACE_ID));
    let revoked = |id: &str| grants.iter().find(|g| g.id == id).unwrap().revoked_at.clone();
    assert_eq!(revoked(&send_grant_id(&bob())).as_deref(), Some(NOW));
    assert_eq!(revoked(&send_grant_id(&carol())), None);
    let chained = world.chain.resolve(NAMESPACE_ID, &send_grant_id(&bob())).unwrap().unwrap();
    assert_eq!(chained.revoked_at.as_deref(), Some(NOW));
}

#[test]
fn m14_a_recipients_execution_and_read_grants_are_its_own() {
    let arming = MessagingOptions {
        recipients: vec![RecipientOption { execution: true, reads: true, ..bare(bob()) }],
        ..MessagingOptions::default()
    };
    let world = world(arming);
    let as_bob = acting_context(NOW, TRACE_ID, &bob());
    let bobs: Vec<String> = load(&world, &as_bob).into_iter().map(|g| g.id).collect();
    assert_eq!(bobs, [execution_grant_id(&bob()), read_grant_id(&bob())]);
    let execution = world.grants.find(&execution_grant_id(&bob())).unwrap();
    assert_eq!(execution.capabilities[0].resource.namespace, "sharedos.execution");
    assert_eq!(execution.capabilities[0].resource.path, bob().path());
    assert_eq!(execution.capabilities[0].actions, ["invoke"]);
    assert_eq!(execution.parent_grant_id.as_deref(), Some(execution_root_id(&bob()).as_str()));
    let senders: Vec<String> = load(&world, &context(NOW, TRACE_ID)).into_iter().map(|g| g.id).collect();
    assert!(!senders.contains(&execution_grant_id(&bob())) && !senders.contains(&read_grant_id(&bob())));
}

#[test]
fn m14_admission_needs_the_recipients_own_execution_grant() {
    for (execution, allowed) in [(true, true), (false, false)] {
        let arming = MessagingOptions {
            recipients: vec![RecipientOption { execution, reads: true, ..bare(bob()) }],
            ..MessagingOptions::default()
        };
        let world = world(arming.clone());
        let kernel = kernel(&world, &arming);
        let as_bob = acting_context(NOW, TRACE_ID, &bob());
        let decision = block_on(kernel.admit_turn(&as_bob, &bob(), &AbortSignal::new())).unwrap();
        assert_eq!(decision.allowed, allowed, "execution grant issued: {execution}");
    }
}

#[test]
fn ports_are_armed_as_the_options_say() {
    let cases = [
        (TransportMode::Rejecting, Some(RECIPIENT_UNREACHABLE)),
        (TransportMode::Failing, Some(CARRIER_UNAVAILABLE)),
        (TransportMode::Delivering, None),
    ];
    for (mode, expected) in cases {
        let arming = MessagingOptions {
            recipients: vec![recipient(bob(), SendOption::Granted)],
            transport: Some(mode),
            ..MessagingOptions::default()
        };
        let world = world(arming.clone());
        let result = send(&kernel(&world, &arming), &bob(), "m-1");
        assert_eq!(code(&result), expected);
        assert_eq!(world.transport.dispatches().len(), 1);
    }
}

#[test]
fn r66_a_lease_closing_after_zero_refuses_the_first_dispatch() {
    let arming = MessagingOptions {
        recipients: vec![recipient(bob(), SendOption::Granted)],
        lease_closes_after: Some(0),
        ..MessagingOptions::default()
    };
    let world = world(arming.clone());
    assert_eq!(code(&send(&kernel(&world, &arming), &bob(), "m-1")), Some(ROUTE_LEASE_REVOKED));
}

#[test]
fn m15_a_missing_port_leaves_the_request_tool_unregistered() {
    for (transport, router) in [
        (Some(TransportMode::Absent), Some(ReplyShape::WellFormed)),
        (Some(TransportMode::Accepting), Some(ReplyShape::Absent)),
    ] {
        let arming = MessagingOptions { transport, router, ..MessagingOptions::default() };
        assert!(kernel(&world(arming.clone()), &arming).messages_request_handler().is_none());
    }
    let both = MessagingOptions::default();
    assert!(kernel(&world(both.clone()), &both).messages_request_handler().is_some());
}

#[test]
fn m8_m20_a_single_use_grant_sends_once_and_an_ungranted_recipient_spends_nothing() {
    let arming = MessagingOptions {
        recipients: vec![recipient(bob(), SendOption::Bounded), bare(carol())],
        ..MessagingOptions::default()
    };
    let world = world(arming.clone());
    let kernel = kernel(&world, &arming);
    assert_eq!(code(&send(&kernel, &carol(), "m-1")), Some("no_matching_grant"));
    assert!(send(&kernel, &bob(), "m-2").is_accepted());
    assert_eq!(code(&send(&kernel, &bob(), "m-3")), Some("grant_exhausted"));
    assert_eq!(world.transport.dispatches().len(), 1);
}

#[test]
fn m18_counted_message_ids_differ_per_request_and_are_never_the_call_id() {
    let ids = counted_message_ids();
    let call = ParsedCall {
        id: "trace-conformance-message-1".into(),
        tool: "messages.request".into(),
        arguments: Map::new(),
        trace_id: TRACE_ID.into(),
        requested_at: NOW.into(),
        prepared: None,
    };
    let first = ids(&context(NOW, TRACE_ID), &call);
    let second = ids(&context(NOW, TRACE_ID), &call);
    assert_eq!(first, "trace-conformance-message-1");
    assert_eq!(second, "trace-conformance-message-2");
    assert_ne!(second, call.id);
}

#[test]
fn m26_the_router_keeps_every_reply_it_handed_back() {
    let arming = MessagingOptions {
        recipients: vec![recipient(bob(), SendOption::Granted)],
        router: Some(ReplyShape::ChangedPurpose),
        ..MessagingOptions::default()
    };
    let world = world(arming.clone());
    assert!(send(&kernel(&world, &arming), &bob(), "m-1").is_accepted());
    let request = world.transport.accepted().remove(0);
    let reply = world.router.reply(&request, NOW).unwrap();
    assert_eq!(world.router.answered(), vec![reply.clone()]);
    assert_eq!(reply["purpose"], json!(format!("{PURPOSE}-changed")));
    assert_eq!(reply["replyTo"], json!("m-1"));
}
