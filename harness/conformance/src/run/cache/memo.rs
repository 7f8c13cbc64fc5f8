//! Answers remembered by the value they were computed from.

use std::sync::{Mutex, PoisonError};

/// Remembers what a pure computation answered for each value it was asked
/// about, so a run that asks about equal values in many cells (the same
/// catalogue, the same grants) computes each answer once.
///
/// A lookup takes the answer of the key its caller's `matches` accepts;
/// callers match by value (an equal address at most standing for an equal
/// value), so a remembered answer is always the one its value gives, and a
/// missed match only computes again. Only successful answers are kept; a
/// lookup scans them, which stays short for the few dozen distinct values a
/// suite holds (a world per distinct condition, a catalogue per world and
/// protocol). A memo whose
/// keys and answers can cross threads can be shared between workers; it
/// computes outside its lock, so two workers asking at once may both
/// compute, and keep the first answer.
///
/// ```
/// use sharedos_conformance::run::cache::memo::Memo;
/// let squares: Memo<u32, u32> = Memo::default();
/// let mut computed = 0;
/// for _ in 0..3 {
///     let answer = squares.get_or_compute(|k| *k == 7, || 7, || -> Result<u32, ()> {
///         computed += 1;
///         Ok(49)
///     });
///     assert_eq!(answer, Ok(49));
/// }
/// assert_eq!(computed, 1);
/// ```
#[derive(Debug)]
pub struct Memo<K, V> {
    entries: Mutex<Vec<(K, V)>>,
}

impl<K, V> Default for Memo<K, V> {
    fn default() -> Memo<K, V> {
        Memo { entries: Mutex::new(Vec::new()) }
    }
}

impl<K, V: Clone> Memo<K, V> {
    /// The answer remembered for the key `matches` accepts, or `compute`'s,
    /// remembered under `key()` when it succeeds.
    ///
    /// # Errors
    /// What `compute` answered, when it failed.
    pub fn get_or_compute<E>(
        &self,
        matches: impl Fn(&K) -> bool,
        key: impl FnOnce() -> K,
        compute: impl FnOnce() -> Result<V, E>,
    ) -> Result<V, E> {
        if let Some(value) = self.find(&matches) {
            return Ok(value);
        }
        let value = compute()?;
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((_, first)) = entries.iter().find(|(k, _)| matches(k)) {
            return Ok(first.clone());
        }
        entries.push((key(), value.clone()));
        Ok(value)
    }

    fn find(&self, matches: impl Fn(&K) -> bool) -> Option<V> {
        // Nothing panics while holding the lock, and a scan leaves the
        // entries as they were, so a poisoned lock still holds good answers.
        let entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        entries.iter().find(|(k, _)| matches(k)).map(|(_, value)| value.clone())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::Memo;

    fn ask(memo: &Memo<String, usize>, key: &str, computed: &mut Vec<String>) -> Result<usize, String> {
        memo.get_or_compute(
            |k| k == key,
            || key.to_string(),
            || {
                computed.push(key.to_string());
                if key.is_empty() {
                    Err("empty".to_string())
                } else {
                    Ok(key.len())
                }
            },
        )
    }

    #[test]
    fn each_value_gets_its_own_answer_computed_once() {
        let (memo, mut computed) = (Memo::default(), Vec::new());
        for key in ["ab", "abc", "ab", "abc"] {
            assert_eq!(ask(&memo, key, &mut computed), Ok(key.len()));
        }
        assert_eq!(computed, ["ab", "abc"]);
    }

    #[test]
    fn workers_share_one_memo() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let (memo, computed) = (Memo::default(), AtomicUsize::new(0));
        let ask = || {
            memo.get_or_compute(
                |k: &u8| *k == 1,
                || 1,
                || -> Result<u8, ()> {
                    computed.fetch_add(1, Ordering::Relaxed);
                    Ok(2)
                },
            )
        };
        std::thread::scope(|scope| {
            assert_eq!(scope.spawn(ask).join().unwrap(), Ok(2));
            assert_eq!(scope.spawn(ask).join().unwrap(), Ok(2));
        });
        assert_eq!(computed.into_inner(), 1);
    }

    #[test]
    fn failures_are_not_remembered() {
        let (memo, mut computed) = (Memo::default(), Vec::new());
        assert!(ask(&memo, "", &mut computed).is_err());
        assert!(ask(&memo, "", &mut computed).is_err());
        assert_eq!(ask(&memo, "a", &mut computed), Ok(1));
        assert_eq!(ask(&memo, "a", &mut computed), Ok(1));
        assert_eq!(computed, ["", "", "a"]);
    }
}
