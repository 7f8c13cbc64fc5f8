//! The bearer token a streamable HTTP request must present
//! (`Authorization: Bearer <token>`, RFC 6750 §2.1).
//!
//! The auth-scheme is matched without regard to case (RFC 7235 §2.1), so
//! `bearer` and `BEARER` are as good as `Bearer`. The token itself is
//! compared in constant time: both sides are reduced to SHA-256 digests,
//! which are always 32 bytes whatever the token's length, and the digests
//! are compared by looking at every byte rather than stopping at the first
//! difference. How long a refusal takes then says nothing about how much of
//! a guessed token was right.

use sha2::{Digest, Sha256};

/// The scheme the token is presented under.
const SCHEME: &[u8] = b"Bearer";

/// The token a server requires, kept only as its digest.
#[derive(Clone)]
pub struct RequiredToken {
    digest: [u8; 32],
}

impl std::fmt::Debug for RequiredToken {
    /// Never shows the digest: it would let a reader test guesses offline.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RequiredToken(..)")
    }
}

impl RequiredToken {
    /// The requirement to present `token`.
    #[must_use]
    pub fn new(token: &str) -> RequiredToken {
        RequiredToken { digest: digest(token.as_bytes()) }
    }

    /// Whether `authorization`, the value of an `Authorization` header, is
    /// the bearer scheme (in any case), one or more spaces, and this token.
    #[must_use]
    pub fn presented_in(&self, authorization: Option<&[u8]>) -> bool {
        let Some(value) = authorization else { return false };
        let Some(space) = value.iter().position(|b| *b == b' ') else { return false };
        let (scheme, rest) = value.split_at(space);
        // RFC 7235 §2.1: credentials = auth-scheme [ 1*SP ( token68 / … ) ].
        let token = trim_leading_spaces(rest);
        scheme.eq_ignore_ascii_case(SCHEME) && !token.is_empty() && same_digest(&digest(token), &self.digest)
    }
}

fn trim_leading_spaces(mut bytes: &[u8]) -> &[u8] {
    while let Some(rest) = bytes.strip_prefix(b" ") {
        bytes = rest;
    }
    bytes
}

fn digest(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

/// Whether two digests are equal, having looked at every byte of both.
fn same_digest(left: &[u8; 32], right: &[u8; 32]) -> bool {
    let difference = left.iter().zip(right).fold(0_u8, |seen, (a, b)| seen | (a ^ b));
    // Keeps the compiler from turning the fold back into an early exit.
    std::hint::black_box(difference) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn presented(required: &str, header: Option<&str>) -> bool {
        RequiredToken::new(required).presented_in(header.map(str::as_bytes))
    }

    #[test]
    fn the_scheme_is_matched_whatever_its_case() {
        for header in ["Bearer t0k", "bearer t0k", "BEARER t0k", "bEaReR t0k", "Bearer   t0k"] {
            assert!(presented("t0k", Some(header)), "{header:?}");
        }
    }

    #[test]
    fn a_wrong_missing_or_unschemed_token_is_refused() {
        for header in
            ["Bearer t0K", "Bearer t0", "Bearer t0kk", "Bearer", "Bearer ", "t0k", "Basic t0k", "Bearert0k", ""]
        {
            assert!(!presented("t0k", Some(header)), "{header:?}");
        }
        assert!(!presented("t0k", None));
    }

    #[test]
    fn digests_are_the_same_only_when_every_byte_is() {
        let one = digest(b"one");
        assert!(same_digest(&one, &digest(b"one")));
        let mut last_differs = one;
        last_differs[31] ^= 1;
        assert!(!same_digest(&one, &last_differs));
        assert!(!same_digest(&one, &digest(b"two")));
    }

    #[test]
    fn the_debug_form_does_not_show_the_digest() {
        assert_eq!(format!("{:?}", RequiredToken::new("t0k")), "RequiredToken(..)");
    }
}
