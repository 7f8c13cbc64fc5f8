//! The messaging family's part of a cell (M1–M28, `docs/rules/messaging.md`):
//! the host sends and host requests made
//! before the first turn, the inbound turn a request can be rebuilt as, and
//! the port effects a snapshot shows.
//!
//! A runner touches it at three places, all through [`MessagingRun`]:
//! before the turns (host operations), when grading (each host operation
//! and the effects expectation is handed to the judge as an attempt, see
//! the grade stage's `messaging` module), and when the snapshot is taken (port
//! effects). A world without the option is left exactly as it was, so no
//! other row's verdict or snapshot moves.

pub mod effects;
pub mod host_request;
pub mod host_send;
pub mod inbound;

use crate::input::world::World;
use crate::run::turns::ExecutedTurn;
use host_request::HostRequestReport;
use host_send::HostSendReport;
use serde_json::Value;
use sharedos_world::options::messaging::MessagingOptions;
use sharedos_world::options::WorldOptions;

/// One cell's messaging state between the runner's hooks.
#[derive(Debug, Clone, Default)]
pub struct MessagingRun {
    options: Option<MessagingOptions>,
    reports: Vec<HostSendReport>,
    requests: Vec<HostRequestReport>,
}

impl MessagingRun {
    /// Makes the world's host sends, then its host requests (none without
    /// the option).
    pub async fn before_turns(world: &World, options: &WorldOptions) -> MessagingRun {
        let options = options.messaging.clone();
        let reports = host_send::run_host_sends(world, options.as_ref()).await;
        let requests = host_request::run_host_requests(world, options.as_ref()).await;
        MessagingRun { options, reports, requests }
    }

    /// What each host send did, in order.
    #[must_use]
    pub fn reports(&self) -> &[HostSendReport] {
        &self.reports
    }

    /// What each host request got back, in order.
    #[must_use]
    pub fn requests(&self) -> &[HostRequestReport] {
        &self.requests
    }

    /// The option the operations were made for, when the world arms it.
    #[must_use]
    pub fn options(&self) -> Option<&MessagingOptions> {
        self.options.as_ref()
    }

    /// The effects a snapshot holds under `world.messaging`, when the option is armed.
    #[must_use]
    pub fn snapshot_effects(&self, world: &World, turns: &[ExecutedTurn]) -> Option<Value> {
        self.options.is_some().then(|| effects::messaging_effects(world, turns, &self.reports, &self.requests))
    }
}
