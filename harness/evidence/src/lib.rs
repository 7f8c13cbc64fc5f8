//! Certification bundles: one column certified over the whole canonical
//! suite, with the evidence, the suite and a signed statement (written by
//! `sharedos-conformance`'s `certify`, which runs the column), and the
//! offline check of such a bundle, which grades again without running; the
//! comparison of two manifests (`compare`), and the committed verdicts a
//! real-clock column is held to (`verdicts`); the partial bundles of a
//! sharded certification joined into one (`merge`); and the matrix as one
//! self-contained HTML page (`page`).

pub mod archive;
pub mod bundle;
mod claims;
pub mod compare;
pub mod dsse;
pub mod environment;
pub mod merge;
pub mod page;
mod recompute;
mod regrade;
pub mod seal;
pub mod statement;
pub mod verdicts;
pub mod verify;
