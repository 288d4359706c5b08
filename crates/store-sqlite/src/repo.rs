//! The `Store` port on SQLite. Reads run on a reader; every write runs on the writer in a
//! `BEGIN IMMEDIATE` transaction, with its checks (last admin, revoked or not) inside it.

use agentgov_domain::ids::{ApiKeyId, SessionId, TenantId, UserId};
use agentgov_domain::model::{
    ApiKey, RiskLevels, Role, SecretPurpose, Session, Tenant, TenantSecret, User, UserStatus,
};
use agentgov_domain::page::{Page, PageRequest};
use agentgov_domain::ports::store::{ApiKeyRepo, HourlyKey, ResourceCounts, SessionRepo, Store, TenantRepo, UserRepo};
use agentgov_domain::{DomainError, Result};
use async_trait::async_trait;
use diesel::SqliteConnection;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Text};
use time::OffsetDateTime;

use crate::SqliteStore;
use crate::agents::relevel;
use crate::error::{TxError, TxResult};
use crate::rows::{ApiKeyRow, SessionRow, TenantRow, TenantSecretRow, UserRow, convert, id_text, parse_id};
use crate::schema::{api_keys, policies, sessions, tenant_secrets, tenants, user_sso_identities, users};

fn after_text(req: &PageRequest) -> Option<String> {
    req.after.map(id_text)
}

fn admin_roles() -> Vec<&'static str> {
    Role::ALL.into_iter().filter(|r| r.is_admin()).map(Role::as_str).collect()
}

fn last_admin() -> TxError {
    TxError::Domain(DomainError::Conflict("the tenant must keep at least one active admin".into()))
}

/// The tenant's active admins, counted inside the caller's transaction.
fn active_admins(c: &mut SqliteConnection, tenant: &str) -> TxResult<i64> {
    Ok(users::table
        .filter(users::tenant_id.eq(tenant))
        .filter(users::status.eq(UserStatus::Active.as_str()))
        .filter(users::role.eq_any(admin_roles()))
        .count()
        .get_result(c)?)
}

fn user_in_tenant(c: &mut SqliteConnection, tenant: &str, id: &str) -> TxResult<Option<User>> {
    let row = users::table
        .filter(users::id.eq(id))
        .filter(users::tenant_id.eq(tenant))
        .select(UserRow::as_select())
        .first(c)
        .optional()?;
    Ok(row.map(User::try_from).transpose()?)
}

/// Revokes the sessions and their live keys.
fn revoke_sessions(c: &mut SqliteConnection, ids: &[String], at: OffsetDateTime) -> TxResult<()> {
    if ids.is_empty() {
        return Ok(());
    }
    diesel::update(sessions::table.filter(sessions::id.eq_any(ids))).set(sessions::revoked_at.eq(at)).execute(c)?;
    diesel::update(api_keys::table.filter(api_keys::session_id.eq_any(ids)).filter(api_keys::revoked_at.is_null()))
        .set(api_keys::revoked_at.eq(at))
        .execute(c)?;
    Ok(())
}

#[async_trait]
impl TenantRepo for SqliteStore {
    async fn create_tenant(&self, tenant: &Tenant, admin: &User, key: &ApiKey, secret: &TenantSecret) -> Result<()> {
        let (tenant, admin, key) = (TenantRow::try_from(tenant)?, UserRow::from(admin), ApiKeyRow::try_from(key)?);
        let secret = TenantSecretRow::from(secret);
        self.transaction(move |c| {
            diesel::insert_into(tenants::table).values(&tenant).execute(c)?;
            diesel::insert_into(users::table).values(&admin).execute(c)?;
            diesel::insert_into(api_keys::table).values(&key).execute(c)?;
            diesel::insert_into(tenant_secrets::table).values(&secret).execute(c)?;
            Ok(())
        })
        .await
    }

    async fn get_tenant(&self, id: TenantId) -> Result<Option<Tenant>> {
        let id = id_text(id.0);
        self.read(move |c| {
            let row = tenants::table.find(id).select(TenantRow::as_select()).first(c).optional()?;
            Ok(row.map(Tenant::try_from).transpose()?)
        })
        .await
    }

    async fn list_tenants(&self, page: &PageRequest) -> Result<Page<Tenant>> {
        let (after, limit) = (after_text(page), page.fetch_limit());
        let rows = self
            .read(move |c| {
                let mut q =
                    tenants::table.select(TenantRow::as_select()).order(tenants::id.desc()).limit(limit).into_boxed();
                if let Some(after) = after {
                    q = q.filter(tenants::id.lt(after));
                }
                Ok(convert(q.load(c)?)?)
            })
            .await?;
        Ok(Page::from_rows(rows, page, |t: &Tenant| t.id.0))
    }

    async fn update_tenant(&self, tenant: &Tenant, levels: &RiskLevels) -> Result<u64> {
        let (id, row, levels) = (tenant.id, TenantRow::try_from(tenant)?, *levels);
        self.transaction(move |c| {
            let n = diesel::update(tenants::table.find(&row.id))
                .set((
                    tenants::name.eq(&row.name),
                    tenants::settings.eq(&row.settings),
                    tenants::updated_at.eq(row.updated_at),
                ))
                .execute(c)?;
            if n == 0 {
                return Err(DomainError::not_found("tenant", id).into());
            }
            relevel(c, &row.id, &levels)
        })
        .await
    }

    async fn get_tenant_secret(&self, tenant: TenantId, purpose: SecretPurpose) -> Result<Option<TenantSecret>> {
        let tenant = id_text(tenant.0);
        self.read(move |c| {
            let row = tenant_secrets::table
                .find((tenant, purpose.as_str()))
                .select(TenantSecretRow::as_select())
                .first(c)
                .optional()?;
            Ok(row.map(TenantSecret::try_from).transpose()?)
        })
        .await
    }

    async fn put_tenant_secret(&self, secret: &TenantSecret) -> Result<()> {
        let (tenant, row) = (secret.tenant_id, TenantSecretRow::from(secret));
        self.transaction(move |c| {
            tenant_exists(c, &row.tenant_id, tenant)?;
            diesel::replace_into(tenant_secrets::table).values(&row).execute(c)?;
            Ok(())
        })
        .await
    }

    async fn add_tenant_secret(&self, secret: &TenantSecret) -> Result<TenantSecret> {
        let (tenant, row) = (secret.tenant_id, TenantSecretRow::from(secret));
        self.transaction(move |c| {
            tenant_exists(c, &row.tenant_id, tenant)?;
            diesel::insert_or_ignore_into(tenant_secrets::table).values(&row).execute(c)?;
            let stored = tenant_secrets::table
                .find((&row.tenant_id, &row.purpose))
                .select(TenantSecretRow::as_select())
                .first(c)?;
            Ok(TenantSecret::try_from(stored)?)
        })
        .await
    }

    async fn delete_tenant_secret(&self, tenant: TenantId, purpose: SecretPurpose) -> Result<bool> {
        let tenant = id_text(tenant.0);
        self.transaction(move |c| {
            let n = diesel::delete(tenant_secrets::table.find((tenant, purpose.as_str()))).execute(c)?;
            Ok(n > 0)
        })
        .await
    }
}

/// `NotFound` unless the tenant exists (checked inside the caller's transaction).
fn tenant_exists(c: &mut SqliteConnection, id_text: &str, tenant: TenantId) -> TxResult<()> {
    let found: i64 = tenants::table.filter(tenants::id.eq(id_text)).count().get_result(c)?;
    if found == 0 { Err(DomainError::not_found("tenant", tenant).into()) } else { Ok(()) }
}

#[async_trait]
impl UserRepo for SqliteStore {
    async fn insert_user(&self, user: &User) -> Result<()> {
        let row = UserRow::from(user);
        self.transaction(move |c| {
            diesel::insert_into(users::table).values(&row).execute(c)?;
            Ok(())
        })
        .await
    }

    async fn get_user(&self, tenant: TenantId, id: UserId) -> Result<Option<User>> {
        let (tenant, id) = (id_text(tenant.0), id_text(id.0));
        self.read(move |c| user_in_tenant(c, &tenant, &id)).await
    }

    async fn find_user_by_email(&self, email: &str) -> Result<Option<User>> {
        let email = email.to_owned();
        self.read(move |c| {
            let row = users::table.filter(users::email.eq(email)).select(UserRow::as_select()).first(c).optional()?;
            Ok(row.map(User::try_from).transpose()?)
        })
        .await
    }

    async fn list_users(&self, tenant: TenantId, page: &PageRequest) -> Result<Page<User>> {
        let (tenant, after, limit) = (id_text(tenant.0), after_text(page), page.fetch_limit());
        let rows = self
            .read(move |c| {
                let mut q = users::table
                    .filter(users::tenant_id.eq(tenant))
                    .select(UserRow::as_select())
                    .order(users::id.desc())
                    .limit(limit)
                    .into_boxed();
                if let Some(after) = after {
                    q = q.filter(users::id.lt(after));
                }
                Ok(convert(q.load(c)?)?)
            })
            .await?;
        Ok(Page::from_rows(rows, page, |u: &User| u.id.0))
    }

    async fn update_user(&self, user: &User) -> Result<()> {
        let user = user.clone();
        self.transaction(move |c| {
            let (tenant, id) = (id_text(user.tenant_id.0), id_text(user.id.0));
            let current = user_in_tenant(c, &tenant, &id)?.ok_or_else(|| DomainError::not_found("user", user.id))?;
            if current.is_active_admin() && !user.is_active_admin() && active_admins(c, &tenant)? <= 1 {
                return Err(last_admin());
            }
            let row = UserRow::from(&user);
            diesel::update(users::table.find(&id))
                .set((
                    users::email.eq(row.email),
                    users::name.eq(row.name),
                    users::role.eq(row.role),
                    users::status.eq(row.status),
                    users::password_hash.eq(row.password_hash),
                    users::updated_at.eq(row.updated_at),
                    users::last_login_at.eq(row.last_login_at),
                ))
                .execute(c)?;
            Ok(())
        })
        .await
    }

    async fn delete_user(&self, tenant: TenantId, id: UserId) -> Result<()> {
        self.transaction(move |c| {
            let (tenant_text, id_text) = (id_text(tenant.0), id_text(id.0));
            let current =
                user_in_tenant(c, &tenant_text, &id_text)?.ok_or_else(|| DomainError::not_found("user", id))?;
            if current.is_active_admin() && active_admins(c, &tenant_text)? <= 1 {
                return Err(last_admin());
            }
            // The schema cascades too; deleting explicitly does not depend on the pragma.
            diesel::delete(api_keys::table.filter(api_keys::user_id.eq(&id_text))).execute(c)?;
            diesel::delete(sessions::table.filter(sessions::user_id.eq(&id_text))).execute(c)?;
            diesel::delete(user_sso_identities::table.filter(user_sso_identities::user_id.eq(&id_text))).execute(c)?;
            // `ON DELETE SET NULL`, likewise.
            diesel::update(policies::table.filter(policies::created_by.eq(&id_text)))
                .set(policies::created_by.eq(None::<String>))
                .execute(c)?;
            diesel::delete(users::table.find(&id_text)).execute(c)?;
            Ok(())
        })
        .await
    }

    async fn find_user_by_sso_identity(&self, tenant: TenantId, issuer: &str, subject: &str) -> Result<Option<User>> {
        let (tenant, issuer, subject) = (id_text(tenant.0), issuer.to_owned(), subject.to_owned());
        self.read(move |c| {
            let row = user_sso_identities::table
                .inner_join(users::table)
                .filter(user_sso_identities::tenant_id.eq(&tenant))
                .filter(user_sso_identities::issuer.eq(issuer))
                .filter(user_sso_identities::subject.eq(subject))
                .filter(users::tenant_id.eq(&tenant))
                .select(UserRow::as_select())
                .first(c)
                .optional()?;
            Ok(row.map(User::try_from).transpose()?)
        })
        .await
    }

    async fn sso_subject_of(&self, tenant: TenantId, user: UserId, issuer: &str) -> Result<Option<String>> {
        let (tenant, user, issuer) = (id_text(tenant.0), id_text(user.0), issuer.to_owned());
        self.read(move |c| {
            Ok(user_sso_identities::table
                .filter(user_sso_identities::tenant_id.eq(tenant))
                .filter(user_sso_identities::user_id.eq(user))
                .filter(user_sso_identities::issuer.eq(issuer))
                .select(user_sso_identities::subject)
                .first(c)
                .optional()?)
        })
        .await
    }

    async fn link_sso_identity(
        &self,
        tenant: TenantId,
        user: UserId,
        issuer: &str,
        subject: &str,
        at: OffsetDateTime,
    ) -> Result<()> {
        let (tenant_text, user_text, issuer, subject) =
            (id_text(tenant.0), id_text(user.0), issuer.to_owned(), subject.to_owned());
        self.transaction(move |c| {
            if user_in_tenant(c, &tenant_text, &user_text)?.is_none() {
                return Err(DomainError::not_found("user", user).into());
            }
            // Both unique keys (the identity; the user's issuer) answer `Conflict`.
            diesel::insert_into(user_sso_identities::table)
                .values((
                    user_sso_identities::tenant_id.eq(&tenant_text),
                    user_sso_identities::issuer.eq(&issuer),
                    user_sso_identities::subject.eq(&subject),
                    user_sso_identities::user_id.eq(&user_text),
                    user_sso_identities::created_at.eq(at),
                ))
                .execute(c)?;
            Ok(())
        })
        .await
    }
}

#[async_trait]
impl ApiKeyRepo for SqliteStore {
    async fn insert_api_key(&self, key: &ApiKey) -> Result<()> {
        let row = ApiKeyRow::try_from(key)?;
        self.transaction(move |c| {
            diesel::insert_into(api_keys::table).values(&row).execute(c)?;
            Ok(())
        })
        .await
    }

    async fn find_api_key_by_prefix(&self, prefix: &str) -> Result<Option<ApiKey>> {
        let prefix = prefix.to_owned();
        self.read(move |c| {
            let row = api_keys::table
                .filter(api_keys::prefix.eq(prefix))
                .select(ApiKeyRow::as_select())
                .first(c)
                .optional()?;
            Ok(row.map(ApiKey::try_from).transpose()?)
        })
        .await
    }

    async fn get_api_key(&self, tenant: TenantId, id: ApiKeyId) -> Result<Option<ApiKey>> {
        let (tenant, id) = (id_text(tenant.0), id_text(id.0));
        self.read(move |c| {
            let row = api_keys::table
                .filter(api_keys::id.eq(id))
                .filter(api_keys::tenant_id.eq(tenant))
                .select(ApiKeyRow::as_select())
                .first(c)
                .optional()?;
            Ok(row.map(ApiKey::try_from).transpose()?)
        })
        .await
    }

    async fn list_api_keys(&self, tenant: TenantId, user: Option<UserId>, page: &PageRequest) -> Result<Page<ApiKey>> {
        let (tenant, user) = (id_text(tenant.0), user.map(|u| id_text(u.0)));
        let (after, limit) = (after_text(page), page.fetch_limit());
        let rows = self
            .read(move |c| {
                let mut q = api_keys::table
                    .filter(api_keys::tenant_id.eq(tenant))
                    .filter(api_keys::revoked_at.is_null())
                    .select(ApiKeyRow::as_select())
                    .order(api_keys::id.desc())
                    .limit(limit)
                    .into_boxed();
                if let Some(user) = user {
                    q = q.filter(api_keys::user_id.eq(user));
                }
                if let Some(after) = after {
                    q = q.filter(api_keys::id.lt(after));
                }
                Ok(convert(q.load(c)?)?)
            })
            .await?;
        Ok(Page::from_rows(rows, page, |k: &ApiKey| k.id.0))
    }

    async fn revoke_api_key(&self, tenant: TenantId, id: ApiKeyId, at: OffsetDateTime) -> Result<()> {
        let (tenant_text, id_text) = (id_text(tenant.0), id_text(id.0));
        let n = self
            .transaction(move |c| {
                let target = api_keys::table
                    .filter(api_keys::id.eq(id_text))
                    .filter(api_keys::tenant_id.eq(tenant_text))
                    .filter(api_keys::revoked_at.is_null());
                Ok(diesel::update(target).set(api_keys::revoked_at.eq(at)).execute(c)?)
            })
            .await?;
        if n == 0 { Err(DomainError::not_found("api key", id)) } else { Ok(()) }
    }

    async fn touch_api_key(&self, id: ApiKeyId, at: OffsetDateTime) -> Result<()> {
        let key = id_text(id.0);
        let n = self
            .transaction(move |c| {
                Ok(diesel::update(api_keys::table.find(key)).set(api_keys::last_used_at.eq(at)).execute(c)?)
            })
            .await?;
        if n == 0 { Err(DomainError::not_found("api key", id)) } else { Ok(()) }
    }
}

#[async_trait]
impl SessionRepo for SqliteStore {
    async fn insert_session(&self, session: &Session, key: Option<&ApiKey>) -> Result<()> {
        let session = SessionRow::from(session);
        let key = key.map(ApiKeyRow::try_from).transpose()?;
        self.transaction(move |c| {
            diesel::insert_into(sessions::table).values(&session).execute(c)?;
            diesel::update(users::table.find(&session.user_id))
                .set(users::last_login_at.eq(session.created_at))
                .execute(c)?;
            if let Some(key) = key {
                diesel::insert_into(api_keys::table).values(&key).execute(c)?;
            }
            Ok(())
        })
        .await
    }

    async fn get_session(&self, tenant: TenantId, id: SessionId) -> Result<Option<Session>> {
        let (tenant, id) = (id_text(tenant.0), id_text(id.0));
        self.read(move |c| {
            let row = sessions::table
                .filter(sessions::id.eq(id))
                .filter(sessions::tenant_id.eq(tenant))
                .select(SessionRow::as_select())
                .first(c)
                .optional()?;
            Ok(row.map(Session::try_from).transpose()?)
        })
        .await
    }

    async fn revoke_session(&self, tenant: TenantId, id: SessionId, at: OffsetDateTime) -> Result<()> {
        self.transaction(move |c| {
            let target = id_text(id.0);
            let live: i64 = sessions::table
                .filter(sessions::id.eq(&target))
                .filter(sessions::tenant_id.eq(id_text(tenant.0)))
                .filter(sessions::revoked_at.is_null())
                .count()
                .get_result(c)?;
            if live == 0 {
                return Err(DomainError::not_found("session", id).into());
            }
            revoke_sessions(c, &[target], at)
        })
        .await
    }

    async fn revoke_user_sessions(
        &self,
        tenant: TenantId,
        user: UserId,
        keep: Option<SessionId>,
        at: OffsetDateTime,
    ) -> Result<Vec<SessionId>> {
        let (tenant, user, keep) = (id_text(tenant.0), id_text(user.0), keep.map(|k| id_text(k.0)));
        self.transaction(move |c| {
            let candidates: Vec<(String, OffsetDateTime)> = sessions::table
                .filter(sessions::tenant_id.eq(tenant))
                .filter(sessions::user_id.eq(user))
                .filter(sessions::revoked_at.is_null())
                .select((sessions::id, sessions::expires_at))
                .order(sessions::id.desc())
                .load(c)?;
            // Expiry is compared here, not in SQL: stored timestamps are text of varying width.
            let ids: Vec<String> = candidates
                .into_iter()
                .filter(|(id, expires_at)| *expires_at > at && keep.as_ref() != Some(id))
                .map(|(id, _)| id)
                .collect();
            revoke_sessions(c, &ids, at)?;
            Ok(ids.iter().map(|id| parse_id("sessions.id", id)).collect::<Result<Vec<SessionId>>>()?)
        })
        .await
    }
}

const ADD_HOURLY_SQL: &str = "\
INSERT INTO hourly_counts (tenant_id, metric, hour, label, count) VALUES (?, ?, ?, ?, ?)
ON CONFLICT (tenant_id, metric, hour, label) DO UPDATE SET count = count + excluded.count";

const HOURLY_SQL: &str =
    "SELECT hour, label, count FROM hourly_counts WHERE tenant_id = ? AND metric = ? AND hour >= ?";

#[derive(QueryableByName)]
struct HourlyRow {
    #[diesel(sql_type = BigInt)]
    hour: i64,
    #[diesel(sql_type = Text)]
    label: String,
    #[diesel(sql_type = BigInt)]
    count: i64,
}

#[async_trait]
impl Store for SqliteStore {
    async fn add_hourly_counts(&self, counts: &[(HourlyKey, i64)]) -> Result<()> {
        if counts.is_empty() {
            return Ok(());
        }
        let counts = counts.to_vec();
        self.transaction(move |c| {
            for (key, count) in counts {
                diesel::sql_query(ADD_HOURLY_SQL)
                    .bind::<Text, _>(id_text(key.tenant_id.0))
                    .bind::<Text, _>(key.metric)
                    .bind::<BigInt, _>(key.hour)
                    .bind::<Text, _>(key.label)
                    .bind::<BigInt, _>(count)
                    .execute(c)?;
            }
            Ok(())
        })
        .await
    }

    async fn hourly_counts(&self, tenant: TenantId, metric: &str, from_hour: i64) -> Result<Vec<(HourlyKey, i64)>> {
        let metric = metric.to_owned();
        self.read(move |c| {
            let rows: Vec<HourlyRow> = diesel::sql_query(HOURLY_SQL)
                .bind::<Text, _>(id_text(tenant.0))
                .bind::<Text, _>(&metric)
                .bind::<BigInt, _>(from_hour)
                .load(c)?;
            Ok(rows
                .into_iter()
                .map(|r| {
                    let key = HourlyKey { tenant_id: tenant, metric: metric.clone(), hour: r.hour, label: r.label };
                    (key, r.count)
                })
                .collect())
        })
        .await
    }

    async fn ping(&self) -> Result<()> {
        self.read(|c| {
            diesel::sql_query("SELECT 1").execute(c)?;
            Ok(())
        })
        .await
    }

    async fn count_resources(&self, tenant: TenantId) -> Result<ResourceCounts> {
        let tenant = id_text(tenant.0);
        self.read(move |c| {
            c.transaction(|c| {
                let by_status: Vec<(String, i64)> = users::table
                    .filter(users::tenant_id.eq(&tenant))
                    .group_by(users::status)
                    .select((users::status, diesel::dsl::count_star()))
                    .load(c)?;
                let keys: i64 = api_keys::table
                    .filter(api_keys::tenant_id.eq(&tenant))
                    .filter(api_keys::revoked_at.is_null())
                    .count()
                    .get_result(c)?;
                let mut counts = ResourceCounts { api_keys: count(keys), ..ResourceCounts::default() };
                for (status, n) in by_status {
                    let n = count(n);
                    counts.users += n;
                    match UserStatus::parse(&status) {
                        Some(UserStatus::Active) => counts.active_users += n,
                        Some(UserStatus::Blocked) => counts.blocked_users += n,
                        None => return Err(DomainError::Internal(format!("unknown users.status {status:?}")).into()),
                    }
                }
                Ok(counts)
            })
        })
        .await
    }

    fn backend(&self) -> &'static str {
        "sqlite"
    }
}

/// SQL counts are never negative.
fn count(n: i64) -> u64 {
    u64::try_from(n).unwrap_or_default()
}
