//! Leakage: secrets and personal data in a text, and a system prompt echoed back in an
//! output. (Stub: being written.)

/// One finding: the detector's name and where it matched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// `private_key`, `aws_access_key`, `github_token`, `slack_token`, `openai_key`,
    /// `google_api_key`, `jwt`, `card_number`, `email_address`.
    pub rule: &'static str,
    /// Byte range in the text.
    pub span: std::ops::Range<usize>,
}

/// The secrets and personal data in `text`, in order of position.
pub fn secrets(_text: &str) -> Vec<Finding> {
    Vec::new()
}

/// How much of `system_prompt` `output` repeats: the share (0..=1) of the system prompt's
/// normalised word 5-grams found in the output; 0 when the system prompt has fewer than
/// 5 words (then an exact, case-insensitive containment of the whole prompt gives 1).
pub fn system_prompt_echo(_output: &str, _system_prompt: &str) -> f64 {
    0.0
}
