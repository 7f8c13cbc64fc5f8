//! Every domain tag the harness hashes under. A hash is SHA-256 over its
//! tag, a newline and the RFC 8785 canonical bytes of what it covers, so
//! two kinds of hash never collide; a tag's version moves whenever what it
//! covers does.

/// The hash scheme a manifest names.
pub const HASH_SCHEME: &str = "sha256-tagged-jcs/v1";
/// Every case and the scripts they use, minus prose.
pub const CASE_SET: &str = "sharedos-conformance/case-set/v1";
/// Per case and condition, the hash of the world it materialises.
pub const WORLD_SET: &str = "sharedos-conformance/world-set/v2";
/// Per column, the ordered prompt hashes its runtime stated.
pub const PROMPT_SET: &str = "sharedos-conformance/prompt-set/v1";
/// Every run cell's record hashes, in canonical order.
pub const EVIDENCE_ROOT: &str = "sharedos-conformance/evidence-root/v1";
/// One execution record.
pub const RECORD: &str = "sharedos-conformance/record/v1";
/// The question a cell asks: case, script and condition.
pub const SPEC: &str = "sharedos-conformance/spec/v1";
/// One materialised world.
pub const WORLD: &str = "sharedos-conformance/world/v1";
/// The grading rules.
pub const EVALUATOR: &str = "sharedos-conformance/evaluator/v1";
/// The tool policy a turn ran under.
pub const POLICY: &str = "sharedos-conformance/policy/v1";
