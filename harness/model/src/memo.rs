//! Answers remembered by the value they were computed from.

use std::cell::RefCell;

/// Remembers what a pure computation answered for each value it was asked
/// about, so a run that asks about equal values in many cells (the same
/// catalogue, the same grants) computes each answer once.
///
/// Lookups compare values, never addresses, so a remembered answer is
/// always the one its value gives; only successful answers are kept, and at
/// most `capacity` of them, so a lookup stays a short scan.
///
/// ```
/// use sharedos_model::memo::Memo;
/// let squares: Memo<u32, u32> = Memo::new(4);
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
    entries: RefCell<Vec<(K, V)>>,
    capacity: usize,
}

impl<K, V: Clone> Memo<K, V> {
    /// An empty memo that keeps at most `capacity` answers.
    #[must_use]
    pub fn new(capacity: usize) -> Memo<K, V> {
        Memo { entries: RefCell::new(Vec::new()), capacity }
    }

    /// The answer remembered for the key `matches` accepts, or `compute`'s,
    /// remembered under `key()` when it succeeds and there is room.
    ///
    /// # Errors
    /// What `compute` answered, when it failed.
    pub fn get_or_compute<E>(
        &self,
        matches: impl Fn(&K) -> bool,
        key: impl FnOnce() -> K,
        compute: impl FnOnce() -> Result<V, E>,
    ) -> Result<V, E> {
        if let Some((_, value)) = self.entries.borrow().iter().find(|(k, _)| matches(k)) {
            return Ok(value.clone());
        }
        let value = compute()?;
        let mut entries = self.entries.borrow_mut();
        if entries.len() < self.capacity {
            entries.push((key(), value.clone()));
        }
        Ok(value)
    }
}
