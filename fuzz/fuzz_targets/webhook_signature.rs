//! `X-Webhook-Signature` on arbitrary bodies and headers, with a fixed secret, against an
//! independent HMAC-SHA256 (the `hmac` crate; the verifier uses ring).
//!
//! Invariants:
//! - `sign(body)` is `sha256=` and 64 lower-case hex digits, and `verify` accepts it;
//! - `verify(body, header)` accepts exactly a header that, trimmed, is `sha256=` and the
//!   hex (either case) of the body's HMAC; every refusal is the same `Unauthorized`.
#![no_main]

use agentgov_domain::DomainError;
use agentgov_domain::secrets::WebhookVerifier;
use arbitrary::Arbitrary;
use hmac::{Hmac, Mac};
use libfuzzer_sys::fuzz_target;

const SECRET: &[u8] = b"whsec-fuzz-0123456789abcdef0123456789";

#[derive(Debug, Arbitrary)]
struct Input<'a> {
    body: &'a [u8],
    header: Option<&'a str>,
    /// Try the right digest in a disguise (case, spaces, a changed digit) instead of `header`.
    disguise: Option<(u8, u8)>,
}

fn expected(body: &[u8]) -> String {
    let Ok(mut mac) = Hmac::<sha2::Sha256>::new_from_slice(SECRET) else { unreachable!("any key length") };
    mac.update(body);
    hex::encode(mac.finalize().into_bytes())
}

fn accepts(header: Option<&str>, digest: &str) -> bool {
    header
        .and_then(|h| h.trim().strip_prefix("sha256="))
        .is_some_and(|d| d.len() == 64 && d.eq_ignore_ascii_case(digest))
}

fuzz_target!(|input: Input<'_>| {
    let verifier = WebhookVerifier::new(SECRET);
    let digest = expected(input.body);
    let signed = verifier.sign(input.body);
    assert_eq!(signed, format!("sha256={digest}"));
    assert!(verifier.verify(input.body, Some(&signed)).is_ok());

    let header = match input.disguise {
        None => input.header.map(str::to_owned),
        Some((how, at)) => {
            let mut d: Vec<u8> = digest.clone().into_bytes();
            let i = usize::from(at) % d.len();
            match how % 4 {
                0 => d.make_ascii_uppercase(),
                1 => d[i] = if d[i] == b'0' { b'1' } else { b'0' },
                2 => d.truncate(i),
                _ => d.insert(i, b' '),
            }
            let d = String::from_utf8(d).unwrap_or_default();
            Some(if how & 4 == 0 { format!("sha256={d}") } else { format!(" \tsha256={d}\n") })
        }
    };
    let got = verifier.verify(input.body, header.as_deref());
    assert_eq!(got.is_ok(), accepts(header.as_deref(), &digest), "{header:?}: {got:?}");
    if let Err(e) = got {
        assert!(matches!(&e, DomainError::Unauthorized(m) if m == "Invalid webhook signature"), "{e:?}");
    }
});
