//! Dense linear heads: multinomial logistic regression over a dense input, four classes. The
//! encoder stage's head reads its 512-dimensional embedding. Fitted by seeded SGD like the
//! n-gram model; a tenant's heads are
//! fitted from the shipped ones (their weights are the starting point and the L2 penalty
//! pulls towards them), so a few hundred examples adjust them without forgetting.

use super::model::{CLASSES, Label, softmax};
use super::train::{SplitMix, TrainError, class_weights, shuffle};

/// `weights[d * CLASSES + k]`: input `d`, class `k`.
#[derive(Debug, Clone, PartialEq)]
pub struct Head {
    pub dim: usize,
    pub weights: Vec<f32>,
    pub bias: [f32; CLASSES],
}

/// A head has at most this many inputs.
const MAX_DIM: usize = 4096;

#[derive(Debug, Clone, PartialEq)]
pub struct HeadOptions {
    pub epochs: u32,
    pub learning_rate: f32,
    /// Pull towards the starting weights (zero, or the shipped head's).
    pub l2: f32,
    pub seed: u64,
}

impl Default for HeadOptions {
    fn default() -> Self {
        Self { epochs: 40, learning_rate: 0.5, l2: 1e-4, seed: 20_261_126 }
    }
}

impl Head {
    pub fn zeros(dim: usize) -> Self {
        Self { dim, weights: vec![0.0; dim * CLASSES], bias: [0.0; CLASSES] }
    }

    /// The scores of `x` (its first `dim` values; missing ones count as zero).
    pub fn logits(&self, x: &[f32]) -> [f32; CLASSES] {
        let mut z = self.bias;
        for (w, &v) in self.weights.chunks_exact(CLASSES).zip(x) {
            for k in 0..CLASSES {
                z[k] += w[k] * v;
            }
        }
        z
    }

    /// Class probabilities in `Label::ALL` order.
    pub fn predict(&self, x: &[f32]) -> [f32; CLASSES] {
        softmax(self.logits(x))
    }

    /// Fits a head to `(embedding, label)` pairs, starting from `start` (and pulled towards
    /// it), classes weighted by rarity. Deterministic for given inputs.
    pub fn fit<X: AsRef<[f32]>>(
        x: &[X],
        y: &[Label],
        start: &Head,
        options: &HeadOptions,
        progress: &mut dyn FnMut(f32) -> bool,
    ) -> Result<Head, TrainError> {
        let mut head = start.clone();
        let class_weight = class_weights(y);
        let mut order: Vec<usize> = (0..x.len()).collect();
        let mut rng = SplitMix(options.seed);
        let steps = (options.epochs as usize * x.len()).max(1) as f32;
        let mut t = 0f32;
        for epoch in 0..options.epochs {
            shuffle(&mut order, &mut rng);
            for &i in &order {
                let lr = options.learning_rate / (1.0 + 4.0 * t / steps);
                t += 1.0;
                let p = head.predict(x[i].as_ref());
                let target = y[i].index();
                let mut g = [0f32; CLASSES];
                for k in 0..CLASSES {
                    g[k] = (p[k] - if k == target { 1.0 } else { 0.0 }) * class_weight[target];
                    head.bias[k] -= lr * g[k] * 0.1;
                }
                for ((w, w0), &v) in
                    head.weights.chunks_exact_mut(CLASSES).zip(start.weights.chunks_exact(CLASSES)).zip(x[i].as_ref())
                {
                    for k in 0..CLASSES {
                        w[k] -= lr * (g[k] * v + options.l2 * (w[k] - w0[k]));
                    }
                }
            }
            if !progress((epoch + 1) as f32 / options.epochs.max(1) as f32) {
                return Err(TrainError::Cancelled);
            }
        }
        Ok(head)
    }

    /// The input count (`u32`), `dim × CLASSES` weights, then the biases; little-endian.
    pub fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&(self.dim as u32).to_le_bytes());
        for v in self.weights.iter().chain(&self.bias) {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }

    /// Reads a head `write` wrote at the start of `bytes`; the head and the bytes after it.
    pub fn read(bytes: &[u8]) -> Option<(Head, &[u8])> {
        let dim = u32::from_le_bytes(bytes.get(..4)?.try_into().ok()?) as usize;
        if dim == 0 || dim > MAX_DIM {
            return None;
        }
        let len = (dim + 1) * CLASSES * 4;
        let body = bytes.get(4..4 + len)?;
        let values: Vec<f32> = body.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
        if values.iter().any(|v| !v.is_finite()) {
            return None;
        }
        let (weights, bias) = values.split_at(dim * CLASSES);
        Some((Head { dim, weights: weights.to_vec(), bias: [bias[0], bias[1], bias[2], bias[3]] }, &bytes[4 + len..]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIM: usize = 64;

    fn point(class: usize, jitter: f32) -> [f32; DIM] {
        let mut x = [0f32; DIM];
        x[class * 7] = 1.0;
        x[class * 7 + 1] = jitter;
        x
    }

    #[test]
    fn a_head_learns_separable_classes_deterministically_and_round_trips() {
        let mut x = Vec::new();
        let mut y = Vec::new();
        for i in 0..40 {
            for (c, label) in Label::ALL.into_iter().enumerate() {
                x.push(point(c, i as f32 / 40.0));
                y.push(label);
            }
        }
        let fit = || {
            Head::fit(&x, &y, &Head::zeros(DIM), &HeadOptions { epochs: 10, ..HeadOptions::default() }, &mut |_| true)
        };
        let head = fit().unwrap();
        assert_eq!(head, fit().unwrap());
        for (c, label) in Label::ALL.into_iter().enumerate() {
            let p = head.predict(&point(c, 0.5));
            assert!(p[label.index()] > 0.8, "{label:?}: {p:?}");
        }
        let mut bytes = Vec::new();
        head.write(&mut bytes);
        bytes.push(7);
        assert_eq!(Head::read(&bytes), Some((head, &[7u8][..])));
        assert_eq!(Head::read(&bytes[1..]), None);
        assert_eq!(Head::read(&bytes[..bytes.len() - 2]), None);
    }

    #[test]
    fn fitting_from_a_start_stays_near_it_and_can_be_cancelled() {
        let mut start = Head::zeros(DIM);
        start.weights[7 * CLASSES + 1] = 5.0;
        let x = vec![point(0, 0.0); 4];
        let y = vec![Label::Benign; 4];
        let head =
            Head::fit(&x, &y, &start, &HeadOptions { epochs: 2, ..HeadOptions::default() }, &mut |_| true).unwrap();
        // An input the examples never touch keeps the start's weight (up to the pull of L2).
        assert!((head.weights[7 * CLASSES + 1] - 5.0).abs() < 1e-3);
        let cancelled = Head::fit(&x, &y, &start, &HeadOptions::default(), &mut |share| share < 0.1);
        assert_eq!(cancelled.unwrap_err(), TrainError::Cancelled);
    }
}
