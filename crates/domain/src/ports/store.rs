//! Repository ports. Every query is scoped by tenant except the few look-ups that
//! authentication needs before a tenant is known (by email, by key prefix).
//!
//! Adapters translate their driver's errors: a unique violation becomes `Conflict`, a lost
//! connection `Unavailable`. Behaviour is pinned by `agentgov-store-conformance`.

use async_trait::async_trait;
use time::OffsetDateTime;

use crate::error::Result;
use crate::ids::{ApiKeyId, SessionId, TenantId, UserId};
use crate::model::{ApiKey, Session, Tenant, User};
use crate::page::{Page, PageRequest};

#[async_trait]
pub trait TenantRepo: Send + Sync {
    /// Creates a tenant with its first admin user and API key, all or nothing.
    /// `Conflict` when the tenant name or the email is taken.
    async fn create_tenant(&self, tenant: &Tenant, admin: &User, key: &ApiKey) -> Result<()>;
    async fn get_tenant(&self, id: TenantId) -> Result<Option<Tenant>>;
    /// Newest first.
    async fn list_tenants(&self, page: &PageRequest) -> Result<Page<Tenant>>;
}

#[async_trait]
pub trait UserRepo: Send + Sync {
    /// `Conflict` when the email is taken (in any tenant).
    async fn insert_user(&self, user: &User) -> Result<()>;
    async fn get_user(&self, tenant: TenantId, id: UserId) -> Result<Option<User>>;
    /// Platform-wide look-up by lower-cased email, for login.
    async fn find_user_by_email(&self, email: &str) -> Result<Option<User>>;
    /// Newest first.
    async fn list_users(&self, tenant: TenantId, page: &PageRequest) -> Result<Page<User>>;
    /// Replaces every mutable field (email, name, role, status, password hash, timestamps).
    /// `NotFound` if absent; `Conflict` if the email is taken, or if the change would leave
    /// the tenant without an active admin (checked atomically with the write).
    async fn update_user(&self, user: &User) -> Result<()>;
    /// Deletes the user with their API keys and sessions. `NotFound` if absent; `Conflict`
    /// if they are the tenant's last active admin (checked atomically).
    async fn delete_user(&self, tenant: TenantId, id: UserId) -> Result<()>;
}

#[async_trait]
pub trait ApiKeyRepo: Send + Sync {
    async fn insert_api_key(&self, key: &ApiKey) -> Result<()>;
    /// Platform-wide look-up by the key's visible prefix, for authentication.
    async fn find_api_key_by_prefix(&self, prefix: &str) -> Result<Option<ApiKey>>;
    async fn get_api_key(&self, tenant: TenantId, id: ApiKeyId) -> Result<Option<ApiKey>>;
    /// Keys not revoked, newest first; only `user`'s when given.
    async fn list_api_keys(&self, tenant: TenantId, user: Option<UserId>, page: &PageRequest) -> Result<Page<ApiKey>>;
    /// Sets `revoked_at`. `NotFound` if absent or already revoked.
    async fn revoke_api_key(&self, tenant: TenantId, id: ApiKeyId, at: OffsetDateTime) -> Result<()>;
    /// Records use; callers throttle how often.
    async fn touch_api_key(&self, id: ApiKeyId, at: OffsetDateTime) -> Result<()>;
}

#[async_trait]
pub trait SessionRepo: Send + Sync {
    /// Stores the session and its session-bound API key, and sets the user's
    /// `last_login_at` to the session's `created_at`, all or nothing.
    async fn insert_session(&self, session: &Session, key: Option<&ApiKey>) -> Result<()>;
    async fn get_session(&self, tenant: TenantId, id: SessionId) -> Result<Option<Session>>;
    /// Revokes the session and its API key. `NotFound` if absent or already revoked.
    async fn revoke_session(&self, tenant: TenantId, id: SessionId, at: OffsetDateTime) -> Result<()>;
    /// Revokes every live session of the user (and their keys) except `keep`; returns the
    /// ids revoked.
    async fn revoke_user_sessions(
        &self,
        tenant: TenantId,
        user: UserId,
        keep: Option<SessionId>,
        at: OffsetDateTime,
    ) -> Result<Vec<SessionId>>;
}

/// Counts of a tenant's resources, for `/stats`.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, utoipa::ToSchema)]
pub struct ResourceCounts {
    pub users: u64,
    pub active_users: u64,
    pub blocked_users: u64,
    /// API keys not revoked (standard and session keys).
    pub api_keys: u64,
}

/// Everything a store adapter provides.
#[async_trait]
pub trait Store: TenantRepo + UserRepo + ApiKeyRepo + SessionRepo {
    /// Cheap round trip proving the database answers.
    async fn ping(&self) -> Result<()>;
    async fn count_resources(&self, tenant: TenantId) -> Result<ResourceCounts>;
    /// "sqlite" or "postgres", for `/status`.
    fn backend(&self) -> &'static str;
}
