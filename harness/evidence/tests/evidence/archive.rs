//! The archive form of a bundle: the same files, the same verdict, the
//! same bytes every time, and nothing unpacked that a bundle never holds.

use crate::support::{certify_into, scratch, verify_plain, COLUMN};
use sharedos_evidence::archive::unpack;
use sharedos_evidence::bundle::list_files;
use sharedos_evidence::compare::read::read_manifest;
use sharedos_evidence::verify::{verify, VerifyOptions};

#[test]
fn an_archived_bundle_verifies_holds_the_folders_files_and_is_the_same_bytes_twice() {
    let dir = scratch();
    let (one, two, folder) = (dir.path().join("one.tar"), dir.path().join("two.tar"), dir.path().join("folder"));
    certify_into(&one, COLUMN, 2, None);
    certify_into(&two, COLUMN, 1, None);
    certify_into(&folder, COLUMN, 2, None);
    assert_eq!(std::fs::read(&one).unwrap(), std::fs::read(&two).unwrap());
    let verification = verify_plain(&one);
    assert_eq!(verification.failures, vec![]);
    assert!(verification.regraded > 118);
    let unpacked = unpack(&one).unwrap();
    let names = list_files(unpacked.path()).unwrap();
    assert_eq!(names, list_files(&folder).unwrap());
    for name in &names {
        assert_eq!(
            std::fs::read(unpacked.path().join(name)).unwrap(),
            std::fs::read(folder.join(name)).unwrap(),
            "{name}"
        );
    }
    assert_eq!(read_manifest(&one).unwrap().cells.len(), 262);
}

#[test]
fn a_truncated_or_hostile_archive_is_not_a_bundle() {
    let dir = scratch();
    let archive = dir.path().join("bundle.tar");
    certify_into(&archive, "adversary-embedded", 2, None);
    let bytes = std::fs::read(&archive).unwrap();
    let truncated = dir.path().join("truncated.tar");
    std::fs::write(&truncated, &bytes[..bytes.len() / 2 + 100]).unwrap();
    let error = verify(&truncated, VerifyOptions::default()).unwrap_err();
    assert!(error.detail.contains("truncated or damaged") || error.detail.contains("does not unpack"), "{error}");
    // An entry naming a path outside the archive.
    let mut builder = tar::Builder::new(Vec::new());
    let mut header = tar::Header::new_gnu();
    header.set_size(2);
    header.set_mode(0o644);
    header.as_gnu_mut().unwrap().name[..11].copy_from_slice(b"../evil.txt");
    header.set_cksum();
    builder.append(&header, &b"hi"[..]).unwrap();
    let hostile = dir.path().join("hostile.tar");
    std::fs::write(&hostile, builder.into_inner().unwrap()).unwrap();
    let error = verify(&hostile, VerifyOptions::default()).unwrap_err();
    assert!(error.detail.contains("leaves the archive"), "{error}");
    assert!(!dir.path().join("evil.txt").exists());
}
