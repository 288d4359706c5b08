//! Upper tails of one-sided features, by peaks over threshold (extreme value theory): per
//! feature, the share `p` of training checks above its 99th percentile `u`, and the median
//! excess over `u` of those, which sets an exponential tail `p · exp(-(x - u) / σ)`.
//! Values up to half a unit past `u` are not in the tail (probability 1). The median keeps
//! the tail from stretching when the history holds a few extreme anomalies.
//!
//! A check is as odd as its rarest feature: the smallest tail probability, multiplied by
//! the number of features (a Bonferroni correction, so that having several features does
//! not make ordinary checks look odd).

use serde::{Deserialize, Serialize};

use super::features::FEATURES;

/// The quantile a feature's tail starts at.
const TAIL_START: f64 = 0.99;
/// How far past the tail's start a value must be to be in it.
const DEAD_ZONE: f64 = 0.5;
/// The smallest scale of a tail.
const MIN_SCALE: f64 = 0.25;
/// The largest: features are per-agent standard scores and nats, whose tails fall at least
/// this fast; anomalies in the history must not stretch them.
const MAX_SCALE: f64 = 1.0;

/// One feature's upper tail.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tail {
    /// Where the tail starts.
    u: f64,
    /// The share of training values above `u` (smoothed: never 0).
    p: f64,
    /// σ: the tail shrinks by e every σ beyond `u`.
    scale: f64,
}

impl Default for Tail {
    /// Fitted to nothing: nothing is in the tail.
    fn default() -> Self {
        Self { u: f64::MAX, p: 1.0, scale: 1.0 }
    }
}

impl Tail {
    pub fn fit(values: &mut [f64]) -> Self {
        if values.is_empty() {
            return Self::default();
        }
        values.sort_unstable_by(f64::total_cmp);
        let n = values.len();
        // At the 99th percentile, but low enough in a short history that some values (up
        // to ten) exceed it: else the tail would start at the maximum and nothing be odd.
        let rank = ((TAIL_START * n as f64) as usize).min(n.saturating_sub(1 + (n / 10).min(10)));
        let u = values[rank];
        let above = n - values.partition_point(|v| *v <= u);
        let mut excess: Vec<f64> = values[n - above..].iter().map(|v| v - u).collect();
        let median = if excess.is_empty() {
            0.0
        } else {
            let mid = excess.len() / 2;
            *excess.select_nth_unstable_by(mid, f64::total_cmp).1
        };
        Self {
            u,
            p: (above as f64 + 1.0) / (n as f64 + 1.0),
            scale: (median / std::f64::consts::LN_2).clamp(MIN_SCALE, MAX_SCALE),
        }
    }

    /// The probability of a value at least `x`: 1 up to where the tail starts, and up to
    /// half a unit past it (features are standard scores and nats, in which less is noise:
    /// where the training values are all alike, the tail would otherwise make the least
    /// excess rare).
    pub fn probability(&self, x: f64) -> f64 {
        if x <= self.u + DEAD_ZONE {
            return 1.0;
        }
        self.p * (-(x - self.u) / self.scale).exp()
    }
}

/// The tails of every feature.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Tails {
    tails: Vec<Tail>,
}

impl Tails {
    pub fn fit(rows: &[[f64; FEATURES]]) -> Self {
        let tails = (0..FEATURES)
            .map(|f| {
                let mut column: Vec<f64> = rows.iter().map(|r| r[f]).collect();
                Tail::fit(&mut column)
            })
            .collect();
        Self { tails }
    }

    /// Each feature's tail probability.
    pub fn probabilities(&self, row: &[f64; FEATURES]) -> [f64; FEATURES] {
        let mut out = [1.0; FEATURES];
        for (f, slot) in out.iter_mut().enumerate() {
            if let Some(tail) = self.tails.get(f) {
                *slot = tail.probability(row[f]);
            }
        }
        out
    }

    /// The anomaly score in [0, 1): `1 - 2^(-d/2)` where `d` is how many decades rarer
    /// than 1 the corrected smallest tail probability is (0.5 at 1 in 100, 0.75 at 1 in
    /// 10,000).
    pub fn score(probabilities: &[f64; FEATURES]) -> f64 {
        let smallest = probabilities.iter().copied().fold(1.0, f64::min);
        let decades = (-(smallest * FEATURES as f64).log10()).max(0.0);
        1.0 - 2f64.powf(-decades / 2.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_probabilities_fall_with_the_value_and_beyond_the_maximum() {
        // 98% zeros, 2% spread over 0..7.
        let mut values: Vec<f64> =
            (0..10_000).map(|i| if i % 50 == 0 { f64::from(i % 700) / 100.0 } else { 0.0 }).collect();
        let tail = Tail::fit(&mut values);
        assert_eq!(tail.probability(0.0), 1.0);
        let p1 = tail.probability(1.0);
        let p6 = tail.probability(6.0);
        let p20 = tail.probability(20.0);
        assert!(p1 > p6 && p6 > p20, "{p1} {p6} {p20}");
        assert!(p20 < 1e-6, "{p20}");
        assert_eq!(Tail::fit(&mut []).probability(3.0), 1.0);
        assert!(Tails::score(&[1.0; FEATURES]) == 0.0);
        // All alike: a small excess is not rare; a large one is.
        let tied = Tail::fit(&mut vec![2.0; 10_000]);
        assert_eq!(tied.probability(2.4), 1.0);
        assert!(tied.probability(5.0) < 1e-6);
        let mut rare = [1.0; FEATURES];
        rare[2] = 1e-4 / FEATURES as f64;
        assert!((Tails::score(&rare) - 0.75).abs() < 1e-9);
    }
}
