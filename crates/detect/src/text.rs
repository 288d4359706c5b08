//! Small text helpers shared by the classifier and the risk model.

/// Splits camelCase and PascalCase words ("CodeReviewer" → "Code Reviewer", "apiKeys" →
/// "api Keys").
pub(crate) fn split_camel(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let mut previous_lower = false;
    for c in text.chars() {
        if c.is_uppercase() && previous_lower {
            out.push(' ');
        }
        previous_lower = c.is_lowercase();
        out.push(c);
    }
    out
}

/// Whether `word` is named by `stem`: a stem ending in `$`, or of up to three letters, must be
/// the whole word ("post$" is not "postgres", "ci" is not "city"); a longer one must start it.
pub(crate) fn matches(word: &str, stem: &str) -> bool {
    // Nearly every pair the risk model tries differs at once: rejected without comparing more.
    if word.as_bytes().first() != stem.as_bytes().first() {
        return false;
    }
    match stem.strip_suffix('$') {
        Some(exact) => word == exact,
        None if stem.len() <= 3 => word == stem,
        None => word.starts_with(stem),
    }
}

/// The first of `words` named by any of `stems`.
pub(crate) fn find<'w>(words: &'w [String], stems: &[&str]) -> Option<&'w str> {
    words.iter().find(|w| stems.iter().any(|s| matches(w, s))).map(String::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn camel_case_is_split_and_stems_match() {
        assert_eq!(split_camel("CodeReviewer bot"), "Code Reviewer bot");
        assert_eq!(split_camel("apiKeys ÜberAgent"), "api Keys Über Agent");
        assert!(matches("payments", "payment"));
        assert!(!matches("postgres", "post$"));
        assert!(matches("post", "post$"));
        assert!(!matches("city", "ci") && matches("ci", "ci"));
    }
}
