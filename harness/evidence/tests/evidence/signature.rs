//! Signed bundles: the DSSE envelope verifies with the vendor's public key,
//! with no other, and in the standard format an independent DSSE
//! implementation (here `openssl` over the PAE) checks.

use crate::support::{certify_into, codes, scratch, COLUMN};
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use ed25519_dalek::pkcs8::spki::der::pem::LineEnding;
use ed25519_dalek::pkcs8::{EncodePrivateKey, EncodePublicKey};
use ed25519_dalek::SigningKey;
use sharedos_evidence::bundle::{ENVELOPE_FILE, STATEMENT_FILE};
use sharedos_evidence::dsse::{pae, read_signing_key, read_verifying_key, Envelope, IN_TOTO_PAYLOAD_TYPE};
use sharedos_evidence::verify::{verify, SignatureCheck, VerifyOptions};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

fn key(seed: u8) -> SigningKey {
    SigningKey::from_bytes(&[seed; 32])
}

/// A bundle signed with `key(1)`.
fn signed_bundle() -> &'static Path {
    static BUNDLE: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    let (_, path) = BUNDLE.get_or_init(|| {
        let dir = scratch();
        let path = dir.path().join("signed");
        certify_into(&path, COLUMN, 2, Some(&key(1)));
        (dir, path)
    });
    path
}

#[test]
fn a_signed_bundle_verifies_with_its_key() {
    let public = key(1).verifying_key();
    let options = VerifyOptions { key: Some(&public), ..VerifyOptions::default() };
    let verification = verify(signed_bundle(), options).unwrap();
    assert_eq!(verification.failures, vec![]);
    assert_eq!(verification.signature, SignatureCheck::Verified);
    let unchecked = verify(signed_bundle(), VerifyOptions::default()).unwrap();
    assert_eq!(unchecked.signature, SignatureCheck::NotChecked);
}

#[test]
fn another_key_does_not_verify_it() {
    let other = key(2).verifying_key();
    let options = VerifyOptions { key: Some(&other), ..VerifyOptions::default() };
    let verification = verify(signed_bundle(), options).unwrap();
    assert_eq!(codes(&verification), ["bad_signature"]);
    assert_eq!(verification.failures[0].place().to_string(), "statement.dsse.json /signatures");
}

#[test]
fn an_unsigned_bundle_fails_when_a_key_is_required() {
    let public = key(1).verifying_key();
    let options = VerifyOptions { key: Some(&public), ..VerifyOptions::default() };
    let verification = verify(crate::support::bundle(), options).unwrap();
    assert_eq!(codes(&verification), ["bad_signature"]);
}

#[test]
fn the_envelope_is_standard_dsse_over_the_statement() {
    let envelope: Envelope =
        serde_json::from_slice(&std::fs::read(signed_bundle().join(ENVELOPE_FILE)).unwrap()).unwrap();
    assert_eq!(envelope.payload_type, IN_TOTO_PAYLOAD_TYPE);
    let statement = std::fs::read(signed_bundle().join(STATEMENT_FILE)).unwrap();
    assert_eq!(STANDARD.decode(&envelope.payload).unwrap(), statement);
    assert_eq!(envelope.signatures.len(), 1);
    // PAE as the DSSE protocol spells it.
    assert_eq!(pae("t", b"xy"), b"DSSEv1 1 t 2 xy".to_vec());
}

#[test]
fn pem_keys_are_read_as_openssl_writes_them() {
    let dir = scratch();
    let (private, public) = (dir.path().join("key.pem"), dir.path().join("key.pub.pem"));
    std::fs::write(&private, key(3).to_pkcs8_pem(LineEnding::LF).unwrap().as_bytes()).unwrap();
    std::fs::write(&public, key(3).verifying_key().to_public_key_pem(LineEnding::LF).unwrap()).unwrap();
    assert_eq!(read_signing_key(&private).unwrap().to_bytes(), key(3).to_bytes());
    assert_eq!(read_verifying_key(&public).unwrap(), key(3).verifying_key());
    let error = read_signing_key(&public).unwrap_err();
    assert!(error.to_string().contains("PKCS#8"), "{error}");
}

/// `openssl`, not our code, checks the signature over the PAE it is given.
#[test]
fn openssl_verifies_the_envelope_with_the_public_key() {
    if Command::new("openssl").arg("version").output().is_err() {
        eprintln!("skipped: no openssl on this machine to verify the envelope independently");
        return;
    }
    let dir = scratch();
    let (private, public) = (dir.path().join("key.pem"), dir.path().join("key.pub.pem"));
    let status = Command::new("openssl").args(["genpkey", "-algorithm", "ed25519", "-out"]).arg(&private).status();
    assert!(status.unwrap().success());
    let status =
        Command::new("openssl").args(["pkey", "-pubout", "-in"]).arg(&private).arg("-out").arg(&public).status();
    assert!(status.unwrap().success());
    let bundle = dir.path().join("bundle");
    certify_into(&bundle, "adversary-embedded", 2, Some(&read_signing_key(&private).unwrap()));
    let envelope: Envelope = serde_json::from_slice(&std::fs::read(bundle.join(ENVELOPE_FILE)).unwrap()).unwrap();
    let payload = STANDARD.decode(&envelope.payload).unwrap();
    // The PAE written out by hand, not by `pae`.
    let mut signed =
        format!("DSSEv1 {} {} {} ", IN_TOTO_PAYLOAD_TYPE.len(), IN_TOTO_PAYLOAD_TYPE, payload.len()).into_bytes();
    signed.extend_from_slice(&payload);
    std::fs::write(dir.path().join("pae.bin"), &signed).unwrap();
    std::fs::write(dir.path().join("sig.bin"), STANDARD.decode(&envelope.signatures[0].sig).unwrap()).unwrap();
    let output = Command::new("openssl")
        .args(["pkeyutl", "-verify", "-pubin", "-rawin", "-inkey"])
        .arg(&public)
        .arg("-in")
        .arg(dir.path().join("pae.bin"))
        .arg("-sigfile")
        .arg(dir.path().join("sig.bin"))
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success() && said.contains("Signature Verified Successfully"), "{said}");
}
