//! Every way a bundle can fail to verify, each carrying where (file, line,
//! JSON pointer) and what was expected.

use std::fmt;

/// Where in a bundle a failure is.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Place {
    /// The file, as a bundle path.
    pub file: String,
    /// The 1-based line, in a JSON Lines file.
    pub line: Option<usize>,
    /// The JSON pointer inside the document (or line).
    pub pointer: String,
}

impl Place {
    /// A whole file.
    #[must_use]
    pub fn file(file: &str) -> Place {
        Place { file: file.to_string(), line: None, pointer: String::new() }
    }

    /// A pointer in a file.
    #[must_use]
    pub fn at(file: &str, pointer: impl Into<String>) -> Place {
        Place { file: file.to_string(), line: None, pointer: pointer.into() }
    }

    /// A pointer in one line of a JSON Lines file.
    #[must_use]
    pub fn line(file: &str, line: usize, pointer: impl Into<String>) -> Place {
        Place { file: file.to_string(), line: Some(line), pointer: pointer.into() }
    }
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        if !self.pointer.is_empty() {
            write!(f, " {}", self.pointer)?;
        }
        Ok(())
    }
}

/// One reason a bundle does not verify.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Failure {
    /// A file the statement lists is not in the bundle.
    #[error("{place}: missing (the statement lists it)")]
    MissingFile {
        /// Where.
        place: Place,
    },
    /// A file's digest is not the one the statement lists.
    #[error("{place}: sha256 {found}, expected {expected} (as the statement lists)")]
    Digest {
        /// Where.
        place: Place,
        /// Listed.
        expected: String,
        /// Computed.
        found: String,
    },
    /// A file no subject of the statement covers.
    #[error("{place}: not listed in the statement")]
    Unlisted {
        /// Where.
        place: Place,
    },
    /// A document that does not parse as what it must be.
    #[error("{place}: expected {expected}")]
    Unparsable {
        /// Where.
        place: Place,
        /// What it must be.
        expected: String,
    },
    /// A stated value that is not the one recomputed from the bundle.
    #[error("{place}: {found}, expected {expected} ({what})")]
    Mismatch {
        /// Where.
        place: Place,
        /// What it is.
        what: String,
        /// Recomputed.
        expected: String,
        /// Stated.
        found: String,
    },
    /// A verdict that grading its evidence again does not give.
    #[error("{place}: cell {cell} says {found}; graded again from its evidence it is {expected}")]
    Verdict {
        /// Where.
        place: Place,
        /// `case/condition/column`.
        cell: String,
        /// Graded again.
        expected: String,
        /// Stated.
        found: String,
    },
    /// A summary (the manifest's reason-code coverage, the statement's
    /// count of verdicts) that the bundle's own cells do not give.
    #[error("{place}: {found}, expected {expected} ({what})")]
    Summary {
        /// Where.
        place: Place,
        /// What it summarises.
        what: String,
        /// As the cells give it.
        expected: String,
        /// Stated.
        found: String,
    },
    /// A cell of the canonical suite the bundle lacks.
    #[error("{place}: no evidence for cell {cell}, which the suite runs")]
    MissingCell {
        /// Where it should be.
        place: Place,
        /// `case/condition/column`.
        cell: String,
    },
    /// A cell the bundle's suite (or, for a partial bundle, its shard) does not have.
    #[error(
        "{place}: cell {cell} is not one of the cells the bundle's suite gives (or its shard, for a partial bundle)"
    )]
    ExtraCell {
        /// Where.
        place: Place,
        /// `case/condition/column`.
        cell: String,
    },
    /// The signature does not verify with the given key.
    #[error("{place}: {detail}")]
    Signature {
        /// Where.
        place: Place,
        /// Why.
        detail: String,
    },
}

impl Failure {
    /// Every failure's code, in the variants' declaration order (a test
    /// holds it to [`Failure::code`]).
    pub const CODES: [&'static str; 10] = [
        "missing_file",
        "digest_mismatch",
        "unlisted_file",
        "unparsable",
        "hash_mismatch",
        "verdict_mismatch",
        "summary_mismatch",
        "missing_cell",
        "extra_cell",
        "bad_signature",
    ];

    /// The failure's code, as `verify --format json` prints it and
    /// `docs/reference/verify-failures.md` lists it.
    #[must_use]
    pub fn code(&self) -> &'static str {
        match self {
            Failure::MissingFile { .. } => "missing_file",
            Failure::Digest { .. } => "digest_mismatch",
            Failure::Unlisted { .. } => "unlisted_file",
            Failure::Unparsable { .. } => "unparsable",
            Failure::Mismatch { .. } => "hash_mismatch",
            Failure::Verdict { .. } => "verdict_mismatch",
            Failure::Summary { .. } => "summary_mismatch",
            Failure::MissingCell { .. } => "missing_cell",
            Failure::ExtraCell { .. } => "extra_cell",
            Failure::Signature { .. } => "bad_signature",
        }
    }

    /// Where it is.
    #[must_use]
    pub fn place(&self) -> &Place {
        match self {
            Failure::MissingFile { place }
            | Failure::Digest { place, .. }
            | Failure::Unlisted { place }
            | Failure::Unparsable { place, .. }
            | Failure::Mismatch { place, .. }
            | Failure::Verdict { place, .. }
            | Failure::Summary { place, .. }
            | Failure::MissingCell { place, .. }
            | Failure::ExtraCell { place, .. }
            | Failure::Signature { place, .. } => place,
        }
    }
}

/// `docs/reference/verify-failures.md` lists every failure's code and
/// variant, and nothing else.
#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod docs_tests {
    use super::{Failure, Place};
    use std::collections::BTreeMap;

    /// One failure of every variant, in declaration order.
    fn every_failure() -> Vec<Failure> {
        let place = || Place::file("manifest.json");
        let text = String::new;
        vec![
            Failure::MissingFile { place: place() },
            Failure::Digest { place: place(), expected: text(), found: text() },
            Failure::Unlisted { place: place() },
            Failure::Unparsable { place: place(), expected: text() },
            Failure::Mismatch { place: place(), what: text(), expected: text(), found: text() },
            Failure::Verdict { place: place(), cell: text(), expected: text(), found: text() },
            Failure::Summary { place: place(), what: text(), expected: text(), found: text() },
            Failure::MissingCell { place: place(), cell: text() },
            Failure::ExtraCell { place: place(), cell: text() },
            Failure::Signature { place: place(), detail: text() },
        ]
    }

    /// The position of a variant in [`every_failure`]. A new variant fails
    /// to compile here until it is listed there.
    fn index(failure: &Failure) -> usize {
        match failure {
            Failure::MissingFile { .. } => 0,
            Failure::Digest { .. } => 1,
            Failure::Unlisted { .. } => 2,
            Failure::Unparsable { .. } => 3,
            Failure::Mismatch { .. } => 4,
            Failure::Verdict { .. } => 5,
            Failure::Summary { .. } => 6,
            Failure::MissingCell { .. } => 7,
            Failure::ExtraCell { .. } => 8,
            Failure::Signature { .. } => 9,
        }
    }

    #[test]
    fn docs_verify_failure_codes_list_every_code_and_variant() {
        let failures = every_failure();
        for (position, failure) in failures.iter().enumerate() {
            assert_eq!(index(failure), position, "every_failure lists {failure:?} out of place");
        }
        let expected: BTreeMap<String, String> = failures
            .iter()
            .map(|failure| {
                let debug = format!("{failure:?}");
                let variant = debug.split([' ', '{']).next().unwrap().to_string();
                (failure.code().to_string(), variant)
            })
            .collect();
        assert_eq!(expected.len(), failures.len(), "two variants share a code");
        assert_eq!(failures.iter().map(Failure::code).collect::<Vec<_>>(), Failure::CODES);

        let document = "docs/reference/verify-failures.md";
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/reference/verify-failures.md");
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let mut rows = 0;
        let mut listed = BTreeMap::new();
        for line in text.lines().filter(|line| line.starts_with("| `")) {
            let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
            rows += 1;
            listed.insert(cells[0].trim_matches('`').to_string(), cells[1].trim_matches('`').to_string());
        }
        let missing: Vec<_> = expected.iter().filter(|(code, variant)| listed.get(*code) != Some(*variant)).collect();
        let extra: Vec<_> = listed.iter().filter(|(code, variant)| expected.get(*code) != Some(*variant)).collect();
        assert!(
            missing.is_empty() && extra.is_empty(),
            "{document} and `Failure::code` disagree\n  missing from the document: {missing:?}\n  in the document, not in the code: {extra:?}"
        );
        assert_eq!(rows, failures.len(), "{document}: a row is listed twice");
    }
}
