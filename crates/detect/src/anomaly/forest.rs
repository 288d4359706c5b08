//! An isolation forest (Liu, Ting and Zhou, "Isolation Forest", ICDM 2008): random trees
//! that split on a random feature at a random value until each point is alone. Outliers
//! are isolated in few splits, so a short average path means an anomaly. The score is
//! `2^(-E[h(x)] / c(ψ))` in (0, 1): near 1 for clear anomalies, about 0.5 or less for
//! ordinary points.
//!
//! Seeded: the same rows, configuration and seed give the same forest on every machine.

use crate::guard::train::SplitMix;

/// How a forest is grown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ForestConfig {
    pub trees: usize,
    /// Rows each tree is grown from (ψ), drawn without replacement.
    pub sample_size: usize,
    pub seed: u64,
}

impl Default for ForestConfig {
    /// The paper's defaults: 100 trees of 256 rows.
    fn default() -> Self {
        Self { trees: 100, sample_size: 256, seed: 0x1f0_2e57 }
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Node {
    /// Rows with `row[feature] < threshold` go to `left`, the rest to `right` (indices into
    /// the tree's nodes).
    Split { feature: u16, threshold: f64, left: u32, right: u32 },
    /// Where `size` training rows ended.
    Leaf { size: u32 },
}

#[derive(Debug, Clone, PartialEq)]
struct Tree {
    nodes: Vec<Node>,
}

/// A grown forest.
#[derive(Debug, Clone, PartialEq)]
pub struct IsolationForest {
    trees: Vec<Tree>,
    features: usize,
    /// `c(ψ)`: the average path length of an unsuccessful search in a tree of ψ rows.
    norm: f64,
}

/// The average path length of an unsuccessful binary-search-tree search among `n` points.
fn average_path(n: usize) -> f64 {
    match n {
        0 | 1 => 0.0,
        2 => 1.0,
        _ => {
            let n = n as f64;
            2.0 * ((n - 1.0).ln() + 0.577_215_664_901_532_9) - 2.0 * (n - 1.0) / n
        }
    }
}

/// A float in [0, 1).
fn unit(rng: &mut SplitMix) -> f64 {
    (rng.next() >> 11) as f64 / (1u64 << 53) as f64
}

impl IsolationForest {
    /// Grows a forest on `rows` (each of the same length; non-finite values are read as 0).
    /// With no rows, every point scores 0.5.
    pub fn fit(rows: &[Vec<f64>], config: ForestConfig) -> Self {
        let features = rows.first().map_or(0, Vec::len);
        let rows: Vec<Vec<f64>> = rows
            .iter()
            .map(|r| (0..features).map(|f| r.get(f).copied().filter(|v| v.is_finite()).unwrap_or(0.0)).collect())
            .collect();
        let psi = config.sample_size.clamp(1, rows.len().max(1));
        if rows.is_empty() || features == 0 {
            return Self { trees: Vec::new(), features, norm: 1.0 };
        }
        let depth_limit = (psi as f64).log2().ceil().max(1.0) as usize;
        let mut rng = SplitMix(config.seed);
        let mut indices: Vec<usize> = (0..rows.len()).collect();
        let trees = (0..config.trees.max(1))
            .map(|_| {
                // A partial Fisher-Yates shuffle: the first ψ indices are the sample.
                for i in 0..psi {
                    let j = i + rng.below(indices.len() - i);
                    indices.swap(i, j);
                }
                let mut tree = Tree { nodes: Vec::new() };
                let mut sample: Vec<&[f64]> = indices[..psi].iter().map(|&i| rows[i].as_slice()).collect();
                grow(&mut tree, &mut sample, 0, depth_limit, features, &mut rng);
                tree
            })
            .collect();
        Self { trees, features, norm: average_path(psi).max(f64::MIN_POSITIVE) }
    }

    /// The anomaly score of `row` in (0, 1); 0.5 for a forest grown on nothing.
    pub fn score(&self, row: &[f64]) -> f64 {
        if self.trees.is_empty() {
            return 0.5;
        }
        let total: f64 = self.trees.iter().map(|t| path_length(t, row)).sum();
        let mean = total / self.trees.len() as f64;
        2f64.powf(-mean / self.norm)
    }

    /// How many features a row has.
    pub fn features(&self) -> usize {
        self.features
    }
}

/// Grows the subtree of `rows` at `depth`; returns its root's index.
fn grow(tree: &mut Tree, rows: &mut [&[f64]], depth: usize, limit: usize, features: usize, rng: &mut SplitMix) -> u32 {
    let at = tree.nodes.len() as u32;
    let leaf = Node::Leaf { size: rows.len() as u32 };
    if depth >= limit || rows.len() <= 1 {
        tree.nodes.push(leaf);
        return at;
    }
    // A random feature that still varies among these rows (a few tries, then give up).
    let mut chosen = None;
    for _ in 0..features.max(1) * 2 {
        let f = rng.below(features);
        let (lo, hi) = rows.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), r| (lo.min(r[f]), hi.max(r[f])));
        if hi > lo {
            chosen = Some((f, lo + unit(rng) * (hi - lo)));
            break;
        }
    }
    let Some((feature, threshold)) = chosen else {
        tree.nodes.push(leaf);
        return at;
    };
    // Placeholder, filled once both children exist.
    tree.nodes.push(Node::Leaf { size: 0 });
    let mut split = 0;
    for i in 0..rows.len() {
        if rows[i][feature] < threshold {
            rows.swap(i, split);
            split += 1;
        }
    }
    let (left_rows, right_rows) = rows.split_at_mut(split);
    let left = grow(tree, left_rows, depth + 1, limit, features, rng);
    let right = grow(tree, right_rows, depth + 1, limit, features, rng);
    tree.nodes[at as usize] = Node::Split { feature: feature as u16, threshold, left, right };
    at
}

/// `h(x)`: the depth at which `row` reaches a leaf, plus `c(size)` for the rows left there.
fn path_length(tree: &Tree, row: &[f64]) -> f64 {
    let mut at = 0usize;
    let mut depth = 0.0;
    loop {
        match tree.nodes.get(at) {
            Some(Node::Split { feature, threshold, left, right }) => {
                let value = row.get(usize::from(*feature)).copied().filter(|v| v.is_finite()).unwrap_or(0.0);
                at = if value < *threshold { *left } else { *right } as usize;
                depth += 1.0;
            }
            Some(Node::Leaf { size }) => return depth + average_path(*size as usize),
            None => return depth,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Points of a blob around (0.5, 0.5), seeded.
    fn blob(n: usize, seed: u64) -> Vec<Vec<f64>> {
        let mut rng = SplitMix(seed);
        (0..n).map(|_| vec![0.4 + 0.2 * unit(&mut rng), 0.4 + 0.2 * unit(&mut rng)]).collect()
    }

    #[test]
    fn outliers_score_higher_than_the_points_they_stand_apart_from() {
        let rows = blob(1000, 7);
        let forest = IsolationForest::fit(&rows, ForestConfig::default());
        let inliers: f64 = blob(200, 8).iter().map(|r| forest.score(r)).sum::<f64>() / 200.0;
        let far = forest.score(&[3.0, 3.0]);
        let near = forest.score(&[0.5, 0.9]);
        // A uniform blob has no denser core, so its points score about 0.5.
        assert!(inliers < 0.55, "ordinary points score about 0.5: {inliers}");
        // Beyond the data every split sends a point the same way, so the score saturates at
        // that of the blob's outermost corner (about 0.65 for ψ = 256 in two dimensions).
        assert!(far > 0.6, "a far point scores high: {far}");
        assert!(near > inliers && far >= near, "further is odder: {inliers} < {near} <= {far}");
    }

    #[test]
    fn the_same_seed_grows_the_same_forest_and_another_seed_another() {
        let rows = blob(300, 1);
        let a = IsolationForest::fit(&rows, ForestConfig::default());
        let b = IsolationForest::fit(&rows, ForestConfig::default());
        assert_eq!(a, b);
        let c = IsolationForest::fit(&rows, ForestConfig { seed: 2, ..ForestConfig::default() });
        assert_ne!(a, c);
        assert_eq!(a.score(&[0.1, 0.9]), b.score(&[0.1, 0.9]));
    }

    #[test]
    fn degenerate_inputs_do_not_panic() {
        let empty = IsolationForest::fit(&[], ForestConfig::default());
        assert_eq!(empty.score(&[1.0]), 0.5);
        let constant = IsolationForest::fit(&vec![vec![1.0, 2.0]; 50], ForestConfig::default());
        let s = constant.score(&[1.0, 2.0]);
        assert!(s > 0.0 && s < 1.0, "{s}");
        let one = IsolationForest::fit(&[vec![0.0]], ForestConfig { trees: 3, sample_size: 10, seed: 1 });
        assert!(one.score(&[5.0]).is_finite());
        // Short rows and non-finite values read as 0.
        let forest = IsolationForest::fit(&blob(100, 3), ForestConfig { trees: 10, ..ForestConfig::default() });
        assert!(forest.score(&[f64::NAN]).is_finite());
        assert_eq!(forest.features(), 2);
    }

    #[test]
    fn average_path_matches_the_paper() {
        assert_eq!(average_path(1), 0.0);
        assert_eq!(average_path(2), 1.0);
        // c(256) ≈ 10.24.
        assert!((average_path(256) - 10.24).abs() < 0.01, "{}", average_path(256));
    }
}
