//! Splitting a CLI's stdout into lines without ever holding more than one
//! capped line, and classifying each line.

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

/// One line cut from the stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RawLine {
    /// A line within the cap, without its newline.
    Bytes(Vec<u8>),
    /// A line that passed the cap; its bytes were discarded.
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

/// Cuts a byte stream into newline-terminated lines of at most `max` bytes.
#[derive(Debug, Clone)]
pub struct LineSplitter {
    max: usize,
    current: Vec<u8>,
    /// The current line passed the cap; drop bytes until its newline.
    discarding: bool,
}

impl LineSplitter {
    /// A splitter keeping lines of at most `max` bytes.
    #[must_use]
    pub fn new(max: usize) -> LineSplitter {
        LineSplitter { max, current: Vec::new(), discarding: false }
    }

    /// Feeds one chunk; complete lines are appended to `out`.
    pub fn push(&mut self, chunk: &[u8], out: &mut Vec<RawLine>) {
        let mut rest = chunk;
        while !rest.is_empty() {
            let (piece, ended) = match rest.iter().position(|byte| *byte == b'\n') {
                Some(at) => (&rest[..at], true),
                None => (rest, false),
            };
            rest = if ended { &rest[piece.len() + 1..] } else { &[] };
            if !self.discarding {
                if self.current.len() + piece.len() > self.max {
                    self.current = Vec::new();
                    self.discarding = true;
                } else {
                    self.current.extend_from_slice(piece);
                }
            }
            if ended {
                out.push(self.take());
            }
        }
    }

    /// The last line when the stream ended without a newline.
    pub fn finish(&mut self) -> Option<RawLine> {
        (self.discarding || !self.current.is_empty()).then(|| self.take())
    }

    fn take(&mut self) -> RawLine {
        let line = if self.discarding { RawLine::Oversized } else { RawLine::Bytes(std::mem::take(&mut self.current)) };
        self.discarding = false;
        line
    }
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
