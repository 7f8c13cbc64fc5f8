//! The renderings of a run's events ([`crate::suite::event`]): lines for a
//! person, JSON Lines for a CI system, and a JUnit file. Each takes the
//! events alone, so all three say the same thing about a run.

pub mod human;
pub mod jsonl;
pub mod junit;
