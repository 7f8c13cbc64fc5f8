//! The one way untrusted text is made printable. What the binary prints can hold
//! text it did not write (file and entry names of a bundle, case ids of a
//! manifest, a runtime's words): a control character in it could move the
//! cursor, erase a line or fake one. Every such character is printed
//! escaped as JSON escapes it, `\u001b` for an escape, so what is shown is
//! what is there, and a JSON document printed stays the same JSON.

use std::borrow::Cow;

/// `text` with every control character but the line break escaped.
#[must_use]
pub fn printable(text: &str) -> Cow<'_, str> {
    escaped(text, |c| c != '\n' && is_unsafe(c))
}

/// `text` as one line: line breaks escaped too.
#[must_use]
pub fn one_line(text: &str) -> Cow<'_, str> {
    escaped(text, is_unsafe)
}

/// `text` as one cell of a Markdown table: on one line, and with `|`
/// escaped, which would otherwise end the cell even inside backticks.
#[must_use]
pub fn table_cell(text: &str) -> Cow<'_, str> {
    match one_line(text) {
        line if line.contains('|') => Cow::Owned(line.replace('|', "\\|")),
        line => line,
    }
}

/// Controls (C0, DEL, C1), the line and paragraph separators (a line
/// break to many terminals and editors, though not a control), and the
/// marks that reorder text on screen.
fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{2028}' | '\u{2029}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{061c}'
        )
}

fn escaped(text: &str, escape: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !text.chars().any(&escape) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if escape(c) {
            // Every such character is in the Basic Multilingual Plane.
            out.push_str(&format!("\\u{:04x}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn controls_are_escaped_and_everything_else_is_kept() {
        assert_eq!(printable("plain text, é, 中"), "plain text, é, 中");
        assert_eq!(printable("a\x1b[2K\rverified\n"), "a\\u001b[2K\\u000dverified\n");
        assert_eq!(one_line("two\nlines\t"), "two\\u000alines\\u0009");
        assert_eq!(printable("\u{202e}txt.exe"), "\\u202etxt.exe");
        assert_eq!(printable("\u{7f}\u{9b}"), "\\u007f\\u009b");
        assert_eq!(printable("a\u{2028}b\u{2029}c\u{61c}"), "a\\u2028b\\u2029c\\u061c");
        assert_eq!(table_cell("a|b\nc"), "a\\|b\\u000ac");
        assert!(matches!(table_cell("plain"), Cow::Borrowed("plain")));
    }

    #[test]
    fn a_json_document_printed_reads_back_the_same() {
        let value = serde_json::json!({"case": "a\u{202e}b\u{9b}c\u{7f}"});
        let text = serde_json::to_string(&value).unwrap();
        let shown = printable(&text);
        assert!(!shown.contains('\u{202e}') && !shown.contains('\u{9b}'));
        assert_eq!(serde_json::from_str::<serde_json::Value>(&shown).unwrap(), value);
    }
}
