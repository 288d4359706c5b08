//! What the account repositories (tenants, users, API keys, sessions) share.

use agentgov_domain::DomainError;
use agentgov_domain::ids::TenantId;
use agentgov_domain::model::{Role, User, UserStatus};
use agentgov_domain::page::PageRequest;
use diesel::SqliteConnection;
use diesel::prelude::*;
use time::OffsetDateTime;

use crate::columns::Id;
use crate::error::{TxError, TxResult};
use crate::rows::{UserRow, id_text};
use crate::schema::{api_keys, sessions, tenants, users};

pub(super) fn after_text(req: &PageRequest) -> Option<String> {
    req.after.map(id_text)
}

pub(super) fn admin_roles() -> Vec<&'static str> {
    Role::ALL.into_iter().filter(|r| r.is_admin()).map(Role::as_str).collect()
}

pub(super) fn last_admin() -> TxError {
    TxError::Domain(DomainError::Conflict("the tenant must keep at least one active admin".into()))
}

/// The tenant's active admins, counted inside the caller's transaction.
pub(super) fn active_admins(c: &mut SqliteConnection, tenant: &str) -> TxResult<i64> {
    Ok(users::table
        .filter(users::tenant_id.eq(tenant))
        .filter(users::status.eq(UserStatus::Active.as_str()))
        .filter(users::role.eq_any(admin_roles()))
        .count()
        .get_result(c)?)
}

pub(super) fn user_in_tenant(c: &mut SqliteConnection, tenant: &str, id: &str) -> TxResult<Option<User>> {
    let row = users::table
        .filter(users::id.eq(id))
        .filter(users::tenant_id.eq(tenant))
        .select(UserRow::as_select())
        .first(c)
        .optional()?;
    Ok(row.map(User::try_from).transpose()?)
}

/// Revokes the sessions and their live keys.
pub(super) fn revoke_sessions(c: &mut SqliteConnection, ids: &[Id], at: OffsetDateTime) -> TxResult<()> {
    if ids.is_empty() {
        return Ok(());
    }
    diesel::update(sessions::table.filter(sessions::id.eq_any(ids))).set(sessions::revoked_at.eq(at)).execute(c)?;
    diesel::update(api_keys::table.filter(api_keys::session_id.eq_any(ids)).filter(api_keys::revoked_at.is_null()))
        .set(api_keys::revoked_at.eq(at))
        .execute(c)?;
    Ok(())
}

/// `NotFound` unless the tenant exists (checked inside the caller's transaction).
pub(super) fn tenant_exists(c: &mut SqliteConnection, tenant: TenantId) -> TxResult<()> {
    let found: i64 = tenants::table.filter(tenants::id.eq(Id(tenant.as_uuid()))).count().get_result(c)?;
    if found == 0 { Err(DomainError::not_found("tenant", tenant).into()) } else { Ok(()) }
}
