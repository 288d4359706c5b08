//! Normalisation: the canonical text the rules and the classifier read.
//! (Stub: being written.)

/// What normalisation made of a text, and the obfuscation it undid.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Normalized {
    /// NFKC, invisible and zero-width characters removed, homoglyphs folded to Latin,
    /// lower-cased, runs of whitespace collapsed to one space, trimmed.
    pub text: String,
    /// `text` with leetspeak folded (`1gn0r3` → `ignore`), when that changed anything.
    pub deleet: Option<String>,
    /// The obfuscations found, by name, in a fixed order, each at most once:
    /// `invisible_characters`, `homoglyphs`, `leetspeak`, `fullwidth_or_compatibility`.
    pub signals: Vec<&'static str>,
}

pub fn normalize(input: &str) -> Normalized {
    Normalized { text: input.to_lowercase(), deleet: None, signals: Vec::new() }
}
