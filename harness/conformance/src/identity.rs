//! Every hash the harness publishes, and the domain tag of each.

pub mod case_set;
pub mod cell_identity;
pub mod record_hashes;
