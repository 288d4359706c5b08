//! API keys.

use agentgov_domain::ids::{ApiKeyId, TenantId, UserId};
use agentgov_domain::model::ApiKey;
use agentgov_domain::page::{Page, PageRequest};
use agentgov_domain::ports::store::ApiKeyRepo;
use agentgov_domain::{DomainError, Result};
use async_trait::async_trait;
use diesel::prelude::*;
use time::OffsetDateTime;

use super::accounts::after_text;
use crate::SqliteStore;
use crate::rows::{ApiKeyRow, convert, id_text};
use crate::schema::api_keys;

#[async_trait]
impl ApiKeyRepo for SqliteStore {
    async fn insert_api_key(&self, key: &ApiKey) -> Result<()> {
        let row = ApiKeyRow::from(key);
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
