//! Whether a repeated cell's pass rate moved between two runs more than
//! chance explains: Fisher's exact test, two-sided, on the 2 × 2 table of
//! passes and other runs in A and in B. Exact, so it holds for the few
//! runs a repeated cell has, where a χ² approximation does not.

/// Below this p-value a move is significant.
pub const SIGNIFICANCE: f64 = 0.05;

/// The two-sided p-value of Fisher's exact test for `passes_a` of `runs_a`
/// against `passes_b` of `runs_b` (passes above runs count as runs): the
/// probability, with the margins fixed, of a table at most as likely as
/// the one observed.
#[must_use]
pub fn fisher_two_sided(passes_a: u32, runs_a: u32, passes_b: u32, runs_b: u32) -> f64 {
    let (a, b) = (passes_a.min(runs_a), passes_b.min(runs_b));
    let (row_a, row_b, passes) = (runs_a, runs_b, a + b);
    let low = passes.saturating_sub(row_b);
    let high = passes.min(row_a);
    let probability =
        |x: u32| (ln_choose(row_a, x) + ln_choose(row_b, passes - x) - ln_choose(row_a + row_b, passes)).exp();
    let observed = probability(a);
    // Tables as likely as the observed one, up to rounding, count as well.
    let bound = observed * (1.0 + 1e-7);
    let p: f64 = (low..=high).map(probability).filter(|p| *p <= bound).sum();
    p.min(1.0)
}

/// ln C(n, k).
fn ln_choose(n: u32, k: u32) -> f64 {
    let k = k.min(n.saturating_sub(k));
    (1..=k).map(|i| (f64::from(n - k + i) / f64::from(i)).ln()).sum()
}

#[cfg(test)]
mod tests {
    use super::fisher_two_sided;

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
    }

    #[test]
    fn passes_above_runs_are_read_as_runs() {
        assert!(close(fisher_two_sided(9, 5, 0, 5), fisher_two_sided(5, 5, 0, 5)));
    }
}
