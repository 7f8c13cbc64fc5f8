//! Grading: the suite as written, the record of a turn, the judge, and the
//! manifest. Everything here is read, computed or rendered; nothing runs a
//! runtime, starts a process or opens a socket, so a bundle's verifier
//! (`sharedos-evidence`) builds on this crate alone and grades a bundle
//! exactly as a run grades its cells (`sharedos-conformance` runs them).
//!
//! ```text
//! vocab      CellKey, CellStatus and RULES_VERSION, GradingLimits: words every stage shares
//!   │
//! input      cases/*.json, adversaries/*.json, seats ──> Suite (refused whole, with file and pointer);
//!   │        World::build arms a condition's kernel
//! column     the columns: built in, and one per seat, with what each can carry
//!   │
//! identity   every hash a manifest or record carries, and every domain tag
//!   │
//! record     a turn ──> ExecutionRecord; its events, the receipts inside it, its redaction
//!   │
//! messaging  host-driven messaging around the turns, observed (never judged)
//!   │
//! grade      receipts + the last record + messaging observations ──> judge (once) ──> Cell
//!   │
//! output     snapshot ──> golden compare; manifest ──> Markdown; atomic file writes
//!   │
//! plan       the cells a selection holds, those decided without running, and shards
//!   │
//! assemble   graded cells ──> the manifest (one path for a run and for `merge`)
//! ```
//!
//! Each stage reads only the ones above it: `grade` reads records and
//! receipts but never runs a turn, and `output` renders what `grade`
//! decided. `scripts/module-graph.py --check` fails on an import that runs
//! back up.

#![forbid(unsafe_code)]

pub mod assemble;
pub mod column;
pub mod grade;
pub mod identity;
pub mod input;
pub mod messaging;
pub mod output;
pub mod plan;
pub mod record;
pub mod vocab;
