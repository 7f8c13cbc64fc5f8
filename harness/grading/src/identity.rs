//! Every hash the harness publishes, and the domain tag of each: what a
//! record's `experiment` and `system` hashes cover, the case-set, world-set
//! and prompt-set hashes, and the evidence root.

pub mod case_set;
pub mod cell_identity;
pub mod sets;
pub mod tags;
pub mod world;
