//! The messaging family's part of a cell (M1–M28, `docs/rules/messaging.md`):
//! the host sends and host requests made before the first turn, the inbound
//! turn a request can be rebuilt as, and what the message ports show once
//! the turns have run.
//!
//! This stage only observes: what each host operation was answered, and
//! what the transport and router were handed. Whether that meets the row's
//! expectations is decided by the grade stage's `messaging` module from the
//! [`MessagingObservation`] kept in the cell's evidence, so `verify` grades
//! a messaging row again exactly as it grades every other row. A world
//! without the option is left exactly as it was.

pub mod host_request;
pub mod host_send;
pub mod inbound;
pub mod ports;

use crate::input::world::World;
use crate::record::turn::ExecutedTurn;
use host_request::HostRequestObservation;
use host_send::HostSendObservation;
use ports::PortObservation;
use serde::{Deserialize, Serialize};
use sharedos_world::options::WorldOptions;

/// Everything a messaging cell's run observed, graded later.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MessagingObservation {
    /// What each host send was answered, in the order made.
    pub host_sends: Vec<HostSendObservation>,
    /// What each host request got back, in the order made.
    pub host_requests: Vec<HostRequestObservation>,
    /// What the message ports show after the last turn.
    pub ports: PortObservation,
}

/// One cell's messaging state between the runner's hooks.
#[derive(Debug, Clone, Default)]
pub struct MessagingRun {
    armed: bool,
    host_sends: Vec<HostSendObservation>,
    host_requests: Vec<HostRequestObservation>,
}

impl MessagingRun {
    /// Makes the world's host sends, then its host requests (none without
    /// the option).
    pub async fn before_turns(world: &World, options: &WorldOptions) -> MessagingRun {
        let Some(options) = options.messaging.as_ref() else { return MessagingRun::default() };
        let host_sends = host_send::run_host_sends(world, options).await;
        let host_requests = host_request::run_host_requests(world, options).await;
        MessagingRun { armed: true, host_sends, host_requests }
    }

    /// What the run observed, once the turns have run; `None` when the
    /// world does not arm the option.
    #[must_use]
    pub fn observe(self, world: &World, turns: &[ExecutedTurn]) -> Option<MessagingObservation> {
        self.armed.then(|| MessagingObservation {
            host_sends: self.host_sends,
            host_requests: self.host_requests,
            ports: PortObservation::read(world, turns),
        })
    }
}
