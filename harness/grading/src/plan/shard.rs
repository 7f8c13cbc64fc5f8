//! One of `n` parts of a run, for splitting it across machines: rows
//! (case × condition) are dealt round-robin in plan order, so the parts
//! are as even as rows allow, the same on every machine, and independent
//! of how many workers each part runs on.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Shard `index` of `count`, counted from 1 as `--shard 2/4` spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Shard {
    /// Which part, from 1 to `count`.
    pub index: u32,
    /// How many parts.
    pub count: u32,
}

impl Shard {
    /// Whether the row at `row` (its 0-based position among the
    /// selected rows, in plan order) is in this shard.
    #[must_use]
    pub fn keeps_row(self, row: usize) -> bool {
        // `count` is at least 1 for every parsed shard; a zero read from
        // an untrusted file keeps nothing rather than dividing by zero.
        let count = usize::try_from(self.count).unwrap_or(usize::MAX);
        let index = usize::try_from(self.index).unwrap_or(usize::MAX);
        count != 0 && row % count == index.wrapping_sub(1)
    }

    /// Whether `index` is within `1..=count`.
    #[must_use]
    pub fn is_valid(self) -> bool {
        self.index >= 1 && self.index <= self.count
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// Why `--shard` did not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("read the shard `{0}`: expected I/N with 1 <= I <= N, as in 2/4")]
pub struct BadShard(pub String);

impl FromStr for Shard {
    type Err = BadShard;

    fn from_str(text: &str) -> Result<Shard, BadShard> {
        let bad = || BadShard(text.to_string());
        let (index, count) = text.split_once('/').ok_or_else(bad)?;
        let shard =
            Shard { index: index.trim().parse().map_err(|_| bad())?, count: count.trim().parse().map_err(|_| bad())? };
        if shard.is_valid() {
            Ok(shard)
        } else {
            Err(bad())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Shard;

    #[test]
    fn every_row_is_in_exactly_one_shard() {
        for count in 1..=9u32 {
            for row in 0..50usize {
                let owners = (1..=count).filter(|&index| Shard { index, count }.keeps_row(row)).count();
                assert_eq!(owners, 1, "row {row} of {count} shards");
            }
        }
    }

    #[test]
    fn shards_are_dealt_round_robin() {
        let shard = Shard { index: 2, count: 4 };
        let kept: Vec<usize> = (0..12).filter(|&row| shard.keeps_row(row)).collect();
        assert_eq!(kept, vec![1, 5, 9]);
    }

    #[test]
    fn only_i_of_n_with_i_from_1_to_n_parses() {
        assert_eq!("2/4".parse::<Shard>(), Ok(Shard { index: 2, count: 4 }));
        for bad in ["0/4", "5/4", "1/0", "4", "a/b", "1/2/3", "-1/2", ""] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
    }
}
