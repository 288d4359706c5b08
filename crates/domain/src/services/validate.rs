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
    } else if password.len() > MAX_PASSWORD_LEN {
        v.add(field, format!("must be at most {MAX_PASSWORD_LEN} bytes"));
    }
}

/// A display name: trimmed, 1..=200 characters, no control characters.
pub fn check_name(v: &mut Violations, field: &str, name: &str) {
    check_text(v, field, name.trim(), MAX_NAME_LEN);
}

/// A short text: 1..=`max` characters, no control characters.
pub fn check_text(v: &mut Violations, field: &str, text: &str, max: usize) {
    if text.is_empty() {
        v.add(field, "must not be empty");
    } else if text.chars().count() > max {
        v.add(field, format!("must be at most {max} characters"));
    } else if text.chars().any(char::is_control) {
        v.add(field, "must not contain control characters");
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
    fn emails() {
        assert!(email_ok("a@b.co"));
        for bad in ["", "a", "a@b", "@b.co", "a@@b.co", "a b@c.co", "a@.co", "a@co."] {
            assert!(!email_ok(bad), "{bad}");
        }
        assert_eq!(normalize_email("  Alice@Example.COM "), "alice@example.com");
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
