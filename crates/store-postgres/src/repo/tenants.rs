use agentgov_domain::ids::TenantId;
use agentgov_domain::model::{ApiKey, RiskLevels, SecretPurpose, Tenant, TenantSecret, User};
use agentgov_domain::page::{Page, PageRequest};
use agentgov_domain::ports::TenantRepo;
use agentgov_domain::{DomainError, Result};
use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};

use super::agents::relevel;
use crate::error::{self, TxError};
use crate::rows::{ApiKeyRow, TenantRow, TenantSecretRow, UserRow};
use crate::schema::{api_keys, tenant_secrets, tenants, users};
use crate::store::PgStore;

#[async_trait]
impl TenantRepo for PgStore {
    async fn create_tenant(&self, tenant: &Tenant, admin: &User, key: &ApiKey, secret: &TenantSecret) -> Result<()> {
        let (tenant, admin, key) = (TenantRow::try_from(tenant)?, UserRow::from(admin), ApiKeyRow::from(key));
        let secret = TenantSecretRow::from(secret);
        let mut conn = self.tx_conn().await?;
        let conn: &mut AsyncPgConnection = &mut conn;
        conn.transaction(async |conn| -> Result<(), TxError> {
            diesel::insert_into(tenants::table).values(&tenant).execute(conn).await?;
            diesel::insert_into(users::table).values(&admin).execute(conn).await?;
            diesel::insert_into(api_keys::table).values(&key).execute(conn).await?;
            diesel::insert_into(tenant_secrets::table).values(&secret).execute(conn).await?;
            Ok(())
        })
        .await
        .map_err(DomainError::from)
    }

    async fn get_tenant(&self, id: TenantId) -> Result<Option<Tenant>> {
        let mut conn = self.conn().await?;
        let row = tenants::table
            .find(id.as_uuid())
            .select(TenantRow::as_select())
            .first(&mut conn)
            .await
            .optional()
            .map_err(error::db)?;
        row.map(Tenant::try_from).transpose()
    }

    async fn list_tenants(&self, page: &PageRequest) -> Result<Page<Tenant>> {
        let mut conn = self.conn().await?;
        let mut query = tenants::table
            .select(TenantRow::as_select())
            .order(tenants::id.desc())
            .limit(page.fetch_limit())
            .into_boxed();
        if let Some(after) = page.after {
            query = query.filter(tenants::id.lt(after));
        }
        let rows: Vec<TenantRow> = query.load(&mut conn).await.map_err(error::db)?;
        let tenants = rows.into_iter().map(Tenant::try_from).collect::<Result<Vec<_>>>()?;
        Ok(Page::from_rows(tenants, page, |t: &Tenant| t.id.as_uuid()))
    }

    async fn update_tenant(&self, tenant: &Tenant, levels: &RiskLevels) -> Result<u64> {
        let (id, row) = (tenant.id, TenantRow::try_from(tenant)?);
        let mut conn = self.tx_conn().await?;
        let conn: &mut AsyncPgConnection = &mut conn;
        conn.transaction(async |conn| -> Result<u64, TxError> {
            let n = diesel::update(tenants::table.find(row.id))
                .set((
                    tenants::name.eq(&row.name),
                    tenants::settings.eq(&row.settings),
                    tenants::updated_at.eq(row.updated_at),
                ))
                .execute(conn)
                .await?;
            if n == 0 {
                return Err(DomainError::not_found("tenant", id).into());
            }
            Ok(relevel(conn, row.id, levels).await?)
        })
        .await
        .map_err(DomainError::from)
    }

    async fn get_tenant_secret(&self, tenant: TenantId, purpose: SecretPurpose) -> Result<Option<TenantSecret>> {
        let mut conn = self.conn().await?;
        let row = tenant_secrets::table
            .find((tenant.as_uuid(), purpose.as_str()))
            .select(TenantSecretRow::as_select())
            .first(&mut conn)
            .await
            .optional()
            .map_err(error::db)?;
        row.map(TenantSecret::try_from).transpose()
    }

    async fn put_tenant_secret(&self, secret: &TenantSecret) -> Result<()> {
        let (tenant, row) = (secret.tenant_id, TenantSecretRow::from(secret));
        let mut conn = self.conn().await?;
        let n = diesel::insert_into(tenant_secrets::table)
            .values(&row)
            .on_conflict((tenant_secrets::tenant_id, tenant_secrets::purpose))
            .do_update()
            .set((
                tenant_secrets::secret.eq(&row.secret),
                tenant_secrets::previous.eq(&row.previous),
                tenant_secrets::previous_until.eq(row.previous_until),
                tenant_secrets::require_timestamp.eq(row.require_timestamp),
                tenant_secrets::created_at.eq(row.created_at),
            ))
            .execute(&mut conn)
            .await;
        match n {
            Ok(_) => Ok(()),
            Err(diesel::result::Error::DatabaseError(diesel::result::DatabaseErrorKind::ForeignKeyViolation, _)) => {
                Err(DomainError::not_found("tenant", tenant))
            }
            Err(e) => Err(error::db(e)),
        }
    }

    async fn add_tenant_secret(&self, secret: &TenantSecret) -> Result<TenantSecret> {
        let (tenant, row) = (secret.tenant_id, TenantSecretRow::from(secret));
        let mut conn = self.conn().await?;
        let inserted =
            diesel::insert_into(tenant_secrets::table).values(&row).on_conflict_do_nothing().execute(&mut conn).await;
        match inserted {
            Ok(_) => {}
            Err(diesel::result::Error::DatabaseError(diesel::result::DatabaseErrorKind::ForeignKeyViolation, _)) => {
                return Err(DomainError::not_found("tenant", tenant));
            }
            Err(e) => return Err(error::db(e)),
        }
        let stored = tenant_secrets::table
            .find((row.tenant_id, &row.purpose))
            .select(TenantSecretRow::as_select())
            .first(&mut conn)
            .await
            .map_err(error::db)?;
        TenantSecret::try_from(stored)
    }

    async fn delete_tenant_secret(&self, tenant: TenantId, purpose: SecretPurpose) -> Result<bool> {
        let mut conn = self.conn().await?;
        let n = diesel::delete(tenant_secrets::table.find((tenant.as_uuid(), purpose.as_str())))
            .execute(&mut conn)
            .await
            .map_err(error::db)?;
        Ok(n > 0)
    }
}
