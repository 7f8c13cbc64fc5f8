//! DSSE envelopes (<https://github.com/secure-systems-lab/dsse>) signed
//! with Ed25519: the signature is over the pre-authentication encoding of
//! the payload type and the payload, and the envelope carries the payload
//! in base64, so any DSSE implementation checks it with the public key.
//!
//! Keys are PEM files as `openssl` writes them: PKCS#8 for the private key
//! (`openssl genpkey -algorithm ed25519`), SubjectPublicKeyInfo for the
//! public one (`openssl pkey -pubout`).

use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
use base64::Engine;
use ed25519_dalek::pkcs8::{DecodePrivateKey, DecodePublicKey};
use ed25519_dalek::{Signature, Signer, Verifier};
pub use ed25519_dalek::{SigningKey, VerifyingKey};
use serde::{Deserialize, Serialize};
use sharedos_grading::input::file::{read_regular_capped, Links};
use std::path::{Path, PathBuf};

/// The payload type of an in-toto statement.
pub const IN_TOTO_PAYLOAD_TYPE: &str = "application/vnd.in-toto+json";
/// The most a key file may hold: a PEM Ed25519 key is under 1 KiB, and a
/// path that names something larger (or endless, like `/dev/zero`) is
/// not a key.
pub const MAX_KEY_BYTES: u64 = 64 << 10;

/// A DSSE envelope.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Envelope {
    /// The payload, base64: written in the standard alphabet, padded; read
    /// in either alphabet, padded or not, as DSSE allows.
    pub payload: String,
    /// What the payload is.
    pub payload_type: String,
    /// Its signatures.
    pub signatures: Vec<EnvelopeSignature>,
}

/// One signature of an envelope.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnvelopeSignature {
    /// SHA-256 of the raw public key, hex: which key signed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keyid: Option<String>,
    /// The signature, base64 (as the payload).
    pub sig: String,
}

/// Why a key could not be read.
#[derive(Debug, thiserror::Error)]
#[error("read the key {}: {detail}", path.display())]
pub struct KeyError {
    /// The key file.
    pub path: PathBuf,
    /// What was wrong.
    pub detail: String,
}

/// Why an envelope does not verify.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EnvelopeError {
    /// The payload is not base64.
    #[error("the payload is not base64")]
    PayloadNotBase64,
    /// The payload type is not the in-toto one.
    #[error("the payload type is `{0}`, expected `{IN_TOTO_PAYLOAD_TYPE}`")]
    PayloadType(String),
    /// No signature verifies with the key.
    #[error("no signature verifies with the given public key")]
    NoValidSignature,
}

/// The pre-authentication encoding DSSE signs.
#[must_use]
pub fn pae(payload_type: &str, payload: &[u8]) -> Vec<u8> {
    let mut encoded = format!("DSSEv1 {} {} {} ", payload_type.len(), payload_type, payload.len()).into_bytes();
    encoded.extend_from_slice(payload);
    encoded
}

/// Reads a PKCS#8 PEM Ed25519 private key.
///
/// # Errors
/// When the file is not a small regular file, cannot be read, or holds no
/// such key.
pub fn read_signing_key(path: &Path) -> Result<SigningKey, KeyError> {
    let error = |detail: String| KeyError { path: path.to_path_buf(), detail };
    let pem = read_key_file(path).map_err(error)?;
    SigningKey::from_pkcs8_pem(&pem).map_err(|e| error(format!("expected a PKCS#8 PEM Ed25519 private key ({e})")))
}

/// Reads a SubjectPublicKeyInfo PEM Ed25519 public key.
///
/// # Errors
/// When the file is not a small regular file, cannot be read, or holds no
/// such key.
pub fn read_verifying_key(path: &Path) -> Result<VerifyingKey, KeyError> {
    let error = |detail: String| KeyError { path: path.to_path_buf(), detail };
    let pem = read_key_file(path).map_err(error)?;
    VerifyingKey::from_public_key_pem(&pem)
        .map_err(|e| error(format!("expected a SubjectPublicKeyInfo PEM Ed25519 public key ({e})")))
}

/// The text of the key file the user named: a regular file (a link to one
/// is followed) of at most [`MAX_KEY_BYTES`], so a FIFO, a device or a
/// folder is refused at once rather than read.
fn read_key_file(path: &Path) -> Result<String, String> {
    let bytes = read_regular_capped(path, Links::Follow, MAX_KEY_BYTES).map_err(|e| e.to_string())?;
    String::from_utf8(bytes).map_err(|_| "expected a PEM key, which is text (it is not UTF-8)".to_string())
}

/// Decodes DSSE base64: the standard or the URL-safe alphabet, padded or
/// not (the two alphabets are not mixed in one value).
fn decode_base64(text: &str) -> Option<Vec<u8>> {
    [STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD].iter().find_map(|engine| engine.decode(text).ok())
}

/// The key id the envelope names a key by.
#[must_use]
pub fn key_id(key: &VerifyingKey) -> String {
    crate::statement::sha256_hex(key.as_bytes())
}

/// Signs an in-toto statement's bytes.
#[must_use]
pub fn sign(statement: &[u8], key: &SigningKey) -> Envelope {
    let signature = key.sign(&pae(IN_TOTO_PAYLOAD_TYPE, statement));
    Envelope {
        payload: STANDARD.encode(statement),
        payload_type: IN_TOTO_PAYLOAD_TYPE.to_string(),
        signatures: vec![EnvelopeSignature {
            keyid: Some(key_id(&key.verifying_key())),
            sig: STANDARD.encode(signature.to_bytes()),
        }],
    }
}

impl Envelope {
    /// The payload's bytes.
    ///
    /// # Errors
    /// When the payload is not base64.
    pub fn payload_bytes(&self) -> Result<Vec<u8>, EnvelopeError> {
        decode_base64(&self.payload).ok_or(EnvelopeError::PayloadNotBase64)
    }

    /// Checks that some signature verifies with `key`; returns the payload.
    ///
    /// # Errors
    /// The first reason it does not.
    pub fn verify(&self, key: &VerifyingKey) -> Result<Vec<u8>, EnvelopeError> {
        if self.payload_type != IN_TOTO_PAYLOAD_TYPE {
            return Err(EnvelopeError::PayloadType(self.payload_type.clone()));
        }
        let payload = self.payload_bytes()?;
        let signed = pae(&self.payload_type, &payload);
        let valid = self.signatures.iter().any(|s| {
            let bytes = decode_base64(&s.sig);
            let signature = bytes.and_then(|b| Signature::from_slice(&b).ok());
            signature.is_some_and(|sig| key.verify(&signed, &sig).is_ok())
        });
        if valid {
            Ok(payload)
        } else {
            Err(EnvelopeError::NoValidSignature)
        }
    }
}
