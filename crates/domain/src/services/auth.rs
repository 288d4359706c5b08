//! Login, logout and authentication of JWTs and API keys.

use std::time::Duration;

use time::OffsetDateTime;

use serde_json::json;

use super::auth_cache::AuthCache;
use super::validate::normalize_email;
use super::{AuditEvent, AuditLog, Caller, Credential, Ports};
use crate::error::{DomainError, Result};
use crate::events::CREDENTIALS_CHANGED;
use crate::ids::{ApiKeyId, SessionId, TenantId, UserId};
use crate::model::{
    Actor, ActorType, ApiKey, ApiKeyKind, Permission, Role, SecretPurpose, Session, TenantSecret, User, UserStatus,
};
use crate::secrets::{self, Claims, TOKEN_ISSUER, TokenCodec};

/// Tunables of authentication. Login attempts are limited on three keys (docs/API.md,
/// "Credentials"): an email from one client address (the only key that holds an attempt back
/// for long, and only that address), a client address across emails, and an email from every
/// address (a short ceiling that slows, never locks).
#[derive(Debug, Clone)]
pub struct AuthSettings {
    /// Lifetime of a session JWT and its API key.
    pub token_ttl: Duration,
    /// Failed logins of one email from one client address before that pair is held back.
    /// The first hold ends a minute after the pair's first failure; each later one lasts
    /// twice the one before, up to `login_window`.
    pub login_max_failures_per_email_ip: u64,
    /// Failed logins from one client address (any email) within `login_window` before 429.
    pub login_max_failures_per_ip: u64,
    /// Failed logins of one email from every address within a minute before 429; addresses
    /// the email signed in from lately are exempt.
    pub login_max_failures_per_email_per_minute: u64,
    /// The per-address window and the longest hold of an email+address pair.
    pub login_window: Duration,
    /// Attempts at `change_password` per user within `login_window` before 429.
    pub password_change_max_attempts: u64,
    /// `last_used_at` of an API key is written at most this often.
    pub key_touch_interval: Duration,
}

impl Default for AuthSettings {
    fn default() -> Self {
        Self {
            token_ttl: Duration::from_secs(3600),
            login_max_failures_per_email_ip: 5,
            login_max_failures_per_ip: 50,
            login_max_failures_per_email_per_minute: 10,
            login_window: Duration::from_secs(900),
            password_change_max_attempts: 5,
            key_touch_interval: Duration::from_secs(60),
        }
    }
}

/// The user part of a login response.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct LoginUser {
    pub id: UserId,
    pub email: String,
    pub role: Role,
}

/// What a successful login hands out (spec 2.2).
#[derive(Debug, Clone, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct LoginResult {
    pub access_token: String,
    /// Always `Bearer`.
    pub token_type: &'static str,
    /// Seconds until `access_token` (and `api_key`) expire.
    pub expires_in: u64,
    /// An API key bound to this session: same lifetime, the user's role's permissions,
    /// revoked by logout. Shown only here.
    pub api_key: String,
    pub user: LoginUser,
}

const INVALID_LOGIN: &str = "invalid email or password";

/// The first hold of an email+address pair ends this long after the pair's first failure.
const FIRST_HOLD: Duration = Duration::from_secs(60);
/// How long a pair's holds are remembered (each makes the next twice as long).
const HOLDS_REMEMBERED: Duration = Duration::from_secs(24 * 3600);
/// The window of the per-email ceiling: short, so strangers can slow an email's sign-ins
/// but never hold them back for long.
const EMAIL_CEILING_WINDOW: Duration = Duration::from_secs(60);
/// How long an address an email signed in from is exempt from the per-email ceiling.
const KNOWN_ADDRESS_REMEMBERED: Duration = Duration::from_secs(30 * 24 * 3600);

/// The cache keys of one login attempt.
struct LoginKeys {
    /// Attempts of the email from this address.
    pair: String,
    /// Holds of that pair (each doubles the next).
    holds: String,
    /// Attempts from this address, any email; `None` when the address is unknown.
    address: Option<String>,
    /// Attempts of the email from every address.
    email: String,
    /// Set while this address is one the email signed in from lately.
    known: Option<String>,
}

impl LoginKeys {
    fn new(email: &str, client_ip: Option<&str>) -> Self {
        let address = client_ip.map(address_key);
        let at = address.as_deref().unwrap_or("-");
        Self {
            pair: format!("login:pair:{email}|{at}"),
            holds: format!("login:holds:{email}|{at}"),
            known: address.as_ref().map(|a| format!("login:known:{email}|{a}")),
            address: address.map(|a| format!("login:address:{a}")),
            email: format!("login:email:{email}"),
        }
    }
}

/// Which reservations a login made beyond the pair's and the address's.
#[derive(Debug, Clone, Copy)]
struct LoginReservation {
    email_ceiling: bool,
}

/// The address a limit is keyed by: an IPv4 address as is (also when written as
/// IPv4-mapped IPv6), an IPv6 address by its /64, the block one subscriber usually holds,
/// so that rotating through it does not buy fresh limits.
fn address_key(ip: &str) -> String {
    match ip.parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V6(v6)) => match v6.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => {
                let s = v6.segments();
                format!("{:x}:{:x}:{:x}:{:x}::/64", s[0], s[1], s[2], s[3])
            }
        },
        Ok(std::net::IpAddr::V4(v4)) => v4.to_string(),
        Err(_) => ip.to_owned(),
    }
}

/// 429 until `counter`'s window ends.
fn rate_limited(counter: crate::ports::Counter) -> DomainError {
    DomainError::RateLimited { retry_after: counter.ttl.max(Duration::from_secs(1)) }
}

super::ports::repos!(Repos { users: UserRepo, sessions: SessionRepo, api_keys: ApiKeyRepo, tenants: TenantRepo });
#[derive(Clone)]
pub struct AuthService {
    repos: Repos,
    ports: Ports,
    audit: AuditLog,
    cache: AuthCache,
    passwords: super::passwords::Passwords,
    tokens: TokenCodec,
    settings: AuthSettings,
}

impl AuthService {
    pub fn new(
        ports: Ports,
        repos: Repos,
        audit: AuditLog,
        passwords: super::passwords::Passwords,
        tokens: TokenCodec,
        settings: AuthSettings,
    ) -> Self {
        let cache = AuthCache::new(ports.cache.clone());
        Self { ports, repos, audit, cache, passwords, tokens, settings }
    }

    /// Signs in with email and password. `client_ip` keys the per-address limits.
    ///
    /// An attempt is reserved on every limit (atomic increments of the Cache's windowed
    /// counters) before the password is looked at, so concurrent attempts cannot all pass a
    /// limit they would together exceed; only then is the password verified. A success gives
    /// the reservations back. A blocked user's right password is refused exactly like a
    /// wrong one.
    pub async fn login(&self, email: &str, password: &str, client_ip: Option<&str>) -> Result<LoginResult> {
        let email = normalize_email(email);
        let keys = LoginKeys::new(&email, client_ip);
        let reserved = self.reserve_login(&keys).await?;

        let (found, verified) = if password.chars().count() > secrets::MAX_PASSWORD_LEN {
            (None, false)
        } else {
            let user = self.repos.users.find_user_by_email(&email).await?;
            let hash = user.as_ref().and_then(|u| u.password_hash.as_deref());
            // Verify even for an unknown email, so timing does not reveal which emails exist.
            let verified = self.passwords.verify(user.as_ref().map(|u| u.tenant_id), password, hash).await?;
            (user, verified)
        };
        let user = match found {
            Some(user) if verified && user.status == UserStatus::Active => user,
            found => {
                // The reservations stay: they count this failure.
                if let Some(user) = found {
                    let reason = if verified { "blocked" } else { "wrong_password" };
                    self.audit_login_failure(&user, reason, client_ip).await;
                }
                return Err(DomainError::Unauthorized(INVALID_LOGIN.into()));
            }
        };
        self.release_login(&keys, reserved).await;
        self.open_session(&user, json!({"method": "password", "client_ip": client_ip})).await
    }

    /// Reserves one attempt on each login limit, in order: the email from this address (held
    /// back progressively), the address across emails, the email from every address (unless
    /// this address signed in as the email lately). A refusal gives back the reservations
    /// already made, so only the limit that refused counts it.
    async fn reserve_login(&self, keys: &LoginKeys) -> Result<LoginReservation> {
        let cache = &self.ports.cache;
        let s = &self.settings;
        // Each hold of this pair remembered makes its next window twice as long.
        let holds = cache.get_counter(&keys.holds).await?.map_or(0, |c| c.count);
        let pair = cache.incr(&keys.pair, self.hold_window(holds)).await?;
        if pair.count > s.login_max_failures_per_email_ip {
            if pair.count == s.login_max_failures_per_email_ip + 1 {
                cache.incr(&keys.holds, HOLDS_REMEMBERED).await?;
            }
            return Err(rate_limited(pair));
        }
        if let Some(address) = &keys.address {
            let per_address = cache.incr(address, s.login_window).await?;
            if per_address.count > s.login_max_failures_per_ip {
                cache.decr(&keys.pair).await?;
                return Err(rate_limited(per_address));
            }
        }
        let known = match &keys.known {
            Some(known) => cache.get(known).await?.is_some(),
            None => false,
        };
        if !known {
            let per_email = cache.incr(&keys.email, EMAIL_CEILING_WINDOW).await?;
            if per_email.count > s.login_max_failures_per_email_per_minute {
                cache.decr(&keys.pair).await?;
                if let Some(address) = &keys.address {
                    cache.decr(address).await?;
                }
                return Err(rate_limited(per_email));
            }
        }
        Ok(LoginReservation { email_ceiling: !known })
    }

    /// After a successful login: the pair's failures and holds are forgotten, the shared
    /// reservations given back, and the address remembered as one the email signs in from.
    /// The login stands if the cache fails here.
    async fn release_login(&self, keys: &LoginKeys, reserved: LoginReservation) {
        let cache = &self.ports.cache;
        let mut steps = vec![cache.delete(&keys.pair).await, cache.delete(&keys.holds).await];
        if let Some(address) = &keys.address {
            steps.push(cache.decr(address).await);
        }
        if reserved.email_ceiling {
            steps.push(cache.decr(&keys.email).await);
        }
        if let Some(known) = &keys.known {
            steps.push(cache.set(known, b"1", KNOWN_ADDRESS_REMEMBERED).await);
        }
        if let Some(Err(e)) = steps.into_iter().find(Result::is_err) {
            tracing::warn!(error = %e, "could not release a login's rate-limit reservations");
        }
    }

    /// How long an email+address pair's window lasts after `holds` earlier holds: a minute,
    /// doubling with each, at most `login_window`.
    fn hold_window(&self, holds: u64) -> Duration {
        let doubled = FIRST_HOLD.saturating_mul(1u32 << holds.min(16));
        doubled.min(self.settings.login_window)
    }

    /// Reserves one attempt at changing `user`'s password: 429 past
    /// `password_change_max_attempts` within `login_window`, before the current password is
    /// looked at.
    pub(crate) async fn reserve_password_change(&self, user: UserId) -> Result<()> {
        let key = format!("password-change:{user}");
        let attempts = self.ports.cache.incr(&key, self.settings.login_window).await?;
        if attempts.count > self.settings.password_change_max_attempts {
            return Err(rate_limited(attempts));
        }
        Ok(())
    }

    /// A failed login of an existing user. The actor is unknown (someone with the email).
    async fn audit_login_failure(&self, user: &User, reason: &str, client_ip: Option<&str>) {
        let event = AuditEvent::new(user.tenant_id, Actor::system("login"), "auth.login_failed")
            .action("login")
            .resource(format!("users/{}", user.id))
            .details(json!({"reason": reason, "client_ip": client_ip}));
        self.audit.record_after(event).await;
    }

    /// Creates a session with its JWT and session-bound API key for an authenticated user
    /// (by password, or through SSO) and audits the login: `details` say how (`method`,
    /// `client_ip`, …); the session's id is added to them.
    pub async fn open_session(&self, user: &User, mut details: serde_json::Value) -> Result<LoginResult> {
        let (result, session) = self.start_session(user).await?;
        if let Some(d) = details.as_object_mut() {
            d.insert("session_id".into(), json!(session));
        }
        let event = AuditEvent::new(user.tenant_id, Actor::new(ActorType::User, user.id), "auth.login")
            .action("login")
            .resource(format!("users/{}", user.id))
            .details(details);
        self.audit.record_after(event).await;
        Ok(result)
    }

    async fn start_session(&self, user: &User) -> Result<(LoginResult, SessionId)> {
        let now = self.ports.clock.now();
        let expires_at = now + self.settings.token_ttl;
        let session = Session {
            id: SessionId(self.ports.ids.new_id()),
            tenant_id: user.tenant_id,
            user_id: user.id,
            created_at: now,
            expires_at,
            revoked_at: None,
        };
        let generated = secrets::generate_api_key()?;
        let key = ApiKey {
            id: ApiKeyId(self.ports.ids.new_id()),
            tenant_id: user.tenant_id,
            user_id: user.id,
            name: "login session".into(),
            prefix: generated.prefix,
            key_hash: generated.hash,
            permissions: user.role.permissions().to_vec(),
            kind: ApiKeyKind::Session,
            session_id: Some(session.id),
            created_at: now,
            expires_at: Some(expires_at),
            last_used_at: None,
            revoked_at: None,
        };
        self.repos.sessions.insert_session(&session, Some(&key)).await?;
        let claims = Claims {
            sub: user.id,
            tid: user.tenant_id,
            role: user.role,
            jti: session.id,
            iat: now.unix_timestamp(),
            exp: expires_at.unix_timestamp(),
            iss: TOKEN_ISSUER.into(),
        };
        let result = LoginResult {
            access_token: self.tokens.sign(&claims)?,
            token_type: "Bearer",
            expires_in: self.settings.token_ttl.as_secs(),
            api_key: generated.full,
            user: LoginUser { id: user.id, email: user.email.clone(), role: user.role },
        };
        Ok((result, session.id))
    }

    /// Authenticates a session JWT: signature and expiry, then the session (not revoked) and
    /// the user (still there, not blocked) as stored now.
    pub async fn authenticate_token(&self, token: &str) -> Result<Caller> {
        let now = self.ports.clock.now();
        let claims = self.tokens.verify(token, now)?;
        let revoked = DomainError::Unauthorized("token revoked".into());
        // The cache is a fast path; the session row below is the authority, so a cache
        // outage does not lock everyone out.
        match self.ports.cache.is_token_revoked(&claims.jti.to_string()).await {
            Ok(true) => return Err(revoked),
            Ok(false) => {}
            Err(e) => tracing::warn!(error = %e, "revocation cache unavailable; checking the session store"),
        }
        let epoch = self.cache.epoch(claims.tid).await;
        let (session, user) = match epoch.and_then(|e| self.cache.session(claims.jti, e)) {
            Some(hit) => hit,
            None => {
                let session = self.repos.sessions.get_session(claims.tid, claims.jti).await?.ok_or(revoked.clone())?;
                let user = self.repos.users.get_user(claims.tid, claims.sub).await?;
                let user = user.ok_or_else(|| DomainError::Unauthorized("user no longer exists".into()))?;
                if let Some(e) = epoch {
                    self.cache.put_session(e, session.clone(), user.clone());
                }
                (session, user)
            }
        };
        if session.user_id != claims.sub || !session.is_live_at(now) {
            return Err(revoked);
        }
        let user = Self::active(user)?;
        Ok(Caller {
            user,
            credential: Credential::Session { session_id: session.id, expires_at: session.expires_at },
            trace: None,
        })
    }

    /// Authenticates an API key: shape, constant-time hash check, not revoked or expired,
    /// owner still active. The key's permissions are narrowed to the owner's current role.
    pub async fn authenticate_api_key(&self, presented: &str) -> Result<Caller> {
        self.api_key_and_epoch(presented).await.map(|(caller, _)| caller)
    }

    /// [`authenticate_api_key`](Self::authenticate_api_key) with the tenant's auth epoch it
    /// read, so a caller reading more of the tenant's cached state pays no second read.
    async fn api_key_and_epoch(&self, presented: &str) -> Result<(Caller, Option<super::auth_cache::Epoch>)> {
        let invalid = || DomainError::Unauthorized("invalid API key".into());
        let prefix = secrets::api_key_prefix(presented).ok_or_else(invalid)?;
        // A key's tenant never changes; knowing it lets the epoch be read before the store.
        let epoch = match self.cache.key_tenant(prefix) {
            Some(tenant) => self.cache.epoch(tenant).await,
            None => None,
        };
        let (key, user) = match epoch.and_then(|e| self.cache.key(prefix, e)) {
            Some(hit) => hit,
            None => {
                let key = self.repos.api_keys.find_api_key_by_prefix(prefix).await?.ok_or_else(invalid)?;
                let user = self.repos.users.get_user(key.tenant_id, key.user_id).await?;
                let user = user.ok_or_else(|| DomainError::Unauthorized("user no longer exists".into()))?;
                match epoch {
                    Some(e) => self.cache.put_key(e, key.clone(), user.clone()),
                    None => self.cache.remember_key_tenant(prefix, key.tenant_id),
                }
                (key, user)
            }
        };
        if !secrets::api_key_matches(presented, &key.key_hash) {
            return Err(invalid());
        }
        let now = self.ports.clock.now();
        if !key.is_usable_at(now) {
            return Err(DomainError::Unauthorized("API key revoked or expired".into()));
        }
        let user = Self::active(user)?;
        self.touch(key.clone(), &user, epoch, now).await;
        let permissions: Vec<Permission> = key.permissions.iter().copied().filter(|p| user.role.holds(*p)).collect();
        Ok((Caller { user, credential: Credential::ApiKey { key_id: key.id, permissions }, trace: None }, epoch))
    }

    fn active(user: User) -> Result<User> {
        match user.status {
            UserStatus::Active => Ok(user),
            UserStatus::Blocked => Err(DomainError::Unauthorized("user is blocked".into())),
        }
    }

    /// Records the key's use, at most once per `key_touch_interval`.
    async fn touch(&self, mut key: ApiKey, user: &User, epoch: Option<super::auth_cache::Epoch>, now: OffsetDateTime) {
        let stale = key.last_used_at.is_none_or(|t| now - t >= self.settings.key_touch_interval);
        if !stale {
            return;
        }
        match self.repos.api_keys.touch_api_key(key.id, now).await {
            Ok(()) => {
                if let Some(e) = epoch {
                    key.last_used_at = Some(now);
                    self.cache.put_key(e, key, user.clone());
                }
            }
            Err(e) => tracing::warn!(error = %e, key = %key.prefix, "could not record API key use"),
        }
    }

    /// Authenticates an API key for `POST /webhooks/agent`, with its tenant's own webhook key
    /// if it has one. The key is kept like credentials: a change bumps the tenant's auth
    /// epoch, so every replica reads it again at once; the epoch is read once for both.
    pub async fn authenticate_webhook_key(&self, presented: &str) -> Result<(Caller, Option<TenantSecret>)> {
        let (caller, epoch) = self.api_key_and_epoch(presented).await?;
        let tenant = caller.tenant_id();
        if let Some(hit) = epoch.and_then(|e| self.cache.webhook_secret(tenant, e)) {
            return Ok((caller, hit));
        }
        let secret = self.repos.tenants.get_tenant_secret(tenant, SecretPurpose::Webhook).await?;
        if let Some(e) = epoch {
            self.cache.put_webhook_secret(e, tenant, secret.clone());
        }
        Ok((caller, secret))
    }

    /// Call after a change that affects authentication in `tenant` has committed (a user
    /// changed or removed, a key revoked, a session ended): cached credentials of the tenant
    /// stop being used, on every replica.
    pub async fn credentials_changed(&self, tenant: TenantId) {
        self.cache.bump(tenant).await;
        self.ports.announce(tenant, CREDENTIALS_CHANGED, json!({})).await;
    }

    /// Ends the caller's session: the JWT and the session's API key stop working at once.
    pub async fn logout(&self, caller: &Caller) -> Result<()> {
        let Credential::Session { session_id, expires_at } = caller.credential else {
            return Err(DomainError::BadRequest(
                "logout ends a JWT session; revoke API keys with DELETE /api-keys/{id}".into(),
            ));
        };
        let now = self.ports.clock.now();
        self.repos.sessions.revoke_session(caller.tenant_id(), session_id, now).await?;
        self.credentials_changed(caller.tenant_id()).await;
        self.revoke_in_cache(&[session_id], Duration::try_from(expires_at - now).unwrap_or(Duration::ZERO)).await;
        let event = AuditEvent::new(caller.tenant_id(), Actor::new(ActorType::User, caller.user.id), "auth.logout")
            .action("logout")
            .resource(format!("users/{}", caller.user.id))
            .details(json!({"session_id": session_id}));
        self.audit.record_after(event).await;
        Ok(())
    }

    /// Revokes every session of a user (except `keep`), e.g. when they are blocked or change
    /// their password.
    pub async fn revoke_user_sessions(&self, tenant: TenantId, user: UserId, keep: Option<SessionId>) -> Result<()> {
        let now = self.ports.clock.now();
        let revoked = self.repos.sessions.revoke_user_sessions(tenant, user, keep, now).await?;
        self.credentials_changed(tenant).await;
        // A revoked session's token lives at most one token lifetime.
        self.revoke_in_cache(&revoked, self.settings.token_ttl).await;
        Ok(())
    }

    async fn revoke_in_cache(&self, sessions: &[SessionId], ttl: Duration) {
        let ttl = ttl.max(Duration::from_secs(1));
        for id in sessions {
            // The store already holds the revocation; the cache only speeds up rejection.
            if let Err(e) = self.ports.cache.revoke_token(&id.to_string(), ttl).await {
                tracing::warn!(error = %e, "could not record token revocation in the cache");
            }
        }
    }
}
