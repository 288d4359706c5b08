//! Secrets: password hashing (Argon2id), API key generation and verification, the admin
//! key, JWT signing. Every secret comparison here is constant-time.

use argon2::password_hash::phc::PasswordHash;
use argon2::password_hash::{PasswordHasher as _, PasswordVerifier as _};
use argon2::{Algorithm, Argon2, Params, Version};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::rand::{SecureRandom, SystemRandom};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::error::{DomainError, Result};
use crate::ids::{HitlId, SessionId, TenantId, UserId};
use crate::model::Role;

/// Constant-time equality of two secrets of any length (both are hashed first, so not even
/// the length leaks).
pub fn secrets_equal(a: &[u8], b: &[u8]) -> bool {
    let (ha, hb) = (Sha256::digest(a), Sha256::digest(b));
    ha.ct_eq(&hb).into()
}

fn random_bytes<const N: usize>() -> Result<[u8; N]> {
    let mut buf = [0u8; N];
    SystemRandom::new().fill(&mut buf).map_err(|_| DomainError::internal("system random source failed"))?;
    Ok(buf)
}

/// Argon2id password hashing. Parameters default to OWASP's (19 MiB, 2 passes, 1 lane).
#[derive(Clone)]
pub struct PasswordHasher {
    argon: Argon2<'static>,
    /// A hash of a random password, verified against when the user does not exist so that a
    /// failed login takes as long whether or not the email is known.
    dummy_hash: String,
}

impl std::fmt::Debug for PasswordHasher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PasswordHasher").finish_non_exhaustive()
    }
}

pub const MIN_PASSWORD_LEN: usize = 12;
/// Longer inputs are refused before hashing, so a huge password cannot burn CPU.
pub const MAX_PASSWORD_LEN: usize = 1024;

impl PasswordHasher {
    /// `memory_kib`, `iterations`: Argon2id cost. Tests may lower them; production keeps the
    /// defaults (`PasswordHasher::default()`).
    pub fn new(memory_kib: u32, iterations: u32) -> Result<Self> {
        let params = Params::new(memory_kib, iterations, 1, None)
            .map_err(|e| DomainError::internal(format!("argon2 parameters: {e}")))?;
        let argon = Argon2::new(Algorithm::Argon2id, Version::V0x13, params);
        let mut hasher = Self { argon, dummy_hash: String::new() };
        let dummy = URL_SAFE_NO_PAD.encode(random_bytes::<16>()?);
        hasher.dummy_hash = hasher.hash(&dummy)?;
        Ok(hasher)
    }

    pub fn hash(&self, password: &str) -> Result<String> {
        let salt = random_bytes::<16>()?;
        self.argon
            .hash_password_with_salt(password.as_bytes(), &salt)
            .map(|h| h.to_string())
            .map_err(|e| DomainError::internal(format!("argon2: {e}")))
    }

    /// Whether `password` matches the stored PHC string. A missing hash (SSO-only user) or a
    /// malformed one never matches, and costs the same time as a real check.
    pub fn verify(&self, password: &str, stored: Option<&str>) -> bool {
        let target = stored.unwrap_or(&self.dummy_hash);
        let matched = match PasswordHash::new(target) {
            Ok(parsed) => self.argon.verify_password(password.as_bytes(), &parsed).is_ok(),
            Err(_) => false,
        };
        matched && stored.is_some()
    }
}

/// The visible start of every key.
pub const API_KEY_PREFIX: &str = "agk_";
const PREFIX_ID_LEN: usize = 8;
const SECRET_LEN: usize = 43; // 32 bytes, base64url without padding

/// A freshly generated API key: `full` is shown once and never stored.
#[derive(Debug, Clone)]
pub struct GeneratedKey {
    pub full: String,
    /// `agk_<8 chars>`: stored, shown in lists, used to find the key.
    pub prefix: String,
    /// SHA-256 of `full`; a 256-bit random secret needs no slow hash.
    pub hash: Vec<u8>,
}

pub fn generate_api_key() -> Result<GeneratedKey> {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let mut id = String::with_capacity(PREFIX_ID_LEN);
    while id.len() < PREFIX_ID_LEN {
        for b in random_bytes::<16>()? {
            // Rejection sampling keeps every character equally likely.
            if b < 252 && id.len() < PREFIX_ID_LEN {
                id.push(ALPHABET[usize::from(b % 36)] as char);
            }
        }
    }
    let secret = URL_SAFE_NO_PAD.encode(random_bytes::<32>()?);
    let prefix = format!("{API_KEY_PREFIX}{id}");
    let full = format!("{prefix}_{secret}");
    let hash = hash_api_key(&full);
    Ok(GeneratedKey { full, prefix, hash })
}

pub fn hash_api_key(full: &str) -> Vec<u8> {
    Sha256::digest(full.as_bytes()).to_vec()
}

/// The prefix of a well-formed key, or `None` for anything that cannot be one of ours.
pub fn api_key_prefix(full: &str) -> Option<&str> {
    let rest = full.strip_prefix(API_KEY_PREFIX)?;
    let (id, secret) = rest.split_at_checked(PREFIX_ID_LEN)?;
    let secret = secret.strip_prefix('_')?;
    let id_ok = id.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
    let secret_ok =
        secret.len() == SECRET_LEN && secret.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    (id_ok && secret_ok).then(|| &full[..API_KEY_PREFIX.len() + PREFIX_ID_LEN])
}

/// Whether `full` is the key whose hash is `stored_hash`, in constant time.
pub fn api_key_matches(full: &str, stored_hash: &[u8]) -> bool {
    hash_api_key(full).ct_eq(stored_hash).into()
}

/// A fresh value that binds an SSO sign-in to the browser that started it: 32 random bytes,
/// base64url without padding (43 characters). Kept in a cookie; only its hash is stored.
pub fn generate_browser_binding() -> Result<String> {
    Ok(URL_SAFE_NO_PAD.encode(random_bytes::<32>()?))
}

/// Whether `value` has the shape [`generate_browser_binding`] gives (anything else a browser
/// sends is ignored and replaced).
pub fn is_browser_binding(value: &str) -> bool {
    value.len() == SECRET_LEN && value.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// The console's CSRF token of a session: derived from the session's access token (which
/// the browser keeps in an `HttpOnly` cookie the page cannot read), so a page of another
/// origin can neither read nor compute it. base64url without padding (43 characters).
pub fn console_csrf_token(access_token: &str) -> String {
    let mut h = Sha256::new();
    h.update(b"agentgov console csrf\0");
    h.update(access_token.as_bytes());
    URL_SAFE_NO_PAD.encode(h.finalize())
}

/// SHA-256 of a browser binding, as stored with the sign-in's state.
pub fn hash_browser_binding(value: &str) -> Vec<u8> {
    Sha256::digest(value.as_bytes()).to_vec()
}

/// The platform operator's key (`X-Admin-Key`). With none configured, nothing matches.
#[derive(Clone, Default)]
pub struct AdminKey(Option<Vec<u8>>);

impl std::fmt::Debug for AdminKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() { "AdminKey(****)" } else { "AdminKey(unset)" })
    }
}

impl AdminKey {
    pub fn new(key: Option<&str>) -> Self {
        Self(key.filter(|k| !k.is_empty()).map(|k| k.as_bytes().to_vec()))
    }

    pub fn verify(&self, provided: Option<&str>) -> Result<()> {
        match (&self.0, provided) {
            (None, _) => Err(DomainError::Unauthorized("no admin key is configured on this server".into())),
            (Some(_), None) => Err(DomainError::Unauthorized("missing X-Admin-Key header".into())),
            (Some(expected), Some(given)) if secrets_equal(expected, given.as_bytes()) => Ok(()),
            (Some(_), Some(_)) => Err(DomainError::Unauthorized("invalid admin key".into())),
        }
    }
}

/// The `detail` of every webhook signature failure (spec 5, rule 5; API.md).
pub const INVALID_WEBHOOK_SIGNATURE: &str = "Invalid webhook signature";
/// Shortest accepted `WEBHOOK_SECRET`.
pub const MIN_WEBHOOK_SECRET_LEN: usize = 32;

/// Verifies `X-Webhook-Signature: sha256=<hex>`: HMAC-SHA256 of the exact body bytes with
/// `WEBHOOK_SECRET`, compared in constant time (`ring::hmac::verify`). The prefix must be
/// exactly `sha256=`; the 64 hex digits may be in either case (they name the same bytes).
#[derive(Clone)]
pub struct WebhookVerifier {
    key: ring::hmac::Key,
}

impl std::fmt::Debug for WebhookVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WebhookVerifier(****)")
    }
}

impl WebhookVerifier {
    pub fn new(secret: &[u8]) -> Self {
        Self { key: ring::hmac::Key::new(ring::hmac::HMAC_SHA256, secret) }
    }

    /// `Unauthorized("Invalid webhook signature")` for a missing, malformed or wrong header.
    pub fn verify(&self, body: &[u8], header: Option<&str>) -> Result<()> {
        let invalid = || DomainError::Unauthorized(INVALID_WEBHOOK_SIGNATURE.into());
        let digest = header.and_then(|h| h.trim().strip_prefix("sha256=")).ok_or_else(invalid)?;
        if digest.len() != 64 {
            return Err(invalid());
        }
        let tag = hex::decode(digest).map_err(|_| invalid())?;
        ring::hmac::verify(&self.key, body, &tag).map_err(|_| invalid())
    }

    /// The header value for `body` (for tests and for clients of this crate).
    pub fn sign(&self, body: &[u8]) -> String {
        format!("sha256={}", hex::encode(ring::hmac::sign(&self.key, body).as_ref()))
    }

    /// Whether `signature` is this secret's signature of `body` (constant time).
    pub fn matches(&self, signature: &SignatureHeader, body: &[u8]) -> bool {
        signature.matches_key(&self.key, body)
    }
}

/// How far a timestamped signature's `t` may be from the server's clock, either way.
pub const SIGNATURE_TOLERANCE_SECS: i64 = 300;
/// The `detail` of a timestamped signature outside [`SIGNATURE_TOLERANCE_SECS`].
pub const STALE_WEBHOOK_SIGNATURE: &str =
    "Stale webhook signature: its timestamp t is more than 300 seconds from the server's clock";
/// Most `v1=` entries one header may carry (a sender in the middle of a rotation sends two).
const MAX_SIGNATURES: usize = 4;
/// The prefix of a tenant's signing secret.
pub const TENANT_SECRET_PREFIX: &str = "whsec_";

/// A new tenant signing secret: `whsec_` and 32 random bytes in base64url (43 characters).
pub fn generate_tenant_secret() -> Result<String> {
    Ok(format!("{TENANT_SECRET_PREFIX}{}", URL_SAFE_NO_PAD.encode(random_bytes::<32>()?)))
}

/// A webhook signature as a sender wrote it, in one of two forms:
/// - `sha256=<hex>`: HMAC-SHA256 of the exact body bytes (the spec's form, no timestamp);
/// - `t=<unix seconds>,v1=<hex>[,v1=<hex>]`: HMAC-SHA256 of `<t>.` followed by the body
///   bytes, so the signature names the moment it was made and a stale one is refused.
///   Entries of other schemes (`v0=…`) are ignored; a `v1` under any of the keys matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SignatureHeader {
    Plain([u8; 32]),
    Timestamped { t: i64, v1: Vec<[u8; 32]> },
}

fn digest_of(hex_digits: &str) -> Option<[u8; 32]> {
    let mut out = [0u8; 32];
    (hex_digits.len() == 64 && hex::decode_to_slice(hex_digits, &mut out).is_ok()).then_some(out)
}

impl SignatureHeader {
    /// Parses the header; anything malformed is 401 `Invalid webhook signature`.
    pub fn parse(header: Option<&str>) -> Result<Self> {
        let invalid = || DomainError::Unauthorized(INVALID_WEBHOOK_SIGNATURE.into());
        let header = header.map(str::trim).ok_or_else(invalid)?;
        if let Some(digest) = header.strip_prefix("sha256=") {
            return digest_of(digest).map(Self::Plain).ok_or_else(invalid);
        }
        let (mut t, mut v1) = (None, Vec::new());
        for (i, part) in header.split(',').enumerate() {
            if i >= MAX_SIGNATURES + 2 {
                return Err(invalid());
            }
            let (scheme, value) = part.trim().split_once('=').ok_or_else(invalid)?;
            match scheme {
                "t" if t.is_none() && (1..=12).contains(&value.len()) && value.bytes().all(|b| b.is_ascii_digit()) => {
                    t = value.parse::<i64>().ok();
                }
                "t" => return Err(invalid()),
                "v1" if v1.len() < MAX_SIGNATURES => v1.push(digest_of(value).ok_or_else(invalid)?),
                "v1" => return Err(invalid()),
                _ => {}
            }
        }
        match t {
            Some(t) if !v1.is_empty() => Ok(Self::Timestamped { t, v1 }),
            _ => Err(invalid()),
        }
    }

    /// The signature's timestamp (Unix seconds); `None` for the `sha256=` form.
    pub fn timestamp(&self) -> Option<i64> {
        match self {
            Self::Plain(_) => None,
            Self::Timestamped { t, .. } => Some(*t),
        }
    }

    /// Whether `t` is within [`SIGNATURE_TOLERANCE_SECS`] of `now` (the `sha256=` form has
    /// no time and is always fresh).
    pub fn is_fresh(&self, now: time::OffsetDateTime) -> bool {
        self.timestamp().is_none_or(|t| (now.unix_timestamp() - t).abs() <= SIGNATURE_TOLERANCE_SECS)
    }

    /// Whether the signature is `secret`'s (its UTF-8 bytes are the key), in constant time.
    pub fn matches(&self, secret: &str, body: &[u8]) -> bool {
        self.matches_key(&ring::hmac::Key::new(ring::hmac::HMAC_SHA256, secret.as_bytes()), body)
    }

    fn matches_key(&self, key: &ring::hmac::Key, body: &[u8]) -> bool {
        match self {
            Self::Plain(tag) => ring::hmac::verify(key, body, tag).is_ok(),
            Self::Timestamped { t, v1 } => {
                let expected = timestamped_tag(key, *t, body);
                // Every entry is compared, so the time taken does not say which one matched.
                v1.iter().fold(false, |found, tag| found | bool::from(expected.as_ref().ct_eq(tag)))
            }
        }
    }

    /// A stable name for this signature, for telling a replayed delivery from a new one.
    pub fn fingerprint(&self) -> String {
        let first = match self {
            Self::Plain(tag) => tag,
            Self::Timestamped { v1, .. } => &v1[0],
        };
        format!("sig-{}", hex::encode(&first[..16]))
    }
}

/// HMAC-SHA256 of `<t>.` followed by `body`: what a `v1` signs.
fn timestamped_tag(key: &ring::hmac::Key, t: i64, body: &[u8]) -> ring::hmac::Tag {
    let mut ctx = ring::hmac::Context::with_key(key);
    ctx.update(format!("{t}.").as_bytes());
    ctx.update(body);
    ctx.sign()
}

/// `sha256=<hex>` of `body` under `secret` (the spec's form).
pub fn sign_plain(secret: &str, body: &[u8]) -> String {
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, secret.as_bytes());
    format!("sha256={}", hex::encode(ring::hmac::sign(&key, body).as_ref()))
}

/// `t=<t>,v1=<hex>[,v1=<hex>…]`: one `v1` per secret, in the order given.
pub fn sign_timestamped(secrets: &[&str], t: i64, body: &[u8]) -> String {
    let mut header = format!("t={t}");
    for secret in secrets {
        let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, secret.as_bytes());
        header.push_str(",v1=");
        header.push_str(&hex::encode(timestamped_tag(&key, t, body).as_ref()));
    }
    header
}

/// The claims of a session JWT.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Claims {
    pub sub: UserId,
    pub tid: TenantId,
    pub role: Role,
    pub jti: SessionId,
    pub iat: i64,
    pub exp: i64,
    pub iss: String,
}

pub const TOKEN_ISSUER: &str = "agentgov";

/// The claims of an approval token (HITL): single-use, short-lived, bound to the digest of
/// the exact action approved.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ApprovalClaims {
    /// The approval request.
    pub sub: HitlId,
    pub tid: TenantId,
    /// The action digest (`model::action_digest`) the approval is bound to.
    pub dig: String,
    pub jti: uuid::Uuid,
    pub iat: i64,
    pub exp: i64,
    pub iss: String,
    pub aud: String,
}

/// The `aud` of approval tokens: never accepted where a session JWT is, and signed with a
/// key of their own besides.
pub const APPROVAL_AUDIENCE: &str = "agentgov:approval";

/// Signs and verifies session JWTs (HS256), and approval tokens with a key derived from the
/// same secret (HMAC-SHA256 of a fixed label), so that neither verifies as the other.
#[derive(Clone)]
pub struct TokenCodec {
    encoding: jsonwebtoken::EncodingKey,
    decoding: jsonwebtoken::DecodingKey,
    validation: jsonwebtoken::Validation,
    approval_encoding: jsonwebtoken::EncodingKey,
    approval_decoding: jsonwebtoken::DecodingKey,
    approval_validation: jsonwebtoken::Validation,
    /// Session JWTs that verified, by the SHA-256 of their text: a token presented again is
    /// not decoded nor its HMAC computed again (its expiry is still checked). The digest
    /// covers the signature, so kept claims are only ever given for the very text that
    /// verified; a token that did not verify is never kept.
    verified: moka::sync::Cache<[u8; 32], Claims>,
}

/// Verified session JWTs a process keeps ([`TokenCodec::verify`]).
const VERIFIED_TOKENS: u64 = 16_384;
/// How long a verified token's claims are kept before it is verified again.
const VERIFIED_FOR: std::time::Duration = std::time::Duration::from_secs(600);

impl std::fmt::Debug for TokenCodec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TokenCodec(HS256, ****)")
    }
}

/// What the approval tokens' key is derived with from the JWT secret.
const APPROVAL_KEY_LABEL: &[u8] = b"agentgov approval tokens v1";

/// A signing secret shorter than this is refused at start-up.
pub const MIN_JWT_SECRET_LEN: usize = 32;

impl TokenCodec {
    pub fn hs256(secret: &[u8]) -> Result<Self> {
        if secret.len() < MIN_JWT_SECRET_LEN {
            return Err(DomainError::invalid("jwt_secret", format!("must be at least {MIN_JWT_SECRET_LEN} bytes")));
        }
        let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::HS256);
        validation.set_issuer(&[TOKEN_ISSUER]);
        validation.set_required_spec_claims(&["exp", "iat", "sub", "iss"]);
        // Expiry is checked against the `Clock` port in `verify`, not the system clock.
        validation.validate_exp = false;
        let derived = ring::hmac::sign(&ring::hmac::Key::new(ring::hmac::HMAC_SHA256, secret), APPROVAL_KEY_LABEL);
        let mut approval_validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::HS256);
        approval_validation.set_issuer(&[TOKEN_ISSUER]);
        approval_validation.set_audience(&[APPROVAL_AUDIENCE]);
        approval_validation.set_required_spec_claims(&["exp", "iat", "sub", "iss", "aud"]);
        approval_validation.validate_exp = false;
        Ok(Self {
            encoding: jsonwebtoken::EncodingKey::from_secret(secret),
            decoding: jsonwebtoken::DecodingKey::from_secret(secret),
            validation,
            approval_encoding: jsonwebtoken::EncodingKey::from_secret(derived.as_ref()),
            approval_decoding: jsonwebtoken::DecodingKey::from_secret(derived.as_ref()),
            approval_validation,
            verified: moka::sync::Cache::builder().max_capacity(VERIFIED_TOKENS).time_to_live(VERIFIED_FOR).build(),
        })
    }

    /// An approval token: the same claims always sign to the same text (HS256 is
    /// deterministic), so a request's token can be served again without being stored.
    pub fn sign_approval(&self, claims: &ApprovalClaims) -> Result<String> {
        jsonwebtoken::encode(
            &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
            claims,
            &self.approval_encoding,
        )
        .map_err(|e| DomainError::internal(format!("approval token signing: {e}")))
    }

    /// Verifies an approval token's signature (in constant time), issuer, audience and
    /// expiry (at `now`). Failures are `Unauthorized`: `invalid approval token` or
    /// `approval token expired`.
    pub fn verify_approval(&self, token: &str, now: time::OffsetDateTime) -> Result<ApprovalClaims> {
        let claims = jsonwebtoken::decode::<ApprovalClaims>(token, &self.approval_decoding, &self.approval_validation)
            .map(|data| data.claims)
            .map_err(|_| DomainError::Unauthorized("invalid approval token".into()))?;
        if claims.exp <= now.unix_timestamp() {
            return Err(DomainError::Unauthorized("approval token expired".into()));
        }
        Ok(claims)
    }

    pub fn sign(&self, claims: &Claims) -> Result<String> {
        jsonwebtoken::encode(&jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256), claims, &self.encoding)
            .map_err(|e| DomainError::internal(format!("jwt signing: {e}")))
    }

    /// Verifies signature, issuer and expiry (at `now`). Failures are `Unauthorized`.
    pub fn verify(&self, token: &str, now: time::OffsetDateTime) -> Result<Claims> {
        let key = token_key(token);
        if let Some(claims) = self.verified.get(&key) {
            return unexpired(claims, now);
        }
        let claims = jsonwebtoken::decode::<Claims>(token, &self.decoding, &self.validation)
            .map(|data| data.claims)
            .map_err(|_| DomainError::Unauthorized("invalid token".into()))?;
        let claims = unexpired(claims, now)?;
        self.verified.insert(key, claims.clone());
        Ok(claims)
    }
}

/// What [`TokenCodec::verify`] keeps a verified token by: the SHA-256 of its text.
fn token_key(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

fn unexpired(claims: Claims, now: time::OffsetDateTime) -> Result<Claims> {
    if claims.exp <= now.unix_timestamp() {
        return Err(DomainError::Unauthorized("token expired".into()));
    }
    Ok(claims)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_keys_have_the_documented_shape_and_verify() {
        let k = generate_api_key().unwrap();
        assert!(k.full.starts_with("agk_"));
        assert_eq!(k.prefix.len(), 12);
        assert_eq!(api_key_prefix(&k.full), Some(k.prefix.as_str()));
        assert!(api_key_matches(&k.full, &k.hash));
        let mut other = k.full.clone();
        other.pop();
        other.push(if k.full.ends_with('A') { 'B' } else { 'A' });
        assert!(!api_key_matches(&other, &k.hash));
    }

    #[test]
    fn malformed_keys_have_no_prefix() {
        for bad in
            ["", "agk_", "agk_ABCDEFGH_x", "xyz_abcdefgh_0000000000000000000000000000000000000000000", "agk_abcdefgh"]
        {
            assert_eq!(api_key_prefix(bad), None, "{bad}");
        }
    }

    #[test]
    fn passwords_hash_with_argon2id_and_verify() {
        let h = PasswordHasher::new(256, 1).unwrap();
        let phc = h.hash("correct horse battery").unwrap();
        assert!(phc.starts_with("$argon2id$"));
        assert!(h.verify("correct horse battery", Some(&phc)));
        assert!(!h.verify("wrong", Some(&phc)));
        assert!(!h.verify("anything", None));
        assert!(!h.verify("anything", Some("not a phc string")));
    }

    #[test]
    fn admin_key_is_refused_when_unset_missing_or_wrong() {
        assert!(AdminKey::new(None).verify(Some("x")).is_err());
        let k = AdminKey::new(Some("s3cret-admin-key"));
        assert!(k.verify(None).is_err());
        assert!(k.verify(Some("s3cret-admin-kez")).is_err());
        assert!(k.verify(Some("s3cret-admin-key")).is_ok());
        assert!(!format!("{k:?}").contains("s3cret"));
    }

    /// A session's claims issued at `now`, valid for a minute.
    fn session_claims(now: i64, role: Role) -> Claims {
        Claims {
            sub: UserId(uuid::Uuid::now_v7()),
            tid: TenantId(uuid::Uuid::now_v7()),
            role,
            jti: SessionId(uuid::Uuid::now_v7()),
            iat: now,
            exp: now + 60,
            iss: TOKEN_ISSUER.into(),
        }
    }

    #[test]
    fn tokens_round_trip_and_tampering_is_rejected() {
        let codec = TokenCodec::hs256(&[7u8; 32]).unwrap();
        let at = time::OffsetDateTime::now_utc();
        let now = at.unix_timestamp();
        let claims = session_claims(now, Role::Admin);
        let token = codec.sign(&claims).unwrap();
        assert_eq!(codec.verify(&token, at).unwrap(), claims);
        let other = TokenCodec::hs256(&[8u8; 32]).unwrap();
        assert!(other.verify(&token, at).is_err());
        let expired = Claims { exp: now - 60, iat: now - 120, ..claims };
        assert!(
            matches!(codec.verify(&codec.sign(&expired).unwrap(), at), Err(DomainError::Unauthorized(m)) if m == "token expired")
        );
        assert!(TokenCodec::hs256(b"short").is_err());
    }

    /// A token that verified is kept by its digest: presented again it is not decoded, it
    /// still expires at its `exp`, and a token differing in a byte is verified afresh.
    #[test]
    fn a_verified_token_is_kept_by_its_digest_and_still_expires() {
        let codec = TokenCodec::hs256(&[7u8; 32]).unwrap();
        let at = time::OffsetDateTime::now_utc();
        let now = at.unix_timestamp();
        let claims = session_claims(now, Role::Viewer);
        let token = codec.sign(&claims).unwrap();
        let key = token_key(&token);
        let mut tampered = token.clone();
        let last = tampered.pop().unwrap();
        tampered.push(if last == 'A' { 'E' } else { 'A' });
        assert!(codec.verify(&tampered, at).is_err(), "refused, and not kept");
        assert_eq!(codec.verified.iter().count(), 0);
        assert_eq!(codec.verify(&token, at).unwrap(), claims);
        assert!(codec.verified.contains_key(&key), "kept after it verified");
        let clone = codec.clone();
        assert_eq!(clone.verify(&token, at).unwrap(), claims, "a clone shares what was kept");
        assert!(clone.verify(&tampered, at).is_err(), "the tampered token is still refused");
        let later = at + time::Duration::seconds(60);
        assert!(matches!(codec.verify(&token, later), Err(DomainError::Unauthorized(m)) if m == "token expired"));
        let expired = Claims { exp: now - 1, ..claims };
        let expired = codec.sign(&expired).unwrap();
        assert!(codec.verify(&expired, at).is_err());
        assert!(!codec.verified.contains_key(&token_key(&expired)), "an expired token is not kept");
    }

    #[test]
    fn approval_tokens_verify_only_as_approval_tokens() {
        let codec = TokenCodec::hs256(&[7u8; 32]).unwrap();
        let at = time::OffsetDateTime::now_utc();
        let now = at.unix_timestamp();
        let claims = ApprovalClaims {
            sub: HitlId(uuid::Uuid::now_v7()),
            tid: TenantId(uuid::Uuid::now_v7()),
            dig: "ab".repeat(32),
            jti: uuid::Uuid::now_v7(),
            iat: now,
            exp: now + 300,
            iss: TOKEN_ISSUER.into(),
            aud: APPROVAL_AUDIENCE.into(),
        };
        let token = codec.sign_approval(&claims).unwrap();
        assert_eq!(codec.sign_approval(&claims).unwrap(), token, "deterministic, so it can be served again");
        assert_eq!(codec.verify_approval(&token, at).unwrap(), claims);
        // Not a session token, and a session token is not an approval token.
        assert!(codec.verify(&token, at).is_err());
        let session = Claims {
            sub: UserId(uuid::Uuid::now_v7()),
            tid: claims.tid,
            role: Role::Admin,
            jti: SessionId(uuid::Uuid::now_v7()),
            iat: now,
            exp: now + 60,
            iss: TOKEN_ISSUER.into(),
        };
        assert!(codec.verify_approval(&codec.sign(&session).unwrap(), at).is_err());
        // Another secret's, another audience's, an altered one, an expired one.
        assert!(TokenCodec::hs256(&[8u8; 32]).unwrap().verify_approval(&token, at).is_err());
        let other_aud = ApprovalClaims { aud: "elsewhere".into(), ..claims.clone() };
        assert!(codec.verify_approval(&codec.sign_approval(&other_aud).unwrap(), at).is_err());
        let mut altered = token.clone();
        altered.insert(token.find('.').unwrap() + 2, 'x');
        assert!(codec.verify_approval(&altered, at).is_err());
        let expired = ApprovalClaims { exp: now, ..claims };
        assert!(
            matches!(codec.verify_approval(&codec.sign_approval(&expired).unwrap(), at), Err(DomainError::Unauthorized(m)) if m == "approval token expired")
        );
    }

    mod webhook {
        use hmac::{Hmac, Mac};

        use super::super::{
            INVALID_WEBHOOK_SIGNATURE, SIGNATURE_TOLERANCE_SECS, SignatureHeader, TENANT_SECRET_PREFIX,
            WebhookVerifier, generate_tenant_secret, sign_timestamped,
        };
        use crate::DomainError;

        const SECRET: &[u8] = b"whsec-0123456789abcdef0123456789abcdef";
        const BODY: &[u8] =
            br#"{"event":"agent.action","payload":{"agent_id":"0193a4c2-0000-7000-8000-000000000001"}}"#;

        /// The signature as a sender computes it, with the `hmac` crate rather than ring.
        fn independent(body: &[u8]) -> String {
            let mut mac = Hmac::<sha2::Sha256>::new_from_slice(SECRET).unwrap();
            mac.update(body);
            format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
        }

        fn refused(v: &WebhookVerifier, body: &[u8], header: Option<&str>) -> bool {
            matches!(v.verify(body, header), Err(DomainError::Unauthorized(m)) if m == INVALID_WEBHOOK_SIGNATURE)
        }

        #[test]
        fn an_independently_computed_signature_is_accepted() {
            let v = WebhookVerifier::new(SECRET);
            let header = independent(BODY);
            assert_eq!(v.sign(BODY), header);
            v.verify(BODY, Some(&header)).unwrap();
            // The digest names bytes: upper-case hex is the same signature.
            let upper = format!("sha256={}", header["sha256=".len()..].to_uppercase());
            v.verify(BODY, Some(&upper)).unwrap();
        }

        #[test]
        fn every_malformed_or_wrong_signature_is_the_same_401() {
            let v = WebhookVerifier::new(SECRET);
            let header = independent(BODY);
            let mut flipped = BODY.to_vec();
            flipped[10] ^= 0x01;
            assert!(refused(&v, &flipped, Some(&header)), "one flipped body byte");
            assert!(refused(&v, BODY, None), "missing header");
            assert!(refused(&v, BODY, Some(&header.replace("sha256=", "sha1="))), "wrong prefix");
            assert!(refused(&v, BODY, Some(&header.replace("sha256=", "SHA256="))), "prefix is case-sensitive");
            assert!(refused(&v, BODY, Some(&header["sha256=".len()..])), "no prefix");
            assert!(refused(&v, BODY, Some(&header[..header.len() - 2])), "truncated digest");
            assert!(refused(&v, BODY, Some(&format!("{header}00"))), "digest too long");
            let not_hex = format!("{}z", &header[..header.len() - 1]);
            assert!(refused(&v, BODY, Some(&not_hex)), "not hex");
            let other = WebhookVerifier::new(b"another secret, another environment");
            assert!(refused(&other, BODY, Some(&header)), "another secret");
        }

        /// `t=…,v1=…` as a sender computes it, with the `hmac` crate.
        fn stamped(secret: &[u8], t: i64, body: &[u8]) -> String {
            let mut mac = Hmac::<sha2::Sha256>::new_from_slice(secret).unwrap();
            mac.update(format!("{t}.").as_bytes());
            mac.update(body);
            format!("t={t},v1={}", hex::encode(mac.finalize().into_bytes()))
        }

        #[test]
        fn timestamped_signatures_match_an_independent_computation_and_name_their_time() {
            let secret = std::str::from_utf8(SECRET).unwrap();
            let t = 1_790_000_000;
            let header = stamped(SECRET, t, BODY);
            assert_eq!(sign_timestamped(&[secret], t, BODY), header);
            let parsed = SignatureHeader::parse(Some(&header)).unwrap();
            assert_eq!(parsed.timestamp(), Some(t));
            assert!(parsed.matches(secret, BODY));
            assert!(WebhookVerifier::new(SECRET).matches(&parsed, BODY));
            assert!(!parsed.matches("another secret", BODY));
            let mut flipped = BODY.to_vec();
            flipped[3] ^= 1;
            assert!(!parsed.matches(secret, &flipped));
            // The time is part of what is signed.
            let moved = SignatureHeader::parse(Some(&header.replacen("t=1790000000", "t=1790000001", 1))).unwrap();
            assert!(!moved.matches(secret, BODY));
            // Freshness: 300 s either way.
            let at = |s: i64| time::OffsetDateTime::from_unix_timestamp(s).unwrap();
            assert!(
                parsed.is_fresh(at(t + SIGNATURE_TOLERANCE_SECS)) && parsed.is_fresh(at(t - SIGNATURE_TOLERANCE_SECS))
            );
            assert!(!parsed.is_fresh(at(t + SIGNATURE_TOLERANCE_SECS + 1)));
            assert!(!parsed.is_fresh(at(t - SIGNATURE_TOLERANCE_SECS - 1)));
            // The spec's form has no time and is never stale.
            assert!(SignatureHeader::parse(Some(&independent(BODY))).unwrap().is_fresh(at(0)));
            // Two keys (a rotation): either matches; the fingerprint names the first.
            let both = sign_timestamped(&["new key", secret], t, BODY);
            let parsed = SignatureHeader::parse(Some(&both)).unwrap();
            assert!(parsed.matches("new key", BODY) && parsed.matches(secret, BODY));
            assert_eq!(parsed.fingerprint(), SignatureHeader::parse(Some(&both)).unwrap().fingerprint());
            assert!(parsed.fingerprint().starts_with("sig-") && parsed.fingerprint().len() == 36);
        }

        #[test]
        fn malformed_timestamped_headers_are_the_same_401() {
            let good = stamped(SECRET, 1_790_000_000, BODY);
            let digest = good.split_once(",v1=").unwrap().1;
            let bad = [
                format!("v1={digest}"),
                "t=1790000000".to_owned(),
                format!("t=1790000000,t=1790000000,v1={digest}"),
                format!("t=-1,v1={digest}"),
                format!("t=,v1={digest}"),
                format!("t=1234567890123,v1={digest}"),
                format!("t=1790000000,v1={}", &digest[1..]),
                format!("t=1790000000,v1={digest}0"),
                format!("t=1790000000,v1={digest},v1={digest},v1={digest},v1={digest},v1={digest}"),
                format!("t=1790000000;v1={digest}"),
                "t=1790000000,v1".to_owned(),
                String::new(),
            ];
            for header in bad {
                let got = SignatureHeader::parse(Some(&header));
                assert!(
                    matches!(&got, Err(DomainError::Unauthorized(m)) if m == INVALID_WEBHOOK_SIGNATURE),
                    "{header}: {got:?}"
                );
            }
            // Spaces around entries and unknown schemes are allowed.
            let spaced = format!(" t=1790000000 , v0=zz, v1={digest} ");
            assert!(SignatureHeader::parse(Some(&spaced)).unwrap().matches(std::str::from_utf8(SECRET).unwrap(), BODY));
        }

        #[test]
        fn tenant_secrets_are_whsec_and_43_random_characters() {
            let (a, b) = (generate_tenant_secret().unwrap(), generate_tenant_secret().unwrap());
            assert_ne!(a, b);
            assert!(a.starts_with(TENANT_SECRET_PREFIX) && a.len() == TENANT_SECRET_PREFIX.len() + 43, "{a}");
        }
    }
}
