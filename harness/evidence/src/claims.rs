//! Every field of the statement checked against what the bundle holds, so
//! that a statement edited and signed again over a claim its files do not
//! make does not verify.
//!
//! | field                          | must equal                                   | checked in        |
//! |--------------------------------|----------------------------------------------|-------------------|
//! | `_type`, `predicateType`       | [`STATEMENT_TYPE`], [`PREDICATE_TYPE`]        | here              |
//! | `subject`                      | the files, each once, with its SHA-256       | `verify`          |
//! | `predicate.harness.name`       | [`HARNESS_NAME`]                             | here              |
//! | `predicate.column.id`          | the manifest's certified column              | here              |
//! | `predicate.column.label`       | the bundled suite's label for that column    | here              |
//! | `predicate.column.promptSetHash` | recomputed from the evidence               | `recompute`       |
//! | `predicate.rulesVersion`, `judgeVersion`, `hashScheme` | this verifier's constants | `recompute`  |
//! | `predicate.caseSetHash`, `worldSetHash`, `evidenceRoot` | recomputed             | `recompute`       |
//! | `predicate.runtime`            | the certified column's first record          | here              |
//! | `predicate.summary`            | the manifest's cells of the column, each graded again | here     |
//!
//! Not checked, because nothing in the bundle says what they must be:
//! - `predicate.harness.version`: the release that certified. A bundle of
//!   any release verifies with this one, and neither the manifest nor the
//!   records carry the harness's version to compare it with.
//! - `predicate.environment`: the machine and toolchain the run took place
//!   on. It is recorded, never graded, and no other file repeats it.

use crate::bundle::{EvidenceLine, MANIFEST_FILE, STATEMENT_FILE};
use crate::statement::{runtime_of, Statement, HARNESS_NAME, PREDICATE_TYPE, STATEMENT_TYPE};
use serde_json::Value;
use sharedos_conformance_metadata::failure::{Failure, Place};
use sharedos_grading::column::columns;
use sharedos_grading::input::built_in_column::ADVERSARY_ID;
use sharedos_grading::input::loader::Suite;
use sharedos_grading::output::manifest::Manifest;
use std::collections::{BTreeMap, BTreeSet};

/// The fields of the statement that need no other file: its types and
/// the harness's name.
pub fn check_constants(statement: &Statement, failures: &mut Vec<Failure>) {
    let constants = [
        ("/_type", "the in-toto statement type", STATEMENT_TYPE, &statement.statement_type),
        ("/predicateType", "the certification predicate type", PREDICATE_TYPE, &statement.predicate_type),
        ("/predicate/harness/name", "the certifying harness", HARNESS_NAME, &statement.predicate.harness.name),
    ];
    for (pointer, what, expected, found) in constants {
        if found != expected {
            failures.push(mismatch(pointer, what, expected, found));
        }
    }
}

/// The column the bundle certifies, as its manifest holds it: the one
/// beside the Adversary, or the Adversary alone. A manifest of any other
/// shape has no certified column of its own (its columns are reported by
/// `regrade::check_complete`), and the statement's is taken.
#[must_use]
pub fn certified_column(statement: &Statement, manifest: &Manifest) -> String {
    match manifest.columns.as_slice() {
        [only] if only.id == ADVERSARY_ID => only.id.clone(),
        [first, second] if first.id == ADVERSARY_ID && second.id != ADVERSARY_ID => second.id.clone(),
        _ => statement.predicate.column.id.clone(),
    }
}

/// The statement's column, runtime and summary against the manifest, the
/// bundled suite and the evidence; the manifest's labels against the
/// suite's.
pub fn check_column(
    statement: &Statement,
    manifest: &Manifest,
    suite: &Suite,
    lines: &[EvidenceLine],
    failures: &mut Vec<Failure>,
) {
    let certified = certified_column(statement, manifest);
    let stated = &statement.predicate.column;
    if stated.id != certified {
        failures.push(mismatch("/predicate/column/id", "the column the manifest certifies", &certified, &stated.id));
    }
    let labels: BTreeMap<String, String> = columns(&suite.seats).into_iter().map(|c| (c.id, c.label)).collect();
    if let Some(label) = labels.get(&certified).filter(|label| **label != stated.label) {
        let what = format!("the label of column {certified} in the bundled suite");
        failures.push(mismatch("/predicate/column/label", &what, label, &stated.label));
    }
    for (index, column) in manifest.columns.iter().enumerate() {
        if let Some(label) = labels.get(&column.id).filter(|label| **label != column.label) {
            failures.push(Failure::Mismatch {
                place: Place::at(MANIFEST_FILE, format!("/columns/{index}/label")),
                what: format!("the label of column {} in the bundled suite", column.id),
                expected: label.clone(),
                found: column.label.clone(),
            });
        }
    }
    check_runtime(statement, &certified, lines, failures);
    check_summary(statement, manifest, &certified, failures);
}

/// `runtime` is what the certified column's first record says ran it.
fn check_runtime(statement: &Statement, certified: &str, lines: &[EvidenceLine], failures: &mut Vec<Failure>) {
    let record = lines.iter().filter(|l| l.column == certified).find_map(|l| l.grading.records.first());
    let expected = runtime_of(record);
    let found = &statement.predicate.runtime;
    if *found == expected {
        return;
    }
    let what = format!("the runtime the first record of column {certified} names");
    // Point at the first field that differs, when both are objects.
    let field = match (&expected, found) {
        (Value::Object(e), Value::Object(f)) => {
            let keys: BTreeSet<&String> = e.keys().chain(f.keys()).collect();
            keys.into_iter().find(|k| e.get(*k) != f.get(*k)).map(|k| (k.clone(), e.get(k), f.get(k)))
        }
        _ => None,
    };
    let shown = |value: Option<&Value>| value.map_or_else(|| "nothing".to_string(), Value::to_string);
    match field {
        Some((key, e, f)) => {
            let pointer = format!("/predicate/runtime/{}", escape(&key));
            failures.push(mismatch(&pointer, &what, &shown(e), &shown(f)));
        }
        None => failures.push(mismatch("/predicate/runtime", &what, &expected.to_string(), &found.to_string())),
    }
}

/// `summary` counts the manifest's cells of the certified column by
/// status; those cells are graded again from the evidence (or are the
/// suite's declared ones) elsewhere, so the count is of verified verdicts.
fn check_summary(statement: &Statement, manifest: &Manifest, certified: &str, failures: &mut Vec<Failure>) {
    let mut counted: BTreeMap<String, usize> = BTreeMap::new();
    for cell in manifest.rows.iter().flat_map(|r| &r.cells).filter(|c| c.column_id == certified) {
        *counted.entry(cell.status.as_str().to_string()).or_default() += 1;
    }
    let stated = &statement.predicate.summary;
    let statuses: BTreeSet<&String> = counted.keys().chain(stated.keys()).collect();
    for status in statuses {
        // The map is compared whole, as certify writes it: a status with
        // no cell has no entry, so even `"pass": 0` is not the count.
        let (expected, found) = (counted.get(status), stated.get(status));
        if expected != found {
            let shown = |n: Option<&usize>| n.map_or_else(|| "no entry".to_string(), usize::to_string);
            failures.push(Failure::Summary {
                place: Place::at(STATEMENT_FILE, format!("/predicate/summary/{}", escape(status))),
                what: format!("cells of column {certified} whose verdict is {status}, as the manifest holds them"),
                expected: shown(expected),
                found: shown(found),
            });
        }
    }
}

fn mismatch(pointer: &str, what: &str, expected: &str, found: &str) -> Failure {
    Failure::Mismatch {
        place: Place::at(STATEMENT_FILE, pointer),
        what: what.to_string(),
        expected: expected.to_string(),
        found: found.to_string(),
    }
}

/// A key as one JSON pointer segment (RFC 6901).
pub(crate) fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}
