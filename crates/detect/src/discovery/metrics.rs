//! How well a clustering recovers known groups: the adjusted Rand index and purity.

use std::collections::HashMap;

fn pairs(n: u64) -> f64 {
    let n = n as f64;
    n * (n - 1.0) / 2.0
}

/// The adjusted Rand index (Hubert and Arabie) of two labellings of the same items: 1 when
/// they agree, about 0 for a random one. Each distinct label is a group (noise included,
/// as one group of its own).
pub fn adjusted_rand_index(truth: &[u32], predicted: &[u32]) -> f64 {
    debug_assert_eq!(truth.len(), predicted.len());
    let n = truth.len().min(predicted.len()) as u64;
    if n < 2 {
        return 1.0;
    }
    let mut cells: HashMap<(u32, u32), u64> = HashMap::new();
    let mut rows: HashMap<u32, u64> = HashMap::new();
    let mut cols: HashMap<u32, u64> = HashMap::new();
    for (t, p) in truth.iter().zip(predicted) {
        *cells.entry((*t, *p)).or_insert(0) += 1;
        *rows.entry(*t).or_insert(0) += 1;
        *cols.entry(*p).or_insert(0) += 1;
    }
    let index: f64 = cells.values().map(|c| pairs(*c)).sum();
    let a: f64 = rows.values().map(|c| pairs(*c)).sum();
    let b: f64 = cols.values().map(|c| pairs(*c)).sum();
    let expected = a * b / pairs(n);
    let max = (a + b) / 2.0;
    if (max - expected).abs() < f64::EPSILON {
        return 1.0;
    }
    (index - expected) / (max - expected)
}

/// Of the items in predicted groups (`predicted` not `noise`), the share whose group's
/// commonest true label is theirs.
pub fn purity(truth: &[u32], predicted: &[u32], noise: u32) -> f64 {
    let mut groups: HashMap<u32, HashMap<u32, u64>> = HashMap::new();
    for (t, p) in truth.iter().zip(predicted) {
        if *p != noise {
            *groups.entry(*p).or_default().entry(*t).or_insert(0) += 1;
        }
    }
    let total: u64 = groups.values().flat_map(|g| g.values()).sum();
    if total == 0 {
        return 1.0;
    }
    let majority: u64 = groups.values().map(|g| g.values().copied().max().unwrap_or(0)).sum();
    majority as f64 / total as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_labellings_score_one_whatever_the_names() {
        let t = [0, 0, 1, 1, 2, 2];
        assert!((adjusted_rand_index(&t, &[5, 5, 7, 7, 9, 9]) - 1.0).abs() < 1e-12);
        assert!((purity(&t, &[5, 5, 7, 7, 9, 9], u32::MAX) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn a_known_example() {
        // sklearn: adjusted_rand_score([0, 0, 1, 1], [0, 0, 1, 2]) = 0.5714285714285715
        let ari = adjusted_rand_index(&[0, 0, 1, 1], &[0, 0, 1, 2]);
        assert!((ari - 0.571_428_571_428_571_5).abs() < 1e-9, "{ari}");
        // Everything in one group against two true groups.
        assert!(adjusted_rand_index(&[0, 0, 1, 1], &[0, 0, 0, 0]).abs() < 1e-12);
    }

    #[test]
    fn purity_ignores_noise_and_counts_majorities() {
        let truth = [0, 0, 0, 1, 1, 2];
        let predicted = [1, 1, 2, 2, 2, 99];
        // Group 1: {0, 0} → 2; group 2: {0, 1, 1} → 2; 4 of 5.
        assert!((purity(&truth, &predicted, 99) - 0.8).abs() < 1e-12);
    }
}
