//! One rule for every path a user names for a command to write (`--junit`,
//! `--verdicts`, `--html`, `--out`), checked before anything runs:
//!
//! - its folder exists (a typo does not leave a new folder behind);
//! - nothing is there, or a regular file of the kind the command writes
//!   (a manifest for `--verdicts` and the Markdown of one beside it, a
//!   JUnit report, a page of this harness); a bundle's `--out` must not
//!   exist at all. A link, a FIFO, a folder or someone's notes are left
//!   alone;
//! - it is none of the command's inputs, and inside none of the folders it
//!   reads (a page written over the manifest it shows, a file written
//!   into a bundle it merges);
//! - no two outputs of the command are the same file.
//!
//! A path that breaks the rule is refused with exit 2, naming the flag.

use std::fs::Metadata;
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// What a command writes at a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A manifest of verdicts (`--verdicts`).
    Manifest,
    /// The Markdown rendering of a manifest, beside it.
    Markdown,
    /// A JUnit XML report (`--junit`), its one `<testsuite>` this harness's.
    JUnit,
    /// The matrix as a page (`report --html`).
    Page,
    /// A bundle, folder or archive (`--out`), written only where nothing is.
    Bundle,
}

impl Kind {
    fn described(self) -> &'static str {
        match self {
            Kind::Manifest => "a manifest",
            Kind::Markdown => "a manifest's Markdown",
            Kind::JUnit => "a JUnit report of this harness",
            Kind::Page => "a page of this harness",
            Kind::Bundle => "a bundle",
        }
    }

    /// Whether the regular file at `path` holds what this kind writes, so
    /// that writing over it loses nothing of anybody else's.
    fn recognises(self, path: &Path) -> bool {
        // A page or report is recognised from its start, never read whole.
        let start = || start_of(path);
        match self {
            Kind::Manifest => sharedos_evidence::compare::read::read_manifest(path)
                .is_ok_and(|m| m.shape == sharedos_evidence::compare::read::Shape::Harness),
            Kind::Markdown => start().starts_with(sharedos_grading::output::markdown::TITLE),
            Kind::JUnit => {
                let (text, name) = (start(), sharedos_conformance::suite::reporter::junit::NAME);
                // Earlier versions wrote a `<testsuites>` root around it.
                text.starts_with("<?xml")
                    && ["testsuite", "testsuites"].iter().any(|root| text.contains(&format!("<{root} name=\"{name}\"")))
            }
            Kind::Page => start().contains(sharedos_evidence::page::GENERATOR),
            Kind::Bundle => false,
        }
    }
}

/// A path the user named for the command to write.
#[derive(Debug, Clone, Copy)]
pub struct Output<'a> {
    /// The flag that named it, as the user typed it.
    pub flag: &'static str,
    /// The path.
    pub path: &'a Path,
    /// What is written there.
    pub kind: Kind,
}

/// A path the command reads: a file, or a folder it reads below.
#[derive(Debug, Clone, Copy)]
pub struct Input<'a> {
    /// What it is to the command, as the user would name it.
    pub what: &'static str,
    /// The path.
    pub path: &'a Path,
}

/// Why an output path is refused. Reads after "failed to".
#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    /// Its folder is not there.
    #[error("write {flag} {}: its folder {} does not exist (make it first)", path.display(), folder.display())]
    NoFolder {
        /// The flag.
        flag: &'static str,
        /// The path.
        path: PathBuf,
        /// Its folder.
        folder: PathBuf,
    },
    /// Something is where a bundle is to be written.
    #[error("write {flag} {}: it already exists (remove it, or choose another path)", path.display())]
    Exists {
        /// The flag.
        flag: &'static str,
        /// The path.
        path: PathBuf,
    },
    /// Something other than a regular file is there.
    #[error("write {flag} {}: it is {found}, which is left alone", path.display())]
    NotAFile {
        /// The flag.
        flag: &'static str,
        /// The path.
        path: PathBuf,
        /// What is there.
        found: &'static str,
    },
    /// A file the command did not write is there.
    #[error("write {flag} {}: it exists and is not {expected} (move it, or choose another path)", path.display())]
    Foreign {
        /// The flag.
        flag: &'static str,
        /// The path.
        path: PathBuf,
        /// What the command writes.
        expected: &'static str,
    },
    /// It is an input of the command, or inside one.
    #[error("write {flag} {}: it is {relation} {what} {}, which this command reads", path.display(), input.display())]
    Input {
        /// The flag.
        flag: &'static str,
        /// The path.
        path: PathBuf,
        /// `the same file as` or `inside`.
        relation: &'static str,
        /// What the input is to the command.
        what: &'static str,
        /// The input.
        input: PathBuf,
    },
    /// Two outputs are the same file.
    #[error("write {flag} {}: {other} writes there too", path.display())]
    Twice {
        /// The flag.
        flag: &'static str,
        /// The path.
        path: PathBuf,
        /// The other output's flag.
        other: &'static str,
    },
}

/// Checks every output against the rule (see the module's documentation).
///
/// # Errors
/// The first output that breaks it, in the order given.
pub fn check(outputs: &[Output<'_>], inputs: &[Input<'_>]) -> Result<(), Refusal> {
    for (index, output) in outputs.iter().enumerate() {
        check_one(output, inputs)?;
        let place = resolved(output.path);
        if let Some(other) = outputs[..index].iter().find(|o| resolved(o.path) == place) {
            return Err(Refusal::Twice { flag: output.flag, path: output.path.to_path_buf(), other: other.flag });
        }
    }
    Ok(())
}

fn check_one(output: &Output<'_>, inputs: &[Input<'_>]) -> Result<(), Refusal> {
    let path = output.path.to_path_buf();
    let folder = match output.path.parent() {
        Some(parent) if parent.as_os_str().is_empty() => Path::new("."),
        Some(parent) => parent,
        None => Path::new("/"),
    };
    if !folder.is_dir() {
        return Err(Refusal::NoFolder { flag: output.flag, path, folder: folder.to_path_buf() });
    }
    let existing = output.path.symlink_metadata().ok();
    if existing.is_some() && output.kind == Kind::Bundle {
        return Err(Refusal::Exists { flag: output.flag, path });
    }
    let place = resolved(output.path);
    for input in inputs {
        let Ok(read) = input.path.canonicalize() else { continue };
        let same = place == read || existing.as_ref().zip(read.metadata().ok()).is_some_and(|(o, i)| same_file(o, &i));
        let inside = read.is_dir() && place.starts_with(&read);
        if same || inside {
            return Err(Refusal::Input {
                flag: output.flag,
                path,
                relation: if same { "the same file as" } else { "inside" },
                what: input.what,
                input: input.path.to_path_buf(),
            });
        }
    }
    if let Some(metadata) = &existing {
        if let Some(found) = not_a_file(metadata) {
            return Err(Refusal::NotAFile { flag: output.flag, path, found });
        }
        if !output.kind.recognises(output.path) {
            return Err(Refusal::Foreign { flag: output.flag, path, expected: output.kind.described() });
        }
    }
    Ok(())
}

/// The first few kilobytes of the regular file at `path`, as text.
fn start_of(path: &Path) -> String {
    let mut bytes = Vec::new();
    let read = std::fs::File::open(path).and_then(|file| file.take(4096).read_to_end(&mut bytes));
    if read.is_err() {
        bytes.clear();
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// What is at a path when it is not a regular file.
fn not_a_file(metadata: &Metadata) -> Option<&'static str> {
    let kind = metadata.file_type();
    if kind.is_symlink() {
        Some("a symbolic link")
    } else if kind.is_dir() {
        Some("a folder")
    } else if kind.is_fifo() {
        Some("a FIFO")
    } else if kind.is_socket() {
        Some("a socket")
    } else if kind.is_block_device() || kind.is_char_device() {
        Some("a device")
    } else {
        None
    }
}

fn same_file(a: &Metadata, b: &Metadata) -> bool {
    a.dev() == b.dev() && a.ino() == b.ino()
}

/// Where `path` is, through every link of its folder: its folder made
/// canonical, then its name (which the rule holds to be no link).
fn resolved(path: &Path) -> PathBuf {
    let name = path.file_name().map(PathBuf::from).unwrap_or_default();
    let folder = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    folder.canonicalize().map_or_else(|_| path.to_path_buf(), |folder| folder.join(name))
}
