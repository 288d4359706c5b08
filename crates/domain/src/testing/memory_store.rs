//! An in-memory `Store` with the semantics the port documents, for unit tests and as the
//! reference the conformance suite runs against.
//!
//! One lock guards all tables, so every operation is trivially atomic. Foreign keys are
//! enforced the way the SQL schemas enforce them (a reference to a missing row is a
//! `Conflict`), and deletes cascade.

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

use async_trait::async_trait;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::error::{DomainError, Result};
use crate::ids::{ApiKeyId, SessionId, TenantId, UserId};
use crate::model::{ApiKey, RiskLevels, SecretPurpose, Session, Tenant, TenantSecret, User, UserStatus};
use crate::page::{Page, PageRequest};
use crate::ports::store::{ApiKeyRepo, HourlyKey, ResourceCounts, SessionRepo, Store, TenantRepo, UserRepo};

/// Tables keyed by id; `BTreeMap` keeps them in id order, which is creation order for v7 ids.
#[derive(Debug, Default, Clone)]
struct Tables {
    tenants: BTreeMap<Uuid, Tenant>,
    tenant_secrets: BTreeMap<(Uuid, SecretPurpose), TenantSecret>,
    users: BTreeMap<Uuid, User>,
    api_keys: BTreeMap<Uuid, ApiKey>,
    sessions: BTreeMap<Uuid, Session>,
    /// SSO identity links: (tenant, issuer, subject) → user.
    sso_links: BTreeMap<(Uuid, String, String), UserId>,
    hourly_counts: BTreeMap<HourlyKey, i64>,
}

#[derive(Debug, Default)]
pub struct MemoryStore {
    tables: Mutex<Tables>,
    /// The audit log, apart: appends never clone the other tables.
    pub(super) audit: Mutex<super::memory_audit::AuditTables>,
    /// The agent registry, apart likewise.
    pub(super) agents: Mutex<super::memory_agents::AgentTables>,
    /// Tenant policies.
    pub(super) policies: Mutex<super::memory_policies::PolicyTables>,
    /// The Prompt Guard's models, feedback, tasks and statistics.
    pub(super) guard: Mutex<super::memory_guard::GuardTables>,
    /// Shadow-agent discovery: events, candidates and clustering jobs.
    pub(super) discovery: Mutex<super::memory_discovery::DiscoveryTables>,
    /// Human-in-the-loop approval requests.
    pub(super) hitl: Mutex<super::memory_hitl::HitlTables>,
    /// Anomaly reports.
    pub(super) anomalies: Mutex<super::memory_anomaly::AnomalyTables>,
    /// The job queue (its chunks) and the model registry.
    pub(super) jobs: Mutex<super::memory_jobs::JobTables>,
    /// Leases and SIEM forwarding state.
    pub(super) siem: Mutex<super::memory_siem::SiemTables>,
}

impl MemoryStore {
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, Tables> {
        self.tables.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(super) fn tenant_exists(&self, tenant: TenantId) -> bool {
        self.lock().tenants.contains_key(&tenant.0)
    }

    pub(super) fn user_exists(&self, user: UserId) -> bool {
        self.lock().users.contains_key(&user.0)
    }
}

/// Up to `fetch_limit()` values of `map`, newest first, after the cursor, that pass `keep`.
pub(super) fn page_of<T: Clone>(
    map: &BTreeMap<Uuid, T>,
    req: &PageRequest,
    keep: impl Fn(&T) -> bool,
    id_of: impl Fn(&T) -> Uuid,
) -> Page<T> {
    let fetch = usize::try_from(req.fetch_limit()).unwrap_or(usize::MAX);
    let rows: Vec<T> = match req.after {
        Some(after) => map.range(..after).rev().map(|(_, v)| v).filter(|v| keep(v)).take(fetch).cloned().collect(),
        None => map.values().rev().filter(|v| keep(v)).take(fetch).cloned().collect(),
    };
    Page::from_rows(rows, req, id_of)
}

pub(super) fn conflict(message: &str) -> DomainError {
    DomainError::Conflict(message.to_owned())
}

fn last_admin() -> DomainError {
    conflict("the tenant must keep at least one active admin")
}

impl Tables {
    fn insert_tenant(&mut self, tenant: &Tenant) -> Result<()> {
        if self.tenants.contains_key(&tenant.id.0) {
            return Err(conflict("tenant id already exists"));
        }
        if self.tenants.values().any(|t| t.name == tenant.name) {
            return Err(conflict("tenant name already taken"));
        }
        self.tenants.insert(tenant.id.0, tenant.clone());
        Ok(())
    }

    fn insert_user(&mut self, user: &User) -> Result<()> {
        if self.users.contains_key(&user.id.0) {
            return Err(conflict("user id already exists"));
        }
        if self.users.values().any(|u| u.email == user.email) {
            return Err(conflict("email already registered"));
        }
        self.check_tenant_exists(user.tenant_id)?;
        self.users.insert(user.id.0, user.clone());
        Ok(())
    }

    fn insert_key(&mut self, key: &ApiKey) -> Result<()> {
        if self.api_keys.contains_key(&key.id.0) {
            return Err(conflict("api key id already exists"));
        }
        if self.api_keys.values().any(|k| k.prefix == key.prefix) {
            return Err(conflict("api key prefix already taken"));
        }
        self.check_tenant_exists(key.tenant_id)?;
        if !self.users.contains_key(&key.user_id.0) {
            return Err(conflict("api key owner does not exist"));
        }
        if key.session_id.is_some_and(|s| !self.sessions.contains_key(&s.0)) {
            return Err(conflict("api key session does not exist"));
        }
        self.api_keys.insert(key.id.0, key.clone());
        Ok(())
    }

    fn insert_session(&mut self, session: &Session) -> Result<()> {
        if self.sessions.contains_key(&session.id.0) {
            return Err(conflict("session id already exists"));
        }
        self.check_tenant_exists(session.tenant_id)?;
        if !self.users.contains_key(&session.user_id.0) {
            return Err(conflict("session owner does not exist"));
        }
        self.sessions.insert(session.id.0, session.clone());
        if let Some(user) = self.users.get_mut(&session.user_id.0) {
            user.last_login_at = Some(session.created_at);
        }
        Ok(())
    }

    fn check_tenant_exists(&self, tenant: TenantId) -> Result<()> {
        if self.tenants.contains_key(&tenant.0) { Ok(()) } else { Err(conflict("tenant does not exist")) }
    }

    fn user_of(&self, tenant: TenantId, id: UserId) -> Option<&User> {
        self.users.get(&id.0).filter(|u| u.tenant_id == tenant)
    }

    fn active_admins(&self, tenant: TenantId) -> usize {
        self.users.values().filter(|u| u.tenant_id == tenant && u.is_active_admin()).count()
    }

    /// Revokes the session and its live keys.
    fn revoke_session_at(&mut self, id: SessionId, at: OffsetDateTime) {
        if let Some(s) = self.sessions.get_mut(&id.0) {
            s.revoked_at = Some(at);
        }
        for key in self.api_keys.values_mut() {
            if key.session_id == Some(id) && key.revoked_at.is_none() {
                key.revoked_at = Some(at);
            }
        }
    }
}

impl MemoryStore {
    /// Runs `f` on a copy of the tables and keeps the copy only if `f` succeeds: all or nothing.
    fn transaction(&self, f: impl FnOnce(&mut Tables) -> Result<()>) -> Result<()> {
        let mut tables = self.lock();
        let mut next = tables.clone();
        f(&mut next)?;
        *tables = next;
        Ok(())
    }
}

#[async_trait]
impl TenantRepo for MemoryStore {
    async fn create_tenant(&self, tenant: &Tenant, admin: &User, key: &ApiKey, secret: &TenantSecret) -> Result<()> {
        self.transaction(|t| {
            t.insert_tenant(tenant)?;
            t.insert_user(admin)?;
            t.insert_key(key)?;
            t.check_tenant_exists(secret.tenant_id)?;
            t.tenant_secrets.insert((secret.tenant_id.0, secret.purpose), secret.clone());
            Ok(())
        })
    }

    async fn get_tenant(&self, id: TenantId) -> Result<Option<Tenant>> {
        Ok(self.lock().tenants.get(&id.0).cloned())
    }

    async fn list_tenants(&self, page: &PageRequest) -> Result<Page<Tenant>> {
        Ok(page_of(&self.lock().tenants, page, |_| true, |t| t.id.0))
    }

    async fn update_tenant(&self, tenant: &Tenant, levels: &RiskLevels) -> Result<u64> {
        let mut tables = self.lock();
        let Some(stored) = tables.tenants.get(&tenant.id.0) else {
            return Err(DomainError::not_found("tenant", tenant.id));
        };
        if tables.tenants.values().any(|t| t.name == tenant.name && t.id != tenant.id) {
            return Err(conflict("tenant name already taken"));
        }
        let updated = Tenant { created_at: stored.created_at, ..tenant.clone() };
        tables.tenants.insert(tenant.id.0, updated);
        // Never hold both locks: the agent tables are locked on their own.
        drop(tables);
        Ok(self.agent_tables().relevel(tenant.id, levels))
    }

    async fn get_tenant_secret(&self, tenant: TenantId, purpose: SecretPurpose) -> Result<Option<TenantSecret>> {
        Ok(self.lock().tenant_secrets.get(&(tenant.0, purpose)).cloned())
    }

    async fn put_tenant_secret(&self, secret: &TenantSecret) -> Result<()> {
        let mut t = self.lock();
        if !t.tenants.contains_key(&secret.tenant_id.0) {
            return Err(DomainError::not_found("tenant", secret.tenant_id));
        }
        t.tenant_secrets.insert((secret.tenant_id.0, secret.purpose), secret.clone());
        Ok(())
    }

    async fn add_tenant_secret(&self, secret: &TenantSecret) -> Result<TenantSecret> {
        let mut t = self.lock();
        if !t.tenants.contains_key(&secret.tenant_id.0) {
            return Err(DomainError::not_found("tenant", secret.tenant_id));
        }
        Ok(t.tenant_secrets.entry((secret.tenant_id.0, secret.purpose)).or_insert_with(|| secret.clone()).clone())
    }

    async fn delete_tenant_secret(&self, tenant: TenantId, purpose: SecretPurpose) -> Result<bool> {
        Ok(self.lock().tenant_secrets.remove(&(tenant.0, purpose)).is_some())
    }
}

#[async_trait]
impl UserRepo for MemoryStore {
    async fn insert_user(&self, user: &User) -> Result<()> {
        self.lock().insert_user(user)
    }

    async fn get_user(&self, tenant: TenantId, id: UserId) -> Result<Option<User>> {
        Ok(self.lock().user_of(tenant, id).cloned())
    }

    async fn find_user_by_email(&self, email: &str) -> Result<Option<User>> {
        Ok(self.lock().users.values().find(|u| u.email == email).cloned())
    }

    async fn list_users(&self, tenant: TenantId, page: &PageRequest) -> Result<Page<User>> {
        Ok(page_of(&self.lock().users, page, |u| u.tenant_id == tenant, |u| u.id.0))
    }

    async fn update_user(&self, user: &User) -> Result<()> {
        let mut t = self.lock();
        let Some(current) = t.user_of(user.tenant_id, user.id) else {
            return Err(DomainError::not_found("user", user.id));
        };
        if current.is_active_admin() && !user.is_active_admin() && t.active_admins(user.tenant_id) == 1 {
            return Err(last_admin());
        }
        if t.users.values().any(|u| u.id != user.id && u.email == user.email) {
            return Err(conflict("email already registered"));
        }
        let Some(stored) = t.users.get_mut(&user.id.0) else {
            return Err(DomainError::not_found("user", user.id));
        };
        stored.email.clone_from(&user.email);
        stored.name.clone_from(&user.name);
        stored.role = user.role;
        stored.status = user.status;
        stored.password_hash.clone_from(&user.password_hash);
        stored.updated_at = user.updated_at;
        stored.last_login_at = user.last_login_at;
        Ok(())
    }

    async fn delete_user(&self, tenant: TenantId, id: UserId) -> Result<()> {
        let mut t = self.lock();
        let Some(current) = t.user_of(tenant, id) else {
            return Err(DomainError::not_found("user", id));
        };
        if current.is_active_admin() && t.active_admins(tenant) == 1 {
            return Err(last_admin());
        }
        t.users.remove(&id.0);
        t.api_keys.retain(|_, k| k.user_id != id);
        t.sessions.retain(|_, s| s.user_id != id);
        t.sso_links.retain(|_, u| *u != id);
        drop(t);
        self.policy_tables().forget_creator(id);
        Ok(())
    }

    async fn find_user_by_sso_identity(&self, tenant: TenantId, issuer: &str, subject: &str) -> Result<Option<User>> {
        let t = self.lock();
        let user = t.sso_links.get(&(tenant.0, issuer.to_owned(), subject.to_owned()));
        Ok(user.and_then(|u| t.user_of(tenant, *u)).cloned())
    }

    async fn sso_subject_of(&self, tenant: TenantId, user: UserId, issuer: &str) -> Result<Option<String>> {
        let t = self.lock();
        Ok(t.sso_links
            .iter()
            .find(|((tid, iss, _), u)| *tid == tenant.0 && iss == issuer && **u == user)
            .map(|((_, _, sub), _)| sub.clone()))
    }

    async fn link_sso_identity(
        &self,
        tenant: TenantId,
        user: UserId,
        issuer: &str,
        subject: &str,
        _at: OffsetDateTime,
    ) -> Result<()> {
        let mut t = self.lock();
        if t.user_of(tenant, user).is_none() {
            return Err(DomainError::not_found("user", user));
        }
        let key = (tenant.0, issuer.to_owned(), subject.to_owned());
        if t.sso_links.contains_key(&key) {
            return Err(conflict("this SSO identity is linked to a user already"));
        }
        if t.sso_links.iter().any(|((tid, iss, _), u)| *tid == tenant.0 && iss == issuer && *u == user) {
            return Err(conflict("the user is linked to another identity of this issuer"));
        }
        t.sso_links.insert(key, user);
        Ok(())
    }
}

#[async_trait]
impl ApiKeyRepo for MemoryStore {
    async fn insert_api_key(&self, key: &ApiKey) -> Result<()> {
        self.lock().insert_key(key)
    }

    async fn find_api_key_by_prefix(&self, prefix: &str) -> Result<Option<ApiKey>> {
        Ok(self.lock().api_keys.values().find(|k| k.prefix == prefix).cloned())
    }

    async fn get_api_key(&self, tenant: TenantId, id: ApiKeyId) -> Result<Option<ApiKey>> {
        Ok(self.lock().api_keys.get(&id.0).filter(|k| k.tenant_id == tenant).cloned())
    }

    async fn list_api_keys(&self, tenant: TenantId, user: Option<UserId>, page: &PageRequest) -> Result<Page<ApiKey>> {
        let keep = |k: &ApiKey| k.tenant_id == tenant && k.revoked_at.is_none() && user.is_none_or(|u| k.user_id == u);
        Ok(page_of(&self.lock().api_keys, page, keep, |k| k.id.0))
    }

    async fn revoke_api_key(&self, tenant: TenantId, id: ApiKeyId, at: OffsetDateTime) -> Result<()> {
        let mut t = self.lock();
        match t.api_keys.get_mut(&id.0) {
            Some(k) if k.tenant_id == tenant && k.revoked_at.is_none() => {
                k.revoked_at = Some(at);
                Ok(())
            }
            _ => Err(DomainError::not_found("api key", id)),
        }
    }

    async fn touch_api_key(&self, id: ApiKeyId, at: OffsetDateTime) -> Result<()> {
        match self.lock().api_keys.get_mut(&id.0) {
            Some(k) => {
                k.last_used_at = Some(at);
                Ok(())
            }
            None => Err(DomainError::not_found("api key", id)),
        }
    }
}

#[async_trait]
impl SessionRepo for MemoryStore {
    async fn insert_session(&self, session: &Session, key: Option<&ApiKey>) -> Result<()> {
        self.transaction(|t| {
            t.insert_session(session)?;
            key.map_or(Ok(()), |k| t.insert_key(k))
        })
    }

    async fn get_session(&self, tenant: TenantId, id: SessionId) -> Result<Option<Session>> {
        Ok(self.lock().sessions.get(&id.0).filter(|s| s.tenant_id == tenant).cloned())
    }

    async fn revoke_session(&self, tenant: TenantId, id: SessionId, at: OffsetDateTime) -> Result<()> {
        let mut t = self.lock();
        match t.sessions.get(&id.0) {
            Some(s) if s.tenant_id == tenant && s.revoked_at.is_none() => {
                t.revoke_session_at(id, at);
                Ok(())
            }
            _ => Err(DomainError::not_found("session", id)),
        }
    }

    async fn revoke_user_sessions(
        &self,
        tenant: TenantId,
        user: UserId,
        keep: Option<SessionId>,
        at: OffsetDateTime,
    ) -> Result<Vec<SessionId>> {
        let mut t = self.lock();
        let ids: Vec<SessionId> = t
            .sessions
            .values()
            .rev()
            .filter(|s| s.tenant_id == tenant && s.user_id == user && Some(s.id) != keep && s.is_live_at(at))
            .map(|s| s.id)
            .collect();
        for id in &ids {
            t.revoke_session_at(*id, at);
        }
        Ok(ids)
    }
}

#[async_trait]
impl Store for MemoryStore {
    async fn ping(&self) -> Result<()> {
        Ok(())
    }

    async fn count_resources(&self, tenant: TenantId) -> Result<ResourceCounts> {
        let t = self.lock();
        let mut counts = ResourceCounts::default();
        for u in t.users.values().filter(|u| u.tenant_id == tenant) {
            counts.users += 1;
            match u.status {
                UserStatus::Active => counts.active_users += 1,
                UserStatus::Blocked => counts.blocked_users += 1,
            }
        }
        counts.api_keys =
            t.api_keys.values().filter(|k| k.tenant_id == tenant && k.revoked_at.is_none()).count() as u64;
        Ok(counts)
    }

    async fn add_hourly_counts(&self, counts: &[(HourlyKey, i64)]) -> Result<()> {
        let mut t = self.lock();
        if counts.iter().any(|(k, _)| !t.tenants.contains_key(&k.tenant_id.0)) {
            return Err(conflict("tenant does not exist"));
        }
        for (key, count) in counts {
            *t.hourly_counts.entry(key.clone()).or_default() += count;
        }
        Ok(())
    }

    async fn hourly_counts(&self, tenant: TenantId, metric: &str, from_hour: i64) -> Result<Vec<(HourlyKey, i64)>> {
        let t = self.lock();
        Ok(t.hourly_counts
            .iter()
            .filter(|(k, _)| k.tenant_id == tenant && k.metric == metric && k.hour >= from_hour)
            .map(|(k, n)| (k.clone(), *n))
            .collect())
    }

    fn backend(&self) -> &'static str {
        "memory"
    }
}
