//! `merge`: shards of a certification joined into the unsharded bundle,
//! byte for byte, and every mismatched set of parts refused by name.

use crate::support::{certify_shard, codes, scratch, verify_plain};
use sharedos_evidence::bundle::{EVIDENCE_FILE, MANIFEST_FILE, STATEMENT_FILE};
use sharedos_evidence::merge::{merge, MergeError, MergeRequest};
use sharedos_grading::plan::shard::Shard;
use std::path::{Path, PathBuf};

/// Certifies `column` whole and in `count` shards under `dir`; returns
/// the whole bundle and the parts.
fn whole_and_parts(dir: &Path, column: &str, count: u32) -> (PathBuf, Vec<PathBuf>) {
    let whole = dir.join("whole");
    certify_shard(&whole, column, 2, None, None);
    let parts: Vec<PathBuf> = (1..=count)
        .map(|index| {
            let part = dir.join(format!("part-{index}"));
            // Each shard on another number of workers: the partition
            // must not depend on it.
            certify_shard(&part, column, 1 + index as usize % 3, None, Some(Shard { index, count }));
            part
        })
        .collect();
    (whole, parts)
}

fn merge_into(out: &Path, parts: &[PathBuf]) -> Result<sharedos_evidence::merge::Merged, MergeError> {
    merge(MergeRequest { parts, out, sign_key: None })
}

fn assert_same_file(a: &Path, b: &Path, name: &str) {
    let (left, right) = (std::fs::read(a.join(name)).unwrap(), std::fs::read(b.join(name)).unwrap());
    assert!(left == right, "{name} of {} differs from the unsharded one", b.display());
}

#[test]
fn four_merged_shards_are_the_unsharded_bundle_for_every_built_in_kind_of_column() {
    // One column of each kind the suite builds in: the adversary, a driven
    // model loop, a vendor codec, MCP, and a runtime in another process
    // (whose `null` answers once read back as no answer).
    for column in ["adversary-embedded", "model-scripted", "codex-scripted", "mcp-scripted", "process:node-reference"] {
        let dir = scratch();
        let (whole, mut parts) = whole_and_parts(dir.path(), column, 4);
        parts.reverse();
        let merged = dir.path().join("merged");
        let outcome = merge_into(&merged, &parts).unwrap();
        assert_eq!(outcome.shards, 4);
        assert_same_file(&whole, &merged, MANIFEST_FILE);
        assert_same_file(&whole, &merged, EVIDENCE_FILE);
        let verification = verify_plain(&merged);
        assert!(verification.verified(), "{column}: {:?}", codes(&verification));
        assert_eq!(verification.shard, None);
    }
}

#[test]
fn a_shard_verifies_as_a_partial_bundle_of_its_own_rows() {
    let dir = scratch();
    let part = dir.path().join("part");
    let shard = Shard { index: 2, count: 3 };
    certify_shard(&part, "adversary-embedded", 2, None, Some(shard));
    let verification = verify_plain(&part);
    assert!(verification.verified(), "{:?}", codes(&verification));
    assert_eq!(verification.shard, Some(shard));
    let whole = verify_plain(crate::support::bundle());
    assert!(verification.regraded * 2 < whole.regraded, "a third of the rows, not all");
}

/// Three shards of the adversary, shared by the refusal tests.
fn adversary_parts(dir: &Path) -> Vec<PathBuf> {
    whole_and_parts(dir, "adversary-embedded", 3).1
}

#[test]
fn merge_refuses_a_gap_naming_the_missing_shard() {
    let dir = scratch();
    let parts = adversary_parts(dir.path());
    let error = merge_into(&dir.path().join("out"), &parts[..2]).unwrap_err();
    assert!(matches!(&error, MergeError::Gap { missing, count: 3 } if missing == &[3]), "{error}");
    assert!(!dir.path().join("out").exists());
}

#[test]
fn merge_refuses_an_overlap_naming_both_parts() {
    let dir = scratch();
    let mut parts = adversary_parts(dir.path());
    parts.push(parts[1].clone());
    let error = merge_into(&dir.path().join("out"), &parts).unwrap_err();
    assert!(matches!(&error, MergeError::Overlap { shard, .. } if shard.index == 2), "{error}");
}

#[test]
fn merge_refuses_shards_of_another_column_count_or_suite() {
    let dir = scratch();
    let parts = adversary_parts(dir.path());
    // Another column.
    let other = dir.path().join("other-column");
    certify_shard(&other, "model-scripted", 1, None, Some(Shard { index: 3, count: 3 }));
    let error = merge_into(&dir.path().join("out"), &[parts[0].clone(), parts[1].clone(), other]).unwrap_err();
    assert!(matches!(&error, MergeError::Differs(d) if d.what == "the certified column"), "{error}");
    // Another shard count.
    let four = dir.path().join("of-four");
    certify_shard(&four, "adversary-embedded", 1, None, Some(Shard { index: 3, count: 4 }));
    let error = merge_into(&dir.path().join("out"), &[parts[0].clone(), parts[1].clone(), four]).unwrap_err();
    assert!(matches!(&error, MergeError::Differs(d) if d.what == "the shard count"), "{error}");
    // Another suite: a part whose statement states another case set.
    let edited = dir.path().join("edited");
    copy_dir(&parts[2], &edited);
    let statement_path = edited.join(STATEMENT_FILE);
    let text = std::fs::read_to_string(&statement_path).unwrap();
    let mut statement: serde_json::Value = serde_json::from_str(&text).unwrap();
    statement["predicate"]["caseSetHash"] = serde_json::json!("0".repeat(64));
    std::fs::write(&statement_path, serde_json::to_vec_pretty(&statement).unwrap()).unwrap();
    let error = merge_into(&dir.path().join("out"), &[parts[0].clone(), parts[1].clone(), edited]).unwrap_err();
    assert!(
        matches!(&error, MergeError::Differs(d) if d.what == "the case-set hash" && d.found == "0".repeat(64)),
        "{error}"
    );
    assert!(!dir.path().join("out").exists());
}

#[test]
fn merge_refuses_a_damaged_part_and_a_whole_bundle() {
    let dir = scratch();
    let parts = adversary_parts(dir.path());
    let damaged = dir.path().join("damaged");
    copy_dir(&parts[2], &damaged);
    let evidence = damaged.join(EVIDENCE_FILE);
    let mut bytes = std::fs::read(&evidence).unwrap();
    bytes.extend_from_slice(b"\n");
    std::fs::write(&evidence, bytes).unwrap();
    let error = merge_into(&dir.path().join("out"), &[parts[0].clone(), parts[1].clone(), damaged]).unwrap_err();
    assert!(matches!(&error, MergeError::Damaged { failure, .. } if failure.code() == "digest_mismatch"), "{error}");
    let error = merge_into(&dir.path().join("out"), &[crate::support::bundle().to_path_buf()]).unwrap_err();
    assert!(matches!(error, MergeError::NotAShard { .. }), "{error}");
}

fn copy_dir(from: &Path, to: &Path) {
    for name in sharedos_evidence::bundle::list_files(from).unwrap() {
        let target = to.join(&name);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::copy(from.join(&name), target).unwrap();
    }
}
