//! The world's message transport and reply router. The transport records
//! what it accepted and answers with receipts a condition shapes (accept,
//! reject, throw, or close the route lease after N accepted dispatches).
//! The router answers only requests the transport accepted, with a
//! well-formed reply or one of the malformed shapes a condition asks for.

use futures::future::LocalBoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use sharedos_kernel::ports::{MessageRequestRouter, MessageTransport};
use sharedos_model::access::AccessContext;
use sharedos_model::message::{MessageDeliveryResult, MessageEnvelope, PROTOCOL_VERSION};
use sharedos_model::tool::ProtocolError;
use sharedos_port::signal::AbortSignal;
use std::cell::{Cell, RefCell};
use std::rc::Rc;

/// The host code a closed route lease refuses with (never an authorization code).
pub const ROUTE_LEASE_REVOKED: &str = "route_lease_revoked";
/// The host code a rejecting transport answers with (a `denied` receipt).
pub const RECIPIENT_UNREACHABLE: &str = "recipient_unreachable";
/// The host code a failing transport answers with (a `failed` receipt).
pub const CARRIER_UNAVAILABLE: &str = "carrier_unavailable";

/// How the transport answers a dispatch, as a world's `messaging.transport`
/// option names it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TransportMode {
    /// `accepted` receipts.
    #[default]
    Accepting,
    /// `delivered` receipts.
    Delivering,
    /// `denied` receipts with the host code `recipient_unreachable`.
    Rejecting,
    /// `failed` receipts with the host code `carrier_unavailable`.
    Failing,
    /// The transport throws.
    Throwing,
    /// `accepted` receipts naming another message, which the kernel must
    /// refuse (M10).
    MismatchedReceipt,
    /// No transport is given to the kernel (the fixture, never called,
    /// would answer as one that throws).
    Absent,
}

/// One dispatch the transport saw.
#[derive(Debug, Clone, PartialEq)]
pub struct Dispatch {
    /// The envelope as handed over.
    pub envelope: MessageEnvelope,
    /// The receipt returned (absent when it threw).
    pub receipt: Option<Value>,
}

impl Dispatch {
    /// Whether the transport took the envelope (accepted or delivered).
    fn was_accepted(&self) -> bool {
        self.receipt.as_ref().is_some_and(receipt_accepted)
    }
}

/// The recording transport.
pub struct RecordingTransport {
    mode: Cell<TransportMode>,
    close_lease_after: Cell<Option<u64>>,
    dispatches: RefCell<Vec<Dispatch>>,
}

impl Default for RecordingTransport {
    fn default() -> RecordingTransport {
        RecordingTransport::new(TransportMode::Accepting)
    }
}

impl RecordingTransport {
    /// A transport answering in `mode`.
    #[must_use]
    pub fn new(mode: TransportMode) -> RecordingTransport {
        RecordingTransport {
            mode: Cell::new(mode),
            close_lease_after: Cell::new(None),
            dispatches: RefCell::new(Vec::new()),
        }
    }

    /// Changes how later dispatches are answered.
    pub fn set_mode(&self, mode: TransportMode) {
        self.mode.set(mode);
    }

    /// Every dispatch after `n` accepted ones is `denied route_lease_revoked`.
    pub fn close_lease_after(&self, n: u64) {
        self.close_lease_after.set(Some(n));
    }

    /// Every dispatch, in order.
    #[must_use]
    pub fn dispatches(&self) -> Vec<Dispatch> {
        self.dispatches.borrow().clone()
    }

    /// How many envelopes the transport took, without copying them.
    #[must_use]
    pub fn accepted_count(&self) -> usize {
        self.dispatches.borrow().iter().filter(|d| d.was_accepted()).count()
    }

    /// Envelopes the transport took (accepted or delivered), in order.
    #[must_use]
    pub fn accepted(&self) -> Vec<MessageEnvelope> {
        self.dispatches.borrow().iter().filter(|d| d.was_accepted()).map(|d| d.envelope.clone()).collect()
    }

    /// Whether the request `message_id` was taken for delivery.
    #[must_use]
    pub fn was_accepted(&self, message_id: &str) -> bool {
        self.accepted().iter().any(|e| e.id == message_id)
    }

    fn receipt(&self, envelope: &MessageEnvelope, at: &str) -> Option<MessageDeliveryResult> {
        let (message_id, timestamp) = (envelope.id.clone(), at.to_string());
        let lease_closed = self.close_lease_after.get().is_some_and(|n| self.accepted().len() as u64 >= n);
        if lease_closed {
            let error = ProtocolError::new(ROUTE_LEASE_REVOKED, "the route lease was closed by the host");
            return Some(MessageDeliveryResult::Denied { message_id, timestamp, error, metadata: None });
        }
        match self.mode.get() {
            TransportMode::Accepting => Some(MessageDeliveryResult::Accepted { message_id, timestamp, metadata: None }),
            TransportMode::Delivering => {
                Some(MessageDeliveryResult::Delivered { message_id, timestamp, metadata: None })
            }
            TransportMode::Rejecting => {
                let error = ProtocolError::new(RECIPIENT_UNREACHABLE, "the transport refused the message");
                Some(MessageDeliveryResult::Denied { message_id, timestamp, error, metadata: None })
            }
            TransportMode::Failing => {
                let error = ProtocolError::new(CARRIER_UNAVAILABLE, "the transport could not deliver the message");
                Some(MessageDeliveryResult::Failed { message_id, timestamp, error, metadata: None })
            }
            TransportMode::MismatchedReceipt => Some(MessageDeliveryResult::Accepted {
                message_id: format!("{message_id}.other"),
                timestamp,
                metadata: None,
            }),
            TransportMode::Throwing | TransportMode::Absent => None,
        }
    }
}

fn receipt_accepted(receipt: &Value) -> bool {
    matches!(receipt.get("status").and_then(Value::as_str), Some("accepted" | "delivered"))
}

impl MessageTransport for RecordingTransport {
    fn deliver<'a>(
        &'a self,
        context: &'a AccessContext,
        envelope: &'a MessageEnvelope,
        _signal: &'a AbortSignal,
    ) -> LocalBoxFuture<'a, Result<Value, String>> {
        Box::pin(async move {
            let receipt = match self.receipt(envelope, &context.now) {
                Some(receipt) => Some(serde_json::to_value(receipt).map_err(|e| e.to_string())?),
                None => None,
            };
            self.dispatches.borrow_mut().push(Dispatch { envelope: envelope.clone(), receipt: receipt.clone() });
            receipt.ok_or_else(|| "the transport is unreachable".to_string())
        })
    }
}

/// What shape of reply the router fabricates, as a world's
/// `messaging.router` option names it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReplyShape {
    /// Answers the request: reversed parties, same purpose and trace, `replyTo` = request id.
    #[default]
    WellFormed,
    /// `replyTo` names another message.
    WrongReplyTo,
    /// Sender and receiver are not reversed.
    PartiesNotReversed,
    /// The purpose differs from the request's.
    ChangedPurpose,
    /// The trace differs from the request's.
    ChangedTrace,
    /// Carries a key no envelope has (`intent`).
    UnknownKey,
    /// Not an envelope at all.
    NotAnEnvelope,
    /// The router throws.
    Throws,
    /// No router is given to the kernel (the fixture, never called, would
    /// answer as one that throws).
    Absent,
}

/// The reply router over the transport's log.
pub struct ReplyRouter {
    transport: Rc<RecordingTransport>,
    shape: Cell<ReplyShape>,
    payload: RefCell<Value>,
    asked: RefCell<Vec<String>>,
    answered: RefCell<Vec<Value>>,
}

impl ReplyRouter {
    /// A router answering well-formed replies for `transport`'s accepted requests.
    #[must_use]
    pub fn new(transport: Rc<RecordingTransport>) -> ReplyRouter {
        ReplyRouter {
            transport,
            shape: Cell::new(ReplyShape::WellFormed),
            payload: RefCell::new(json!({"answer": "received"})),
            asked: RefCell::new(Vec::new()),
            answered: RefCell::new(Vec::new()),
        }
    }

    /// Changes the shape of later replies.
    pub fn set_shape(&self, shape: ReplyShape) {
        self.shape.set(shape);
    }

    /// Changes the payload of later replies.
    pub fn set_payload(&self, payload: Value) {
        *self.payload.borrow_mut() = payload;
    }

    /// Request ids the router was asked about, in order.
    #[must_use]
    pub fn asked(&self) -> Vec<String> {
        self.asked.borrow().clone()
    }

    /// Every reply the router handed back, as handed, in order.
    #[must_use]
    pub fn answered(&self) -> Vec<Value> {
        self.answered.borrow().clone()
    }

    /// The reply to `request` in the configured shape.
    ///
    /// # Errors
    /// When the request was never accepted, or the shape is `Throws`.
    pub fn reply(&self, request: &MessageEnvelope, at: &str) -> Result<Value, String> {
        let reply = self.shaped_reply(request, at)?;
        self.answered.borrow_mut().push(reply.clone());
        Ok(reply)
    }

    fn shaped_reply(&self, request: &MessageEnvelope, at: &str) -> Result<Value, String> {
        self.asked.borrow_mut().push(request.id.clone());
        if !self.transport.was_accepted(&request.id) {
            return Err(format!("no accepted request `{}`", request.id));
        }
        let mut reply = MessageEnvelope {
            version: PROTOCOL_VERSION.to_string(),
            id: format!("{}-reply", request.id),
            sender: request.receiver.clone(),
            receiver: request.sender.clone(),
            purpose: request.purpose.clone(),
            payload: self.payload.borrow().clone(),
            trace_id: request.trace_id.clone(),
            created_at: at.to_string(),
            reply_to: Some(request.id.clone()),
            provenance: None,
        };
        match self.shape.get() {
            ReplyShape::WellFormed | ReplyShape::UnknownKey => {}
            ReplyShape::WrongReplyTo => reply.reply_to = Some(format!("{}-elsewhere", request.id)),
            ReplyShape::PartiesNotReversed => reply.sender = request.sender.clone(),
            ReplyShape::ChangedPurpose => reply.purpose = format!("{}-changed", request.purpose),
            ReplyShape::ChangedTrace => reply.trace_id = format!("{}-changed", request.trace_id),
            ReplyShape::NotAnEnvelope => return Ok(json!(["not", "an", "envelope"])),
            ReplyShape::Throws | ReplyShape::Absent => return Err("the reply router broke".to_string()),
        }
        let mut value = serde_json::to_value(reply).map_err(|e| e.to_string())?;
        if self.shape.get() == ReplyShape::UnknownKey {
            if let Some(map) = value.as_object_mut() {
                map.insert("intent".into(), json!("grant"));
            }
        }
        Ok(value)
    }
}

impl MessageRequestRouter for ReplyRouter {
    fn resolve_reply<'a>(
        &'a self,
        context: &'a AccessContext,
        request: &'a MessageEnvelope,
        _delivery: &'a Value,
        _signal: &'a AbortSignal,
    ) -> LocalBoxFuture<'a, Result<Value, String>> {
        Box::pin(async move { self.reply(request, &context.now) })
    }
}
