//! A certified bundle verifies, says what it claims, and is the same
//! whatever the worker count.

use crate::support::{bundle, certify_into, scratch, verify_plain, COLUMN};
use sharedos_evidence::bundle::{list_files, EvidenceLine, EVIDENCE_FILE, MANIFEST_FILE, STATEMENT_FILE};
use sharedos_evidence::statement::{Statement, PREDICATE_TYPE, STATEMENT_TYPE};
use sharedos_evidence::verify::{verify, SignatureCheck, VerifyOptions};

#[test]
fn a_certified_bundle_verifies_and_every_run_cell_is_graded_again() {
    let verification = verify_plain(bundle());
    assert_eq!(verification.failures, vec![]);
    let lines = std::fs::read_to_string(bundle().join(EVIDENCE_FILE)).unwrap();
    let lines: Vec<EvidenceLine> = lines.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    // The Adversary runs 118 of the 131 rows; the certified column runs its own share.
    assert!(lines.len() > 118, "{} evidence lines", lines.len());
    assert_eq!(verification.regraded, lines.len());
    assert_eq!(verification.signature, SignatureCheck::Unsigned);
}

#[test]
fn the_statement_is_an_in_toto_statement_over_every_file() {
    let statement: Statement = serde_json::from_slice(&std::fs::read(bundle().join(STATEMENT_FILE)).unwrap()).unwrap();
    assert_eq!(statement.statement_type, STATEMENT_TYPE);
    assert_eq!(statement.predicate_type, PREDICATE_TYPE);
    let files: Vec<String> = list_files(bundle()).unwrap().into_iter().filter(|n| n != STATEMENT_FILE).collect();
    let subjects: Vec<String> = statement.subject.iter().map(|s| s.name.clone()).collect();
    assert_eq!(subjects, files);
    assert!(files.iter().any(|f| f.starts_with("suite/cases/")), "{files:?}");
    assert_eq!(statement.predicate.column.id, COLUMN);
    let total: usize = statement.predicate.summary.values().sum();
    assert_eq!(total, 131, "{:?}", statement.predicate.summary);
}

#[test]
fn the_manifest_holds_the_adversary_beside_the_certified_column() {
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(bundle().join(MANIFEST_FILE)).unwrap()).unwrap();
    let ids: Vec<&str> = manifest["columns"].as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["adversary-embedded", COLUMN]);
}

#[test]
fn one_worker_or_two_write_the_same_bundle() {
    let dir = scratch();
    let (one, two) = (dir.path().join("one"), dir.path().join("two"));
    certify_into(&one, COLUMN, 1, None);
    certify_into(&two, COLUMN, 2, None);
    let files = list_files(&one).unwrap();
    assert_eq!(files, list_files(&two).unwrap());
    assert!(files.len() > 100, "{} files", files.len());
    for name in files {
        assert_eq!(std::fs::read(one.join(&name)).unwrap(), std::fs::read(two.join(&name)).unwrap(), "{name} differs");
    }
}

#[test]
fn certify_never_writes_over_a_bundle() {
    let dir = scratch();
    let root = crate::support::suite_root();
    let suite = sharedos_grading::input::loader::load_suite(&root).unwrap();
    let request = sharedos_conformance::certify::CertifyRequest {
        suite: &suite,
        root: &root,
        column_id: COLUMN,
        jobs: 1,
        sign_key: None,
        out: dir.path(),
        shard: None,
        repeat: 1,
        progress: None,
    };
    let error = sharedos_conformance::certify::certify(request).unwrap_err();
    assert!(error.to_string().contains("already exists"), "{error}");
}

#[test]
fn a_folder_without_a_statement_is_not_a_bundle() {
    let dir = scratch();
    let error = verify(dir.path(), VerifyOptions::default()).unwrap_err();
    assert!(error.to_string().contains("statement.json"), "{error}");
}

#[test]
fn a_bundle_that_fails_half_way_leaves_nothing_behind() {
    use sharedos_evidence::archive::write_archive;
    use sharedos_evidence::bundle::{write_bundle, BundleFile};
    let dir = scratch();
    // The second file needs a folder where the first is a file: writing stops there.
    let files = [
        BundleFile { name: "a".into(), bytes: b"1".to_vec() },
        BundleFile { name: "a/b".into(), bytes: b"2".to_vec() },
    ];
    let out = dir.path().join("bundle");
    assert!(write_bundle(&out, &files).is_err());
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(left.len(), 0, "{left:?}");
    // An archive into a folder that does not exist is not written at all.
    let nowhere = dir.path().join("missing/bundle.tar");
    assert!(write_archive(&nowhere, &files[..1]).is_err());
    assert!(!nowhere.exists());
}

/// Rules version 7 in a bundle: a seat that broke the protocol after its
/// report is certified with the breach in that turn's record and the
/// cell's detail, and the verifier, grading the record again, agrees.
#[test]
fn v7_a_breach_is_kept_in_the_bundle_and_graded_again_alike() {
    use sharedos_conformance::certify::{certify, CertifyRequest};
    use sharedos_grading::input::loader::{load_suite, parse_seat};
    let root = crate::support::suite_root();
    let standins = root.join("harness/process/tests/standins");
    let seat = serde_json::json!({
        "name": "strays", "label": "Strays", "kind": "scripted", "command": "python3",
        "args": ["strays.py", "forged-grant", "after_report"], "cwd": standins, "passEnv": ["PATH"],
    });
    let dir = scratch();
    let file = dir.path().join("strays.json");
    std::fs::write(&file, seat.to_string()).unwrap();
    let mut suite = load_suite(&root).unwrap();
    suite.add_seat(parse_seat(&file, dir.path(), &seat.to_string()).unwrap()).unwrap();
    let out = dir.path().join("bundle");
    let request = CertifyRequest {
        suite: &suite,
        root: &root,
        column_id: "process:strays",
        jobs: 2,
        sign_key: None,
        out: &out,
        shard: None,
        repeat: 1,
        progress: None,
    };
    let certified = certify(request).unwrap();
    assert_eq!(certified.summary.get("fail"), Some(&1), "{:?}", certified.summary);
    let verification = verify_plain(&out);
    assert_eq!(verification.failures, vec![]);
    let lines = std::fs::read_to_string(out.join(EVIDENCE_FILE)).unwrap();
    let line: EvidenceLine = lines
        .lines()
        .map(|l| serde_json::from_str::<EvidenceLine>(l).unwrap())
        .find(|l| l.case == "forged-grant" && l.column == "process:strays")
        .unwrap();
    let detail = line.cell.detail.unwrap();
    assert!(detail.starts_with("turn 1: the runtime broke sharedos-runtime/2 after its report"), "{detail}");
    assert!(detail.contains("received `not a protocol line`"), "{detail}");
    let record = &line.grading.records[0];
    let breach = &record.system.metadata.as_ref().unwrap()["protocolBreach"];
    assert_eq!(breach["code"], "runtime_not_json");
    assert_eq!(breach["stderrTail"], "strays: one line too many after_report", "only what the turn wrote");
}

/// Two writers started together on one path, `rounds` times: each round
/// exactly one writes it, the other is told it exists, and no staging
/// file or folder is left beside it.
fn race(rounds: usize, write: fn(&std::path::Path) -> Result<(), sharedos_evidence::bundle::WriteError>, name: &str) {
    use sharedos_evidence::bundle::WriteError;
    for round in 0..rounds {
        let dir = scratch();
        let out = dir.path().join(name);
        let start = std::sync::Barrier::new(2);
        let results: Vec<Result<(), WriteError>> = std::thread::scope(|scope| {
            let writers: Vec<_> = (0..2)
                .map(|_| {
                    scope.spawn(|| {
                        start.wait();
                        write(&out)
                    })
                })
                .collect();
            writers.into_iter().map(|w| w.join().unwrap()).collect()
        });
        let won = results.iter().filter(|r| r.is_ok()).count();
        let told = results.iter().filter(|r| matches!(r, Err(WriteError::Exists(_)))).count();
        assert_eq!((won, told), (1, 1), "round {round}: {results:?}");
        let left: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(left, [name], "round {round}");
    }
}

/// Two files, one in a folder, saying which thread wrote them.
fn racing_files() -> Vec<sharedos_evidence::bundle::BundleFile> {
    let id = format!("{:?}", std::thread::current().id());
    vec![
        sharedos_evidence::bundle::BundleFile { name: "a".into(), bytes: id.clone().into_bytes() },
        sharedos_evidence::bundle::BundleFile { name: "b/c".into(), bytes: id.into_bytes() },
    ]
}

#[test]
fn two_archive_writers_racing_to_one_path_one_wins_and_the_other_is_told_it_exists() {
    race(25, |out| sharedos_evidence::archive::write_archive(out, &racing_files()), "bundle.tar");
}

#[test]
fn two_folder_writers_racing_to_one_path_one_wins_and_the_other_is_told_it_exists() {
    race(25, |out| sharedos_evidence::bundle::write_bundle(out, &racing_files()), "bundle");
}

#[test]
fn a_written_bundle_has_the_permissions_of_any_file_or_folder_made_beside_it() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch();
    let mode = |path: &std::path::Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    let files = racing_files();
    sharedos_evidence::archive::write_archive(&dir.path().join("bundle.tar"), &files).unwrap();
    sharedos_evidence::bundle::write_bundle(&dir.path().join("bundle"), &files).unwrap();
    std::fs::write(dir.path().join("plain"), b"").unwrap();
    std::fs::create_dir(dir.path().join("folder")).unwrap();
    assert_eq!(mode(&dir.path().join("bundle.tar")), mode(&dir.path().join("plain")));
    assert_eq!(mode(&dir.path().join("bundle")), mode(&dir.path().join("folder")));
}

/// Issue: a file the bundle carries was read only after the whole matrix
/// ran. One that cannot be read now fails before any seat is started.
#[test]
fn a_seat_file_that_cannot_be_read_fails_before_the_matrix_runs() {
    use sharedos_conformance::certify::{certify, CertifyError, CertifyRequest};
    use sharedos_grading::input::loader::{load_suite, parse_seat};
    let dir = scratch();
    let started = dir.path().join("started");
    let seat = serde_json::json!({
        "name": "gone", "label": "Gone", "kind": "scripted", "command": "sh",
        "args": ["-c", format!("touch '{}'", started.display())], "cwd": dir.path(), "passEnv": ["PATH"],
    });
    let root = crate::support::suite_root();
    let mut suite = load_suite(&root).unwrap();
    // Parsed from text: the file it names is not there to be bundled.
    let missing = dir.path().join("gone.json");
    suite.add_seat(parse_seat(&missing, dir.path(), &seat.to_string()).unwrap()).unwrap();
    let out = dir.path().join("bundle");
    let request = CertifyRequest {
        suite: &suite,
        root: &root,
        column_id: "process:gone",
        jobs: 2,
        sign_key: None,
        out: &out,
        shard: None,
        repeat: 1,
        progress: None,
    };
    let error = certify(request).unwrap_err();
    assert!(matches!(&error, CertifyError::Read { path, .. } if *path == missing), "{error}");
    assert!(!started.exists(), "the seat was started before the file was read");
    assert!(!out.exists());
}
