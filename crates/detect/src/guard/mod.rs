//! The Prompt Guard's detector: screens a prompt (or a model's output) for injection,
//! jailbreak and leakage.
//!
//! A prompt is first normalised (`normalize`: NFKC, invisible characters, homoglyphs,
//! leetspeak) and searched for embedded payloads (`decode`: base64, hex, URL-encoding,
//! ROT13), which are screened as well. Each text is then read by the curated rules
//! (`rules`), the secret and personal-data detectors (`leak`), and the trained classifier
//! (`model`: a linear model over hashed word and character n-grams, trained by `train`).
//! Long prompts are read in overlapping windows, not truncated.

pub mod decode;
pub mod leak;
pub mod normalize;
