//! The archive form of a bundle: the same files, the same verdict, the
//! same bytes every time, and nothing unpacked that a bundle never holds.

use crate::support::{bundle, certify_into, scratch, verify_plain, COLUMN};
use sharedos_evidence::archive::{unpack, MAX_DEPTH, MAX_ENTRIES, MAX_EXTENSION_BYTES};
use sharedos_evidence::bundle::list_files;
use sharedos_evidence::compare::read::read_manifest;
use sharedos_evidence::verify::{verify, VerifyOptions};
use std::path::Path;

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

#[test]
fn a_bundle_tarred_with_dot_slash_names_as_tar_writes_them_verifies() {
    let dir = scratch();
    let archive = dir.path().join("dotted.tar");
    // `tar -C bundle -cf x.tar .`: a `./` entry, then `./manifest.json` and so on.
    let made = std::process::Command::new("tar").arg("-C").arg(bundle()).arg("-cf").arg(&archive).arg(".").status();
    assert!(made.unwrap().success());
    let names: Vec<String> = tar::Archive::new(std::fs::File::open(&archive).unwrap())
        .entries()
        .unwrap()
        .map(|e| e.unwrap().path().unwrap().display().to_string())
        .collect();
    assert!(names.iter().all(|n| n.starts_with("./") || n == "."), "{names:?}");
    let verification = verify_plain(&archive);
    assert_eq!(verification.failures, vec![]);
    assert_eq!(list_files(unpack(&archive).unwrap().path()).unwrap(), list_files(bundle()).unwrap());
}

/// An archive of one file `depth` folders deep, in GNU long-name form.
fn deep_archive(at: &Path, depth: usize) {
    let mut builder = tar::Builder::new(Vec::new());
    let mut header = tar::Header::new_gnu();
    header.set_size(2);
    header.set_mode(0o644);
    header.set_entry_type(tar::EntryType::Regular);
    let name = format!("{}f", "d/".repeat(depth));
    builder.append_data(&mut header, &name, &b"hi"[..]).unwrap();
    std::fs::write(at, builder.into_inner().unwrap()).unwrap();
}

#[test]
fn an_entry_deeper_than_the_bound_is_refused_and_one_at_the_bound_unpacks() {
    let dir = scratch();
    let deep = dir.path().join("deep.tar");
    deep_archive(&deep, 2_000);
    let error = unpack(&deep).unwrap_err();
    assert!(error.detail.contains(&format!("more than {MAX_DEPTH} folders deep")), "{error}");
    assert_eq!(error.path, deep);
    // The file itself is one component: MAX_DEPTH - 1 folders, then it.
    let bound = dir.path().join("bound.tar");
    deep_archive(&bound, MAX_DEPTH - 1);
    let unpacked = unpack(&bound).unwrap();
    let names = list_files(unpacked.path()).unwrap();
    assert_eq!(names, [format!("{}f", "d/".repeat(MAX_DEPTH - 1))]);
}

#[test]
fn a_long_name_entry_beyond_the_bound_is_refused_before_it_is_read() {
    let dir = scratch();
    let mut header = tar::Header::new_gnu();
    header.set_entry_type(tar::EntryType::GNULongName);
    header.set_path("././@LongLink").unwrap();
    header.set_size(1 << 30);
    header.set_cksum();
    // The header alone and one block of its data: the gigabyte it
    // announces is never there, and never asked for.
    let mut bytes = header.as_bytes().to_vec();
    bytes.extend_from_slice(&[b'd'; 512]);
    let archive = dir.path().join("long.tar");
    std::fs::write(&archive, bytes).unwrap();
    let error = unpack(&archive).unwrap_err();
    assert!(error.detail.contains(&format!("of 1073741824 bytes (at most {MAX_EXTENSION_BYTES})")), "{error}");
}

/// An archive of one two-byte file stored as `short`, after a pax entry
/// holding `fields`.
fn pax_archive(at: &Path, fields: &[(&str, &[u8])]) {
    let mut records = Vec::new();
    for (key, value) in fields {
        // `<length> <key>=<value>\n`, the length counting itself.
        let rest = key.len() + value.len() + 3;
        let mut length = rest + 1;
        while format!("{length}").len() + rest != length {
            length += 1;
        }
        records.extend_from_slice(format!("{length} {key}=").as_bytes());
        records.extend_from_slice(value);
        records.push(b'\n');
    }
    let mut builder = tar::Builder::new(Vec::new());
    let mut pax = tar::Header::new_ustar();
    pax.set_entry_type(tar::EntryType::XHeader);
    pax.set_size(records.len() as u64);
    builder.append_data(&mut pax, "PaxHeader/short", records.as_slice()).unwrap();
    let mut header = tar::Header::new_ustar();
    header.set_size(2);
    header.set_mode(0o644);
    header.set_entry_type(tar::EntryType::Regular);
    builder.append_data(&mut header, "short", &b"hi"[..]).unwrap();
    std::fs::write(at, builder.into_inner().unwrap()).unwrap();
}

#[test]
fn a_pax_path_names_the_entry_and_a_pax_size_is_refused() {
    let dir = scratch();
    let named = dir.path().join("named.tar");
    let long = format!("{}/f", "folder".repeat(40));
    pax_archive(&named, &[("mtime", b"0"), ("path", long.as_bytes())]);
    let unpacked = unpack(&named).unwrap();
    assert_eq!(list_files(unpacked.path()).unwrap(), std::slice::from_ref(&long));
    assert_eq!(std::fs::read(unpacked.path().join(&long)).unwrap(), b"hi");
    let sized = dir.path().join("sized.tar");
    pax_archive(&sized, &[("path", b"f"), ("size", b"2")]);
    let error = unpack(&sized).unwrap_err();
    assert!(error.detail.contains("restates a size"), "{error}");
}

#[test]
fn an_archive_of_more_entries_than_the_bound_is_refused() {
    let dir = scratch();
    let mut builder = tar::Builder::new(Vec::new());
    for _ in 0..=MAX_ENTRIES {
        let mut header = tar::Header::new_ustar();
        header.set_size(0);
        header.set_mode(0o755);
        header.set_entry_type(tar::EntryType::Directory);
        builder.append_data(&mut header, "d/", std::io::empty()).unwrap();
    }
    let archive = dir.path().join("many.tar");
    std::fs::write(&archive, builder.into_inner().unwrap()).unwrap();
    let error = unpack(&archive).unwrap_err();
    assert!(error.detail.contains(&format!("more than {MAX_ENTRIES} entries")), "{error}");
}

#[test]
fn an_archive_holding_one_name_twice_is_refused() {
    let dir = scratch();
    let mut builder = tar::Builder::new(Vec::new());
    for bytes in [&b"one"[..], &b"two"[..]] {
        let mut header = tar::Header::new_ustar();
        header.set_size(bytes.len() as u64);
        header.set_mode(0o644);
        builder.append_data(&mut header, "manifest.json", bytes).unwrap();
    }
    let archive = dir.path().join("twice.tar");
    std::fs::write(&archive, builder.into_inner().unwrap()).unwrap();
    let error = unpack(&archive).unwrap_err();
    assert!(error.detail.contains("`manifest.json` is in the archive twice"), "{error}");
}

#[test]
fn an_archive_that_is_not_a_bundle_is_named_as_given_never_by_its_temporary_folder() {
    let dir = scratch();
    let mut builder = tar::Builder::new(Vec::new());
    let mut header = tar::Header::new_ustar();
    header.set_size(2);
    header.set_mode(0o644);
    builder.append_data(&mut header, "manifest.json", &b"{}"[..]).unwrap();
    let archive = dir.path().join("no-statement.tar");
    std::fs::write(&archive, builder.into_inner().unwrap()).unwrap();
    let error = verify(&archive, VerifyOptions::default()).unwrap_err();
    assert_eq!(error.path, archive);
    assert!(error.detail.starts_with("statement.json: "), "{error}");
    assert_eq!(error.to_string(), format!("read the bundle {}: {}", archive.display(), error.detail));
}
