//! Row structs and their conversions to and from the domain records. Reading never panics:
//! a value the domain cannot represent is an `Internal` error naming the column.

use agentgov_domain::model::{ApiKey, ApiKeyKind, Permission, Role, Session, Tenant, User, UserStatus};
use agentgov_domain::{DomainError, Result};
use diesel::prelude::*;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::schema::{api_keys, sessions, tenants, users};

fn bad(column: &str, value: &str) -> DomainError {
    DomainError::Internal(format!("unreadable stored value in {column}: {value:?}"))
}

pub(crate) fn parse_id<T: From<Uuid>>(column: &str, value: &str) -> Result<T> {
    Uuid::parse_str(value).map(T::from).map_err(|_| bad(column, value))
}

/// Ids are stored lower-case and hyphenated, so that text order is id order.
pub(crate) fn id_text(id: Uuid) -> String {
    id.hyphenated().to_string()
}

#[derive(Debug, Queryable, Selectable, Insertable)]
#[diesel(table_name = tenants, check_for_backend(diesel::sqlite::Sqlite))]
pub(crate) struct TenantRow {
    pub id: String,
    pub name: String,
    pub created_at: OffsetDateTime,
}

impl From<&Tenant> for TenantRow {
    fn from(t: &Tenant) -> Self {
        Self { id: id_text(t.id.0), name: t.name.clone(), created_at: t.created_at }
    }
}

impl TryFrom<TenantRow> for Tenant {
    type Error = DomainError;
    fn try_from(r: TenantRow) -> Result<Self> {
        Ok(Tenant { id: parse_id("tenants.id", &r.id)?, name: r.name, created_at: r.created_at })
    }
}

#[derive(Debug, Queryable, Selectable, Insertable)]
#[diesel(table_name = users, check_for_backend(diesel::sqlite::Sqlite))]
pub(crate) struct UserRow {
    pub id: String,
    pub tenant_id: String,
    pub email: String,
    pub name: Option<String>,
    pub role: String,
    pub status: String,
    pub password_hash: Option<String>,
    pub created_at: OffsetDateTime,
    pub updated_at: OffsetDateTime,
    pub last_login_at: Option<OffsetDateTime>,
}

impl From<&User> for UserRow {
    fn from(u: &User) -> Self {
        Self {
            id: id_text(u.id.0),
            tenant_id: id_text(u.tenant_id.0),
            email: u.email.clone(),
            name: u.name.clone(),
            role: u.role.as_str().to_owned(),
            status: u.status.as_str().to_owned(),
            password_hash: u.password_hash.clone(),
            created_at: u.created_at,
            updated_at: u.updated_at,
            last_login_at: u.last_login_at,
        }
    }
}

impl TryFrom<UserRow> for User {
    type Error = DomainError;
    fn try_from(r: UserRow) -> Result<Self> {
        Ok(User {
            id: parse_id("users.id", &r.id)?,
            tenant_id: parse_id("users.tenant_id", &r.tenant_id)?,
            role: r.role.parse::<Role>().map_err(|_| bad("users.role", &r.role))?,
            status: UserStatus::parse(&r.status).ok_or_else(|| bad("users.status", &r.status))?,
            email: r.email,
            name: r.name,
            password_hash: r.password_hash,
            created_at: r.created_at,
            updated_at: r.updated_at,
            last_login_at: r.last_login_at,
        })
    }
}

#[derive(Debug, Queryable, Selectable, Insertable)]
#[diesel(table_name = sessions, check_for_backend(diesel::sqlite::Sqlite))]
pub(crate) struct SessionRow {
    pub id: String,
    pub tenant_id: String,
    pub user_id: String,
    pub created_at: OffsetDateTime,
    pub expires_at: OffsetDateTime,
    pub revoked_at: Option<OffsetDateTime>,
}

impl From<&Session> for SessionRow {
    fn from(s: &Session) -> Self {
        Self {
            id: id_text(s.id.0),
            tenant_id: id_text(s.tenant_id.0),
            user_id: id_text(s.user_id.0),
            created_at: s.created_at,
            expires_at: s.expires_at,
            revoked_at: s.revoked_at,
        }
    }
}

impl TryFrom<SessionRow> for Session {
    type Error = DomainError;
    fn try_from(r: SessionRow) -> Result<Self> {
        Ok(Session {
            id: parse_id("sessions.id", &r.id)?,
            tenant_id: parse_id("sessions.tenant_id", &r.tenant_id)?,
            user_id: parse_id("sessions.user_id", &r.user_id)?,
            created_at: r.created_at,
            expires_at: r.expires_at,
            revoked_at: r.revoked_at,
        })
    }
}

#[derive(Debug, Queryable, Selectable, Insertable)]
#[diesel(table_name = api_keys, check_for_backend(diesel::sqlite::Sqlite))]
pub(crate) struct ApiKeyRow {
    pub id: String,
    pub tenant_id: String,
    pub user_id: String,
    pub session_id: Option<String>,
    pub name: String,
    pub prefix: String,
    pub key_hash: Vec<u8>,
    pub permissions: String,
    pub kind: String,
    pub created_at: OffsetDateTime,
    pub expires_at: Option<OffsetDateTime>,
    pub last_used_at: Option<OffsetDateTime>,
    pub revoked_at: Option<OffsetDateTime>,
}

impl TryFrom<&ApiKey> for ApiKeyRow {
    type Error = DomainError;
    fn try_from(k: &ApiKey) -> Result<Self> {
        let permissions: Vec<&str> = k.permissions.iter().map(|p| p.as_str()).collect();
        Ok(Self {
            id: id_text(k.id.0),
            tenant_id: id_text(k.tenant_id.0),
            user_id: id_text(k.user_id.0),
            session_id: k.session_id.map(|s| id_text(s.0)),
            name: k.name.clone(),
            prefix: k.prefix.clone(),
            key_hash: k.key_hash.clone(),
            permissions: serde_json::to_string(&permissions).map_err(DomainError::internal)?,
            kind: k.kind.as_str().to_owned(),
            created_at: k.created_at,
            expires_at: k.expires_at,
            last_used_at: k.last_used_at,
            revoked_at: k.revoked_at,
        })
    }
}

impl TryFrom<ApiKeyRow> for ApiKey {
    type Error = DomainError;
    fn try_from(r: ApiKeyRow) -> Result<Self> {
        let permissions: Vec<Permission> =
            serde_json::from_str(&r.permissions).map_err(|_| bad("api_keys.permissions", &r.permissions))?;
        Ok(ApiKey {
            id: parse_id("api_keys.id", &r.id)?,
            tenant_id: parse_id("api_keys.tenant_id", &r.tenant_id)?,
            user_id: parse_id("api_keys.user_id", &r.user_id)?,
            session_id: r.session_id.as_deref().map(|s| parse_id("api_keys.session_id", s)).transpose()?,
            kind: ApiKeyKind::parse(&r.kind).ok_or_else(|| bad("api_keys.kind", &r.kind))?,
            permissions,
            name: r.name,
            prefix: r.prefix,
            key_hash: r.key_hash,
            created_at: r.created_at,
            expires_at: r.expires_at,
            last_used_at: r.last_used_at,
            revoked_at: r.revoked_at,
        })
    }
}

/// Converts every row, failing on the first unreadable one.
pub(crate) fn convert<R, T: TryFrom<R, Error = DomainError>>(rows: Vec<R>) -> Result<Vec<T>> {
    rows.into_iter().map(T::try_from).collect()
}
