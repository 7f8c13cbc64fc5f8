//! Whether anything of a cell's turns outlived them: virtual time runs on
//! past the last result, and the world is compared before and after (E60).

use sharedos_grading::input::world::World;
use std::time::Duration;

/// How far virtual time is advanced after the last turn to see whether
/// anything of it still runs: the longest turn a request may ask for.
pub const QUIET_WINDOW: Duration = Duration::from_millis(600_000);

/// Counters of everything a turn can leave in its world, compared before
/// and after the quiet window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WorldActivity {
    /// Accepted audit records.
    pub audit_records: usize,
    /// Audit records the sink refused.
    pub refused_audit_records: usize,
    /// Accepted message deliveries.
    pub deliveries: usize,
    /// Ledger journal lines.
    pub ledger_lines: usize,
}

impl WorldActivity {
    /// What changed from `self` to `later`, in words (empty when nothing did).
    #[must_use]
    pub fn changes_to(&self, later: &WorldActivity) -> Vec<String> {
        let mut changes = Vec::new();
        let mut note = |what: &str, before: usize, after: usize| {
            if after != before {
                changes.push(format!("{} {what}", after.saturating_sub(before)));
            }
        };
        note("audit records", self.audit_records, later.audit_records);
        note("refused audit records", self.refused_audit_records, later.refused_audit_records);
        note("deliveries", self.deliveries, later.deliveries);
        note("ledger movements", self.ledger_lines, later.ledger_lines);
        changes
    }
}

/// Everything the world holds that a turn can add to.
fn world_activity(world: &World) -> WorldActivity {
    let (audit_records, refused_audit_records) = world.fixtures.audit.counts();
    WorldActivity {
        audit_records,
        refused_audit_records,
        deliveries: world.fixtures.transport.accepted_count(),
        ledger_lines: world.ledger.as_ref().map_or(0, |l| l.journal_len()),
    }
}

/// What the world gained while virtual time ran on for [`QUIET_WINDOW`]
/// after the last result: nothing, when no timer or task of a turn
/// outlived it (E60). Under a paused clock the window costs nothing.
pub async fn activity_after_result(world: &World) -> Vec<String> {
    let before = world_activity(world);
    tokio::time::sleep(QUIET_WINDOW).await;
    before.changes_to(&world_activity(world))
}
