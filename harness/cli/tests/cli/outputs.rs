//! Paths a command is told to write: nothing that is not what it writes,
//! none of its own inputs, no folder it would have to make, no link, FIFO
//! or folder replaced; refused with exit 2 before anything runs, and left
//! as they were. Paths it is told to read that are not what it reads exit 3.

use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs the binary from the repository: exit code and stderr.
fn run(args: &[&str]) -> (i32, String) {
    let output =
        Command::new(env!("CARGO_BIN_EXE_sharedos-conformance")).args(args).current_dir(root()).output().unwrap();
    (output.status.code().unwrap(), String::from_utf8_lossy(&output.stderr).into_owned())
}

/// One quick cell: a run that writes nothing of the repository's.
const ONE_CELL: [&str; 4] = ["--case", "forged-grant", "--column", "adversary-embedded"];

fn text(path: &Path) -> &str {
    path.to_str().unwrap()
}

fn mkfifo(path: &Path) {
    assert!(Command::new("mkfifo").arg(path).status().unwrap().success());
}

#[test]
fn run_verdicts_never_replace_what_is_not_a_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let notes = dir.path().join("notes.json");
    let notes_markdown = dir.path().join("notes.md");
    std::fs::write(&notes, "my notes").unwrap();
    std::fs::write(&notes_markdown, "# My notes\n").unwrap();
    let (code, told) = run(&[&["run", "--verdicts", text(&notes)], &ONE_CELL[..]].concat());
    assert_eq!(code, 2, "{told}");
    assert!(
        told.contains("error: failed to write --verdicts ") && told.contains("it exists and is not a manifest"),
        "{told}"
    );
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "my notes");
    assert_eq!(std::fs::read_to_string(&notes_markdown).unwrap(), "# My notes\n");
    // The Markdown beside a fresh manifest is somebody's too.
    let fresh = dir.path().join("fresh.json");
    std::fs::write(dir.path().join("fresh.md"), "# My notes\n").unwrap();
    let (code, told) = run(&[&["run", "--verdicts", text(&fresh)], &ONE_CELL[..]].concat());
    assert_eq!(code, 2, "{told}");
    assert!(told.contains("fresh.md: it exists and is not a manifest's Markdown"), "{told}");
    assert!(!fresh.exists());
    // Where nothing is, then over what it wrote itself: written.
    let mine = dir.path().join("mine.json");
    let (code, told) = run(&[&["run", "--verdicts", text(&mine)], &ONE_CELL[..]].concat());
    assert_eq!(code, 0, "{told}");
    let (code, told) = run(&[&["bless", "--verdicts", text(&mine)], &ONE_CELL[..]].concat());
    assert_eq!(code, 0, "{told}");
    assert!(mine.is_file() && dir.path().join("mine.md").is_file());
}

#[test]
fn a_link_a_fifo_a_folder_or_a_missing_folder_is_never_written() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo.json");
    mkfifo(&fifo);
    let target = dir.path().join("target.json");
    std::fs::write(&target, "kept").unwrap();
    let link = dir.path().join("link.json");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let folder = dir.path().join("folder.json");
    std::fs::create_dir(&folder).unwrap();
    let missing = dir.path().join("missing/verdicts.json");
    let cases = [
        (fifo.clone(), "it is a FIFO, which is left alone"),
        (link.clone(), "it is a symbolic link, which is left alone"),
        (folder.clone(), "it is a folder, which is left alone"),
        (missing.clone(), "its folder"),
    ];
    for (path, said) in &cases {
        for flag in ["--verdicts", "--junit"] {
            let (code, told) = run(&[&["run", flag, text(path)], &ONE_CELL[..]].concat());
            assert_eq!(code, 2, "{flag} {}: {told}", path.display());
            assert!(told.contains(said), "{flag} {}: {told}", path.display());
        }
        let (code, told) = run(&["report", "--html", text(path)]);
        assert_eq!(code, 2, "--html {}: {told}", path.display());
    }
    assert_eq!(cases.len(), 4);
    assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "kept");
    assert!(folder.is_dir() && !dir.path().join("missing").exists());
}

#[test]
fn report_never_writes_its_page_over_an_input_or_a_foreign_file() {
    let dir = tempfile::tempdir().unwrap();
    let committed = root().join("reports/conformance.json");
    let before = std::fs::read(&committed).unwrap();
    // Its default INPUT, named, and through another path to the same file.
    for html in ["reports/conformance.json", "./reports/../reports/conformance.json"] {
        let (code, told) = run(&["report", "--html", html]);
        assert_eq!(code, 2, "{told}");
        assert!(told.contains("it is the same file as INPUT"), "{told}");
    }
    let against = dir.path().join("against.json");
    std::fs::copy(&committed, &against).unwrap();
    let (code, told) = run(&["report", "--html", text(&against), "--against", text(&against)]);
    assert_eq!(code, 2, "{told}");
    assert!(told.contains("it is the same file as --against"), "{told}");
    assert_eq!(std::fs::read(&committed).unwrap(), before, "the committed manifest was written over");
    let notes = dir.path().join("notes.html");
    std::fs::write(&notes, "<p>my page</p>").unwrap();
    let (code, told) = run(&["report", "--html", text(&notes)]);
    assert_eq!(code, 2, "{told}");
    assert!(told.contains("it exists and is not a page of this harness"), "{told}");
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "<p>my page</p>");
    // Its own page, written again.
    let page = dir.path().join("page.html");
    assert_eq!(run(&["report", "--html", text(&page)]).0, 0);
    assert_eq!(run(&["report", "--html", text(&page)]).0, 0);
}

#[test]
fn junit_is_written_over_a_junit_report_only_and_never_over_another_output() {
    let dir = tempfile::tempdir().unwrap();
    let junit = dir.path().join("junit.xml");
    assert_eq!(run(&[&["check", "--junit", text(&junit)], &ONE_CELL[..]].concat()).0, 0);
    assert_eq!(run(&[&["check", "--junit", text(&junit)], &ONE_CELL[..]].concat()).0, 0);
    let foreign = dir.path().join("pom.xml");
    std::fs::write(&foreign, "<?xml version=\"1.0\"?><project/>").unwrap();
    let (code, told) = run(&[&["check", "--junit", text(&foreign)], &ONE_CELL[..]].concat());
    assert_eq!(code, 2, "{told}");
    assert!(told.contains("it exists and is not a JUnit report of this harness"), "{told}");
    // The JUnit file and the verdicts' Markdown at one path.
    let both = dir.path().join("v.md");
    let verdicts = dir.path().join("v.json");
    let args = ["run", "--verdicts", text(&verdicts), "--junit", text(&both)];
    let (code, told) = run(&[&args[..], &ONE_CELL[..]].concat());
    assert_eq!(code, 2, "{told}");
    assert!(told.contains("--junit writes there too"), "{told}");
    assert!(!verdicts.exists() && !both.exists());
    // A file of the suite it runs.
    let (code, told) = run(&[&["check", "--junit", "cases/forged-grant.json"], &ONE_CELL[..]].concat());
    assert_eq!(code, 2, "{told}");
}

#[test]
fn a_bundle_is_never_written_into_a_part_it_merges_nor_where_its_folder_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    let part = dir.path().join("part");
    std::fs::create_dir(&part).unwrap();
    let (code, told) = run(&["merge", text(&part), "--out", text(&part.join("merged"))]);
    assert_eq!(code, 2, "{told}");
    assert!(told.contains("it is inside the part"), "{told}");
    let (code, told) =
        run(&["certify", "--column", "adversary-embedded", "--out", text(&dir.path().join("no/bundle"))]);
    assert_eq!(code, 2, "{told}");
    assert!(told.contains("its folder"), "{told}");
    let (code, told) = run(&["certify", "--column", "adversary-embedded", "--out", "cases/bundle"]);
    assert_eq!(code, 2, "{told}");
    assert!(told.contains("it is inside the cases folder"), "{told}");
    assert!(!root().join("cases/bundle").exists());
}

#[test]
fn check_verdicts_that_are_no_manifest_are_invalid_input_not_an_io_error() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo.json");
    mkfifo(&fifo);
    let zero = dir.path().join("zero.json");
    std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
    let schema = dir.path().join("schema.json");
    std::fs::write(&schema, r#"{"version": "1", "rows": 3}"#).unwrap();
    let folder = dir.path().join("folder.json");
    std::fs::create_dir(&folder).unwrap();
    let cases = [&fifo, &zero, &schema, &folder];
    for file in cases {
        let (code, told) = run(&[&["check", "--verdicts", text(file)], &ONE_CELL[..]].concat());
        assert_eq!(code, 3, "{}: {told}", file.display());
        assert!(told.contains("error: failed to read the committed verdicts: "), "{told}");
    }
    assert_eq!(cases.len(), 4);
}

#[test]
fn verify_against_a_suite_that_is_none_says_so_and_exits_3() {
    let (code, told) = run(&["verify", "reports", "--suite", "/dev/null"]);
    assert_eq!(code, 3, "{told}");
    assert!(told.starts_with("error: failed to read the suite /dev/null: "), "{told}");
    assert!(!told.contains("expected an unloadable suite"), "{told}");
}
