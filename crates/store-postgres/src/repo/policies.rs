//! Tenant policies. An update applies only from the version the caller read: the version is
//! part of the `UPDATE`'s condition, so the check and the write are one statement (the row
//! lock orders concurrent updates, and the later one finds the version moved). A miss is
//! then told apart, absent or changed, by a second query. Deleting a user sets
//! `created_by` to NULL on their policies in the schema (`ON DELETE SET NULL`).

use agentgov_domain::ids::{PolicyId, TenantId};
use agentgov_domain::model::{Policy, PolicyFilter};
use agentgov_domain::page::{Page, PageRequest};
use agentgov_domain::ports::PolicyRepo;
use agentgov_domain::ports::store::POLICY_LIMIT_REACHED;
use agentgov_domain::{DomainError, Result};
use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use uuid::Uuid;

use crate::error::{self, TxError};
use crate::rows::PolicyRow;
use crate::schema::{policies, tenants};
use crate::store::PgStore;

fn not_found(id: PolicyId) -> DomainError {
    DomainError::not_found("policy", id)
}

#[async_trait]
impl PolicyRepo for PgStore {
    async fn insert_policy(&self, policy: &Policy, max_per_tenant: u64) -> Result<()> {
        let row = PolicyRow::from(policy);
        let tenant = policy.tenant_id.as_uuid();
        let mut conn = self.tx_conn().await?;
        let conn: &mut AsyncPgConnection = &mut conn;
        conn.transaction(async |conn| -> Result<(), TxError> {
            // The tenant row lock orders concurrent inserts, so the count and the insert are
            // one step (`FOR NO KEY UPDATE`: foreign-key checks elsewhere are not blocked).
            let locked: Option<Uuid> =
                tenants::table.find(tenant).select(tenants::id).for_no_key_update().first(conn).await.optional()?;
            if locked.is_none() {
                return Err(TxError::Domain(DomainError::Conflict("tenant does not exist".into())));
            }
            let held: i64 = policies::table.filter(policies::tenant_id.eq(tenant)).count().get_result(conn).await?;
            if u64::try_from(held).unwrap_or(u64::MAX) >= max_per_tenant {
                return Err(TxError::Domain(DomainError::Conflict(POLICY_LIMIT_REACHED.into())));
            }
            // A taken name fails the unique constraint (`Conflict("policy name already taken")`).
            diesel::insert_into(policies::table).values(&row).execute(conn).await?;
            Ok(())
        })
        .await
        .map_err(DomainError::from)
    }

    async fn get_policy(&self, tenant: TenantId, id: PolicyId) -> Result<Option<Policy>> {
        let mut conn = self.conn().await?;
        let row = policies::table
            .filter(policies::id.eq(id.as_uuid()))
            .filter(policies::tenant_id.eq(tenant.as_uuid()))
            .select(PolicyRow::as_select())
            .first(&mut conn)
            .await
            .optional()
            .map_err(error::db)?;
        Ok(row.map(Policy::from))
    }

    async fn list_policies(&self, tenant: TenantId, filter: &PolicyFilter, page: &PageRequest) -> Result<Page<Policy>> {
        let mut query = policies::table
            .filter(policies::tenant_id.eq(tenant.as_uuid()))
            .select(PolicyRow::as_select())
            .order(policies::id.desc())
            .limit(page.fetch_limit())
            .into_boxed();
        if let Some(after) = page.after {
            query = query.filter(policies::id.lt(after));
        }
        if let Some(enabled) = filter.enabled {
            query = query.filter(policies::enabled.eq(enabled));
        }
        let mut conn = self.conn().await?;
        let rows: Vec<PolicyRow> = query.load(&mut conn).await.map_err(error::db)?;
        let items = rows.into_iter().map(Policy::from).collect();
        Ok(Page::from_rows(items, page, |p: &Policy| p.id.as_uuid()))
    }

    async fn enabled_policies(&self, tenant: TenantId) -> Result<Vec<Policy>> {
        let mut conn = self.conn().await?;
        // `WHERE enabled` as written in the partial index's condition, so the planner uses it.
        let rows: Vec<PolicyRow> = policies::table
            .filter(policies::tenant_id.eq(tenant.as_uuid()))
            .filter(policies::enabled)
            .select(PolicyRow::as_select())
            .order(policies::id.asc())
            .load(&mut conn)
            .await
            .map_err(error::db)?;
        Ok(rows.into_iter().map(Policy::from).collect())
    }

    async fn update_policy(&self, policy: &Policy) -> Result<()> {
        let (tenant, id) = (policy.tenant_id.as_uuid(), policy.id.as_uuid());
        // Stored versions are at least 1, so a saturated expectation matches nothing.
        let expected = policy.version.saturating_sub(1);
        let mut conn = self.conn().await?;
        // Every column but id, tenant, `created_by` and `created_at`, which never change.
        let updated = diesel::update(
            policies::table
                .filter(policies::id.eq(id))
                .filter(policies::tenant_id.eq(tenant))
                .filter(policies::version.eq(expected)),
        )
        .set((
            policies::name.eq(&policy.name),
            policies::description.eq(&policy.description),
            policies::rego.eq(&policy.rego),
            policies::enabled.eq(policy.enabled),
            policies::shadow.eq(policy.mode == agentgov_domain::model::PolicyMode::Shadow),
            policies::version.eq(policy.version),
            policies::updated_at.eq(policy.updated_at),
        ))
        .execute(&mut conn)
        .await
        .map_err(error::db)?;
        if updated > 0 {
            return Ok(());
        }
        let present: bool = diesel::select(diesel::dsl::exists(
            policies::table.filter(policies::id.eq(id)).filter(policies::tenant_id.eq(tenant)),
        ))
        .get_result(&mut conn)
        .await
        .map_err(error::db)?;
        Err(if present {
            DomainError::Conflict("policy was changed concurrently".into())
        } else {
            not_found(policy.id)
        })
    }

    async fn delete_policy(&self, tenant: TenantId, id: PolicyId) -> Result<()> {
        let mut conn = self.conn().await?;
        let deleted = diesel::delete(
            policies::table.filter(policies::id.eq(id.as_uuid())).filter(policies::tenant_id.eq(tenant.as_uuid())),
        )
        .execute(&mut conn)
        .await
        .map_err(error::db)?;
        if deleted == 0 { Err(not_found(id)) } else { Ok(()) }
    }
}
