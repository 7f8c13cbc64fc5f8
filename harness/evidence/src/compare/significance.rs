//! Whether a repeated cell's pass rate moved between two runs more than
//! chance explains: Fisher's exact test, two-sided, on the 2 × 2 table of
//! passes and other runs in A and in B. Exact, so it holds for the few
//! runs a repeated cell has, where a χ² approximation does not.
//!
//! The counts come from files `diff` did not write, so neither the
//! arithmetic nor the cost may depend on them being small: counts are
//! added in 64 bits, each table's probability costs the same whatever its
//! counts (log-gamma), and a table with more than [`EXACT_TABLES`]
//! possible tables for its margins is tested by the normal approximation
//! instead, which is exact to well within the threshold at such sizes.

/// Below this p-value a move is significant.
pub const SIGNIFICANCE: f64 = 0.05;

/// The most tables the exact test sums; beyond it (more than ten thousand
/// runs on each side) the normal approximation answers.
pub const EXACT_TABLES: u64 = 10_000;

/// The two-sided p-value of Fisher's exact test for `passes_a` of `runs_a`
/// against `passes_b` of `runs_b` (passes above runs count as runs): the
/// probability, with the margins fixed, of a table at most as likely as
/// the one observed.
#[must_use]
pub fn fisher_two_sided(passes_a: u32, runs_a: u32, passes_b: u32, runs_b: u32) -> f64 {
    tested(passes_a, runs_a, passes_b, runs_b).p
}

/// A p-value and how many tables were summed for it.
struct Tested {
    p: f64,
    // Read by the tests that bound the work a stated count can cause.
    #[cfg_attr(not(test), allow(dead_code))]
    tables: u64,
}

fn tested(passes_a: u32, runs_a: u32, passes_b: u32, runs_b: u32) -> Tested {
    let (row_a, row_b) = (u64::from(runs_a), u64::from(runs_b));
    let (a, b) = (u64::from(passes_a.min(runs_a)), u64::from(passes_b.min(runs_b)));
    let passes = a + b;
    let (low, high) = (passes.saturating_sub(row_b), passes.min(row_a));
    if high - low >= EXACT_TABLES {
        return Tested { p: normal_two_sided(a, row_a, b, row_b), tables: 0 };
    }
    let whole = ln_choose(row_a + row_b, passes);
    let probability = |x: u64| (ln_choose(row_a, x) + ln_choose(row_b, passes - x) - whole).exp();
    let observed = probability(a);
    // Tables as likely as the observed one, up to rounding, count as well.
    let bound = observed * (1.0 + 1e-7);
    let p: f64 = (low..=high).map(probability).filter(|p| *p <= bound).sum();
    Tested { p: p.min(1.0), tables: high - low + 1 }
}

/// ln C(n, k), in the same few operations for any `n`.
fn ln_choose(n: u64, k: u64) -> f64 {
    let ln_factorial = |m: u64| libm::lgamma(m as f64 + 1.0);
    ln_factorial(n) - ln_factorial(k) - ln_factorial(n - k)
}

/// The two-sided p-value of the pooled two-proportion z-test with Yates'
/// continuity correction, the large-sample form of the same question.
fn normal_two_sided(a: u64, row_a: u64, b: u64, row_b: u64) -> f64 {
    let (na, nb) = (row_a as f64, row_b as f64);
    let pooled = (a + b) as f64 / (na + nb);
    let spread = (pooled * (1.0 - pooled) * (1.0 / na + 1.0 / nb)).sqrt();
    if spread == 0.0 || !spread.is_finite() {
        return 1.0;
    }
    let moved = ((a as f64 / na) - (b as f64 / nb)).abs() - 0.5 * (1.0 / na + 1.0 / nb);
    let z = moved.max(0.0) / spread;
    libm::erfc(z / std::f64::consts::SQRT_2).min(1.0)
}

#[cfg(test)]
mod tests {
    use super::{fisher_two_sided, tested, EXACT_TABLES};

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 5e-5
    }

    #[test]
    fn fisher_matches_published_p_values() {
        // As R's fisher.test prints them for the same tables.
        assert!(close(fisher_two_sided(5, 5, 0, 5), 0.007937), "5/5 vs 0/5");
        assert!(close(fisher_two_sided(5, 5, 3, 5), 0.4444), "5/5 vs 3/5");
        assert!(close(fisher_two_sided(3, 5, 3, 5), 1.0), "3/5 vs 3/5");
        assert!(close(fisher_two_sided(10, 10, 4, 10), 0.01084), "10/10 vs 4/10");
        assert!(close(fisher_two_sided(1, 1, 0, 1), 1.0), "1/1 vs 0/1");
        assert!(close(fisher_two_sided(0, 0, 0, 0), 1.0), "no runs");
    }

    #[test]
    fn passes_above_runs_are_read_as_runs() {
        assert!(close(fisher_two_sided(9, 5, 0, 5), fisher_two_sided(5, 5, 0, 5)));
    }

    #[test]
    fn counts_near_the_top_of_u32_do_not_wrap() {
        // 3 of 3 against none of 2^32 - 1: as far apart as rates go.
        let p = fisher_two_sided(3, 3, 0, u32::MAX);
        assert!(p < 1e-9, "p = {p}");
        let p = fisher_two_sided(u32::MAX, u32::MAX, 0, u32::MAX);
        assert!(p < 1e-9, "p = {p}");
    }

    #[test]
    fn the_work_does_not_grow_with_the_counts() {
        for (a, ra, b, rb) in [
            (2_147_483_647, u32::MAX, 2_147_483_647, u32::MAX),
            (5_000_000, 10_000_000, 5_000_000, 10_000_000),
            (3, 3, 0, u32::MAX),
            (u32::MAX, u32::MAX, 0, u32::MAX),
        ] {
            let result = tested(a, ra, b, rb);
            assert!(result.tables <= EXACT_TABLES, "{a}/{ra} vs {b}/{rb}: {} tables", result.tables);
            assert!((0.0..=1.0).contains(&result.p), "{a}/{ra} vs {b}/{rb}: p = {}", result.p);
        }
        assert!(close(tested(5_000_000, 10_000_000, 5_000_000, 10_000_000).p, 1.0));
    }

    #[test]
    fn the_normal_approximation_agrees_with_the_exact_test_where_both_apply() {
        // Just below the cut-over the exact test answers; the approximation
        // must agree with it to well within what separates the verdicts.
        for (a, ra, b, rb) in [(5_000, 9_000, 4_800, 9_000), (4_500, 9_000, 4_500, 9_000), (900, 9_000, 1_000, 9_000)] {
            let exact = tested(a, ra, b, rb);
            assert!(exact.tables > 0);
            let (a, ra, b, rb) = (u64::from(a), u64::from(ra), u64::from(b), u64::from(rb));
            let approximate = super::normal_two_sided(a, ra, b, rb);
            assert!((exact.p - approximate).abs() < 0.005, "exact {} against {approximate}", exact.p);
        }
    }
}
