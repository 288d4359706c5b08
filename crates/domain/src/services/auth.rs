//! Login, logout and authentication of JWTs and API keys.

use std::time::Duration;

use time::OffsetDateTime;

use super::validate::normalize_email;
use super::{AuthSettings, Caller, Credential, Ports};
use crate::error::{DomainError, Result};
use crate::ids::{ApiKeyId, SessionId, TenantId, UserId};
use crate::model::{ApiKey, ApiKeyKind, Permission, Role, Session, User, UserStatus};
use crate::secrets::{self, Claims, PasswordHasher, TOKEN_ISSUER, TokenCodec};

/// The user part of a login response.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, utoipa::ToSchema)]
pub struct LoginUser {
    pub id: UserId,
    pub email: String,
    pub role: Role,
}

/// What a successful login hands out (spec 2.2).
#[derive(Debug, Clone, serde::Serialize, utoipa::ToSchema)]
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

#[derive(Clone)]
pub struct AuthService {
    ports: Ports,
    hasher: PasswordHasher,
    tokens: TokenCodec,
    settings: AuthSettings,
}

impl AuthService {
    pub fn new(ports: Ports, hasher: PasswordHasher, tokens: TokenCodec, settings: AuthSettings) -> Self {
        Self { ports, hasher, tokens, settings }
    }

    /// Signs in with email and password. `client_ip` keys the per-IP failure limit.
    pub async fn login(&self, email: &str, password: &str, client_ip: Option<&str>) -> Result<LoginResult> {
        let email = normalize_email(email);
        let email_key = format!("login-fail:email:{email}");
        let ip_key = client_ip.map(|ip| format!("login-fail:ip:{ip}"));
        self.check_login_limit(&email_key, self.settings.login_max_failures_per_email).await?;
        if let Some(key) = &ip_key {
            self.check_login_limit(key, self.settings.login_max_failures_per_ip).await?;
        }

        let user = if password.len() > secrets::MAX_PASSWORD_LEN {
            None
        } else {
            let user = self.ports.store.find_user_by_email(&email).await?;
            let hash = user.as_ref().and_then(|u| u.password_hash.as_deref());
            // Verify even for an unknown email, so timing does not reveal which emails exist.
            if self.hasher.verify(password, hash) { user } else { None }
        };
        let Some(user) = user else {
            self.ports.cache.incr(&email_key, self.settings.login_window).await?;
            if let Some(key) = &ip_key {
                self.ports.cache.incr(key, self.settings.login_window).await?;
            }
            return Err(DomainError::Unauthorized(INVALID_LOGIN.into()));
        };
        if user.status == UserStatus::Blocked {
            return Err(DomainError::Forbidden("this user is blocked".into()));
        }
        self.ports.cache.delete(&email_key).await?;
        self.open_session(&user).await
    }

    async fn check_login_limit(&self, key: &str, max: u64) -> Result<()> {
        match self.ports.cache.get_counter(key).await? {
            Some(c) if c.count >= max => {
                Err(DomainError::RateLimited { retry_after: c.ttl.max(Duration::from_secs(1)) })
            }
            _ => Ok(()),
        }
    }

    /// Creates a session with its JWT and session-bound API key for an authenticated user
    /// (password login here; SSO later).
    pub async fn open_session(&self, user: &User) -> Result<LoginResult> {
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
        self.ports.store.insert_session(&session, Some(&key)).await?;
        let claims = Claims {
            sub: user.id,
            tid: user.tenant_id,
            role: user.role,
            jti: session.id,
            iat: now.unix_timestamp(),
            exp: expires_at.unix_timestamp(),
            iss: TOKEN_ISSUER.into(),
        };
        Ok(LoginResult {
            access_token: self.tokens.sign(&claims)?,
            token_type: "Bearer",
            expires_in: self.settings.token_ttl.as_secs(),
            api_key: generated.full,
            user: LoginUser { id: user.id, email: user.email.clone(), role: user.role },
        })
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
        let session = self.ports.store.get_session(claims.tid, claims.jti).await?;
        let session = match session {
            Some(s) if s.user_id == claims.sub && s.is_live_at(now) => s,
            _ => return Err(revoked),
        };
        let user = self.active_user(claims.tid, claims.sub).await?;
        Ok(Caller { user, credential: Credential::Session { session_id: session.id, expires_at: session.expires_at } })
    }

    /// Authenticates an API key: shape, constant-time hash check, not revoked or expired,
    /// owner still active. The key's permissions are narrowed to the owner's current role.
    pub async fn authenticate_api_key(&self, presented: &str) -> Result<Caller> {
        let invalid = || DomainError::Unauthorized("invalid API key".into());
        let prefix = secrets::api_key_prefix(presented).ok_or_else(invalid)?;
        let key = self.ports.store.find_api_key_by_prefix(prefix).await?.ok_or_else(invalid)?;
        if !secrets::api_key_matches(presented, &key.key_hash) {
            return Err(invalid());
        }
        let now = self.ports.clock.now();
        if !key.is_usable_at(now) {
            return Err(DomainError::Unauthorized("API key revoked or expired".into()));
        }
        let user = self.active_user(key.tenant_id, key.user_id).await?;
        self.touch(&key, now).await;
        let permissions: Vec<Permission> = key.permissions.iter().copied().filter(|p| user.role.holds(*p)).collect();
        Ok(Caller { user, credential: Credential::ApiKey { key_id: key.id, permissions } })
    }

    async fn active_user(&self, tenant: TenantId, id: UserId) -> Result<User> {
        match self.ports.store.get_user(tenant, id).await? {
            Some(u) if u.status == UserStatus::Active => Ok(u),
            Some(_) => Err(DomainError::Unauthorized("user is blocked".into())),
            None => Err(DomainError::Unauthorized("user no longer exists".into())),
        }
    }

    async fn touch(&self, key: &ApiKey, now: OffsetDateTime) {
        let stale = key.last_used_at.is_none_or(|t| now - t >= self.settings.key_touch_interval);
        if stale && let Err(e) = self.ports.store.touch_api_key(key.id, now).await {
            tracing::warn!(error = %e, key = %key.prefix, "could not record API key use");
        }
    }

    /// Ends the caller's session: the JWT and the session's API key stop working at once.
    pub async fn logout(&self, caller: &Caller) -> Result<()> {
        let Credential::Session { session_id, expires_at } = caller.credential else {
            return Err(DomainError::BadRequest(
                "logout ends a JWT session; revoke API keys with DELETE /api-keys/{id}".into(),
            ));
        };
        let now = self.ports.clock.now();
        self.ports.store.revoke_session(caller.tenant_id(), session_id, now).await?;
        self.revoke_in_cache(&[session_id], Duration::try_from(expires_at - now).unwrap_or(Duration::ZERO)).await;
        Ok(())
    }

    /// Revokes every session of a user (except `keep`), e.g. when they are blocked or change
    /// their password.
    pub async fn revoke_user_sessions(&self, tenant: TenantId, user: UserId, keep: Option<SessionId>) -> Result<()> {
        let now = self.ports.clock.now();
        let revoked = self.ports.store.revoke_user_sessions(tenant, user, keep, now).await?;
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
