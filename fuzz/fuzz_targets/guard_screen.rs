//! The Prompt Guard's full screening (`Detector::screen`, the shipped default detector) on
//! arbitrary text, in both directions, with an arbitrary system prompt for outputs.
//!
//! Invariants:
//! - never panics (normalisation, decoding, windows, rules, secret detectors, the model);
//! - the score and the per-attack scores are finite and within 0..=1;
//! - the label is `Benign` exactly when the score is under the threshold;
//! - every reason is one of the documented kinds;
//! - screening is deterministic.
#![no_main]

use agentgov_detect::guard::{self, Direction, Label, Screen};
use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;

#[derive(Debug, Arbitrary)]
struct Input<'a> {
    output: bool,
    system_prompt: Option<&'a str>,
    text: &'a str,
}

const REASONS: [&str; 6] = ["rule:", "secret:", "obfuscation:", "decoded:", "ngram:", "encoder:"];

fuzz_target!(|input: Input<'_>| {
    let detector = guard::default_detector();
    let direction = if input.output { Direction::Output } else { Direction::Input };
    let screen = Screen { text: input.text, system_prompt: input.system_prompt, direction };
    let verdict = detector.screen(&screen);
    assert!(verdict.score.is_finite() && (0.0..=1.0).contains(&verdict.score), "{verdict:?}");
    assert!(verdict.scores.iter().all(|s| s.is_finite() && (0.0..=1.0).contains(s)), "{verdict:?}");
    assert_eq!(verdict.label == Label::Benign, verdict.score < detector.threshold, "{verdict:?}");
    for reason in &verdict.reasons {
        assert!(
            reason == "system_prompt_echo" || REASONS.iter().any(|p| reason.starts_with(p)),
            "unknown reason {reason:?}"
        );
    }
    if input.text.len() % 8 == 0 {
        assert_eq!(detector.screen(&screen), verdict, "not deterministic");
    }
});
