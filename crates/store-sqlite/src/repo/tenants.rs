//! Tenants and their signing secrets.

use agentgov_domain::ids::TenantId;
use agentgov_domain::model::{ApiKey, RiskLevels, SecretPurpose, Tenant, TenantSecret, User};
use agentgov_domain::page::{Page, PageRequest};
use agentgov_domain::ports::store::TenantRepo;
use agentgov_domain::{DomainError, Result};
use async_trait::async_trait;
use diesel::prelude::*;

use super::accounts::{after_text, tenant_exists};
use crate::SqliteStore;
use crate::repo::relevel;
use crate::rows::{ApiKeyRow, TenantRow, TenantSecretRow, UserRow, convert, id_text};
use crate::schema::{api_keys, tenant_secrets, tenants, users};

#[async_trait]
impl TenantRepo for SqliteStore {
    async fn create_tenant(&self, tenant: &Tenant, admin: &User, key: &ApiKey, secret: &TenantSecret) -> Result<()> {
        let (tenant, admin, key) = (TenantRow::try_from(tenant)?, UserRow::from(admin), ApiKeyRow::from(key));
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
            relevel(c, row.id, &levels)
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
            tenant_exists(c, tenant)?;
            diesel::replace_into(tenant_secrets::table).values(&row).execute(c)?;
            Ok(())
        })
        .await
    }

    async fn add_tenant_secret(&self, secret: &TenantSecret) -> Result<TenantSecret> {
        let (tenant, row) = (secret.tenant_id, TenantSecretRow::from(secret));
        self.transaction(move |c| {
            tenant_exists(c, tenant)?;
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
