//! Every hash a bundle states, recomputed from what it holds: each
//! record's, the evidence root over them, the case set from the bundled
//! suite, the world set, each column's prompt set.

use crate::bundle::{EvidenceLine, EVIDENCE_FILE, MANIFEST_FILE, STATEMENT_FILE};
use crate::statement::Statement;
use sharedos_conformance_metadata::column_runtime::ColumnRuntime;
use sharedos_conformance_metadata::failure::{Failure, Place};
use sharedos_grading::identity::case_set::case_set_hash;
use sharedos_grading::identity::sets::world_set_hash_with;
use sharedos_grading::identity::tags::HASH_SCHEME;
use sharedos_grading::input::loader::Suite;
use sharedos_grading::output::manifest::evidence_of;
use sharedos_grading::output::manifest::{column_runtime, evidence_root, prompt_set_hash, CellEvidence, Manifest};
use sharedos_grading::vocab::{ADOPTED_JUDGE_VERSION, RULES_VERSION};
use std::collections::BTreeMap;

/// One value both the manifest and the statement state.
struct Stated<'a> {
    what: &'a str,
    manifest_pointer: &'a str,
    manifest: Option<&'a str>,
    statement_pointer: &'a str,
    statement: &'a str,
}

/// Checks every stated hash and version against the recomputed one.
pub fn check_hashes(
    statement: &Statement,
    manifest: &Manifest,
    suite: &Suite,
    lines: &[EvidenceLine],
    failures: &mut Vec<Failure>,
) {
    let evidence = line_evidence(lines, failures);
    let predicate = &statement.predicate;
    let root = evidence_root(&evidence).unwrap_or_default();
    let case_set = case_set_hash(suite).unwrap_or_default();
    let world_set = world_set(suite, lines);
    let checks = [
        (
            root.as_str(),
            Stated {
                what: "evidence root over the records",
                manifest_pointer: "/evidenceRoot",
                manifest: manifest.evidence_root.as_deref(),
                statement_pointer: "/predicate/evidenceRoot",
                statement: &predicate.evidence_root,
            },
        ),
        (
            case_set.as_str(),
            Stated {
                what: "case-set hash of the bundled suite",
                manifest_pointer: "/caseSetHash",
                manifest: Some(&manifest.case_set_hash),
                statement_pointer: "/predicate/caseSetHash",
                statement: &predicate.case_set_hash,
            },
        ),
        (
            world_set.as_str(),
            Stated {
                what: "world-set hash of the bundled suite",
                manifest_pointer: "/worldSetHash",
                manifest: Some(&manifest.world_set_hash),
                statement_pointer: "/predicate/worldSetHash",
                statement: &predicate.world_set_hash,
            },
        ),
        (
            RULES_VERSION,
            Stated {
                what: "the rules version this verifier grades with",
                manifest_pointer: "/rulesVersion",
                manifest: manifest.rules_version.as_deref(),
                statement_pointer: "/predicate/rulesVersion",
                statement: &predicate.rules_version,
            },
        ),
        (
            ADOPTED_JUDGE_VERSION,
            Stated {
                what: "the judge version these rules adopt",
                manifest_pointer: "/judgeVersion",
                manifest: Some(&manifest.judge_version),
                statement_pointer: "/predicate/judgeVersion",
                statement: &predicate.judge_version,
            },
        ),
        (
            HASH_SCHEME,
            Stated {
                what: "the hash scheme",
                manifest_pointer: "/hashScheme",
                manifest: manifest.hash_scheme.as_deref(),
                statement_pointer: "/predicate/hashScheme",
                statement: &predicate.hash_scheme,
            },
        ),
    ];
    for (expected, stated) in checks {
        check_stated(expected, &stated, failures);
    }
    check_prompt_sets(statement, manifest, &evidence, failures);
    check_runtimes(manifest, &evidence, failures);
}

fn check_stated(expected: &str, stated: &Stated<'_>, failures: &mut Vec<Failure>) {
    let manifest = stated.manifest.unwrap_or("nothing");
    if manifest != expected {
        failures.push(mismatch(Place::at(MANIFEST_FILE, stated.manifest_pointer), stated.what, expected, manifest));
    }
    if stated.statement != expected {
        let place = Place::at(STATEMENT_FILE, stated.statement_pointer);
        failures.push(mismatch(place, stated.what, expected, stated.statement));
    }
}

fn mismatch(place: Place, what: &str, expected: &str, found: &str) -> Failure {
    Failure::Mismatch { place, what: what.to_string(), expected: expected.to_string(), found: found.to_string() }
}

/// Each line's records hashed again, checked against the hashes it states.
fn line_evidence(lines: &[EvidenceLine], failures: &mut Vec<Failure>) -> Vec<CellEvidence> {
    let mut evidence = Vec::with_capacity(lines.len());
    for (index, line) in lines.iter().enumerate() {
        let Ok(cell) = evidence_of(&line.key(), &line.grading.records) else { continue };
        let cell = CellEvidence { repeat: line.repeat, ..cell };
        let recomputed: Vec<&str> = cell.turns.iter().map(|t| t.record_hash.as_str()).collect();
        let stated: Vec<&str> = line.record_hashes.iter().map(String::as_str).collect();
        if recomputed != stated {
            let turn =
                recomputed.iter().zip(&stated).position(|(a, b)| a != b).unwrap_or(recomputed.len().min(stated.len()));
            let place = Place::line(EVIDENCE_FILE, index + 1, format!("/grading/records/{turn}"));
            let expected = recomputed.get(turn).map_or("no record", |h| h);
            let found = stated.get(turn).map_or("no record", |h| h);
            failures.push(mismatch(place, "the record's hash", expected, found));
        }
        evidence.push(cell);
    }
    evidence
}

/// The world-set hash, each run row's world hash taken from its records.
fn world_set(suite: &Suite, lines: &[EvidenceLine]) -> String {
    let mut hashed: BTreeMap<(&str, &str), &str> = BTreeMap::new();
    for line in lines {
        if let Some(record) = line.grading.records.first() {
            hashed.insert((line.case.as_str(), line.condition.as_str()), record.experiment.world_hash.as_str());
        }
    }
    world_set_hash_with(&suite.cases, &hashed).unwrap_or_default()
}

fn check_prompt_sets(
    statement: &Statement,
    manifest: &Manifest,
    evidence: &[CellEvidence],
    failures: &mut Vec<Failure>,
) {
    for (index, column) in manifest.columns.iter().enumerate() {
        let expected = prompt_set_hash(&column.id, evidence).ok().flatten();
        let what = format!("prompt-set hash of column {}", column.id);
        if column.prompt_set_hash != expected {
            let place = Place::at(MANIFEST_FILE, format!("/columns/{index}/promptSetHash"));
            failures.push(mismatch(
                place,
                &what,
                or_none(expected.as_deref()),
                or_none(column.prompt_set_hash.as_deref()),
            ));
        }
        let certified = &statement.predicate.column;
        if certified.id == column.id && certified.prompt_set_hash != expected {
            let place = Place::at(STATEMENT_FILE, "/predicate/column/promptSetHash");
            failures.push(mismatch(
                place,
                &what,
                or_none(expected.as_deref()),
                or_none(certified.prompt_set_hash.as_deref()),
            ));
        }
    }
}

/// Each column's runtime as its records name it: a manifest may not say
/// another CLI, version, recipe or model ran than the records do.
fn check_runtimes(manifest: &Manifest, evidence: &[CellEvidence], failures: &mut Vec<Failure>) {
    for (index, column) in manifest.columns.iter().enumerate() {
        let expected = column_runtime(&column.id, evidence);
        if column.runtime != expected {
            let described =
                |runtime: &Option<_>| runtime.as_ref().map_or_else(|| "none".to_string(), ColumnRuntime::describe);
            failures.push(mismatch(
                Place::at(MANIFEST_FILE, format!("/columns/{index}/runtime")),
                &format!("runtime of column {}", column.id),
                &described(&expected),
                &described(&column.runtime),
            ));
        }
    }
}

fn or_none(hash: Option<&str>) -> &str {
    hash.unwrap_or("none")
}
