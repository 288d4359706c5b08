//! The trained classifier: multinomial logistic regression over hashed features
//! (`features`), four classes, and its compact binary form for storage.

use super::features::Features;

/// What a text is: benign, or one of the three kinds of attack.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Label {
    Benign,
    Injection,
    Jailbreak,
    Leakage,
}

impl Label {
    pub const ALL: [Label; 4] = [Label::Benign, Label::Injection, Label::Jailbreak, Label::Leakage];
    pub const ATTACKS: [Label; 3] = [Label::Injection, Label::Jailbreak, Label::Leakage];

    pub fn as_str(self) -> &'static str {
        match self {
            Label::Benign => "benign",
            Label::Injection => "injection",
            Label::Jailbreak => "jailbreak",
            Label::Leakage => "leakage",
        }
    }

    pub fn parse(s: &str) -> Option<Label> {
        Label::ALL.into_iter().find(|l| l.as_str() == s)
    }

    pub fn index(self) -> usize {
        self as usize
    }
}

pub const CLASSES: usize = 4;

/// Weights per bucket and class (`weights[bucket * CLASSES + class]`) and a bias per class.
#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    pub bits: u32,
    pub weights: Vec<f32>,
    pub bias: [f32; CLASSES],
}

/// Why stored bytes are not a model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a guard model: {0}")]
pub struct DecodeError(pub &'static str);

const MAGIC: &[u8; 4] = b"AGGM";
const FORMAT: u32 = 1;
/// More buckets than this is not a model this code wrote.
const MAX_BITS: u32 = 24;

impl Model {
    pub fn zeros(bits: u32) -> Self {
        Self { bits, weights: vec![0.0; (1usize << bits) * CLASSES], bias: [0.0; CLASSES] }
    }

    /// The class probabilities (softmax of the scores), in `Label::ALL` order.
    pub fn predict(&self, x: &Features) -> [f32; CLASSES] {
        softmax(self.logits(x))
    }

    pub(crate) fn logits(&self, x: &Features) -> [f32; CLASSES] {
        let mut z = self.bias;
        for (&i, &v) in x.indices.iter().zip(&x.values) {
            let at = i as usize * CLASSES;
            if let Some(w) = self.weights.get(at..at + CLASSES) {
                for k in 0..CLASSES {
                    z[k] += w[k] * v;
                }
            }
        }
        z
    }

    /// The model as bytes: a header, then only the buckets with a non-zero weight (index,
    /// then one `f32` per class, little-endian), so an untouched bucket costs nothing.
    pub fn to_bytes(&self) -> Vec<u8> {
        let rows: Vec<(usize, &[f32])> =
            self.weights.chunks_exact(CLASSES).enumerate().filter(|(_, w)| w.iter().any(|v| *v != 0.0)).collect();
        let mut out = Vec::with_capacity(16 + CLASSES * 4 + rows.len() * (4 + CLASSES * 4));
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&FORMAT.to_le_bytes());
        out.extend_from_slice(&self.bits.to_le_bytes());
        for b in self.bias {
            out.extend_from_slice(&b.to_le_bytes());
        }
        out.extend_from_slice(&(rows.len() as u32).to_le_bytes());
        for (i, w) in rows {
            out.extend_from_slice(&(i as u32).to_le_bytes());
            for v in w {
                out.extend_from_slice(&v.to_le_bytes());
            }
        }
        out
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<Self, DecodeError> {
        let mut r = Reader(bytes);
        if r.take(4)? != MAGIC {
            return Err(DecodeError("bad magic"));
        }
        if r.u32()? != FORMAT {
            return Err(DecodeError("unknown format"));
        }
        let bits = r.u32()?;
        if !(8..=MAX_BITS).contains(&bits) {
            return Err(DecodeError("bucket count out of range"));
        }
        let mut model = Model::zeros(bits);
        for b in &mut model.bias {
            *b = r.f32()?;
        }
        let rows = r.u32()?;
        for _ in 0..rows {
            let i = r.u32()? as usize;
            let at = i.checked_mul(CLASSES).filter(|at| at + CLASSES <= model.weights.len());
            let at = at.ok_or(DecodeError("bucket out of range"))?;
            for k in 0..CLASSES {
                model.weights[at + k] = r.f32()?;
            }
        }
        if !r.0.is_empty() {
            return Err(DecodeError("trailing bytes"));
        }
        if model.weights.iter().chain(&model.bias).any(|v| !v.is_finite()) {
            return Err(DecodeError("weight not finite"));
        }
        Ok(model)
    }
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        if self.0.len() < n {
            return Err(DecodeError("truncated"));
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }

    fn u32(&mut self) -> Result<u32, DecodeError> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn f32(&mut self) -> Result<f32, DecodeError> {
        Ok(f32::from_bits(self.u32()?))
    }
}

pub(crate) fn softmax(z: [f32; CLASSES]) -> [f32; CLASSES] {
    let max = z.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut p = z.map(|v| (v - max).exp());
    let sum: f32 = p.iter().sum();
    p.iter_mut().for_each(|v| *v /= sum);
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_round_trip_and_reject_garbage() {
        let mut m = Model::zeros(10);
        m.bias = [0.5, -0.25, 0.0, 1.0];
        m.weights[7 * CLASSES + 2] = 3.5;
        m.weights[1023 * CLASSES] = -1.0;
        let bytes = m.to_bytes();
        assert_eq!(Model::from_bytes(&bytes).unwrap(), m);
        assert!(Model::from_bytes(&bytes[..bytes.len() - 1]).is_err());
        assert!(Model::from_bytes(b"nope").is_err());
        let mut extra = bytes.clone();
        extra.push(0);
        assert!(Model::from_bytes(&extra).is_err());
        let mut huge = bytes.clone();
        huge[8..12].copy_from_slice(&40u32.to_le_bytes());
        assert!(Model::from_bytes(&huge).is_err());
    }

    #[test]
    fn probabilities_sum_to_one() {
        let m = Model::zeros(8);
        let p = m.predict(&Features { indices: vec![1, 2], values: vec![0.6, 0.8] });
        assert!((p.iter().sum::<f32>() - 1.0).abs() < 1e-6);
        assert!((p[0] - 0.25).abs() < 1e-6);
        assert!(Label::ALL.iter().all(|l| Label::parse(l.as_str()) == Some(*l)));
    }
}
