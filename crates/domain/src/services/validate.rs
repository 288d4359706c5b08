//! Field validation shared by the services.

use time::OffsetDateTime;

use crate::error::Violations;
use crate::model::JsonObject;
use crate::secrets::{MAX_PASSWORD_LEN, MIN_PASSWORD_LEN};

pub const MAX_NAME_LEN: usize = 200;
const MAX_EMAIL_LEN: usize = 254;

/// Trimmed and lower-cased: emails are unique regardless of case.
pub fn normalize_email(email: &str) -> String {
    email.trim().to_lowercase()
}

/// A pragmatic email check: one `@`, a non-empty local part, a dotted domain, no spaces.
pub fn check_email(v: &mut Violations, field: &str, email: &str) {
    let valid = email.len() <= MAX_EMAIL_LEN
        && !email.chars().any(|c| c.is_whitespace() || c.is_control())
        && match email.split_once('@') {
            Some((local, domain)) => {
                !local.is_empty()
                    && !domain.contains('@')
                    && domain.contains('.')
                    && !domain.starts_with('.')
                    && !domain.ends_with('.')
            }
            None => false,
        };
    v.check(valid, field, "must be a valid email address");
}

pub fn check_password(v: &mut Violations, field: &str, password: &str) {
    let len = password.chars().count();
    if len < MIN_PASSWORD_LEN {
        v.add(field, format!("must be at least {MIN_PASSWORD_LEN} characters"));
    } else if len > MAX_PASSWORD_LEN {
        v.add(field, format!("must be at most {MAX_PASSWORD_LEN} characters"));
    }
}

/// A display name: 1..=200 characters, not all blank, no control characters.
pub fn check_name(v: &mut Violations, field: &str, name: &str) {
    check_text(v, field, name, MAX_NAME_LEN);
}

/// The OpenAPI `pattern` of a text [`check_text`] accepts (with its `maxLength`): no control
/// character, and something besides white space.
pub const TEXT_PATTERN: &str =
    r"^[^\u0000-\u001f\u007f-\u009f]*[^\s\u0000-\u001f\u007f-\u009f][^\u0000-\u001f\u007f-\u009f]*$";

/// The OpenAPI `pattern` of a text with no white space at either end and no control
/// character (a capability, say).
pub const TRIMMED_PATTERN: &str =
    r"^[^\s\u0000-\u001f\u007f-\u009f]([^\u0000-\u001f\u007f-\u009f]*[^\s\u0000-\u001f\u007f-\u009f])?$";

/// The OpenAPI `pattern` of a description [`check_description`] accepts.
pub const DESCRIPTION_PATTERN: &str = r"^[^\u0000-\u0008\u000b-\u001f\u007f-\u009f]*$";

/// The OpenAPI `pattern` of an audit event type (with `maxLength` 100): dotted lower-case
/// words.
pub const EVENT_TYPE_PATTERN: &str = r"^[a-z0-9_]+(\.[a-z0-9_]+)*$";

/// The OpenAPI `pattern` of a text that must hold something besides white space (an SSO
/// `code`, say; JSON Schema patterns are not anchored).
pub const NONBLANK_PATTERN: &str = r"\S";

/// The OpenAPI `pattern` of a description that must not be blank (a HITL `reason`).
pub const NONBLANK_DESCRIPTION_PATTERN: &str = r"^[^\u0000-\u0008\u000b-\u001f\u007f-\u009f]*[^\s\u0000-\u001f\u007f-\u009f][^\u0000-\u0008\u000b-\u001f\u007f-\u009f]*$";

/// The OpenAPI `pattern` of an email address [`check_email`] accepts (with `maxLength` 254).
pub const EMAIL_PATTERN: &str = r"^[^@\s\u0000-\u001f\u007f-\u009f]+@[^@\s.\u0000-\u001f\u007f-\u009f][^@\s\u0000-\u001f\u007f-\u009f]*\.[^@\s\u0000-\u001f\u007f-\u009f]*[^@\s.\u0000-\u001f\u007f-\u009f]$";

/// A short text as sent (it is stored trimmed): 1..=`max` characters, not all blank, no
/// control characters.
pub fn check_text(v: &mut Violations, field: &str, text: &str, max: usize) {
    if text.trim().is_empty() {
        v.add(field, "must not be empty");
    } else if text.chars().count() > max {
        v.add(field, format!("must be at most {max} characters"));
    } else if text.chars().any(char::is_control) {
        v.add(field, "must not contain control characters");
    }
}

/// A longer text that must not be blank, as sent: [`check_description`], and not only white
/// space.
pub fn check_nonblank_description(v: &mut Violations, field: &str, text: &str, max: usize) {
    if text.trim().is_empty() {
        v.add(field, "must not be empty");
    } else {
        check_description(v, field, text, max);
    }
}

/// A longer text: at most `max` characters, no control characters but newlines and tabs.
pub fn check_description(v: &mut Violations, field: &str, text: &str, max: usize) {
    if text.chars().count() > max {
        v.add(field, format!("must be at most {max} characters"));
    } else if text.chars().any(|c| c.is_control() && c != '\n' && c != '\t') {
        v.add(field, "must not contain control characters other than newlines and tabs");
    }
}

/// Parses an RFC 3339 bound, rounded up to whole microseconds (the precision stored): for
/// integer-microsecond timestamps `ts >= b` and `ts < b` mean the same with `b` rounded up.
pub(crate) fn parse_time(v: &mut Violations, field: &str, text: Option<&str>) -> Option<OffsetDateTime> {
    let text = text?;
    match OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339) {
        Ok(t) if t.nanosecond() % 1_000 != 0 => {
            Some(crate::ports::clock::truncate_to_micros(t) + std::time::Duration::from_micros(1))
        }
        Ok(t) => Some(t),
        Err(_) => {
            v.add(field, "must be an RFC 3339 timestamp, e.g. 2026-01-31T12:00:00Z");
            None
        }
    }
}

/// A JSON object of at most `max_bytes` once serialised.
pub fn check_object(v: &mut Violations, field: &str, object: &JsonObject, max_bytes: usize) {
    let size = serde_json::to_vec(object).map(|b| b.len()).unwrap_or(usize::MAX);
    if size > max_bytes {
        v.add(field, format!("must be at most {max_bytes} bytes of JSON"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn email_ok(e: &str) -> bool {
        let mut v = Violations::new();
        check_email(&mut v, "email", e);
        v.into_result().is_ok()
    }

    #[test]
    fn the_email_pattern_says_what_the_check_accepts() {
        let pattern = regex::Regex::new(EMAIL_PATTERN).unwrap();
        for e in [
            "a@b.co",
            "a",
            "a@b",
            "@b.co",
            "a@@b.co",
            "a b@c.co",
            "a@.co",
            "a@co.",
            " a@b.co",
            "a@b.co\n",
            "a.b+c@d.e.f",
            "ü@ñ.de",
            "a@b..c",
            "a@b.c",
            "a@bc",
            "x@\u{a0}b.c",
            "q@a.b\u{85}",
            "\"q\"@a.b",
        ] {
            assert_eq!(pattern.is_match(e), email_ok(e), "{e:?}");
        }
    }

    #[test]
    fn emails() {
        assert!(email_ok("a@b.co"));
        for bad in ["", "a", "a@b", "@b.co", "a@@b.co", "a b@c.co", "a@.co", "a@co."] {
            assert!(!email_ok(bad), "{bad}");
        }
        assert_eq!(normalize_email("  Alice@Example.COM "), "alice@example.com");
    }

    /// The patterns the OpenAPI document states accept exactly what the checks accept.
    #[test]
    fn patterns_say_what_the_checks_accept() {
        let samples = [
            "fine",
            " padded ",
            "  ",
            "",
            "\n",
            "a\nb",
            "tab\there",
            "x\u{85}",
            "\u{a0}",
            "\u{a0}x",
            "ünï cödé",
            "a\u{7f}",
            "\u{9f}b",
            "line\nbreak",
            "trail\t",
            " ",
            "\u{3000}漢字\u{3000}",
            "x\u{0}",
        ];
        let text = regex::Regex::new(TEXT_PATTERN).unwrap();
        let trimmed = regex::Regex::new(TRIMMED_PATTERN).unwrap();
        let description = regex::Regex::new(DESCRIPTION_PATTERN).unwrap();
        let nonblank = regex::Regex::new(NONBLANK_PATTERN).unwrap();
        let nonblank_description = regex::Regex::new(NONBLANK_DESCRIPTION_PATTERN).unwrap();
        for s in samples {
            assert_eq!(nonblank.is_match(s), !s.trim().is_empty(), "nonblank {s:?}");
            let mut v = Violations::new();
            check_nonblank_description(&mut v, "f", s, 100);
            assert_eq!(nonblank_description.is_match(s), v.into_result().is_ok(), "nonblank description {s:?}");
            let mut v = Violations::new();
            check_text(&mut v, "f", s, 100);
            assert_eq!(text.is_match(s), v.into_result().is_ok(), "text {s:?}");
            let mut v = Violations::new();
            check_text(&mut v, "f", s, 100);
            v.check(s.trim() == s, "f", "trimmed");
            assert_eq!(trimmed.is_match(s), v.into_result().is_ok(), "trimmed {s:?}");
            let mut v = Violations::new();
            check_description(&mut v, "f", s, 100);
            assert_eq!(description.is_match(s), v.into_result().is_ok(), "description {s:?}");
        }
    }

    #[test]
    fn passwords_and_names() {
        let mut v = Violations::new();
        check_password(&mut v, "p", "short");
        check_password(&mut v, "q", "long enough password");
        check_name(&mut v, "n", "   ");
        check_name(&mut v, "m", "fine");
        let Err(crate::DomainError::Validation(errs)) = v.into_result() else { panic!() };
        let fields: Vec<_> = errs.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["p", "n"]);
    }
}
