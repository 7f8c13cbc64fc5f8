//! The messaging family's part of a cell (`60-rule-families.md`, Messaging;
//! `40-messaging-drivers.md` §1): the `messaging` world option, the host
//! sends made before the first turn, the inbound turn a request can be
//! rebuilt as, the port effects a snapshot shows, and how host sends and
//! effects are graded alongside the script's attempts.
//!
//! A runner touches it at three places, all through [`MessagingRun`]:
//! before the turns (host sends), after the judge (regrading), and when the
//! snapshot is taken (port effects). A world without the option is left
//! exactly as it was, so no other row's verdict or snapshot moves.

pub mod effects;
pub mod grading;
pub mod host;
pub mod host_request;
pub mod inbound;
pub mod options;

use crate::judge::Judgement;
use crate::run::turns::ExecutedTurn;
use crate::script::Expectation;
use crate::world::World;
use host::HostSendReport;
use host_request::HostRequestReport;
use serde_json::Value;
use sharedos_model::tool::ToolStatus;
use sharedos_world::options::messaging::MessagingOptions;
use sharedos_world::options::WorldOptions;

/// A tool expectation of only statuses and codes: how host operations and
/// the effects probe are shown among a row's graded attempts.
#[must_use]
pub fn tool_expectation(statuses: Vec<ToolStatus>, reason_codes: Option<Vec<String>>) -> Expectation {
    Expectation { statuses, reason_codes, refused_by: None, rejection: None }
}

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
        let reports = host::run_host_sends(world, options.as_ref()).await;
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

    /// `judgement` with host sends and effects graded in.
    pub fn regrade(&self, judgement: Judgement, with: &grading::Regrading<'_>) -> Judgement {
        match &self.options {
            Some(options) => grading::regrade(judgement, options, self, with),
            None => judgement,
        }
    }

    /// The effects a snapshot holds under `world.messaging`, when the option is armed.
    #[must_use]
    pub fn snapshot_effects(&self, world: &World, turns: &[ExecutedTurn]) -> Option<Value> {
        self.options.is_some().then(|| effects::messaging_effects(world, turns, &self.reports, &self.requests))
    }
}
