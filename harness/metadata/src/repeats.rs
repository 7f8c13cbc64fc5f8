//! A cell run K times (`--repeat K`): how often it passed, with a 95 %
//! interval for its pass rate, whether every run passed (pass^k) and
//! whether any did (pass@k). A run passes when its verdict does not fail
//! a build: `pass`, or a verdict that stands (`not_applicable`,
//! `out_of_scope`), as the exit code reads it.
//!
//! The one rule every reader of a cell applies (the exit code, the human
//! report, the JUnit file, `check --verdicts`) is [`Outcome`]: `--repeat K`
//! draws a sample to measure a rate, it is not a retry that runs a failure
//! again to see whether it holds. So every run counts alike, whatever its
//! place: a cell passes only when every run passed (pass^k), fails when
//! none did, and is flaky, which fails a build too, when some did. Fail
//! then pass and pass then fail are the same flaky cell. The harness never
//! retries a cell.
//!
//! The interval is Wilson's score interval, which stays inside [0, 1] and
//! is not degenerate at 0 or K passes, where the normal approximation is;
//! bounds are rounded to 4 decimals so the manifest's bytes never depend
//! on the last bit of a float.

use crate::status::CellStatus;
use serde::{Deserialize, Serialize};

/// The two-sided 95 % standard normal quantile.
const Z_95: f64 = 1.959_963_984_540_054;

/// What a cell's runs come to under the one rule (see the module's
/// documentation): a build fails on anything but `Pass`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[must_use]
pub enum Outcome {
    /// Its one run passed, or every run of its sample did (pass^k).
    Pass,
    /// Some runs of its sample passed and some did not, in any order.
    Flaky,
    /// Its one run failed, or no run of its sample passed.
    Fail,
}

impl Outcome {
    /// Every outcome.
    pub const ALL: [Outcome; 3] = [Outcome::Pass, Outcome::Flaky, Outcome::Fail];

    /// The outcome of a cell that ran once, with this verdict.
    pub fn of_run(status: CellStatus) -> Outcome {
        if passes(status) {
            Outcome::Pass
        } else {
            Outcome::Fail
        }
    }

    /// The outcome of a sample of `runs` runs, `passes` of which passed: a
    /// count above `runs` (which no run writes) is read as every run.
    pub fn of_sample(passes: u32, runs: u32) -> Outcome {
        if runs > 0 && passes >= runs {
            Outcome::Pass
        } else if passes == 0 {
            Outcome::Fail
        } else {
            Outcome::Flaky
        }
    }

    /// Whether a cell with this outcome fails a build (and the run's exit
    /// code, unless a baseline lists it).
    #[must_use]
    pub fn breaks_build(self) -> bool {
        self != Outcome::Pass
    }

    /// Its name, as reports print it.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Flaky => "flaky",
            Outcome::Fail => "fail",
        }
    }
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A single run's verdict read as an outcome ([`Outcome::of_run`]).
impl From<CellStatus> for Outcome {
    fn from(status: CellStatus) -> Outcome {
        Outcome::of_run(status)
    }
}

/// One repeated cell's runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Repeats {
    /// Runs (K).
    pub runs: u32,
    /// Runs that passed.
    pub passes: u32,
    /// Every run's verdict, in run order (the cell shows the first's).
    pub statuses: Vec<CellStatus>,
    /// Wilson's 95 % interval for the pass rate, `[low, high]`.
    pub interval: [f64; 2],
    /// pass^k: every run passed.
    pub pass_all: bool,
    /// pass@k: at least one run passed.
    pub pass_any: bool,
}

impl Eq for Repeats {}

impl Repeats {
    /// The repeats of runs that ended with `statuses`, in run order.
    #[must_use]
    pub fn of(statuses: Vec<CellStatus>) -> Repeats {
        let runs = u32::try_from(statuses.len()).unwrap_or(u32::MAX);
        let passes = u32::try_from(statuses.iter().filter(|s| passes(**s)).count()).unwrap_or(u32::MAX);
        Repeats {
            runs,
            passes,
            statuses,
            interval: wilson_interval(passes, runs),
            pass_all: runs > 0 && passes == runs,
            pass_any: passes > 0,
        }
    }

    /// The repeats of a cell's runs, in run order: `None` for a cell that
    /// ran once, which states none.
    #[must_use]
    pub fn of_runs(statuses: Vec<CellStatus>) -> Option<Repeats> {
        (statuses.len() > 1).then(|| Repeats::of(statuses))
    }

    /// Whether these repeats are what their statuses make them: more than
    /// one run, and the counts, interval, pass^k and pass@k of exactly
    /// those statuses. A file read back states all of them; a reader
    /// that trusted `runs` or `passes` over the statuses could be told
    /// 10 passes of 3 runs, or a rate outside [0, 1].
    #[must_use]
    pub fn holds(&self) -> bool {
        self.statuses.len() > 1 && Repeats::of(self.statuses.clone()) == *self
    }

    /// Some runs passed and some did not.
    #[must_use]
    pub fn is_flaky(&self) -> bool {
        self.outcome() == Outcome::Flaky
    }

    /// What the runs come to under the one rule.
    pub fn outcome(&self) -> Outcome {
        Outcome::of_sample(self.passes, self.runs)
    }
}

/// Whether `passes` of `runs` is some but not all.
#[must_use]
pub fn is_flaky(passes: u32, runs: u32) -> bool {
    Outcome::of_sample(passes, runs) == Outcome::Flaky
}

/// Whether one run passed.
#[must_use]
pub fn passes(status: CellStatus) -> bool {
    !status.breaks_build()
}

/// Wilson's score interval at 95 % for `passes` out of `runs`, rounded to
/// 4 decimals; `[0, 1]` for no run.
#[must_use]
pub fn wilson_interval(passes: u32, runs: u32) -> [f64; 2] {
    if runs == 0 {
        return [0.0, 1.0];
    }
    let n = f64::from(runs);
    let p = f64::from(passes) / n;
    let z2 = Z_95 * Z_95;
    let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = Z_95 / (1.0 + z2 / n) * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    [round4((centre - half).max(0.0)), round4((centre + half).min(1.0))]
}

fn round4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

#[cfg(test)]
mod tests {
    use super::{is_flaky, wilson_interval, Outcome, Repeats};
    use crate::status::CellStatus::{Fail, NotApplicable, NotExercised, Pass};

    #[test]
    fn wilson_intervals_match_published_values() {
        // Reference values from the closed form, as statistics packages
        // print them (e.g. 5 of 5: 0.5655 to 1; 0 of 5: 0 to 0.4345).
        assert_eq!(wilson_interval(5, 5), [0.5655, 1.0]);
        assert_eq!(wilson_interval(0, 5), [0.0, 0.4345]);
        assert_eq!(wilson_interval(3, 5), [0.2307, 0.8824]);
        assert_eq!(wilson_interval(50, 100), [0.4038, 0.5962]);
        assert_eq!(wilson_interval(0, 0), [0.0, 1.0]);
    }

    #[test]
    fn only_repeats_their_statuses_make_hold() {
        let made = Repeats::of(vec![Pass, Fail, Pass]);
        assert!(made.holds());
        let mut more_passes = made.clone();
        more_passes.passes = 10;
        let mut no_runs = made.clone();
        no_runs.runs = 0;
        let mut outside = made.clone();
        outside.interval = [-1.5, 2.0];
        let mut reversed = made.clone();
        reversed.interval = [made.interval[1], made.interval[0]];
        let mut fewer_statuses = made.clone();
        fewer_statuses.statuses.pop();
        let mut all_claimed = made.clone();
        all_claimed.pass_all = true;
        let wrong = [more_passes, no_runs, outside, reversed, fewer_statuses, all_claimed, Repeats::of(vec![Pass])];
        for repeats in &wrong {
            assert!(!repeats.holds(), "{repeats:?}");
        }
        assert_eq!(wrong.len(), 7);
    }

    #[test]
    fn pass_all_and_pass_any_read_every_run() {
        let all = Repeats::of(vec![Pass, Pass, Pass]);
        assert!(all.pass_all && all.pass_any && !all.is_flaky());
        assert_eq!((all.passes, all.runs), (3, 3));
        let some = Repeats::of(vec![Pass, Fail, NotExercised]);
        assert!(!some.pass_all && some.pass_any && some.is_flaky());
        assert_eq!(some.passes, 1);
        let none = Repeats::of(vec![Fail, Fail]);
        assert!(!none.pass_all && !none.pass_any && !none.is_flaky());
    }

    #[test]
    fn a_sample_passes_only_when_every_run_does_whatever_their_order() {
        let outcome = |statuses: &[crate::status::CellStatus]| Repeats::of(statuses.to_vec()).outcome();
        assert_eq!(outcome(&[Pass, Pass, Pass]), Outcome::Pass);
        assert_eq!(outcome(&[Pass, NotApplicable]), Outcome::Pass, "a verdict that stands passes");
        // Fail then pass, and pass then fail: the same flaky cell.
        assert_eq!(outcome(&[Fail, Fail, Pass]), Outcome::Flaky);
        assert_eq!(outcome(&[Pass, Fail]), Outcome::Flaky);
        assert_eq!(outcome(&[Pass, Pass, NotExercised]), Outcome::Flaky);
        assert_eq!(outcome(&[Fail, NotExercised, Fail]), Outcome::Fail);
        for outcome in [Outcome::Flaky, Outcome::Fail] {
            assert!(outcome.breaks_build(), "{outcome}");
        }
        assert!(!Outcome::Pass.breaks_build());
    }

    #[test]
    fn one_run_and_a_sample_read_the_same_verdicts_alike() {
        for status in [Pass, Fail, NotExercised, NotApplicable] {
            assert_eq!(Outcome::of_run(status), Repeats::of(vec![status, status]).outcome(), "{status}");
            assert_eq!(Outcome::of_run(status).breaks_build(), status.breaks_build(), "{status}");
        }
        // Counts no run writes: none, and more passes than runs.
        assert_eq!(Outcome::of_sample(0, 0), Outcome::Fail);
        assert_eq!(Outcome::of_sample(4, 3), Outcome::Pass);
        assert!(!is_flaky(4, 3) && !is_flaky(0, 0) && is_flaky(1, 3));
    }
}
