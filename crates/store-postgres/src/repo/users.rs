use agentgov_domain::ids::{TenantId, UserId};
use agentgov_domain::model::{Role, User, UserStatus};
use agentgov_domain::page::{Page, PageRequest};
use agentgov_domain::ports::UserRepo;
use agentgov_domain::{DomainError, Result};
use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use time::OffsetDateTime;
use uuid::Uuid;

use super::page_of;
use crate::error::{self, TxError};
use crate::rows::UserRow;
use crate::schema::{tenants, user_sso_identities, users};
use crate::store::PgStore;

const LAST_ADMIN: &str = "tenant must keep at least one active admin";

#[async_trait]
impl UserRepo for PgStore {
    async fn insert_user(&self, user: &User) -> Result<()> {
        let row = UserRow::from(user);
        let mut conn = self.conn().await?;
        diesel::insert_into(users::table).values(&row).execute(&mut conn).await.map_err(error::db)?;
        Ok(())
    }

    async fn get_user(&self, tenant: TenantId, id: UserId) -> Result<Option<User>> {
        let mut conn = self.conn().await?;
        find_user(&mut conn, tenant.as_uuid(), id.as_uuid()).await.map_err(error::db)?.map(User::try_from).transpose()
    }

    async fn find_user_by_email(&self, email: &str) -> Result<Option<User>> {
        let mut conn = self.conn().await?;
        let row = users::table
            .filter(users::email.eq(email))
            .select(UserRow::as_select())
            .first(&mut conn)
            .await
            .optional()
            .map_err(error::db)?;
        row.map(User::try_from).transpose()
    }

    async fn list_users(&self, tenant: TenantId, page: &PageRequest) -> Result<Page<User>> {
        let mut conn = self.conn().await?;
        let mut query = users::table
            .filter(users::tenant_id.eq(tenant.as_uuid()))
            .select(UserRow::as_select())
            .order(users::id.desc())
            .limit(page.fetch_limit())
            .into_boxed();
        if let Some(after) = page.after {
            query = query.filter(users::id.lt(after));
        }
        let rows: Vec<UserRow> = query.load(&mut conn).await.map_err(error::db)?;
        page_of(rows, page, |u: &User| u.id.as_uuid())
    }

    async fn update_user(&self, user: &User) -> Result<()> {
        let (tenant, id) = (user.tenant_id.as_uuid(), user.id.as_uuid());
        let row = UserRow::from(user);
        let still_admin = user.is_active_admin();
        let mut conn = self.tx_conn().await?;
        let conn: &mut AsyncPgConnection = &mut conn;
        conn.transaction(async |conn| -> Result<(), TxError> {
            let current = lock_and_find(conn, tenant, id).await?;
            if current.is_active_admin() && !still_admin {
                ensure_another_active_admin(conn, tenant, id).await?;
            }
            diesel::update(users::table.filter(users::id.eq(id)).filter(users::tenant_id.eq(tenant)))
                .set((
                    users::email.eq(&row.email),
                    users::name.eq(&row.name),
                    users::role.eq(&row.role),
                    users::status.eq(&row.status),
                    users::password_hash.eq(&row.password_hash),
                    users::updated_at.eq(row.updated_at),
                    users::last_login_at.eq(row.last_login_at),
                ))
                .execute(conn)
                .await?;
            Ok(())
        })
        .await
        .map_err(DomainError::from)
    }

    async fn delete_user(&self, tenant: TenantId, id: UserId) -> Result<()> {
        let (tenant, id) = (tenant.as_uuid(), id.as_uuid());
        let mut conn = self.tx_conn().await?;
        let conn: &mut AsyncPgConnection = &mut conn;
        conn.transaction(async |conn| -> Result<(), TxError> {
            let current = lock_and_find(conn, tenant, id).await?;
            if current.is_active_admin() {
                ensure_another_active_admin(conn, tenant, id).await?;
            }
            // Sessions, API keys and SSO identities go with the user (ON DELETE CASCADE).
            diesel::delete(users::table.filter(users::id.eq(id)).filter(users::tenant_id.eq(tenant)))
                .execute(conn)
                .await?;
            Ok(())
        })
        .await
        .map_err(DomainError::from)
    }

    async fn find_user_by_sso_identity(&self, tenant: TenantId, issuer: &str, subject: &str) -> Result<Option<User>> {
        let tenant = tenant.as_uuid();
        let mut conn = self.conn().await?;
        let row = user_sso_identities::table
            .inner_join(users::table)
            .filter(user_sso_identities::tenant_id.eq(tenant))
            .filter(user_sso_identities::issuer.eq(issuer))
            .filter(user_sso_identities::subject.eq(subject))
            .filter(users::tenant_id.eq(tenant))
            .select(UserRow::as_select())
            .first(&mut conn)
            .await
            .optional()
            .map_err(error::db)?;
        row.map(User::try_from).transpose()
    }

    async fn sso_subject_of(&self, tenant: TenantId, user: UserId, issuer: &str) -> Result<Option<String>> {
        let mut conn = self.conn().await?;
        user_sso_identities::table
            .filter(user_sso_identities::tenant_id.eq(tenant.as_uuid()))
            .filter(user_sso_identities::user_id.eq(user.as_uuid()))
            .filter(user_sso_identities::issuer.eq(issuer))
            .select(user_sso_identities::subject)
            .first(&mut conn)
            .await
            .optional()
            .map_err(error::db)
    }

    async fn link_sso_identity(
        &self,
        tenant: TenantId,
        user: UserId,
        issuer: &str,
        subject: &str,
        at: OffsetDateTime,
    ) -> Result<()> {
        let (tenant, id) = (tenant.as_uuid(), user.as_uuid());
        let mut conn = self.tx_conn().await?;
        let conn: &mut AsyncPgConnection = &mut conn;
        conn.transaction(async |conn| -> Result<(), TxError> {
            if find_user(conn, tenant, id).await?.is_none() {
                return Err(TxError::Domain(DomainError::not_found("user", id)));
            }
            // Both unique keys (the identity; the user's issuer) answer `Conflict`.
            diesel::insert_into(user_sso_identities::table)
                .values((
                    user_sso_identities::tenant_id.eq(tenant),
                    user_sso_identities::issuer.eq(issuer),
                    user_sso_identities::subject.eq(subject),
                    user_sso_identities::user_id.eq(id),
                    user_sso_identities::created_at.eq(at),
                ))
                .execute(conn)
                .await?;
            Ok(())
        })
        .await
        .map_err(DomainError::from)
    }
}

async fn find_user(conn: &mut AsyncPgConnection, tenant: Uuid, id: Uuid) -> QueryResult<Option<UserRow>> {
    users::table
        .filter(users::id.eq(id))
        .filter(users::tenant_id.eq(tenant))
        .select(UserRow::as_select())
        .first(conn)
        .await
        .optional()
}

/// Locks the tenant row, serialising every change that could remove an active admin of
/// this tenant, then reads the user. `NotFound` if either is absent.
///
/// `FOR NO KEY UPDATE` conflicts with itself, which is all the admin check needs, but not
/// with the `FOR KEY SHARE` locks that foreign-key checks take, so inserts of the tenant's
/// users, sessions and keys are not blocked meanwhile.
async fn lock_and_find(conn: &mut AsyncPgConnection, tenant: Uuid, id: Uuid) -> Result<User, TxError> {
    let not_found = || TxError::Domain(DomainError::not_found("user", id));
    let locked: Option<Uuid> =
        tenants::table.find(tenant).select(tenants::id).for_no_key_update().first(conn).await.optional()?;
    if locked.is_none() {
        return Err(not_found());
    }
    let row = find_user(conn, tenant, id).await?.ok_or_else(not_found)?;
    Ok(User::try_from(row)?)
}

/// `Conflict` unless the tenant has an active admin other than `except`.
async fn ensure_another_active_admin(conn: &mut AsyncPgConnection, tenant: Uuid, except: Uuid) -> Result<(), TxError> {
    let admin_roles: Vec<&str> = Role::ALL.into_iter().filter(|r| r.is_admin()).map(Role::as_str).collect();
    let others: i64 = users::table
        .filter(users::tenant_id.eq(tenant))
        .filter(users::id.ne(except))
        .filter(users::status.eq(UserStatus::Active.as_str()))
        .filter(users::role.eq_any(admin_roles))
        .count()
        .get_result(conn)
        .await?;
    if others == 0 { Err(TxError::Domain(DomainError::Conflict(LAST_ADMIN.into()))) } else { Ok(()) }
}
