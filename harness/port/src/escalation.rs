//! The escalation affordance's name, which the kernel registers, the
//! envelope checks an `escalate` outcome against, and seats offer.

/// The tool a runtime calls to ask a human for more authority.
pub const ESCALATION_TOOL: &str = "sharedos.escalate";
