//! Splitting a byte stream into lines without ever holding more than one
//! capped line: a CLI's stdout, or a captured stream `decode` reads.

/// One line cut from the stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RawLine {
    /// A line within the cap, without its newline.
    Bytes(Vec<u8>),
    /// A line that passed the cap; its bytes were discarded.
    Oversized,
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
