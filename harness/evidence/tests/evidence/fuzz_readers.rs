//! The evidence readers never panic: a manifest of either shape, a bundle's
//! evidence line, statement and envelope, damaged (a value replaced, a key
//! removed, cut short, or bytes instead), are read or refused.
//! `scripts/fuzz.sh` runs these at 100 000 cases each.

use crate::support::bundle;
use proptest::prelude::*;
use sharedos_evidence::bundle::{EvidenceLine, ENVELOPE_FILE, EVIDENCE_FILE, STATEMENT_FILE};
use sharedos_evidence::compare::read::parse_manifest;
use sharedos_evidence::dsse::Envelope;
use sharedos_evidence::statement::Statement;
use sharedos_testkit::mutate::{damage, damaged};
use std::path::Path;
use std::sync::OnceLock;

#[rustfmt::skip]
const WORDS: &[&str] = &[
    "version", "judgeVersion", "rulesVersion", "hashScheme", "caseSetHash", "worldSetHash", "columns", "rows",
    "cells", "columnId", "status", "pass", "fail", "not_exercised", "refusedBy", "reasonCodes", "causes", "id",
    "label", "promptSetHash", "families", "family", "matrix", "subject", "digest", "sha256", "predicate", "payload",
    "payloadType", "signatures", "sig", "keyid", "1", "6",
];

fn fixture(name: &str) -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/evidence/sharedos");
    std::fs::read_to_string(dir.join(name)).unwrap()
}

/// A bundle's first evidence line, its statement and, signed, its envelope.
fn documents() -> &'static (String, String, String) {
    static DOCUMENTS: OnceLock<(String, String, String)> = OnceLock::new();
    DOCUMENTS.get_or_init(|| {
        let line = std::fs::read_to_string(bundle().join(EVIDENCE_FILE)).unwrap().lines().next().unwrap().to_string();
        let statement = std::fs::read_to_string(bundle().join(STATEMENT_FILE)).unwrap();
        let key = ed25519_dalek::SigningKey::from_bytes(&[7; 32]);
        let envelope = serde_json::to_string(&sharedos_evidence::dsse::sign(statement.as_bytes(), &key)).unwrap();
        assert!(!bundle().join(ENVELOPE_FILE).exists());
        (line, statement, envelope)
    })
}

proptest! {
    #[test]
    fn the_manifest_reader_never_panics(which in 0usize..4, damage in damage(WORDS)) {
        let names = ["judge-v2.json", "judge-v4.json", "judge-v5.json", "judge-v6.json"];
        let _ = parse_manifest(Path::new("fuzzed.json"), &damaged(&fixture(names[which]), &damage));
    }

    #[test]
    fn the_bundle_readers_never_panic(which in 0usize..3, damage in damage(WORDS)) {
        let (line, statement, envelope) = documents();
        let key = ed25519_dalek::SigningKey::from_bytes(&[7; 32]).verifying_key();
        match which {
            0 => drop(serde_json::from_slice::<EvidenceLine>(&damaged(line, &damage))),
            1 => drop(serde_json::from_slice::<Statement>(&damaged(statement, &damage))),
            _ => {
                if let Ok(envelope) = serde_json::from_slice::<Envelope>(&damaged(envelope, &damage)) {
                    let _ = envelope.verify(&key);
                }
            }
        }
    }
}
