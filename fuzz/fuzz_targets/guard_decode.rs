//! Prompt Guard payload decoding (`guard::decode`) on arbitrary text.
//!
//! Invariants:
//! - at most `max` payloads; spans are non-empty, inside the input, on char boundaries,
//!   sorted by start (longest first on a tie); payloads of one encoding never overlap;
//! - a ROT13 reading spans the whole input; a base64 span is base64 characters and up to
//!   two `=`, and its text is what the lenient engine decodes it to; a URL span is URL
//!   characters with at least three `%XX` escapes and decodes to something else; a hex
//!   span is hex digits and the separators the module allows;
//! - every base64 and hex text reads as text: at least 85 % printable, with a run of three
//!   letters;
//! - asking for fewer payloads gives a prefix of asking for more.
#![no_main]

use agentgov_detect::guard::decode::{Decoded, Encoding, decode_payloads, reads_as_text};
use libfuzzer_sys::fuzz_target;

fn url_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"-._~%!$&*+,;=:@/?#".contains(&b)
}

fn check(input: &str, d: &Decoded) {
    let span = d.span.clone();
    assert!(span.start < span.end && span.end <= input.len(), "{d:?}");
    assert!(input.is_char_boundary(span.start) && input.is_char_boundary(span.end), "{d:?}");
    let run = &input.as_bytes()[span.clone()];
    match d.encoding {
        Encoding::Rot13 => {
            assert_eq!(span, 0..input.len());
            assert_eq!(d.text.len(), input.len());
        }
        Encoding::Base64 => {
            let body_len = run.iter().position(|&b| b == b'=').unwrap_or(run.len());
            let (body, padding) = run.split_at(body_len);
            assert!(padding.len() <= 2 && padding.iter().all(|&b| b == b'='), "{d:?}");
            assert!(body.iter().all(|&b| b.is_ascii_alphanumeric() || b"+/-_".contains(&b)), "{d:?}");
            assert!(run.len() >= 16, "{d:?}");
            use base64::Engine as _;
            let config = base64::engine::GeneralPurposeConfig::new()
                .with_decode_padding_mode(base64::engine::DecodePaddingMode::RequireNone)
                .with_decode_allow_trailing_bits(true);
            let alphabet = if body.iter().any(|&b| b"-_".contains(&b)) {
                base64::alphabet::URL_SAFE
            } else {
                base64::alphabet::STANDARD
            };
            let decoded = base64::engine::GeneralPurpose::new(&alphabet, config).decode(body);
            assert_eq!(decoded.ok().as_deref(), Some(d.text.as_bytes()), "{d:?}");
        }
        Encoding::Hex => {
            assert!(run.iter().all(|&b| b.is_ascii_hexdigit() || b"\\xX ,:".contains(&b)), "{d:?}");
            assert!(run.iter().filter(|b| b.is_ascii_hexdigit()).count() >= 16, "{d:?}");
        }
        Encoding::Url => {
            assert!(run.iter().all(|&b| url_byte(b)), "{d:?}");
            let escapes =
                run.windows(3).filter(|w| w[0] == b'%' && w[1].is_ascii_hexdigit() && w[2].is_ascii_hexdigit()).count();
            assert!(escapes >= 3, "{d:?}");
            assert_ne!(d.text.as_bytes(), run, "{d:?}");
        }
        Encoding::Acrostic => {
            assert!(run.starts_with(b"(") && run.ends_with(b")"), "{d:?}");
            assert!(d.text.len() >= 12 && d.text.is_ascii(), "{d:?}");
        }
    }
    if matches!(d.encoding, Encoding::Base64 | Encoding::Hex) {
        assert!(reads_as_text(&d.text), "{d:?}");
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(input) = std::str::from_utf8(data) else { return };
    let all = decode_payloads(input, 16);
    assert!(all.len() <= 16);
    for d in &all {
        check(input, d);
    }
    for w in all.windows(2) {
        let key = |d: &Decoded| (d.span.start, std::cmp::Reverse(d.span.end));
        assert!(key(&w[0]) <= key(&w[1]), "not in order: {w:?}");
    }
    for (i, a) in all.iter().enumerate() {
        for b in all.iter().skip(i + 1).filter(|b| b.encoding == a.encoding) {
            assert!(a.span.end <= b.span.start || b.span.end <= a.span.start, "{a:?} overlaps {b:?}");
        }
    }
    for max in [0, 1, 2, 8] {
        let few = decode_payloads(input, max);
        assert_eq!(few.as_slice(), &all[..max.min(all.len())], "max {max}");
    }
});
