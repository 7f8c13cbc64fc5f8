//! What a run leaves behind: golden snapshots (a messaging cell's port
//! effects among them) and their comparison, the manifest, its reason-code
//! coverage and its Markdown, evidence lines, files written atomically, and
//! untrusted text made printable.

pub mod atomic;
pub mod coverage;
pub mod evidence;
pub mod golden;
pub mod manifest;
pub mod markdown;
pub mod messaging;
pub mod printable;
pub mod snapshot;
