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

/// A copy of the signed bundle whose envelope is replaced by `make`.
fn with_envelope(scratch: &Path, make: impl FnOnce(&Path)) -> PathBuf {
    let copy = scratch.join("signed");
    for name in sharedos_evidence::bundle::list_files(signed_bundle()).unwrap() {
        let target = copy.join(&name);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::copy(signed_bundle().join(&name), target).unwrap();
    }
    let envelope = copy.join(ENVELOPE_FILE);
    std::fs::remove_file(&envelope).unwrap();
    make(&envelope);
    copy
}

/// What the failure says, and how the envelope is made.
type Make = (&'static str, fn(&Path));

#[test]
fn an_envelope_that_is_a_link_a_fifo_or_a_folder_fails_and_is_not_unsigned() {
    let makes: [Make; 3] = [
        // A link to a good envelope outside the bundle: never followed.
        ("a symbolic link", |at| std::os::unix::fs::symlink(signed_bundle().join(ENVELOPE_FILE), at).unwrap()),
        ("not a regular file", crate::support::mkfifo),
        ("not a regular file", |at| std::fs::create_dir(at).unwrap()),
    ];
    for (why, make) in makes {
        let dir = scratch();
        let bundle = with_envelope(dir.path(), make);
        let verification = verify(&bundle, VerifyOptions::default()).unwrap();
        assert_eq!(verification.signature, SignatureCheck::Failed, "{why}");
        let named = verification.failures.iter().find(|f| f.place().file == ENVELOPE_FILE);
        assert!(named.is_some_and(|f| f.to_string().contains(why)), "{why}: {:?}", verification.failures);
    }
}

#[test]
fn an_envelope_in_url_safe_base64_padded_or_not_verifies() {
    use base64::engine::general_purpose::{URL_SAFE, URL_SAFE_NO_PAD};
    let written: Envelope =
        serde_json::from_slice(&std::fs::read(signed_bundle().join(ENVELOPE_FILE)).unwrap()).unwrap();
    let (payload, sig) =
        (STANDARD.decode(&written.payload).unwrap(), STANDARD.decode(&written.signatures[0].sig).unwrap());
    for engine in [URL_SAFE, URL_SAFE_NO_PAD] {
        let mut envelope = written.clone();
        envelope.payload = engine.encode(&payload);
        envelope.signatures[0].sig = engine.encode(&sig);
        let dir = scratch();
        let bundle =
            with_envelope(dir.path(), |at| std::fs::write(at, serde_json::to_vec(&envelope).unwrap()).unwrap());
        let public = key(1).verifying_key();
        let verification = verify(&bundle, VerifyOptions { key: Some(&public), ..VerifyOptions::default() }).unwrap();
        assert_eq!(verification.failures, vec![]);
        assert_eq!(verification.signature, SignatureCheck::Verified);
    }
    // Written in the standard alphabet, padded.
    assert!(written.signatures[0].sig.ends_with("=="), "{}", written.signatures[0].sig);
}

/// Reads `path` as both kinds of key on another thread; the error each
/// gives, or a panic when one does not come within a few seconds.
fn key_errors(path: &Path) -> (String, String) {
    let (sender, receiver) = std::sync::mpsc::channel();
    let owned = path.to_path_buf();
    std::thread::spawn(move || {
        let signing = read_signing_key(&owned).map(|_| ()).unwrap_err().to_string();
        let verifying = read_verifying_key(&owned).map(|_| ()).unwrap_err().to_string();
        let _ = sender.send((signing, verifying));
    });
    receiver.recv_timeout(std::time::Duration::from_secs(5)).expect("the key reader did not return within 5 s")
}

#[test]
fn a_key_path_that_is_a_fifo_a_device_a_folder_or_too_large_is_refused_at_once() {
    let dir = scratch();
    let fifo = dir.path().join("fifo.pem");
    crate::support::mkfifo(&fifo);
    let large = dir.path().join("large.pem");
    let pem = key(3).to_pkcs8_pem(LineEnding::LF).unwrap();
    // A real key, then more than the cap of padding: refused by size.
    std::fs::write(&large, format!("{}{}", pem.as_str(), "\n".repeat(64 << 10))).unwrap();
    let cases = [
        (fifo.as_path(), "not a regular file"),
        (Path::new("/dev/zero"), "not a regular file"),
        (dir.path(), "not a regular file"),
        (large.as_path(), "larger than 64 KiB"),
    ];
    for (path, why) in cases {
        let (signing, verifying) = key_errors(path);
        for error in [signing, verifying] {
            assert!(error.starts_with(&format!("read the key {}: ", path.display())), "{error}");
            assert!(error.contains(why), "{error}");
        }
    }
}
