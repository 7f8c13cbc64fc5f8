//! Whether a grant is active at a decision's two instants (30-kernel §3.3).
//!
//! The operation clock may only take authority away. Expiry is judged at the
//! later of admission and operation, so a clock running backwards cannot
//! revive a grant; everything that would widen authority (`issuedAt`,
//! `notBefore`) or that only a store re-read could reveal (revocation, purpose
//! edits) stays frozen at admission.

use sharedos_model::capability::Grant;
use sharedos_model::instant::Instant;

/// The two instants one decision is made at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Instants {
    /// When the turn's authority was resolved.
    pub admitted_at: Instant,
    /// When the operation happens.
    pub now: Instant,
}

impl Instants {
    /// A decision made at the admission instant itself.
    #[must_use]
    pub fn at_admission(admitted_at: Instant) -> Instants {
        Instants { admitted_at, now: admitted_at }
    }

    /// The instant expiry is judged at: the later of the two.
    #[must_use]
    pub fn expiry_instant(self) -> Instant {
        self.admitted_at.max(self.now)
    }
}

/// Why a grant is not active.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Inactivity {
    /// Outside its validity window (or a declared timestamp does not parse).
    Window,
    /// The context's purpose is not among the grant's purposes.
    Purpose,
}

impl Inactivity {
    /// The audit spelling (the grant rejection reason).
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Inactivity::Window => "window",
            Inactivity::Purpose => "purpose",
        }
    }
}

/// A declared timestamp: `None` when absent, `Some(None)` when unparsable.
fn declared(text: Option<&str>) -> Option<Option<Instant>> {
    text.map(Instant::parse)
}

/// True when the grant's validity window excludes these instants.
fn outside_window(grant: &Grant, at: Instants) -> bool {
    let constraints = &grant.constraints;
    let issued_late = Instant::parse(&grant.issued_at).is_none_or(|issued| issued > at.admitted_at);
    let too_early =
        declared(constraints.not_before.as_deref()).is_some_and(|nb| nb.is_none_or(|nb| at.admitted_at < nb));
    let expired =
        declared(constraints.expires_at.as_deref()).is_some_and(|exp| exp.is_none_or(|exp| at.expiry_instant() >= exp));
    let revoked = declared(grant.revoked_at.as_deref()).is_some_and(|rev| rev.is_none_or(|rev| at.admitted_at >= rev));
    issued_late || too_early || expired || revoked
}

/// The first reason `grant` is inactive for `purpose` at `at`, or `None`
/// when it is active.
#[must_use]
pub fn inactive_reason(grant: &Grant, purpose: &str, at: Instants) -> Option<Inactivity> {
    if outside_window(grant, at) {
        return Some(Inactivity::Window);
    }
    match &grant.constraints.purposes {
        Some(purposes) if !purposes.iter().any(|p| p == purpose) => Some(Inactivity::Purpose),
        _ => None,
    }
}

/// True when `grant` is active for `purpose` at `at`.
#[must_use]
pub fn is_active(grant: &Grant, purpose: &str, at: Instants) -> bool {
    inactive_reason(grant, purpose, at).is_none()
}
