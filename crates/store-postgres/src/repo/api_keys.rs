use agentgov_domain::ids::{ApiKeyId, TenantId, UserId};
use agentgov_domain::model::ApiKey;
use agentgov_domain::page::{Page, PageRequest};
use agentgov_domain::ports::ApiKeyRepo;
use agentgov_domain::{DomainError, Result};
use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use time::OffsetDateTime;

use super::page_of;
use crate::error;
use crate::rows::ApiKeyRow;
use crate::schema::api_keys;
use crate::store::PgStore;

#[async_trait]
impl ApiKeyRepo for PgStore {
    async fn insert_api_key(&self, key: &ApiKey) -> Result<()> {
        let row = ApiKeyRow::from(key);
        let mut conn = self.conn().await?;
        diesel::insert_into(api_keys::table).values(&row).execute(&mut conn).await.map_err(error::db)?;
        Ok(())
    }

    async fn find_api_key_by_prefix(&self, prefix: &str) -> Result<Option<ApiKey>> {
        let mut conn = self.conn().await?;
        let row = api_keys::table
            .filter(api_keys::prefix.eq(prefix))
            .select(ApiKeyRow::as_select())
            .first(&mut conn)
            .await
            .optional()
            .map_err(error::db)?;
        row.map(ApiKey::try_from).transpose()
    }

    async fn get_api_key(&self, tenant: TenantId, id: ApiKeyId) -> Result<Option<ApiKey>> {
        let mut conn = self.conn().await?;
        let row = api_keys::table
            .filter(api_keys::id.eq(id.as_uuid()))
            .filter(api_keys::tenant_id.eq(tenant.as_uuid()))
            .select(ApiKeyRow::as_select())
            .first(&mut conn)
            .await
            .optional()
            .map_err(error::db)?;
        row.map(ApiKey::try_from).transpose()
    }

    async fn list_api_keys(&self, tenant: TenantId, user: Option<UserId>, page: &PageRequest) -> Result<Page<ApiKey>> {
        let mut conn = self.conn().await?;
        let mut query = api_keys::table
            .filter(api_keys::tenant_id.eq(tenant.as_uuid()))
            .filter(api_keys::revoked_at.is_null())
            .select(ApiKeyRow::as_select())
            .order(api_keys::id.desc())
            .limit(page.fetch_limit())
            .into_boxed();
        if let Some(user) = user {
            query = query.filter(api_keys::user_id.eq(user.as_uuid()));
        }
        if let Some(after) = page.after {
            query = query.filter(api_keys::id.lt(after));
        }
        let rows: Vec<ApiKeyRow> = query.load(&mut conn).await.map_err(error::db)?;
        page_of(rows, page, |k: &ApiKey| k.id.as_uuid())
    }

    async fn revoke_api_key(&self, tenant: TenantId, id: ApiKeyId, at: OffsetDateTime) -> Result<()> {
        let mut conn = self.conn().await?;
        let revoked = diesel::update(
            api_keys::table
                .filter(api_keys::id.eq(id.as_uuid()))
                .filter(api_keys::tenant_id.eq(tenant.as_uuid()))
                .filter(api_keys::revoked_at.is_null()),
        )
        .set(api_keys::revoked_at.eq(at))
        .execute(&mut conn)
        .await
        .map_err(error::db)?;
        if revoked == 0 { Err(DomainError::not_found("api key", id)) } else { Ok(()) }
    }

    async fn touch_api_key(&self, id: ApiKeyId, at: OffsetDateTime) -> Result<()> {
        let mut conn = self.conn().await?;
        let touched = diesel::update(api_keys::table.find(id.as_uuid()))
            .set(api_keys::last_used_at.eq(at))
            .execute(&mut conn)
            .await
            .map_err(error::db)?;
        if touched == 0 { Err(DomainError::not_found("api key", id)) } else { Ok(()) }
    }
}
