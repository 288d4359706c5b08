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
pub mod head;
pub mod instructed;
pub mod leak;
pub mod model;
pub mod normalize;
pub mod rules;
pub mod train;

pub use detector::{Cascade, Detector, Direction, Screen, Stages, Verdict};
pub use model::{Label, Model};
pub use train::{Example, Metrics, TrainError, TrainFrom, TrainOptions, Trained, train, train_from};

use std::sync::LazyLock;

/// The built-in corpus followed by `extra` (a text already present is not added again),
/// and how many of `extra` were added. A tenant's training learns from these, starting
/// from the shipped model.
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

/// Most texts a tenant's training embeds for the encoder's head, and for its calibration,
/// each: embedding costs milliseconds a text, so this bounds the training's time whatever
/// its size; the head is fine-tuned from the shipped one, which a sample suffices for.
pub const TENANT_ENCODER_BUDGET: usize = 1_000;

/// A tenant's training on `examples` (`training_set`'s, the last `added` of them the
/// tenant's): from the shipped model, the n-gram stage on all of them and the generated
/// background, the encoder's head (when the encoder is on) on at most
/// `TENANT_ENCODER_BUDGET` of them, the tenant's first.
pub fn train_tenant(
    examples: &[Example],
    added: usize,
    progress: &mut dyn FnMut(f32) -> bool,
) -> Result<Trained, TrainError> {
    let encoder = encoder::shared();
    let mut embed = |text: &str| encoder.map(|e| e.embed(text, detector::ENCODER_TOKENS));
    let background = corpus::background();
    let from = TrainFrom {
        start: Some(default_detector()),
        calibration: &[],
        embed: encoder.is_some().then_some(&mut embed as train::Embed<'_>),
        ngram_only: &background,
        encoder_budget: Some(TENANT_ENCODER_BUDGET),
        known: examples.len().saturating_sub(added),
    };
    train_from(examples, &TrainOptions::default(), from, progress)
}

/// The shipped model, fitted by `cargo xtask guard-train` from the public data in
/// `../shared/data/guard`, and its description (data, calibration set, held-out metrics).
const BUILTIN_BYTES: &[u8] = include_bytes!("../../models/guard-builtin.bin");
const BUILTIN_JSON: &str = include_str!("../../models/guard-builtin.json");

static DEFAULT: LazyLock<Trained> = LazyLock::new(|| {
    let description: serde_json::Value = serde_json::from_str(BUILTIN_JSON).unwrap_or_default();
    match Detector::from_bytes(BUILTIN_BYTES, 0.5) {
        Ok(detector) => Trained {
            detector,
            metrics: metrics_of(&description["held_out"]),
            fitted: description["fitted"].as_u64().unwrap_or(0) as usize,
        },
        // Only a broken build gets here: rules and detectors alone.
        Err(_) => Trained {
            detector: Detector::new(Model::zeros(TrainOptions::default().bits), 0.5),
            metrics: train::metrics(&[], 0.5),
            fitted: 0,
        },
    }
});

/// Metrics as `guard-builtin.json` holds them.
fn metrics_of(v: &serde_json::Value) -> Metrics {
    let f = |v: &serde_json::Value| v.as_f64().unwrap_or(0.0) as f32;
    let classes = Label::ALL
        .into_iter()
        .map(|label| {
            let c = v["classes"].as_array().and_then(|cs| cs.iter().find(|c| c["label"] == label.as_str()));
            let c = c.cloned().unwrap_or_default();
            train::ClassMetrics {
                label,
                precision: f(&c["precision"]),
                recall: f(&c["recall"]),
                f1: f(&c["f1"]),
                support: c["support"].as_u64().unwrap_or(0) as usize,
            }
        })
        .collect();
    let rates = &v["false_positive_rates"];
    Metrics {
        size: v["size"].as_u64().unwrap_or(0) as usize,
        threshold: f(&v["threshold"]),
        classes,
        attack_recall: f(&v["attack_recall"]),
        false_positive_rate: f(&v["false_positive_rate"]),
        false_positive_rates: [f(&rates[0]), f(&rates[1]), f(&rates[2])],
    }
}

/// The shipped default detector.
pub fn default_detector() -> &'static Detector {
    &DEFAULT.detector
}

/// The default detector with its metrics on the held-out share of its data.
pub fn default_trained() -> &'static Trained {
    &DEFAULT
}

/// What the shipped model was fitted and calibrated on (`guard-builtin.json`).
pub fn builtin_description() -> serde_json::Value {
    serde_json::from_str(BUILTIN_JSON).unwrap_or_default()
}

/// The version of the shipped model: changes whenever its data or training do.
pub const BUILTIN_MODEL: &str = "builtin-2026.11.2";
