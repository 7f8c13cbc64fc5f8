//! The claim a bundle makes, as an in-toto Statement (v1): its subjects
//! are the bundle's files with their SHA-256 digests, its predicate what
//! was certified, under which rules, with which hashes, where.

use crate::bundle::BundleFile;
use crate::environment::Environment;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use sharedos_grading::output::manifest::Manifest;
use sharedos_grading::plan::shard::Shard;
use sharedos_grading::vocab::{CellKey, CellStatus};
use sharedos_model::record::ExecutionRecord;
use std::collections::BTreeMap;

/// `_type` of an in-toto Statement v1.
pub const STATEMENT_TYPE: &str = "https://in-toto.io/Statement/v1";
/// The predicate type of a certification.
pub const PREDICATE_TYPE: &str = "https://sharedos-conformance.dev/certification/v1";
/// The harness that certifies (`predicate.harness.name`).
pub const HARNESS_NAME: &str = "sharedos-conformance";

/// An in-toto Statement v1 whose predicate is a [`Certification`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Statement {
    /// [`STATEMENT_TYPE`].
    #[serde(rename = "_type")]
    pub statement_type: String,
    /// The bundle's files, sorted by name.
    pub subject: Vec<Subject>,
    /// [`PREDICATE_TYPE`].
    #[serde(rename = "predicateType")]
    pub predicate_type: String,
    /// What is claimed.
    pub predicate: Certification,
}

/// One file of the bundle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Subject {
    /// Its path inside the bundle, `/`-separated.
    pub name: String,
    /// `sha256` → lowercase hex.
    pub digest: BTreeMap<String, String>,
}

impl Subject {
    /// The subject of the file `name` holding `bytes`.
    #[must_use]
    pub fn of(name: &str, bytes: &[u8]) -> Subject {
        Subject { name: name.to_string(), digest: BTreeMap::from([("sha256".to_string(), sha256_hex(bytes))]) }
    }

    /// Its SHA-256 digest, if it names one.
    #[must_use]
    pub fn sha256(&self) -> Option<&str> {
        self.digest.get("sha256").map(String::as_str)
    }
}

/// The predicate: one column certified over the whole canonical suite.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Certification {
    /// The harness that ran and graded.
    pub harness: Tool,
    /// The certified column.
    pub column: CertifiedColumn,
    /// The grading rules' version.
    pub rules_version: String,
    /// The SharedOS judge version the rules adopt.
    pub judge_version: String,
    /// How the hashes were computed.
    pub hash_scheme: String,
    /// Hash of the cases and scripts.
    pub case_set_hash: String,
    /// Hash of the worlds the conditions build.
    pub world_set_hash: String,
    /// Hash over every run cell's record hashes.
    pub evidence_root: String,
    /// The runtime's own manifest, as its records carry it ([`runtime_of`]).
    pub runtime: Value,
    /// Where it ran.
    pub environment: Environment,
    /// The certified column's cells by status.
    pub summary: BTreeMap<String, usize>,
    /// The part of the run this bundle holds, when it holds one part
    /// only: a partial bundle, for `merge` to join with the others.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
    /// How many times each cell of the certified column ran, when more
    /// than once (`--repeat`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<u32>,
}

/// A name and a version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tool {
    /// Name.
    pub name: String,
    /// Version.
    pub version: String,
}

/// The certified column.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CertifiedColumn {
    /// Column id.
    pub id: String,
    /// Label.
    pub label: String,
    /// Hash of the prompts it stated, when it stated any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_set_hash: Option<String>,
}

/// Lowercase hex SHA-256 of `bytes`.
#[must_use]
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// The statement's `runtime`: who ran the certified column, as its first
/// record names it (`null` when the column has no record).
#[must_use]
pub fn runtime_of(record: Option<&ExecutionRecord>) -> Value {
    record.map_or(Value::Null, |r| {
        json!({
            "adapterId": r.system.adapter_id,
            "adapterVersion": r.system.adapter_version,
            "model": r.system.model,
            "modelProvider": r.system.model_provider,
            "protocolVersion": r.system.protocol_version,
        })
    })
}

/// What a bundle's statement claims, beside the files it lists.
#[derive(Debug, Clone)]
pub struct Claim<'a> {
    /// The bundle's manifest.
    pub manifest: &'a Manifest,
    /// The certified column's id.
    pub column_id: &'a str,
    /// Its label.
    pub label: &'a str,
    /// Who ran it ([`runtime_of`]).
    pub runtime: Value,
    /// Where it ran.
    pub environment: Environment,
    /// The part of the run the bundle holds, if only one.
    pub shard: Option<Shard>,
    /// Runs per cell of the certified column, when more than one.
    pub repeat: Option<u32>,
}

impl Statement {
    /// The statement over `files` (every file of the bundle but the
    /// statement and its signature) that makes `claim`.
    #[must_use]
    pub fn certifying(files: &[BundleFile], claim: Claim<'_>) -> Statement {
        let manifest = claim.manifest;
        let mut subject: Vec<Subject> = files.iter().map(|f| Subject::of(&f.name, &f.bytes)).collect();
        subject.sort_by(|a, b| a.name.cmp(&b.name));
        let prompt_set_hash =
            manifest.columns.iter().find(|c| c.id == claim.column_id).and_then(|c| c.prompt_set_hash.clone());
        Statement {
            statement_type: STATEMENT_TYPE.to_string(),
            subject,
            predicate_type: PREDICATE_TYPE.to_string(),
            predicate: Certification {
                harness: Tool { name: HARNESS_NAME.to_string(), version: env!("CARGO_PKG_VERSION").to_string() },
                column: CertifiedColumn {
                    id: claim.column_id.to_string(),
                    label: claim.label.to_string(),
                    prompt_set_hash,
                },
                rules_version: manifest.rules_version.clone().unwrap_or_default(),
                judge_version: manifest.judge_version.clone(),
                hash_scheme: manifest.hash_scheme.clone().unwrap_or_default(),
                case_set_hash: manifest.case_set_hash.clone(),
                world_set_hash: manifest.world_set_hash.clone(),
                evidence_root: manifest.evidence_root.clone().unwrap_or_default(),
                runtime: claim.runtime,
                environment: claim.environment,
                summary: summary_of(&column_cells(manifest, claim.column_id)),
                shard: claim.shard,
                repeat: claim.repeat,
            },
        }
    }
}

/// The certified column's cells and their verdicts, in manifest order.
#[must_use]
pub fn column_cells(manifest: &Manifest, column_id: &str) -> Vec<(CellKey, CellStatus)> {
    let mut cells = Vec::new();
    for row in &manifest.rows {
        for cell in row.cells.iter().filter(|c| c.column_id == column_id) {
            cells.push((row.key_of(cell), cell.status));
        }
    }
    cells
}

/// Cells by status.
#[must_use]
pub fn summary_of(cells: &[(CellKey, CellStatus)]) -> BTreeMap<String, usize> {
    let mut summary = BTreeMap::new();
    for (_, status) in cells {
        *summary.entry(status.as_str().to_string()).or_default() += 1;
    }
    summary
}
