//! The Prompt Guard's feedback and hourly statistics (its versions and trainings are the
//! model registry's and the job queue's, `jobs.rs`), and the tenant row lock
//! ([`lock_tenant`]) under which a tenant's jobs are counted and its versions switched.

use std::collections::HashMap;

use agentgov_domain::ids::TenantId;
use agentgov_domain::model::{GuardFeedback, GuardStatsKey};
use agentgov_domain::ports::GuardRepo;
use agentgov_domain::{DomainError, Result};
use agentgov_store_common::GuardStatsRow;
use async_trait::async_trait;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Uuid as SqlUuid};
use diesel::upsert::excluded;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use uuid::Uuid;

use crate::error::{self, TxError};
use crate::rows::GuardFeedbackRow;
use crate::schema::{guard_feedback, guard_stats, tenants};
use crate::store::PgStore;

/// Rows per `INSERT` of statistics: five parameters each, far below Postgres's 65,535.
const STATS_CHUNK: usize = 1_000;

/// Locks the tenant's row until the transaction ends; `false` when there is no such tenant.
pub(super) async fn lock_tenant(conn: &mut AsyncPgConnection, tenant: Uuid) -> QueryResult<bool> {
    let locked: Option<Uuid> =
        tenants::table.find(tenant).select(tenants::id).for_no_key_update().first(conn).await.optional()?;
    Ok(locked.is_some())
}

/// Summed in SQL; cast because `sum(bigint)` is `numeric`.
const STATS_SQL: &str = "\
SELECT hour, verdict, bucket, sum(count)::bigint AS total
FROM guard_stats WHERE tenant_id = $1 AND hour >= $2
GROUP BY hour, verdict, bucket";

/// One row per key: a key twice in one `INSERT … ON CONFLICT DO UPDATE` is an error. Sorted,
/// so that concurrent writers lock rows in the same order and cannot deadlock.
fn merged(counts: &[(GuardStatsKey, i64)]) -> Vec<(GuardStatsKey, i64)> {
    let mut totals: HashMap<GuardStatsKey, i64> = HashMap::with_capacity(counts.len());
    for (key, count) in counts {
        *totals.entry(*key).or_default() += count;
    }
    let mut rows: Vec<_> = totals.into_iter().collect();
    rows.sort_by_key(|(k, _)| (k.tenant_id, k.hour, k.verdict, k.bucket));
    rows
}

#[async_trait]
impl GuardRepo for PgStore {
    async fn insert_guard_feedback(&self, feedback: &GuardFeedback) -> Result<()> {
        let row = GuardFeedbackRow::from(feedback);
        let mut conn = self.conn().await?;
        // A missing tenant fails its foreign key: `Conflict("tenant does not exist")`.
        diesel::insert_into(guard_feedback::table).values(&row).execute(&mut conn).await.map_err(error::db)?;
        Ok(())
    }

    async fn list_guard_feedback(&self, tenant: TenantId, limit: i64) -> Result<Vec<GuardFeedback>> {
        let mut conn = self.conn().await?;
        let rows: Vec<GuardFeedbackRow> = guard_feedback::table
            .filter(guard_feedback::tenant_id.eq(tenant.as_uuid()))
            .order(guard_feedback::id.asc())
            .limit(limit.max(0))
            .select(GuardFeedbackRow::as_select())
            .load(&mut conn)
            .await
            .map_err(error::db)?;
        rows.into_iter().map(GuardFeedback::try_from).collect()
    }

    async fn add_guard_stats(&self, counts: &[(GuardStatsKey, i64)]) -> Result<()> {
        let rows: Vec<_> = merged(counts)
            .into_iter()
            .map(|(key, count)| {
                (
                    guard_stats::tenant_id.eq(key.tenant_id.as_uuid()),
                    guard_stats::hour.eq(key.hour),
                    guard_stats::verdict.eq(key.verdict.as_str()),
                    guard_stats::bucket.eq(key.bucket),
                    guard_stats::count.eq(count),
                )
            })
            .collect();
        if rows.is_empty() {
            return Ok(());
        }
        let mut conn = self.tx_conn().await?;
        let conn: &mut AsyncPgConnection = &mut conn;
        conn.transaction(async move |conn| -> Result<(), TxError> {
            for chunk in rows.chunks(STATS_CHUNK) {
                diesel::insert_into(guard_stats::table)
                    .values(chunk)
                    .on_conflict((guard_stats::tenant_id, guard_stats::hour, guard_stats::verdict, guard_stats::bucket))
                    .do_update()
                    .set(guard_stats::count.eq(guard_stats::count + excluded(guard_stats::count)))
                    .execute(conn)
                    .await?;
            }
            Ok(())
        })
        .await
        .map_err(DomainError::from)
    }

    async fn guard_stats(&self, tenant: TenantId, from_hour: i64) -> Result<Vec<(GuardStatsKey, i64)>> {
        let mut conn = self.conn().await?;
        let rows: Vec<GuardStatsRow> = diesel::sql_query(STATS_SQL)
            .bind::<SqlUuid, _>(tenant.as_uuid())
            .bind::<BigInt, _>(from_hour)
            .load(&mut conn)
            .await
            .map_err(error::db)?;
        rows.into_iter().map(|r| r.into_key(tenant)).collect()
    }
}
