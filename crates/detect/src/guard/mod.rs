//! The Prompt Guard's detector: screens a prompt (or a model's output) for injection,
//! jailbreak and leakage.
//!
//! A prompt is first normalised (`normalize`: NFKC, invisible characters, homoglyphs,
//! leetspeak) and searched for embedded payloads (`decode`: base64, hex, URL-encoding,
//! ROT13), which are screened as well. Each text is then read by the curated rules
//! (`rules`), the secret and personal-data detectors (`leak`), and the trained classifier
//! (`model`: a linear model over hashed word and character n-grams, trained by `train`).
//! Long prompts are read in overlapping windows, not truncated.

pub mod corpus;
pub mod decode;
pub mod detector;
pub mod encoder;
pub mod features;
pub mod leak;
pub mod model;
pub mod normalize;
pub mod rules;
pub mod train;

pub use detector::{Detector, Direction, Screen, Verdict};
pub use model::{Label, Model};
pub use train::{Example, Metrics, TrainError, TrainOptions, Trained, train};

use std::sync::LazyLock;

/// The built-in corpus followed by `extra` (a text already present is not added again),
/// and how many of `extra` were added.
pub fn training_set(extra: Vec<Example>) -> (Vec<Example>, usize) {
    let mut examples = corpus::builtin();
    let builtin = examples.len();
    let mut seen: std::collections::HashSet<String> = examples.iter().map(|e| e.text.clone()).collect();
    for e in extra {
        if seen.insert(e.text.clone()) {
            examples.push(e);
        }
    }
    let added = examples.len() - builtin;
    (examples, added)
}

static DEFAULT: LazyLock<Trained> =
    LazyLock::new(|| match train(&corpus::builtin(), &TrainOptions::default(), &mut |_| true) {
        Ok(trained) => trained,
        // The corpus always holds benign and attack examples; were it not to, rules alone.
        Err(_) => Trained {
            detector: Detector::new(Model::zeros(TrainOptions::default().bits), 0.5),
            metrics: train::metrics(&[], 0.5),
            fitted: 0,
        },
    });

/// The shipped default detector: trained from the built-in corpus on first use (the same
/// model on every replica: training is deterministic).
pub fn default_detector() -> &'static Detector {
    &DEFAULT.detector
}

/// The default detector with its metrics on the held-out share of the built-in corpus.
pub fn default_trained() -> &'static Trained {
    &DEFAULT
}

/// The version of the built-in corpus and training: changes whenever either does.
pub const BUILTIN_MODEL: &str = "builtin-2026.11.1";
