//! Users: accounts, roles, the last-admin rule, blocking (which ends their sessions).

use agentgov_domain::ids::{TenantId, UserId};
use agentgov_domain::model::User;
use agentgov_domain::page::{Page, PageRequest};
use agentgov_domain::ports::store::UserRepo;
use agentgov_domain::{DomainError, Result};
use async_trait::async_trait;
use diesel::prelude::*;
use time::OffsetDateTime;

use super::accounts::{active_admins, after_text, last_admin, user_in_tenant};
use crate::SqliteStore;
use crate::rows::{UserRow, convert, id_text};
use crate::schema::{api_keys, policies, sessions, user_sso_identities, users};

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
