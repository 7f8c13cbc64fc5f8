//! `verify`: a bundle checked offline, from itself alone. Digests first,
//! then the signature, then every hash recomputed, every verdict graded
//! again from its evidence, every cell of the suite accounted for, and
//! every field of the statement checked against the files (see
//! [`crate::claims`]).

use crate::bundle::{
    list_files, read_regular, EvidenceLine, ENVELOPE_FILE, EVIDENCE_FILE, MANIFEST_FILE, STATEMENT_FILE, SUITE_DIR,
};
use crate::dsse::Envelope;
use crate::statement::{sha256_hex, Statement, Subject};
use ed25519_dalek::VerifyingKey;
use serde::de::DeserializeOwned;
use sharedos_conformance_metadata::failure::{Failure, Place};
use sharedos_grading::identity::case_set::case_set_hash;
use sharedos_grading::input::loader::{load_suite, Suite};
use sharedos_grading::output::manifest::Manifest;
use sharedos_grading::plan::shard::Shard;
use sharedos_grading::vocab::progress::Progress;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The one digest algorithm a subject states.
const SHA256: &str = "sha256";

/// What to check besides the bundle itself.
#[derive(Debug, Clone, Copy, Default)]
pub struct VerifyOptions<'a> {
    /// The public key the statement must be signed with.
    pub key: Option<&'a VerifyingKey>,
    /// A suite whose case set the bundle's must equal.
    pub suite: Option<&'a Path>,
    /// Told of each cell as it is graded again.
    pub progress: Option<&'a dyn Progress>,
}

/// Whether the signature was checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignatureCheck {
    /// Signed, and it verifies with the given key.
    Verified,
    /// Signed, but no key was given.
    NotChecked,
    /// Not signed, and no key was asked for.
    Unsigned,
    /// Checked, and it failed (a [`Failure`] says why).
    Failed,
}

impl SignatureCheck {
    /// Every state, in declaration order (the verify output schema's).
    pub const ALL: [SignatureCheck; 4] =
        [SignatureCheck::Verified, SignatureCheck::NotChecked, SignatureCheck::Unsigned, SignatureCheck::Failed];

    /// In words, as `verify` prints it in either format.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            SignatureCheck::Verified => "verified",
            SignatureCheck::NotChecked => "present, not checked (no --key)",
            SignatureCheck::Unsigned => "none",
            SignatureCheck::Failed => "does not verify",
        }
    }
}

/// The outcome of a verification.
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
pub struct Verification {
    /// Every failure, in check order; empty when the bundle verifies.
    pub failures: Vec<Failure>,
    /// Run cells graded again.
    pub regraded: usize,
    /// The signature.
    pub signature: SignatureCheck,
    /// The part of the run a partial bundle holds (`None` for a whole one).
    pub shard: Option<Shard>,
}

impl Verification {
    /// True when nothing failed.
    #[must_use]
    pub fn verified(&self) -> bool {
        self.failures.is_empty()
    }
}

/// A bundle that cannot be read as one at all, or a `--suite` that is no
/// suite.
#[derive(Debug, thiserror::Error)]
#[error("read {what} {}: {detail}", path.display())]
pub struct VerifyError {
    /// What could not be read.
    pub what: Unreadable,
    /// The file or folder.
    pub path: PathBuf,
    /// What was wrong.
    pub detail: String,
}

/// What [`VerifyError`] could not read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unreadable {
    /// The bundle, or one of its files.
    Bundle,
    /// The suite its case set is to be compared with.
    Suite,
}

impl std::fmt::Display for Unreadable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Unreadable::Bundle => "the bundle",
            Unreadable::Suite => "the suite",
        })
    }
}

impl VerifyError {
    fn bundle(path: PathBuf, detail: String) -> VerifyError {
        VerifyError { what: Unreadable::Bundle, path, detail }
    }
}

/// Verifies the bundle at `bundle`: a folder, or an archive (`.tar`).
///
/// # Errors
/// When it is not a readable bundle (no folder, an archive that does not
/// unpack, no statement, or a statement that is not one); everything else
/// is a [`Failure`]. The error names `bundle`, never the temporary folder
/// an archive is unpacked into.
pub fn verify(bundle: &Path, options: VerifyOptions<'_>) -> Result<Verification, VerifyError> {
    // A suite to compare with that cannot be read is the caller's mistake,
    // said before the bundle is read, not a failure of the bundle.
    let suite = match options.suite {
        Some(path) => Some(OtherSuite {
            path,
            case_set_hash: load_suite(path).map(|suite| case_set_hash(&suite).unwrap_or_default()).map_err(|e| {
                VerifyError { what: Unreadable::Suite, path: path.to_path_buf(), detail: e.to_string() }
            })?,
        }),
        None => None,
    };
    let checks = Checks { key: options.key, suite, progress: options.progress };
    if crate::archive::is_archive(bundle) && bundle.is_file() {
        let unpacked =
            crate::archive::unpack(bundle).map_err(|e| VerifyError::bundle(bundle.to_path_buf(), e.detail))?;
        return verify_folder(unpacked.path(), Given { path: bundle, archive: true }, checks);
    }
    verify_folder(bundle, Given { path: bundle, archive: false }, checks)
}

/// The suite named to compare a bundle's case set with, read.
#[derive(Debug, Clone)]
struct OtherSuite<'a> {
    path: &'a Path,
    case_set_hash: String,
}

/// What to check besides the bundle, read.
#[derive(Debug, Clone, Default)]
struct Checks<'a> {
    key: Option<&'a VerifyingKey>,
    suite: Option<OtherSuite<'a>>,
    progress: Option<&'a dyn Progress>,
}

/// The bundle as the user named it, for errors: a folder's file is named
/// by its path, an archive's by the archive and its name inside it, as
/// the folder it was unpacked into is gone by the time the error is read.
#[derive(Debug, Clone, Copy)]
struct Given<'a> {
    path: &'a Path,
    archive: bool,
}

impl Given<'_> {
    fn error(self, file: Option<&str>, detail: String) -> VerifyError {
        match file {
            Some(file) if self.archive => VerifyError::bundle(self.path.to_path_buf(), format!("{file}: {detail}")),
            Some(file) => VerifyError::bundle(self.path.join(file), detail),
            None => VerifyError::bundle(self.path.to_path_buf(), detail),
        }
    }
}

/// Verifies a bundle already unpacked into `folder` (`merge` unpacks each
/// part once and reads it after), naming it `given` in errors, as
/// [`verify`] names what it was given.
pub(crate) fn verify_unpacked(folder: &Path, given: &Path, archive: bool) -> Result<Verification, VerifyError> {
    verify_folder(folder, Given { path: given, archive }, Checks::default())
}

fn verify_folder(bundle: &Path, given: Given<'_>, checks: Checks<'_>) -> Result<Verification, VerifyError> {
    let unreadable = |detail: String| given.error(Some(STATEMENT_FILE), detail);
    let statement_bytes = read_regular(&bundle.join(STATEMENT_FILE)).map_err(|e| unreadable(e.to_string()))?;
    let statement: Statement = serde_json::from_slice(&statement_bytes)
        .map_err(|e| unreadable(format!("expected an in-toto Statement v1 ({e})")))?;
    let mut failures = Vec::new();
    crate::claims::check_constants(&statement, &mut failures);
    check_subjects(bundle, &statement, &mut failures).map_err(|e| given.error(None, e.to_string()))?;
    let signature = check_signature(bundle, &statement_bytes, checks.key, &mut failures);
    let mut regraded = 0;
    let manifest: Option<Manifest> = parse_document(bundle, MANIFEST_FILE, "a conformance manifest", &mut failures);
    let lines = parse_lines(bundle, &mut failures);
    let suite = match load_suite(&bundle.join(SUITE_DIR)) {
        Ok(suite) => Some(suite),
        Err(error) => {
            let file = format!("{SUITE_DIR}/{}", error.file.display());
            failures
                .push(Failure::Unparsable { place: Place::at(&file, error.pointer.clone()), expected: error.expected });
            None
        }
    };
    if let (Some(manifest), Some(lines), Some(suite)) = (&manifest, &lines, &suite) {
        let certified = crate::claims::certified_column(&statement, manifest);
        crate::recompute::check_hashes(&statement, manifest, suite, lines, &mut failures);
        regraded = crate::regrade::check_verdicts(manifest, suite, lines, checks.progress, &mut failures);
        crate::regrade::check_complete(&certified, statement.predicate.shard, manifest, suite, lines, &mut failures);
        crate::regrade::check_repeats(manifest, lines, &mut failures);
        crate::regrade::check_coverage(manifest, &mut failures);
        crate::claims::check_column(&statement, manifest, suite, lines, &mut failures);
    }
    if let (Some(other), Some(suite)) = (&checks.suite, &suite) {
        check_suite(other, suite, &mut failures);
    }
    Ok(Verification { failures, regraded, signature, shard: statement.predicate.shard })
}

/// Every listed file is there with its digest, listed once, and every
/// file is listed. A name listed many times is reported once and its file
/// read once, however long the list.
pub(crate) fn check_subjects(bundle: &Path, statement: &Statement, failures: &mut Vec<Failure>) -> std::io::Result<()> {
    let present = list_files(bundle)?;
    let mut listed: BTreeMap<&str, (usize, &Subject, usize)> = BTreeMap::new();
    for (index, subject) in statement.subject.iter().enumerate() {
        listed.entry(subject.name.as_str()).or_insert((index, subject, 0)).2 += 1;
    }
    for (name, (index, subject, count)) in &listed {
        if *count > 1 {
            failures.push(Failure::Unparsable {
                place: Place::at(STATEMENT_FILE, format!("/subject/{index}/name")),
                expected: format!("each file listed once (`{name}` is listed {count} times)"),
            });
        }
        check_subject(bundle, *index, subject, failures);
    }
    for name in present.iter().filter(|n| *n != STATEMENT_FILE && *n != ENVELOPE_FILE) {
        if !listed.contains_key(name.as_str()) {
            failures.push(Failure::Unlisted { place: Place::file(name) });
        }
    }
    Ok(())
}

/// One subject's file is there, with the one digest it states.
fn check_subject(bundle: &Path, index: usize, subject: &Subject, failures: &mut Vec<Failure>) {
    let place = Place::file(&subject.name);
    // A subject naming a path outside the bundle is never read.
    if subject.name.split('/').any(|p| p == ".." || p == "." || p.is_empty()) {
        failures.push(Failure::Unparsable { place, expected: "a path inside the bundle".to_string() });
        return;
    }
    // A digest this verifier does not compute would be a claim left
    // unchecked: only SHA-256 is stated.
    for algorithm in subject.digest.keys().filter(|a| *a != SHA256) {
        failures.push(Failure::Unparsable {
            place: Place::at(STATEMENT_FILE, format!("/subject/{index}/digest/{}", crate::claims::escape(algorithm))),
            expected: format!("only a `{SHA256}` digest, the one this verifier computes"),
        });
    }
    match read_regular(&bundle.join(&subject.name)) {
        Ok(bytes) => {
            let found = sha256_hex(&bytes);
            let expected = subject.sha256().unwrap_or_default().to_string();
            if found != expected {
                failures.push(Failure::Digest { place, expected, found });
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => failures.push(Failure::MissingFile { place }),
        Err(e) => failures.push(Failure::Unparsable { place, expected: format!("a regular file ({e})") }),
    }
}

/// The envelope's payload is the statement, signed by `key`.
fn check_signature(
    bundle: &Path,
    statement: &[u8],
    key: Option<&VerifyingKey>,
    failures: &mut Vec<Failure>,
) -> SignatureCheck {
    let place = Place::file(ENVELOPE_FILE);
    let bytes = match read_regular(&bundle.join(ENVELOPE_FILE)) {
        Ok(bytes) => bytes,
        // Only an envelope that is not there at all is no signature: one
        // that is a link, a FIFO or a folder is a damaged bundle.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if key.is_some() {
                let detail = "the bundle is not signed, and --key asks for a signature".to_string();
                failures.push(Failure::Signature { place, detail });
                return SignatureCheck::Failed;
            }
            return SignatureCheck::Unsigned;
        }
        Err(e) => {
            failures.push(Failure::Unparsable { place, expected: format!("a DSSE envelope, a regular file ({e})") });
            return SignatureCheck::Failed;
        }
    };
    let envelope: Envelope = match serde_json::from_slice(&bytes) {
        Ok(envelope) => envelope,
        Err(e) => {
            failures.push(Failure::Unparsable { place, expected: format!("a DSSE envelope ({e})") });
            return SignatureCheck::Failed;
        }
    };
    if envelope.payload_bytes().ok().as_deref() != Some(statement) {
        let detail = format!("the signed payload is not {STATEMENT_FILE}");
        failures.push(Failure::Signature { place: Place::at(ENVELOPE_FILE, "/payload"), detail });
        return SignatureCheck::Failed;
    }
    let Some(key) = key else { return SignatureCheck::NotChecked };
    match envelope.verify(key) {
        Ok(_) => SignatureCheck::Verified,
        Err(error) => {
            failures
                .push(Failure::Signature { place: Place::at(ENVELOPE_FILE, "/signatures"), detail: error.to_string() });
            SignatureCheck::Failed
        }
    }
}

fn parse_document<T: DeserializeOwned>(
    bundle: &Path,
    name: &str,
    what: &str,
    failures: &mut Vec<Failure>,
) -> Option<T> {
    let parsed = read_regular(&bundle.join(name))
        .map_err(|e| e.to_string())
        .and_then(|bytes| serde_json::from_slice(&bytes).map_err(|e| e.to_string()));
    match parsed {
        Ok(value) => Some(value),
        Err(detail) => {
            failures.push(Failure::Unparsable { place: Place::file(name), expected: format!("{what} ({detail})") });
            None
        }
    }
}

fn parse_lines(bundle: &Path, failures: &mut Vec<Failure>) -> Option<Vec<EvidenceLine>> {
    let text = match read_regular(&bundle.join(EVIDENCE_FILE))
        .and_then(|bytes| String::from_utf8(bytes).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e)))
    {
        Ok(text) => text,
        Err(e) => {
            let expected = format!("UTF-8 JSON Lines ({e})");
            failures.push(Failure::Unparsable { place: Place::file(EVIDENCE_FILE), expected });
            return None;
        }
    };
    let mut lines = Vec::new();
    let mut whole = true;
    for (index, line) in text.lines().enumerate() {
        match serde_json::from_str::<EvidenceLine>(line) {
            Ok(parsed) => lines.push(parsed),
            Err(e) => {
                let expected = format!("one cell's evidence ({e})");
                failures.push(Failure::Unparsable { place: Place::line(EVIDENCE_FILE, index + 1, ""), expected });
                whole = false;
            }
        }
    }
    whole.then_some(lines)
}

/// The bundle's case set is the one of the suite named to compare it with.
fn check_suite(other: &OtherSuite<'_>, suite: &Suite, failures: &mut Vec<Failure>) {
    let ours = case_set_hash(suite).unwrap_or_default();
    if ours != other.case_set_hash {
        failures.push(Failure::Mismatch {
            place: Place::file(SUITE_DIR),
            what: format!("the case-set hash of --suite {}", other.path.display()),
            expected: other.case_set_hash.clone(),
            found: ours,
        });
    }
}
