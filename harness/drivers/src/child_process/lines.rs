//! Classifying each line of a CLI's stdout.

use super::splitter::RawLine;
use crate::frame::HarnessFrame;
use crate::live::IgnoredKind;
use crate::wire::parse_line;
use serde::Serialize;

/// Why a stdout line gave no frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SkippedLine {
    /// Empty or whitespace only.
    Blank,
    /// Not JSON (including invalid UTF-8 and a truncated last line); kept as
    /// a diagnostic.
    NotJson,
    /// JSON, but not an object; dropped.
    NotObject,
    /// Longer than the line cap; skipped without being buffered.
    Oversized,
}

/// What a line is, once classified.
#[derive(Debug, Clone, PartialEq)]
pub enum LineKind {
    /// A JSON object.
    Frame(HarnessFrame),
    /// Skipped; `note` holds the text of a non-JSON line.
    Skipped {
        /// Why.
        kind: SkippedLine,
        /// The line, for a non-JSON line only.
        note: Option<String>,
    },
}

/// Classifies one line: trimmed, blank lines skipped, non-JSON kept as a
/// note, non-object JSON dropped, an object becomes a frame.
#[must_use]
pub fn classify(line: RawLine) -> LineKind {
    let RawLine::Bytes(bytes) = line else {
        return LineKind::Skipped { kind: SkippedLine::Oversized, note: None };
    };
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(error) => {
            let note = String::from_utf8_lossy(error.as_bytes()).into_owned();
            return LineKind::Skipped { kind: SkippedLine::NotJson, note: Some(note) };
        }
    };
    match parse_line(&text) {
        Ok(frame) => LineKind::Frame(frame),
        Err(IgnoredKind::Blank) => LineKind::Skipped { kind: SkippedLine::Blank, note: None },
        Err(IgnoredKind::NotObject) => LineKind::Skipped { kind: SkippedLine::NotObject, note: None },
        Err(_) => LineKind::Skipped { kind: SkippedLine::NotJson, note: Some(text.trim().to_string()) },
    }
}
