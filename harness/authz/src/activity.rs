//! Whether a grant is active at a decision's two instants (K15–K18).
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

/// A grant's declared instants, parsed once so a batch of decisions can
/// judge the same grant many times without reading its text again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    issued: Option<Instant>,
    not_before: Option<Option<Instant>>,
    expires: Option<Option<Instant>>,
    revoked: Option<Option<Instant>>,
}

impl Window {
    /// The window `grant` declares.
    #[must_use]
    pub fn of(grant: &Grant) -> Window {
        let constraints = &grant.constraints;
        Window {
            issued: Instant::parse(&grant.issued_at),
            not_before: declared(constraints.not_before.as_deref()),
            expires: declared(constraints.expires_at.as_deref()),
            revoked: declared(grant.revoked_at.as_deref()),
        }
    }

    /// True when the window excludes these instants.
    fn excludes(self, at: Instants) -> bool {
        let issued_late = self.issued.is_none_or(|issued| issued > at.admitted_at);
        let too_early = self.not_before.is_some_and(|nb| nb.is_none_or(|nb| at.admitted_at < nb));
        let expired = self.expires.is_some_and(|exp| exp.is_none_or(|exp| at.expiry_instant() >= exp));
        let revoked = self.revoked.is_some_and(|rev| rev.is_none_or(|rev| at.admitted_at >= rev));
        issued_late || too_early || expired || revoked
    }
}

/// The first reason `grant` is inactive for `purpose` at `at`, or `None`
/// when it is active.
#[must_use]
pub fn inactive_reason(grant: &Grant, purpose: &str, at: Instants) -> Option<Inactivity> {
    inactive_reason_in(grant, Window::of(grant), purpose, at)
}

/// [`inactive_reason`] with the grant's window already parsed.
#[must_use]
pub fn inactive_reason_in(grant: &Grant, window: Window, purpose: &str, at: Instants) -> Option<Inactivity> {
    if window.excludes(at) {
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

#[cfg(test)]
mod tests {
    use super::Inactivity;

    /// The rejection reasons the audit trail spells out.
    #[test]
    fn each_inactivity_has_its_audit_spelling() {
        assert_eq!((Inactivity::Window.as_str(), Inactivity::Purpose.as_str()), ("window", "purpose"));
    }
}
