//! Tenant policies on SQLite.
//!
//! Writes run in a `BEGIN IMMEDIATE` transaction on the single writer. An update applies only
//! from the version the caller read: the version is part of the `UPDATE`'s condition, so the
//! check and the write are one statement, and a miss is told apart (absent or changed) after.
//! Lists are keyset queries on the `(tenant_id, id)` index, newest first; the enabled
//! policies are read oldest first through the partial index `WHERE enabled`.

use agentgov_domain::ids::{PolicyId, TenantId};
use agentgov_domain::model::{Policy, PolicyFilter};
use agentgov_domain::page::{Page, PageRequest};
use agentgov_domain::ports::store::{POLICY_LIMIT_REACHED, PolicyRepo};
use agentgov_domain::{DomainError, Result};
use async_trait::async_trait;
use diesel::SqliteConnection;
use diesel::prelude::*;

use crate::SqliteStore;
use crate::columns::Id;
use crate::error::TxResult;
use crate::rows::{PolicyRow, id_text};
use crate::schema::{policies, tenants, users};

fn not_found(id: PolicyId) -> DomainError {
    DomainError::not_found("policy", id)
}

fn conflict(message: &str) -> DomainError {
    DomainError::Conflict(message.to_owned())
}

fn policy_in_tenant(c: &mut SqliteConnection, tenant: Id, id: Id) -> TxResult<Option<PolicyRow>> {
    Ok(policies::table
        .filter(policies::id.eq(id))
        .filter(policies::tenant_id.eq(tenant))
        .select(PolicyRow::as_select())
        .first(c)
        .optional()?)
}

#[async_trait]
impl PolicyRepo for SqliteStore {
    async fn insert_policy(&self, policy: &Policy, max_per_tenant: u64) -> Result<()> {
        let row = PolicyRow::from(policy);
        self.transaction(move |c| {
            // SQLite's foreign-key error does not say which key failed, so the rows referred to
            // are checked first and their absence named; the writer's lock keeps them until
            // the commit.
            let tenant: i64 = tenants::table.filter(tenants::id.eq(&row.tenant_id)).count().get_result(c)?;
            if tenant == 0 {
                return Err(conflict("tenant does not exist").into());
            }
            if let Some(user) = &row.created_by {
                let users: i64 = users::table.filter(users::id.eq(user)).count().get_result(c)?;
                if users == 0 {
                    return Err(conflict("user does not exist").into());
                }
            }
            // The writer's lock makes the count and the insert one step.
            let held: i64 = policies::table.filter(policies::tenant_id.eq(&row.tenant_id)).count().get_result(c)?;
            if u64::try_from(held).unwrap_or(u64::MAX) >= max_per_tenant {
                return Err(conflict(POLICY_LIMIT_REACHED).into());
            }
            // A taken name fails the unique index: `Conflict("policy name already taken")`.
            diesel::insert_into(policies::table).values(&row).execute(c)?;
            Ok(())
        })
        .await
    }

    async fn get_policy(&self, tenant: TenantId, id: PolicyId) -> Result<Option<Policy>> {
        let (tenant, id) = (Id(tenant.as_uuid()), Id(id.as_uuid()));
        self.read(move |c| Ok(policy_in_tenant(c, tenant, id)?.map(Policy::from))).await
    }

    async fn list_policies(&self, tenant: TenantId, filter: &PolicyFilter, page: &PageRequest) -> Result<Page<Policy>> {
        let (tenant, enabled) = (id_text(tenant.0), filter.enabled);
        let (after, limit) = (page.after.map(id_text), page.fetch_limit());
        let rows = self
            .read(move |c| {
                let mut q = policies::table
                    .filter(policies::tenant_id.eq(tenant))
                    .select(PolicyRow::as_select())
                    .order(policies::id.desc())
                    .limit(limit)
                    .into_boxed();
                if let Some(enabled) = enabled {
                    q = q.filter(policies::enabled.eq(enabled));
                }
                if let Some(after) = after {
                    q = q.filter(policies::id.lt(after));
                }
                Ok(q.load(c)?.into_iter().map(Policy::from).collect::<Vec<_>>())
            })
            .await?;
        Ok(Page::from_rows(rows, page, |p: &Policy| p.id.0))
    }

    async fn enabled_policies(&self, tenant: TenantId) -> Result<Vec<Policy>> {
        let tenant = id_text(tenant.0);
        self.read(move |c| {
            // `WHERE enabled` as written in the partial index's condition, so SQLite uses it.
            let rows = policies::table
                .filter(policies::tenant_id.eq(tenant))
                .filter(policies::enabled)
                .select(PolicyRow::as_select())
                .order(policies::id.asc())
                .load(c)?;
            Ok(rows.into_iter().map(Policy::from).collect())
        })
        .await
    }

    async fn update_policy(&self, policy: &Policy) -> Result<()> {
        let (id, row) = (policy.id, PolicyRow::from(policy));
        // Stored versions are at least 1, so a saturated expectation matches nothing.
        let expected = policy.version.saturating_sub(1);
        self.transaction(move |c| {
            let target = policies::table
                .filter(policies::id.eq(&row.id))
                .filter(policies::tenant_id.eq(&row.tenant_id))
                .filter(policies::version.eq(expected));
            // Every column but id, tenant, `created_by` and `created_at`, which never change.
            let n = diesel::update(target)
                .set((
                    policies::name.eq(&row.name),
                    policies::description.eq(&row.description),
                    policies::rego.eq(&row.rego),
                    policies::enabled.eq(row.enabled),
                    policies::shadow.eq(row.shadow),
                    policies::version.eq(row.version),
                    policies::updated_at.eq(row.updated_at),
                ))
                .execute(c)?;
            if n == 0 {
                return Err(match policy_in_tenant(c, row.tenant_id, row.id)? {
                    Some(_) => conflict("policy was changed concurrently"),
                    None => not_found(id),
                }
                .into());
            }
            Ok(())
        })
        .await
    }

    async fn delete_policy(&self, tenant: TenantId, id: PolicyId) -> Result<()> {
        let (tenant_text, id_text) = (id_text(tenant.0), id_text(id.0));
        self.transaction(move |c| {
            let target = policies::table.filter(policies::id.eq(&id_text)).filter(policies::tenant_id.eq(&tenant_text));
            if diesel::delete(target).execute(c)? == 0 {
                return Err(not_found(id).into());
            }
            Ok(())
        })
        .await
    }
}
