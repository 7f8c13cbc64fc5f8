//! The evidence readers never panic: a manifest of either shape, a bundle's
//! evidence line, statement and envelope, damaged (a value replaced, a key
//! removed, cut short, or bytes instead), are read or refused; so are an
//! archive of any bytes or a damaged one, and an envelope of any base64.
//! `scripts/fuzz.sh` runs these at 100 000 cases each.

use crate::support::bundle;
use proptest::prelude::*;
use sharedos_evidence::archive::{unpack, write_archive};
use sharedos_evidence::bundle::BundleFile;
use sharedos_evidence::bundle::{EvidenceLine, ENVELOPE_FILE, EVIDENCE_FILE, STATEMENT_FILE};
use sharedos_evidence::compare::read::parse_manifest;
use sharedos_evidence::dsse::{Envelope, EnvelopeSignature, IN_TOTO_PAYLOAD_TYPE};
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

/// A small archive as `certify` writes one: a few files, one in a folder.
fn small_archive() -> &'static [u8] {
    static ARCHIVE: OnceLock<Vec<u8>> = OnceLock::new();
    ARCHIVE.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("small.tar");
        let files = [
            BundleFile { name: "manifest.json".into(), bytes: b"{}".to_vec() },
            BundleFile { name: "statement.json".into(), bytes: b"{\"_type\": 1}".to_vec() },
            BundleFile { name: "suite/cases/a.json".into(), bytes: vec![b'x'; 700] },
            // Too long a name for a ustar header: written after a GNU
            // long-name entry, so the damage reaches that reader too.
            BundleFile { name: format!("suite/{}.json", "long".repeat(40)), bytes: b"{}".to_vec() },
        ];
        write_archive(&out, &files).unwrap();
        std::fs::read(out).unwrap()
    })
}

/// Writes `bytes` as an archive and unpacks it: refused or unpacked, and
/// what is unpacked is inside its folder.
fn unpack_bytes(bytes: &[u8]) {
    let dir = tempfile::tempdir().unwrap();
    let archive = dir.path().join("fuzzed.tar");
    std::fs::write(&archive, bytes).unwrap();
    if let Ok(unpacked) = unpack(&archive) {
        let names = sharedos_evidence::bundle::list_files(unpacked.path()).unwrap();
        assert!(names.iter().all(|n| !n.split('/').any(|p| p == "..")), "{names:?}");
    }
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(left.len(), 1, "nothing unpacked beside the archive");
}

/// Sets a tar header block's checksum to what its bytes sum to, so that a
/// damaged header is read rather than refused for its checksum alone.
fn fix_checksum(block: &mut [u8]) {
    block[148..156].fill(b' ');
    let sum: u32 = block.iter().map(|b| u32::from(*b)).sum();
    block[148..156].copy_from_slice(format!("{sum:06o}\0 ").as_bytes());
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

    #[test]
    fn the_archive_unpacker_never_panics_on_any_bytes(bytes in prop::collection::vec(any::<u8>(), 0..3000)) {
        unpack_bytes(&bytes);
    }

    #[test]
    fn the_archive_unpacker_never_panics_on_a_damaged_archive(
        edits in prop::collection::vec((any::<usize>(), any::<u8>()), 1..12),
        fix in any::<bool>(),
        cut in any::<usize>(),
    ) {
        let mut bytes = small_archive().to_vec();
        for (at, byte) in &edits {
            let at = at % bytes.len();
            bytes[at] = *byte;
            // Damaged headers with a right checksum reach the entry checks.
            if fix && at % 512 < 500 {
                let start = at - at % 512;
                fix_checksum(&mut bytes[start..start + 512]);
            }
        }
        bytes.truncate(bytes.len() - cut % 512.min(bytes.len()));
        unpack_bytes(&bytes);
    }

    #[test]
    fn the_envelope_reader_never_panics_on_any_base64(
        payload in "[A-Za-z0-9+/=_-]{0,120}",
        sig in "[A-Za-z0-9+/=_-]{0,100}",
        standard_type in any::<bool>(),
    ) {
        let key = ed25519_dalek::SigningKey::from_bytes(&[7; 32]).verifying_key();
        let payload_type = if standard_type { IN_TOTO_PAYLOAD_TYPE.to_string() } else { payload.clone() };
        let envelope =
            Envelope { payload, payload_type, signatures: vec![EnvelopeSignature { keyid: None, sig }] };
        let _ = envelope.payload_bytes();
        prop_assert!(envelope.verify(&key).is_err());
    }
}
