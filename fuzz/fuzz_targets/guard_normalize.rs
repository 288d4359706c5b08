//! Prompt Guard normalisation (`guard::normalize`) on arbitrary text.
//!
//! Invariants (those of the module's own unit tests, on any input):
//! - the text is trimmed, with no run of two spaces and no whitespace but ' ';
//! - it holds no invisible character the sieve removes, and no upper-case letter that has
//!   a lower case;
//! - normalising it again changes nothing (idempotence);
//! - `deleet`, when set, differs from the text and has its byte length, and comes with the
//!   `leetspeak` signal; the signals are in the documented order, each at most once;
//! - `hidden_tag_text` is ASCII (visible characters and spaces), not blank, and present
//!   whenever the input holds a tag character that spells a visible one outside a flag.
#![no_main]

use agentgov_detect::guard::normalize::{self, FULLWIDTH_OR_COMPATIBILITY, HOMOGLYPHS, INVISIBLE_CHARACTERS, LEETSPEAK};
use libfuzzer_sys::fuzz_target;

const ORDER: [&str; 4] = [INVISIBLE_CHARACTERS, HOMOGLYPHS, LEETSPEAK, FULLWIDTH_OR_COMPATIBILITY];

/// What the sieve removes (normalize.rs's `invisible`), repeated as the oracle.
fn invisible(c: char) -> bool {
    matches!(
        u32::from(c),
        0xAD | 0x115F | 0x1160 | 0x180E | 0x200B | 0x202A..=0x202E | 0x2060..=0x2064 | 0x2066..=0x206F | 0x3164
            | 0xFFA0 | 0xFFF9..=0xFFFB | 0x13430..=0x1343F | 0x1BCA0..=0x1BCA3 | 0x1D173..=0x1D17A | 0x034F
            | 0x0600..=0x0605 | 0x061C | 0x06DD | 0x070F | 0x0890 | 0x0891 | 0x08E2 | 0x17B4 | 0x17B5
            | 0x200C..=0x200F | 0xFE00..=0xFE0F | 0x110BD | 0x110CD | 0xE0100..=0xE01EF | 0xFEFF | 0xE0000..=0xE007F
    )
}

fuzz_target!(|data: &[u8]| {
    let Ok(input) = std::str::from_utf8(data) else { return };
    let n = normalize::normalize(input);
    let text = &n.text;
    assert_eq!(text.trim(), text, "{input:?}");
    assert!(!text.contains("  "), "{input:?} -> {text:?}");
    assert!(!text.chars().any(|c| c != ' ' && c.is_whitespace()), "{input:?} -> {text:?}");
    assert!(!text.chars().any(invisible), "{input:?} -> {text:?}");
    assert!(
        !text.chars().any(|c| c.is_uppercase() && c.to_lowercase().next() != Some(c)),
        "{input:?} -> {text:?}"
    );
    if input.is_ascii() {
        assert!(text.is_ascii());
        // ASCII whitespace here is `\t`..=`\r` and ' ' (vertical tab included).
        let words = input.split(|c: char| matches!(c, '\t'..='\r' | ' ')).filter(|w| !w.is_empty()).count();
        assert_eq!(text.split(' ').filter(|w| !w.is_empty()).count(), words, "{input:?} -> {text:?}");
    }

    let again = normalize::normalize(text);
    assert_eq!(&again.text, text, "normalising twice changed {input:?}");

    match &n.deleet {
        Some(deleet) => {
            assert_eq!(deleet.len(), text.len(), "{input:?}");
            assert_ne!(deleet, text, "{input:?}");
            assert!(n.signals.contains(&LEETSPEAK));
        }
        None => assert!(!n.signals.contains(&LEETSPEAK)),
    }
    let positions: Vec<usize> =
        n.signals.iter().map(|s| ORDER.iter().position(|o| o == s).unwrap_or(usize::MAX)).collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "{:?}", n.signals);
    assert!(positions.iter().all(|&p| p < ORDER.len()));
    if input.is_ascii() {
        assert!(n.signals.iter().all(|s| *s == LEETSPEAK), "{:?}", n.signals);
    }

    let hidden = normalize::hidden_tag_text(input);
    if let Some(h) = &hidden {
        assert!(h.chars().all(|c| c.is_ascii_graphic() || c == ' '), "{h:?}");
        assert!(!h.trim().is_empty());
    }
    if !input.contains('\u{1F3F4}') {
        let spelled = input.chars().any(|c| ('\u{E0021}'..='\u{E007E}').contains(&c));
        assert_eq!(hidden.is_some(), spelled, "{input:?}");
    }
});
