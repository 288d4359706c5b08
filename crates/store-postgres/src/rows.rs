//! Row structs, one per table, and their conversions to and from the domain's records.
//! Reading never panics: a value the domain cannot represent becomes `Internal`.

use agentgov_domain::model::{ApiKey, ApiKeyKind, Permission, Role, Session, Tenant, User, UserStatus};
use agentgov_domain::{DomainError, Result};
use diesel::prelude::*;
use serde_json::Value;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::schema::{api_keys, sessions, tenants, users};

#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = tenants, check_for_backend(diesel::pg::Pg))]
pub(crate) struct TenantRow {
    pub id: Uuid,
    pub name: String,
    pub created_at: OffsetDateTime,
}

impl From<&Tenant> for TenantRow {
    fn from(t: &Tenant) -> Self {
        Self { id: t.id.as_uuid(), name: t.name.clone(), created_at: t.created_at }
    }
}

impl From<TenantRow> for Tenant {
    fn from(r: TenantRow) -> Self {
        Self { id: r.id.into(), name: r.name, created_at: r.created_at }
    }
}

#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = users, check_for_backend(diesel::pg::Pg))]
pub(crate) struct UserRow {
    pub id: Uuid,
    pub tenant_id: Uuid,
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
            id: u.id.as_uuid(),
            tenant_id: u.tenant_id.as_uuid(),
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
        let role = r.role.parse::<Role>().map_err(|e| corrupt("users", r.id, e))?;
        let status = UserStatus::parse(&r.status)
            .ok_or_else(|| corrupt("users", r.id, format!("unknown status `{}`", r.status)))?;
        Ok(Self {
            id: r.id.into(),
            tenant_id: r.tenant_id.into(),
            email: r.email,
            name: r.name,
            role,
            status,
            password_hash: r.password_hash,
            created_at: r.created_at,
            updated_at: r.updated_at,
            last_login_at: r.last_login_at,
        })
    }
}

#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = sessions, check_for_backend(diesel::pg::Pg))]
pub(crate) struct SessionRow {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub user_id: Uuid,
    pub created_at: OffsetDateTime,
    pub expires_at: OffsetDateTime,
    pub revoked_at: Option<OffsetDateTime>,
}

impl From<&Session> for SessionRow {
    fn from(s: &Session) -> Self {
        Self {
            id: s.id.as_uuid(),
            tenant_id: s.tenant_id.as_uuid(),
            user_id: s.user_id.as_uuid(),
            created_at: s.created_at,
            expires_at: s.expires_at,
            revoked_at: s.revoked_at,
        }
    }
}

impl From<SessionRow> for Session {
    fn from(r: SessionRow) -> Self {
        Self {
            id: r.id.into(),
            tenant_id: r.tenant_id.into(),
            user_id: r.user_id.into(),
            created_at: r.created_at,
            expires_at: r.expires_at,
            revoked_at: r.revoked_at,
        }
    }
}

#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = api_keys, check_for_backend(diesel::pg::Pg))]
pub(crate) struct ApiKeyRow {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub user_id: Uuid,
    pub session_id: Option<Uuid>,
    pub name: String,
    pub prefix: String,
    pub key_hash: Vec<u8>,
    /// A JSON array of permission strings, e.g. `["agents:read"]`.
    pub permissions: Value,
    pub kind: String,
    pub created_at: OffsetDateTime,
    pub expires_at: Option<OffsetDateTime>,
    pub last_used_at: Option<OffsetDateTime>,
    pub revoked_at: Option<OffsetDateTime>,
}

impl From<&ApiKey> for ApiKeyRow {
    fn from(k: &ApiKey) -> Self {
        Self {
            id: k.id.as_uuid(),
            tenant_id: k.tenant_id.as_uuid(),
            user_id: k.user_id.as_uuid(),
            session_id: k.session_id.map(|s| s.as_uuid()),
            name: k.name.clone(),
            prefix: k.prefix.clone(),
            key_hash: k.key_hash.clone(),
            permissions: Value::Array(k.permissions.iter().map(|p| Value::String(p.as_str().to_owned())).collect()),
            kind: k.kind.as_str().to_owned(),
            created_at: k.created_at,
            expires_at: k.expires_at,
            last_used_at: k.last_used_at,
            revoked_at: k.revoked_at,
        }
    }
}

impl TryFrom<ApiKeyRow> for ApiKey {
    type Error = DomainError;

    fn try_from(r: ApiKeyRow) -> Result<Self> {
        let permissions = parse_permissions(&r.permissions).map_err(|e| corrupt("api_keys", r.id, e))?;
        let kind = ApiKeyKind::parse(&r.kind)
            .ok_or_else(|| corrupt("api_keys", r.id, format!("unknown kind `{}`", r.kind)))?;
        Ok(Self {
            id: r.id.into(),
            tenant_id: r.tenant_id.into(),
            user_id: r.user_id.into(),
            name: r.name,
            prefix: r.prefix,
            key_hash: r.key_hash,
            permissions,
            kind,
            session_id: r.session_id.map(Into::into),
            created_at: r.created_at,
            expires_at: r.expires_at,
            last_used_at: r.last_used_at,
            revoked_at: r.revoked_at,
        })
    }
}

fn parse_permissions(value: &Value) -> std::result::Result<Vec<Permission>, String> {
    let items = value.as_array().ok_or("permissions is not a JSON array")?;
    items
        .iter()
        .map(|item| item.as_str().ok_or_else(|| format!("permission `{item}` is not a string"))?.parse::<Permission>())
        .collect()
}

fn corrupt(table: &str, id: Uuid, problem: impl std::fmt::Display) -> DomainError {
    DomainError::Internal(format!("bad row in {table} (id {id}): {problem}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permissions_round_trip_through_json() {
        let perms = vec![Permission::AgentsRead, Permission::GuardManage];
        let value = Value::Array(perms.iter().map(|p| Value::String(p.as_str().to_owned())).collect());
        assert_eq!(value, serde_json::json!(["agents:read", "guard:manage"]));
        assert_eq!(parse_permissions(&value).unwrap(), perms);
    }

    #[test]
    fn bad_stored_permissions_are_errors_not_panics() {
        assert!(parse_permissions(&serde_json::json!({"a": 1})).is_err());
        assert!(parse_permissions(&serde_json::json!([1])).is_err());
        assert!(parse_permissions(&serde_json::json!(["root:all"])).is_err());
    }

    #[test]
    fn bad_stored_role_becomes_internal() {
        let row = UserRow {
            id: Uuid::now_v7(),
            tenant_id: Uuid::now_v7(),
            email: "a@example.com".into(),
            name: None,
            role: "root".into(),
            status: "active".into(),
            password_hash: None,
            created_at: OffsetDateTime::UNIX_EPOCH,
            updated_at: OffsetDateTime::UNIX_EPOCH,
            last_login_at: None,
        };
        assert!(matches!(User::try_from(row), Err(DomainError::Internal(_))));
    }
}
