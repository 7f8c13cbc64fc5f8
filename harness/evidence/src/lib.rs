//! Certification bundles: one column certified over the whole canonical
//! suite, with the evidence, the suite and a signed statement (written by
//! `sharedos-conformance`'s `certify`, which runs the column), and the
//! offline check of such a bundle, which grades again without running; the
//! comparison of two manifests (`compare`), and the committed verdicts a
//! real-clock column is held to (`verdicts`).

pub mod archive;
pub mod bundle;
mod claims;
pub mod compare;
pub mod dsse;
pub mod environment;
mod recompute;
mod regrade;
pub mod statement;
pub mod verdicts;
pub mod verify;
