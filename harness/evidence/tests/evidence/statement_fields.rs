//! Every field the statement states is checked against what the bundle
//! holds: a statement edited and signed again with the right key does not
//! verify, and the failure names the field. A subject listed twice, or
//! with a digest this verifier does not compute, is a failure too.

use crate::support::{copy_of_bundle, resign, scratch};
use ed25519_dalek::SigningKey;
use serde_json::Value;
use sharedos_conformance_metadata::failure::Failure;
use sharedos_evidence::bundle::STATEMENT_FILE;
use sharedos_evidence::verify::{verify, SignatureCheck, Verification, VerifyOptions};
use std::path::Path;

/// The failure pointer the edit must be named at, and the edit.
type Edit = (&'static str, fn(&mut Value));

/// A hash with its first hex digit changed.
fn other_hash(value: &mut Value) {
    let hash = value.as_str().unwrap_or("0000").to_string();
    let first = if hash.starts_with('0') { "1" } else { "0" };
    *value = Value::from(format!("{first}{}", &hash[1..]));
}

#[rustfmt::skip]
const EDITS: [Edit; 14] = [
    ("/_type", |s| s["_type"] = "https://in-toto.io/Statement/v0.1".into()),
    ("/predicateType", |s| s["predicateType"] = "https://sharedos-conformance.dev/certification/v2".into()),
    ("/predicate/harness/name", |s| s["predicate"]["harness"]["name"] = "another-harness".into()),
    ("/predicate/column/id", |s| s["predicate"]["column"]["id"] = "adversary-embedded".into()),
    ("/predicate/column/label", |s| s["predicate"]["column"]["label"] = "Another".into()),
    ("/predicate/column/promptSetHash", |s| other_hash(&mut s["predicate"]["column"]["promptSetHash"])),
    ("/predicate/rulesVersion", |s| s["predicate"]["rulesVersion"] = "0".into()),
    ("/predicate/judgeVersion", |s| s["predicate"]["judgeVersion"] = "0".into()),
    ("/predicate/hashScheme", |s| s["predicate"]["hashScheme"] = "another-scheme".into()),
    ("/predicate/caseSetHash", |s| other_hash(&mut s["predicate"]["caseSetHash"])),
    ("/predicate/worldSetHash", |s| other_hash(&mut s["predicate"]["worldSetHash"])),
    ("/predicate/evidenceRoot", |s| other_hash(&mut s["predicate"]["evidenceRoot"])),
    ("/predicate/runtime/model", |s| s["predicate"]["runtime"]["model"] = "another-model".into()),
    ("/predicate/summary/pass", |s| {
        let pass = s["predicate"]["summary"]["pass"].as_u64().unwrap();
        s["predicate"]["summary"]["pass"] = Value::from(pass + 1);
    }),
];

fn key() -> SigningKey {
    SigningKey::from_bytes(&[1; 32])
}

fn edit_statement(bundle: &Path, edit: impl FnOnce(&mut Value)) {
    let path = bundle.join(STATEMENT_FILE);
    let mut statement: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    edit(&mut statement);
    std::fs::write(&path, serde_json::to_vec_pretty(&statement).unwrap()).unwrap();
}

/// Verifies with the key the statement was signed again with.
fn verify_signed(bundle: &Path) -> Verification {
    let public = key().verifying_key();
    let verification = verify(bundle, VerifyOptions { key: Some(&public), ..VerifyOptions::default() }).unwrap();
    assert_eq!(verification.signature, SignatureCheck::Verified, "{:?}", verification.failures);
    verification
}

#[test]
fn a_subject_listed_many_times_is_one_failure_per_name() {
    let dir = scratch();
    let bundle = copy_of_bundle(dir.path());
    edit_statement(&bundle, |s| {
        let subjects = s["subject"].as_array_mut().unwrap();
        let (first, second) = (subjects[0].clone(), subjects[1].clone());
        subjects.extend(std::iter::repeat_n(first, 20_000));
        subjects.extend(std::iter::repeat_n(second, 2));
    });
    resign(&bundle, &key());
    let verification = verify_signed(&bundle);
    let twice: Vec<String> = verification
        .failures
        .iter()
        .filter(|f| matches!(f, Failure::Unparsable { expected, .. } if expected.contains("each file listed once")))
        .map(ToString::to_string)
        .collect();
    assert_eq!(twice.len(), 2, "{twice:?}");
    assert!(twice[0].starts_with("statement.json /subject/0/name: ") && twice[0].contains("20001 times"), "{twice:?}");
    assert!(twice[1].starts_with("statement.json /subject/1/name: ") && twice[1].contains("3 times"), "{twice:?}");
    assert_eq!(verification.failures.len(), 2, "{:?}", verification.failures);
}

#[test]
fn a_subject_digest_this_verifier_does_not_compute_is_named() {
    let dir = scratch();
    let bundle = copy_of_bundle(dir.path());
    edit_statement(&bundle, |s| s["subject"][3]["digest"]["sha512"] = "00".repeat(64).into());
    resign(&bundle, &key());
    let verification = verify_signed(&bundle);
    let places: Vec<String> = verification.failures.iter().map(|f| f.place().to_string()).collect();
    assert_eq!(places, ["statement.json /subject/3/digest/sha512"]);
}

/// Run by the heavy stage (`cargo test --workspace --locked -- --ignored heavy::`).
mod heavy {
    use super::*;

    #[test]
    #[ignore = "heavy"]
    fn every_statement_field_edited_and_signed_again_is_named() {
        // One case per checked field; the fields nothing in the bundle can
        // check (the harness's version, the environment) are listed where
        // verify checks the rest.
        assert_eq!(EDITS.len(), 14);
        let dir = scratch();
        let bundle = copy_of_bundle(dir.path());
        resign(&bundle, &key());
        assert_eq!(verify_signed(&bundle).failures, vec![], "the good bundle, signed");
        let original = std::fs::read(bundle.join(STATEMENT_FILE)).unwrap();
        for (pointer, edit) in EDITS {
            std::fs::write(bundle.join(STATEMENT_FILE), &original).unwrap();
            edit_statement(&bundle, edit);
            resign(&bundle, &key());
            let verification = verify_signed(&bundle);
            let named =
                verification.failures.iter().any(|f| f.place().file == STATEMENT_FILE && f.place().pointer == pointer);
            assert!(named, "{pointer} edited, not named: {:?}", verification.failures);
        }
    }
}
