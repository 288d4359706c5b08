//! The Prompt Guard's models, feedback, training tasks and statistics.
//!
//! Which version is active, and which number the next one gets, change only under a lock
//! on the tenant's row (`FOR NO KEY UPDATE`, as the last-admin check takes it: inserts that
//! merely refer to the tenant are not blocked). So a completion computing `max(version) + 1`
//! never races another completion or an activation of the same tenant; the primary key
//! `(tenant_id, version)` and the partial unique index `guard_models_active_key` would turn
//! any such race into a `Conflict` rather than a fork. The active version changes in two
//! statements, all off and then one on, because a unique index is checked row by row.
//!
//! Workers claim tasks with `FOR UPDATE SKIP LOCKED`, as export workers claim jobs; every
//! later write is conditional on the task still being `running` under the worker's lease
//! token. The partial unique index `guard_tasks_active_key` keeps one queued or running
//! task per tenant; a second insert fails it (`Conflict`).

use std::collections::HashMap;

use agentgov_domain::ids::{GuardTaskId, TenantId};
use agentgov_domain::model::{
    GuardExample, GuardFeedback, GuardLabel, GuardModelInfo, GuardModelRecord, GuardStatsKey, GuardTask, JobStatus,
    Lease,
};
use agentgov_domain::ports::GuardRepo;
use agentgov_domain::{DomainError, Result};
use async_trait::async_trait;
use diesel::dsl::max;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, SmallInt, Text, Uuid as SqlUuid};
use diesel::upsert::excluded;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::error::{self, TxError};
use crate::rows::{GuardFeedbackRow, GuardModelInfoRow, GuardModelRow, GuardTaskRow, examples_of, examples_text};
use crate::schema::{guard_feedback, guard_models, guard_stats, guard_tasks, tenants};
use crate::store::PgStore;

use super::{QUEUED, RUNNING};

/// Rows per `INSERT` of statistics: five parameters each, far below Postgres's 65,535.
const STATS_CHUNK: usize = 1_000;

fn lease_lost(id: GuardTaskId) -> DomainError {
    DomainError::Conflict(format!("guard task {id} is no longer held by this worker"))
}

/// The tenant's task that is `queued` or `running` (one at most: `guard_tasks_active_key`).
macro_rules! pending {
    ($tenant:expr) => {
        guard_tasks::table
            .filter(guard_tasks::tenant_id.eq($tenant.as_uuid()))
            .filter(guard_tasks::status.eq_any([QUEUED, RUNNING]))
    };
}

/// Locks the tenant's row until the transaction ends; `false` when there is no such tenant.
pub(super) async fn lock_tenant(conn: &mut AsyncPgConnection, tenant: Uuid) -> QueryResult<bool> {
    let locked: Option<Uuid> =
        tenants::table.find(tenant).select(tenants::id).for_no_key_update().first(conn).await.optional()?;
    Ok(locked.is_some())
}

#[derive(QueryableByName)]
struct StatsRow {
    #[diesel(sql_type = BigInt)]
    hour: i64,
    #[diesel(sql_type = Text)]
    verdict: String,
    #[diesel(sql_type = SmallInt)]
    bucket: i16,
    #[diesel(sql_type = BigInt)]
    total: i64,
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
    async fn list_guard_models(&self, tenant: TenantId) -> Result<Vec<GuardModelInfo>> {
        let mut conn = self.conn().await?;
        let rows: Vec<GuardModelInfoRow> = guard_models::table
            .filter(guard_models::tenant_id.eq(tenant.as_uuid()))
            .order(guard_models::version.desc())
            .select(GuardModelInfoRow::as_select())
            .load(&mut conn)
            .await
            .map_err(error::db)?;
        rows.into_iter().map(GuardModelInfo::try_from).collect()
    }

    async fn get_guard_model(&self, tenant: TenantId, version: i32) -> Result<Option<GuardModelRecord>> {
        let mut conn = self.conn().await?;
        let row = guard_models::table
            .find((tenant.as_uuid(), version))
            .select(GuardModelRow::as_select())
            .first(&mut conn)
            .await
            .optional()
            .map_err(error::db)?;
        row.map(GuardModelRecord::try_from).transpose()
    }

    async fn active_guard_model(&self, tenant: TenantId) -> Result<i32> {
        let mut conn = self.conn().await?;
        // `WHERE active` as written in the partial index's condition, so the planner uses it.
        let version: Option<i32> = guard_models::table
            .filter(guard_models::tenant_id.eq(tenant.as_uuid()))
            .filter(guard_models::active)
            .select(guard_models::version)
            .first(&mut conn)
            .await
            .optional()
            .map_err(error::db)?;
        Ok(version.unwrap_or(0))
    }

    async fn activate_guard_model(&self, tenant: TenantId, version: i32) -> Result<bool> {
        let tenant = tenant.as_uuid();
        let mut conn = self.tx_conn().await?;
        let conn: &mut AsyncPgConnection = &mut conn;
        conn.transaction(async move |conn| -> Result<bool, TxError> {
            if !lock_tenant(conn, tenant).await? {
                // No tenant, no versions: only the built-in default "exists".
                return Ok(version == 0);
            }
            let of_tenant = guard_models::table.filter(guard_models::tenant_id.eq(tenant));
            if version != 0 {
                let present: bool =
                    diesel::select(diesel::dsl::exists(of_tenant.filter(guard_models::version.eq(version))))
                        .get_result(conn)
                        .await?;
                if !present {
                    return Ok(false);
                }
            }
            diesel::update(of_tenant.filter(guard_models::active))
                .set(guard_models::active.eq(false))
                .execute(conn)
                .await?;
            if version != 0 {
                diesel::update(of_tenant.filter(guard_models::version.eq(version)))
                    .set(guard_models::active.eq(true))
                    .execute(conn)
                    .await?;
            }
            Ok(true)
        })
        .await
        .map_err(DomainError::from)
    }

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

    async fn insert_guard_task(&self, task: &GuardTask, examples: &[GuardExample]) -> Result<()> {
        let (row, examples) = (GuardTaskRow::from(task), examples_text(examples)?);
        let mut conn = self.conn().await?;
        // A second pending task of the tenant fails `guard_tasks_active_key`: `Conflict`.
        diesel::insert_into(guard_tasks::table)
            .values((&row, guard_tasks::training_examples.eq(examples)))
            .execute(&mut conn)
            .await
            .map_err(error::db)?;
        Ok(())
    }

    async fn pending_guard_task(&self, tenant: TenantId) -> Result<Option<GuardTask>> {
        let mut conn = self.conn().await?;
        let row =
            pending!(tenant).select(GuardTaskRow::as_select()).first(&mut conn).await.optional().map_err(error::db)?;
        row.map(GuardTask::try_from).transpose()
    }

    async fn get_guard_task(&self, id: GuardTaskId) -> Result<Option<GuardTask>> {
        let mut conn = self.conn().await?;
        let row = guard_tasks::table
            .find(id.as_uuid())
            .select(GuardTaskRow::as_select())
            .first(&mut conn)
            .await
            .optional()
            .map_err(error::db)?;
        row.map(GuardTask::try_from).transpose()
    }

    async fn guard_task_examples(&self, id: GuardTaskId) -> Result<Vec<GuardExample>> {
        let mut conn = self.conn().await?;
        let text: Option<String> = guard_tasks::table
            .find(id.as_uuid())
            .select(guard_tasks::training_examples)
            .first(&mut conn)
            .await
            .optional()
            .map_err(error::db)?;
        Ok(text.map(|t| examples_of(id.as_uuid(), &t)).transpose()?.unwrap_or_default())
    }

    async fn claim_guard_task(
        &self,
        now: OffsetDateTime,
        token: Uuid,
        lease_until: OffsetDateTime,
    ) -> Result<Option<GuardTask>> {
        let mut conn = self.tx_conn().await?;
        let conn: &mut AsyncPgConnection = &mut conn;
        conn.transaction(async move |conn| -> Result<Option<GuardTask>, TxError> {
            let row = next_claimable!(guard_tasks, GuardTaskRow, now, conn)?;
            let Some(row) = row else { return Ok(None) };
            let mut task = GuardTask::try_from(row)?;
            task.status = JobStatus::Running;
            task.lease = Some(Lease { token, until: lease_until });
            task.started_at = task.started_at.or(Some(now));
            task.attempts += 1;
            task.progress = 0.0;
            diesel::update(guard_tasks::table.find(task.id.as_uuid()))
                .set((
                    guard_tasks::status.eq(RUNNING),
                    guard_tasks::lease_token.eq(token),
                    guard_tasks::lease_until.eq(lease_until),
                    guard_tasks::started_at.eq(task.started_at),
                    guard_tasks::attempts.eq(task.attempts),
                    guard_tasks::progress.eq(0.0),
                ))
                .execute(conn)
                .await?;
            Ok(Some(task))
        })
        .await
        .map_err(DomainError::from)
    }

    async fn progress_guard_task(
        &self,
        id: GuardTaskId,
        token: Uuid,
        progress: f64,
        lease_until: OffsetDateTime,
    ) -> Result<()> {
        let mut conn = self.conn().await?;
        let updated = diesel::update(held!(guard_tasks, id, token))
            .set((guard_tasks::progress.eq(progress), guard_tasks::lease_until.eq(lease_until)))
            .execute(&mut conn)
            .await
            .map_err(error::db)?;
        if updated == 0 { Err(lease_lost(id)) } else { Ok(()) }
    }

    async fn complete_guard_task(
        &self,
        id: GuardTaskId,
        token: Uuid,
        now: OffsetDateTime,
        model: &GuardModelRecord,
    ) -> Result<i32> {
        let model = model.clone();
        let mut conn = self.tx_conn().await?;
        let conn: &mut AsyncPgConnection = &mut conn;
        conn.transaction(async move |conn| -> Result<i32, TxError> {
            // The task row first: a cancellation or a reclaim waits for this commit, or this
            // finds the task no longer held and writes nothing.
            let tenant: Option<Uuid> = held!(guard_tasks, id, token)
                .select(guard_tasks::tenant_id)
                .for_update()
                .first(conn)
                .await
                .optional()?;
            let Some(tenant) = tenant else { return Err(TxError::Domain(lease_lost(id))) };
            // Then the tenant's row: versions are numbered and switched one writer at a time.
            if !lock_tenant(conn, tenant).await? {
                return Err(TxError::Domain(lease_lost(id)));
            }
            let highest: Option<i32> = guard_models::table
                .filter(guard_models::tenant_id.eq(tenant))
                .select(max(guard_models::version))
                .first(conn)
                .await?;
            let version = highest.unwrap_or(0).checked_add(1).ok_or_else(|| {
                TxError::Domain(DomainError::Internal(format!("tenant {tenant} has run out of guard model versions")))
            })?;
            diesel::update(guard_models::table.filter(guard_models::tenant_id.eq(tenant)).filter(guard_models::active))
                .set(guard_models::active.eq(false))
                .execute(conn)
                .await?;
            let row = GuardModelRow::new(tenant, version, &model)?;
            diesel::insert_into(guard_models::table).values(&row).execute(conn).await?;
            diesel::update(guard_tasks::table.find(id.as_uuid()))
                .set((
                    guard_tasks::status.eq(JobStatus::Completed.as_str()),
                    guard_tasks::progress.eq(1.0),
                    guard_tasks::model_version.eq(version),
                    guard_tasks::finished_at.eq(now),
                    guard_tasks::lease_token.eq(None::<Uuid>),
                    guard_tasks::lease_until.eq(None::<OffsetDateTime>),
                ))
                .execute(conn)
                .await?;
            Ok(version)
        })
        .await
        .map_err(DomainError::from)
    }

    async fn fail_guard_task(&self, id: GuardTaskId, token: Uuid, now: OffsetDateTime, error: &str) -> Result<()> {
        let mut conn = self.conn().await?;
        let updated = diesel::update(held!(guard_tasks, id, token))
            .set((
                guard_tasks::status.eq(JobStatus::Failed.as_str()),
                guard_tasks::error.eq(error),
                guard_tasks::finished_at.eq(now),
                guard_tasks::lease_token.eq(None::<Uuid>),
                guard_tasks::lease_until.eq(None::<OffsetDateTime>),
            ))
            .execute(&mut conn)
            .await
            .map_err(error::db)?;
        if updated == 0 { Err(lease_lost(id)) } else { Ok(()) }
    }

    async fn cancel_guard_task(&self, tenant: TenantId, now: OffsetDateTime) -> Result<Option<GuardTask>> {
        let mut conn = self.conn().await?;
        // One statement: a claim or a completion holding the row is waited for, and the
        // condition is checked again on the row it left.
        let row = diesel::update(pending!(tenant))
            .set((
                guard_tasks::status.eq(JobStatus::Cancelled.as_str()),
                guard_tasks::finished_at.eq(now),
                guard_tasks::lease_token.eq(None::<Uuid>),
                guard_tasks::lease_until.eq(None::<OffsetDateTime>),
            ))
            .returning(GuardTaskRow::as_returning())
            .get_result(&mut conn)
            .await
            .optional()
            .map_err(error::db)?;
        row.map(GuardTask::try_from).transpose()
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
        let rows: Vec<StatsRow> = diesel::sql_query(STATS_SQL)
            .bind::<SqlUuid, _>(tenant.as_uuid())
            .bind::<BigInt, _>(from_hour)
            .load(&mut conn)
            .await
            .map_err(error::db)?;
        rows.into_iter()
            .map(|r| {
                let label = GuardLabel::parse(&r.verdict).ok_or_else(|| {
                    DomainError::Internal(format!("bad row in guard_stats (tenant {tenant}): verdict `{}`", r.verdict))
                })?;
                Ok((GuardStatsKey { tenant_id: tenant, hour: r.hour, verdict: label, bucket: r.bucket }, r.total))
            })
            .collect()
    }
}
