//! The messaging side of a conformance world (M1–M28): recipients
//! besides the owner, the acting agent's recipient-scoped send grants
//! (unbounded, single-use, revoked or absent), each recipient agent's own
//! execution and read grants, which message ports are attached and how they
//! answer, and the access context an inbound turn runs under.
//!
//! Every grant here is issued by trusted setup. Send grants belong to the
//! acting agent (the sender); execution and read grants belong to the
//! recipient, so an inbound turn can only ever use the recipient's authority.

use super::constants::{self, EXECUTION, FILES, MESSAGING};
use super::grants::{owned_capability, world_grant, GrantSet, GRANT_MESSAGE, ROOT_FILES};
use super::options::messaging::{MessagingOptions, SendOption};
use super::transport::{RecordingTransport, ReplyRouter, ReplyShape, TransportMode};
use sharedos_kernel::ports::{MessageCapabilityResolver, MessageIdFactory, ParsedCall};
use sharedos_model::access::AccessContext;
use sharedos_model::address::Address;
use sharedos_model::capability::{Capability, Requirement, ResourceRef, Scope};
use sharedos_model::message::MessageEnvelope;
use std::cell::Cell;
use std::rc::Rc;

/// The id of the acting agent's send grant to `recipient`.
#[must_use]
pub fn send_grant_id(recipient: &Address) -> String {
    format!("grant-send-{}", recipient.id())
}

/// The id of the root the send grant to `recipient` derives from.
#[must_use]
pub fn send_root_id(recipient: &Address) -> String {
    format!("grant-root-send-{}", recipient.id())
}

/// The id of `agent`'s own execution grant.
#[must_use]
pub fn execution_grant_id(agent: &Address) -> String {
    format!("grant-turn-{}", agent.id())
}

/// The id of the root `agent`'s execution grant derives from.
#[must_use]
pub fn execution_root_id(agent: &Address) -> String {
    format!("grant-root-execution-{}", agent.id())
}

/// The id of `agent`'s own workspace read grant (under the workspace root).
#[must_use]
pub fn read_grant_id(agent: &Address) -> String {
    format!("grant-read-{}", agent.id())
}

/// An exact capability over `[kind, id]` of `address` in `namespace`, owned
/// by the world's owner: the shape of both send and execution capabilities.
#[must_use]
pub fn exact_capability(namespace: &str, address: &Address, action: &str) -> Capability {
    Capability {
        resource: ResourceRef {
            namespace: namespace.to_string(),
            path: address.path(),
            owner: Some(constants::owner()),
        },
        actions: vec![action.to_string()],
        scope: Scope::Exact,
    }
}

impl MessagingOptions {
    /// Adds every recipient grant (and its root) to `set`, and drops the
    /// owner send grant when withheld.
    pub fn extend_grants(&self, set: &mut GrantSet) {
        let (owner, orchestrator, sender) = (constants::owner(), constants::orchestrator(), constants::agent());
        if self.owner_send_withheld {
            set.agent.retain(|g| g.id != GRANT_MESSAGE);
        }
        for recipient in &self.recipients {
            let address = &recipient.address;
            if recipient.send != SendOption::None {
                let capability = exact_capability(MESSAGING, address, constants::SEND_ACTION);
                let root = send_root_id(address);
                set.roots.push(Rc::new(world_grant(&root, &owner, &orchestrator, capability.clone(), 2, None)));
                let mut grant =
                    world_grant(&send_grant_id(address), &orchestrator, &sender, capability, 1, Some(&root));
                grant.constraints.max_uses = (recipient.send == SendOption::Bounded).then_some(1);
                set.agent.push(Rc::new(grant));
            }
            if recipient.execution {
                let capability = exact_capability(EXECUTION, address, constants::INVOKE_ACTION);
                let root = execution_root_id(address);
                set.roots.push(Rc::new(world_grant(&root, &owner, &orchestrator, capability.clone(), 2, None)));
                set.agent.push(Rc::new(world_grant(
                    &execution_grant_id(address),
                    &orchestrator,
                    address,
                    capability,
                    1,
                    Some(&root),
                )));
            }
            if recipient.reads {
                let capability = owned_capability(FILES, &constants::WORKSPACE, &constants::READ_ACTIONS);
                set.agent.push(Rc::new(world_grant(
                    &read_grant_id(address),
                    &orchestrator,
                    address,
                    capability,
                    1,
                    Some(ROOT_FILES),
                )));
            }
        }
    }

    /// The send grants revoked before the turn.
    #[must_use]
    pub fn revoked_grant_ids(&self) -> Vec<String> {
        self.recipients.iter().filter(|r| r.send == SendOption::Revoked).map(|r| send_grant_id(&r.address)).collect()
    }

    /// Arms the transport and router fixtures (attached or not, they exist).
    pub fn arm_ports(&self, transport: &RecordingTransport, router: &ReplyRouter) {
        if let Some(mode) = self.transport {
            transport.set_mode(mode);
        }
        if let Some(n) = self.lease_closes_after {
            transport.close_lease_after(u64::from(n));
        }
        if let Some(shape) = self.router {
            router.set_shape(shape);
        }
    }

    /// Whether the kernel is given a transport.
    #[must_use]
    pub fn transport_attached(&self) -> bool {
        self.transport != Some(TransportMode::Absent)
    }

    /// Whether the kernel is given a reply router.
    #[must_use]
    pub fn router_attached(&self) -> bool {
        self.router != Some(ReplyShape::Absent)
    }
}

/// The access context of a turn or send acting as `actor` at `now` on
/// `trace_id`, under the orchestrator's authority over the owner's resources.
#[must_use]
pub fn acting_context(now: &str, trace_id: &str, actor: &Address) -> AccessContext {
    AccessContext { actor: actor.clone(), ..constants::context(now, trace_id) }
}

/// The messaging world's message ids: `<traceId>-message-<n>`, counted per
/// world, so every request of a turn is told apart and none is the call id.
#[must_use]
pub fn counted_message_ids() -> MessageIdFactory {
    let next = Rc::new(Cell::new(0_u64));
    Rc::new(move |context: &AccessContext, _call: &ParsedCall| {
        let n = next.get() + 1;
        next.set(n);
        format!("{}-message-{n}", context.trace_id)
    })
}

/// A message capability resolver that always throws: a broken resolver
/// must fail the send closed, never fall back to the default requirement.
#[derive(Debug, Clone, Copy, Default)]
pub struct ThrowingResolver;

/// The message a throwing resolver throws.
pub const RESOLVER_THROWS: &str = "the message capability resolver is unavailable";

impl MessageCapabilityResolver for ThrowingResolver {
    fn resolve(&self, _context: &AccessContext, _envelope: &MessageEnvelope) -> Result<Requirement, String> {
        Err(RESOLVER_THROWS.to_string())
    }
}
