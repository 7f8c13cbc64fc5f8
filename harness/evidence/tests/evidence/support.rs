//! One certified bundle shared by the tests (certifying runs the suite),
//! copied into a scratch folder for each test that edits it.

use sharedos_conformance::certify::{certify, CertifyRequest};
use sharedos_evidence::bundle::{list_files, ENVELOPE_FILE, STATEMENT_FILE};
use sharedos_evidence::statement::{Statement, Subject};
use sharedos_evidence::verify::{verify, Verification, VerifyOptions};
use sharedos_grading::input::loader::load_suite;
use sharedos_grading::plan::shard::Shard;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The column the shared bundle certifies: driven, with declared cells.
pub const COLUMN: &str = "model-scripted";

pub fn suite_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A fresh scratch folder.
pub fn scratch() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

/// Certifies `column` into `out`.
pub fn certify_into(out: &Path, column: &str, jobs: usize, key: Option<&ed25519_dalek::SigningKey>) {
    certify_shard(out, column, jobs, key, None);
}

/// Certifies part of `column`'s rows (all of them for `None`) into `out`.
pub fn certify_shard(
    out: &Path,
    column: &str,
    jobs: usize,
    key: Option<&ed25519_dalek::SigningKey>,
    shard: Option<Shard>,
) {
    let root = suite_root();
    let suite = load_suite(&root).unwrap();
    let request = CertifyRequest {
        suite: &suite,
        root: &root,
        column_id: column,
        jobs,
        sign_key: key,
        out,
        shard,
        repeat: 1,
        progress: None,
    };
    let _ = certify(request).unwrap();
}

/// Certifies part of `column`'s rows over the suite at `root`.
pub fn certify_from(root: &Path, out: &Path, column: &str, shard: Option<Shard>) {
    let suite = load_suite(root).unwrap();
    let request = CertifyRequest {
        suite: &suite,
        root,
        column_id: column,
        jobs: 1,
        sign_key: None,
        out,
        shard,
        repeat: 1,
        progress: None,
    };
    let _ = certify(request).unwrap();
}

/// Certifies part of `column`'s rows, each cell of a seated column run
/// `repeat` times.
pub fn certify_runs(out: &Path, column: &str, shard: Option<Shard>, repeat: u32) {
    let root = suite_root();
    let suite = load_suite(&root).unwrap();
    let request = CertifyRequest {
        suite: &suite,
        root: &root,
        column_id: column,
        jobs: 2,
        sign_key: None,
        out,
        shard,
        repeat,
        progress: None,
    };
    let _ = certify(request).unwrap();
}

/// The shared bundle (unsigned).
pub fn bundle() -> &'static Path {
    static BUNDLE: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    let (_, path) = BUNDLE.get_or_init(|| {
        let dir = scratch();
        let path = dir.path().join("bundle");
        certify_into(&path, COLUMN, 2, None);
        (dir, path)
    });
    path
}

/// A copy of the shared bundle to edit.
pub fn copy_of_bundle(scratch: &Path) -> PathBuf {
    let copy = scratch.join("bundle");
    for name in list_files(bundle()).unwrap() {
        let target = copy.join(&name);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::copy(bundle().join(&name), target).unwrap();
    }
    copy
}

pub fn verify_plain(bundle: &Path) -> Verification {
    verify(bundle, VerifyOptions::default()).unwrap()
}

/// Rewrites the statement's digests to match the files as they now are:
/// what someone who edits an unsigned bundle would do to hide the edit.
pub fn reseal(bundle: &Path) {
    let path = bundle.join(STATEMENT_FILE);
    let mut statement: Statement = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    statement.subject = list_files(bundle)
        .unwrap()
        .into_iter()
        .filter(|n| n != STATEMENT_FILE)
        .map(|n| Subject::of(&n, &std::fs::read(bundle.join(&n)).unwrap()))
        .collect();
    std::fs::write(&path, serde_json::to_vec_pretty(&statement).unwrap()).unwrap();
}

/// The failure codes of a verification, sorted and unique.
pub fn codes(verification: &Verification) -> Vec<&'static str> {
    let mut codes: Vec<&'static str> = verification.failures.iter().map(|f| f.code()).collect();
    codes.sort_unstable();
    codes.dedup();
    codes
}

/// Signs the bundle's statement, as it now is, with `key`: what someone
/// holding the key would do after editing the statement.
pub fn resign(bundle: &Path, key: &ed25519_dalek::SigningKey) {
    let statement = std::fs::read(bundle.join(STATEMENT_FILE)).unwrap();
    let envelope = sharedos_evidence::dsse::sign(&statement, key);
    std::fs::write(bundle.join(ENVELOPE_FILE), serde_json::to_vec_pretty(&envelope).unwrap()).unwrap();
}

/// Makes a FIFO at `path`.
pub fn mkfifo(path: &Path) {
    let made = std::process::Command::new("mkfifo").arg(path).status();
    assert!(made.unwrap().success(), "mkfifo {}", path.display());
}

/// The evidence lines of `bundle`, parsed.
pub fn read_lines(bundle: &Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(bundle.join(sharedos_evidence::bundle::EVIDENCE_FILE)).unwrap();
    text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// Writes `lines` as the evidence lines of `bundle`.
pub fn write_lines(bundle: &Path, lines: &[serde_json::Value]) {
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(bundle.join(sharedos_evidence::bundle::EVIDENCE_FILE), text).unwrap();
}
