//! The recording transport (lease closing, modes) and the reply router.

use futures::executor::block_on;
use serde_json::{json, Value};
use sharedos_kernel::ports::{MessageRequestRouter, MessageTransport};
use sharedos_model::message::{MessageDeliveryResult, MessageEnvelope};
use sharedos_port::signal::AbortSignal;
use sharedos_world::constants::{agent, context, owner, NOW, PURPOSE, TRACE_ID};
use sharedos_world::transport::{
    RecordingTransport, ReplyRouter, ReplyShape, TransportMode, CARRIER_UNAVAILABLE, RECIPIENT_UNREACHABLE,
    ROUTE_LEASE_REVOKED,
};
use std::rc::Rc;

fn envelope(id: &str) -> MessageEnvelope {
    MessageEnvelope {
        version: "1".into(),
        id: id.into(),
        sender: agent(),
        receiver: owner(),
        purpose: PURPOSE.into(),
        payload: json!({"question": "status"}),
        trace_id: TRACE_ID.into(),
        created_at: NOW.into(),
        reply_to: None,
        provenance: None,
    }
}

fn deliver(transport: &RecordingTransport, id: &str) -> MessageDeliveryResult {
    let receipt = block_on(transport.deliver(&context(NOW, TRACE_ID), &envelope(id), &AbortSignal::new())).unwrap();
    serde_json::from_value(receipt).unwrap()
}

fn reply(router: &ReplyRouter, id: &str) -> Result<Value, String> {
    block_on(router.resolve_reply(&context(NOW, TRACE_ID), &envelope(id), &json!({}), &AbortSignal::new()))
}

#[test]
fn accepted_dispatches_are_recorded_with_accepted_receipts() {
    let transport = RecordingTransport::default();
    let receipt = deliver(&transport, "m-1");
    assert!(
        matches!(receipt, MessageDeliveryResult::Accepted { ref message_id, ref timestamp, .. } if message_id == "m-1" && timestamp == NOW)
    );
    assert_eq!(transport.accepted(), vec![envelope("m-1")]);
}

#[test]
fn r66_the_route_lease_closes_after_n_accepted_dispatches() {
    let transport = RecordingTransport::default();
    transport.close_lease_after(1);
    assert!(deliver(&transport, "m-1").is_accepted());
    for id in ["m-2", "m-3"] {
        let receipt = deliver(&transport, id);
        assert!(matches!(receipt, MessageDeliveryResult::Denied { .. }), "{receipt:?}");
        assert_eq!(receipt.error().unwrap().code, ROUTE_LEASE_REVOKED);
        assert_ne!(receipt.error().unwrap().code, "no_matching_grant");
        assert_eq!(receipt.message_id(), id);
    }
    assert_eq!(transport.accepted().len(), 1);
    assert_eq!(transport.dispatches().len(), 3);
}

#[test]
fn a_lease_armed_at_zero_refuses_the_first_dispatch() {
    let transport = RecordingTransport::default();
    transport.close_lease_after(0);
    assert!(!deliver(&transport, "m-1").is_accepted());
}

#[test]
fn transport_modes_reject_fail_deliver_or_throw() {
    let transport = RecordingTransport::new(TransportMode::Rejecting);
    assert_eq!(deliver(&transport, "m-1").error().unwrap().code, RECIPIENT_UNREACHABLE);
    transport.set_mode(TransportMode::Failing);
    let failed = deliver(&transport, "m-2");
    assert!(matches!(failed, MessageDeliveryResult::Failed { .. }));
    assert_eq!(failed.error().unwrap().code, CARRIER_UNAVAILABLE);
    transport.set_mode(TransportMode::Delivering);
    assert!(matches!(deliver(&transport, "m-3"), MessageDeliveryResult::Delivered { .. }));
    transport.set_mode(TransportMode::Throwing);
    assert!(block_on(transport.deliver(&context(NOW, TRACE_ID), &envelope("m-4"), &AbortSignal::new())).is_err());
    assert_eq!(transport.accepted().len(), 1, "only the delivered one was taken");
    assert_eq!(transport.dispatches().len(), 4);
}

#[test]
fn the_router_answers_only_accepted_requests() {
    let transport = Rc::new(RecordingTransport::default());
    transport.close_lease_after(1);
    let router = ReplyRouter::new(Rc::clone(&transport));
    deliver(&transport, "m-1");
    deliver(&transport, "m-2");
    let answer = MessageEnvelope::from_value(&reply(&router, "m-1").unwrap()).unwrap();
    assert_eq!(answer.id, "m-1-reply");
    assert_eq!(answer.reply_to.as_deref(), Some("m-1"));
    assert_eq!((answer.sender, answer.receiver), (owner(), agent()));
    assert_eq!((answer.purpose.as_str(), answer.trace_id.as_str()), (PURPOSE, TRACE_ID));
    assert!(reply(&router, "m-2").is_err(), "a denied request has no reply");
    assert!(reply(&router, "m-9").is_err(), "an unknown request has no reply");
    assert_eq!(router.asked(), ["m-1", "m-2", "m-9"]);
}

#[test]
fn the_router_can_answer_in_each_malformed_shape() {
    let transport = Rc::new(RecordingTransport::default());
    let router = ReplyRouter::new(Rc::clone(&transport));
    deliver(&transport, "m-1");
    let shaped = |shape| {
        router.set_shape(shape);
        reply(&router, "m-1")
    };
    assert_eq!(shaped(ReplyShape::WrongReplyTo).unwrap()["replyTo"], "m-1-elsewhere");
    assert_eq!(shaped(ReplyShape::PartiesNotReversed).unwrap()["sender"], serde_json::to_value(agent()).unwrap());
    assert_ne!(shaped(ReplyShape::ChangedPurpose).unwrap()["purpose"], PURPOSE);
    assert_ne!(shaped(ReplyShape::ChangedTrace).unwrap()["traceId"], TRACE_ID);
    assert!(MessageEnvelope::from_value(&shaped(ReplyShape::UnknownKey).unwrap()).is_err());
    assert!(shaped(ReplyShape::NotAnEnvelope).unwrap().is_array());
    assert!(shaped(ReplyShape::Throws).is_err());
}
