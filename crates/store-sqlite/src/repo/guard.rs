//! The Prompt Guard's models, feedback, training tasks and statistics on SQLite.
//!
//! Every write runs in a `BEGIN IMMEDIATE` transaction on the single writer, so a new
//! version's number (the tenant's highest plus one) is computed and used with no other
//! writer in between. The active version changes in two statements, all off and then one
//! on, because the partial unique index `guard_models_active_key` is checked row by row.
//! A worker's writes to a task are conditioned on its lease token (`status = 'running' AND
//! lease_token = ?`), so a worker whose task was cancelled or reclaimed gets `Conflict` and
//! writes nothing. The index `guard_tasks_active_key` keeps one queued or running task per
//! tenant.

use agentgov_domain::ids::{GuardTaskId, TenantId};
use agentgov_domain::model::audit::unix_micros;
use agentgov_domain::model::{
    GuardExample, GuardFeedback, GuardLabel, GuardModelInfo, GuardModelRecord, GuardStatsKey, GuardTask, JobStatus,
    Lease,
};
use agentgov_domain::ports::store::GuardRepo;
use agentgov_domain::{DomainError, Result};
use async_trait::async_trait;
use diesel::SqliteConnection;
use diesel::dsl::max;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, SmallInt, Text};
use diesel::upsert::excluded;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::SqliteStore;
use crate::error::{TxError, TxResult};
use crate::rows::{
    GuardFeedbackRow, GuardModelInfoRow, GuardModelRow, GuardTaskRow, convert, examples_of, examples_text, id_text,
};
use crate::schema::{guard_feedback, guard_models, guard_stats, guard_tasks, tenants};

const QUEUED: &str = "queued";
const RUNNING: &str = "running";

fn lease_lost(id: GuardTaskId) -> TxError {
    TxError::Domain(DomainError::Conflict(format!("guard task {id} is no longer held by this worker")))
}

/// SQLite's foreign-key error does not say which key failed, so the tenant is checked first
/// and its absence named; the writer's lock keeps it until the commit.
pub(crate) fn check_tenant(c: &mut SqliteConnection, tenant: &str) -> TxResult<()> {
    let n: i64 = tenants::table.filter(tenants::id.eq(tenant)).count().get_result(c)?;
    if n == 0 { Err(TxError::Domain(DomainError::Conflict("tenant does not exist".into()))) } else { Ok(()) }
}

/// The task `id` if it is `running` under `token`.
macro_rules! held {
    ($id:expr, $token:expr) => {
        guard_tasks::table
            .filter(guard_tasks::id.eq($id))
            .filter(guard_tasks::status.eq(RUNNING))
            .filter(guard_tasks::lease_token.eq($token))
    };
}

/// The tenant's task that is `queued` or `running` (one at most: `guard_tasks_active_key`).
macro_rules! pending {
    ($tenant:expr) => {
        guard_tasks::table
            .filter(guard_tasks::tenant_id.eq($tenant))
            .filter(guard_tasks::status.eq_any([QUEUED, RUNNING]))
    };
}

/// The oldest claimable task: `queued`, or `running` with a lease that ended before `now`.
/// Two look-ups, each a short walk of the `(status, id)` index.
fn claimable(c: &mut SqliteConnection, now: i64) -> TxResult<Option<String>> {
    let queued: Option<String> = guard_tasks::table
        .filter(guard_tasks::status.eq(QUEUED))
        .order(guard_tasks::id.asc())
        .select(guard_tasks::id)
        .first(c)
        .optional()?;
    let abandoned: Option<String> = guard_tasks::table
        .filter(guard_tasks::status.eq(RUNNING))
        .filter(guard_tasks::lease_until.is_null().or(guard_tasks::lease_until.lt(now)))
        .order(guard_tasks::id.asc())
        .select(guard_tasks::id)
        .first(c)
        .optional()?;
    Ok(queued.into_iter().chain(abandoned).min())
}

fn task_by_id(c: &mut SqliteConnection, id: &str) -> TxResult<Option<GuardTask>> {
    let row = guard_tasks::table.find(id).select(GuardTaskRow::as_select()).first(c).optional()?;
    Ok(row.map(GuardTask::try_from).transpose()?)
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

/// Summed in SQL; `CAST` because diesel types `SUM` of a `BigInt` as `Numeric`.
const STATS_SQL: &str = "\
SELECT hour, verdict, bucket, CAST(SUM(count) AS INTEGER) AS total
FROM guard_stats WHERE tenant_id = ? AND hour >= ?
GROUP BY hour, verdict, bucket";

#[async_trait]
impl GuardRepo for SqliteStore {
    async fn list_guard_models(&self, tenant: TenantId) -> Result<Vec<GuardModelInfo>> {
        let tenant = id_text(tenant.0);
        self.read(move |c| {
            let rows = guard_models::table
                .filter(guard_models::tenant_id.eq(tenant))
                .order(guard_models::version.desc())
                .select(GuardModelInfoRow::as_select())
                .load(c)?;
            Ok(convert(rows)?)
        })
        .await
    }

    async fn get_guard_model(&self, tenant: TenantId, version: i32) -> Result<Option<GuardModelRecord>> {
        let tenant = id_text(tenant.0);
        self.read(move |c| {
            let row =
                guard_models::table.find((tenant, version)).select(GuardModelRow::as_select()).first(c).optional()?;
            Ok(row.map(GuardModelRecord::try_from).transpose()?)
        })
        .await
    }

    async fn active_guard_model(&self, tenant: TenantId) -> Result<i32> {
        let tenant = id_text(tenant.0);
        self.read(move |c| {
            // `WHERE active` as written in the partial index's condition, so SQLite uses it.
            let version: Option<i32> = guard_models::table
                .filter(guard_models::tenant_id.eq(tenant))
                .filter(guard_models::active)
                .select(guard_models::version)
                .first(c)
                .optional()?;
            Ok(version.unwrap_or(0))
        })
        .await
    }

    async fn activate_guard_model(&self, tenant: TenantId, version: i32) -> Result<bool> {
        let tenant = id_text(tenant.0);
        self.transaction(move |c| {
            let target = guard_models::table.filter(guard_models::tenant_id.eq(&tenant));
            if version != 0 {
                let n: i64 = target.filter(guard_models::version.eq(version)).count().get_result(c)?;
                if n == 0 {
                    return Ok(false);
                }
            }
            diesel::update(target.filter(guard_models::active)).set(guard_models::active.eq(false)).execute(c)?;
            if version != 0 {
                diesel::update(target.filter(guard_models::version.eq(version)))
                    .set(guard_models::active.eq(true))
                    .execute(c)?;
            }
            Ok(true)
        })
        .await
    }

    async fn insert_guard_feedback(&self, feedback: &GuardFeedback) -> Result<()> {
        let row = GuardFeedbackRow::from(feedback);
        self.transaction(move |c| {
            check_tenant(c, &row.tenant_id)?;
            diesel::insert_into(guard_feedback::table).values(&row).execute(c)?;
            Ok(())
        })
        .await
    }

    async fn list_guard_feedback(&self, tenant: TenantId, limit: i64) -> Result<Vec<GuardFeedback>> {
        let tenant = id_text(tenant.0);
        self.read(move |c| {
            let rows = guard_feedback::table
                .filter(guard_feedback::tenant_id.eq(tenant))
                .order(guard_feedback::id.asc())
                .limit(limit.max(0))
                .select(GuardFeedbackRow::as_select())
                .load(c)?;
            Ok(convert(rows)?)
        })
        .await
    }

    async fn insert_guard_task(&self, task: &GuardTask, examples: &[GuardExample]) -> Result<()> {
        let (row, examples) = (GuardTaskRow::from(task), examples_text(examples)?);
        self.transaction(move |c| {
            check_tenant(c, &row.tenant_id)?;
            // A second active task of the tenant fails `guard_tasks_active_key`: `Conflict`.
            diesel::insert_into(guard_tasks::table)
                .values((&row, guard_tasks::training_examples.eq(examples)))
                .execute(c)?;
            Ok(())
        })
        .await
    }

    async fn pending_guard_task(&self, tenant: TenantId) -> Result<Option<GuardTask>> {
        let tenant = id_text(tenant.0);
        self.read(move |c| {
            let row = pending!(&tenant).select(GuardTaskRow::as_select()).first(c).optional()?;
            Ok(row.map(GuardTask::try_from).transpose()?)
        })
        .await
    }

    async fn get_guard_task(&self, id: GuardTaskId) -> Result<Option<GuardTask>> {
        let id = id_text(id.0);
        self.read(move |c| task_by_id(c, &id)).await
    }

    async fn guard_task_examples(&self, id: GuardTaskId) -> Result<Vec<GuardExample>> {
        let id = id_text(id.0);
        self.read(move |c| {
            let text: Option<String> =
                guard_tasks::table.find(id).select(guard_tasks::training_examples).first(c).optional()?;
            Ok(text.map(|t| examples_of(&t)).transpose()?.unwrap_or_default())
        })
        .await
    }

    async fn claim_guard_task(
        &self,
        now: OffsetDateTime,
        token: Uuid,
        lease_until: OffsetDateTime,
    ) -> Result<Option<GuardTask>> {
        self.transaction(move |c| {
            let Some(id) = claimable(c, unix_micros(now))? else { return Ok(None) };
            let Some(mut task) = task_by_id(c, &id)? else { return Ok(None) };
            task.status = JobStatus::Running;
            task.lease = Some(Lease { token, until: lease_until });
            task.started_at = task.started_at.or(Some(now));
            task.attempts += 1;
            task.progress = 0.0;
            let row = GuardTaskRow::from(&task);
            diesel::update(guard_tasks::table.find(&id))
                .set((
                    guard_tasks::status.eq(row.status),
                    guard_tasks::lease_token.eq(row.lease_token),
                    guard_tasks::lease_until.eq(row.lease_until),
                    guard_tasks::started_at.eq(row.started_at),
                    guard_tasks::attempts.eq(row.attempts),
                    guard_tasks::progress.eq(row.progress),
                ))
                .execute(c)?;
            Ok(Some(task))
        })
        .await
    }

    async fn progress_guard_task(
        &self,
        id: GuardTaskId,
        token: Uuid,
        progress: f64,
        lease_until: OffsetDateTime,
    ) -> Result<()> {
        let (task, token_text) = (id_text(id.0), id_text(token));
        self.transaction(move |c| {
            let n = diesel::update(held!(task, token_text))
                .set((guard_tasks::progress.eq(progress), guard_tasks::lease_until.eq(unix_micros(lease_until))))
                .execute(c)?;
            if n == 0 { Err(lease_lost(id)) } else { Ok(()) }
        })
        .await
    }

    async fn complete_guard_task(
        &self,
        id: GuardTaskId,
        token: Uuid,
        now: OffsetDateTime,
        model: &GuardModelRecord,
    ) -> Result<i32> {
        let (task, token_text, model) = (id_text(id.0), id_text(token), model.clone());
        self.transaction(move |c| {
            let tenant: Option<String> =
                held!(&task, &token_text).select(guard_tasks::tenant_id).first(c).optional()?;
            let Some(tenant) = tenant else { return Err(lease_lost(id)) };
            let tenant_id: TenantId = crate::rows::parse_id("guard_tasks.tenant_id", &tenant)?;
            // The writer's lock is held from here to the commit: no other version can appear.
            let highest: Option<i32> = guard_models::table
                .filter(guard_models::tenant_id.eq(&tenant))
                .select(max(guard_models::version))
                .first(c)?;
            let version = highest.unwrap_or(0).checked_add(1).ok_or_else(|| {
                TxError::Domain(DomainError::Internal(format!("tenant {tenant} has run out of guard model versions")))
            })?;
            diesel::update(
                guard_models::table.filter(guard_models::tenant_id.eq(&tenant)).filter(guard_models::active),
            )
            .set(guard_models::active.eq(false))
            .execute(c)?;
            diesel::insert_into(guard_models::table)
                .values(GuardModelRow::new(tenant_id, version, &model)?)
                .execute(c)?;
            diesel::update(held!(&task, &token_text))
                .set((
                    guard_tasks::status.eq(JobStatus::Completed.as_str()),
                    guard_tasks::progress.eq(1.0),
                    guard_tasks::model_version.eq(version),
                    guard_tasks::finished_at.eq(unix_micros(now)),
                    guard_tasks::lease_token.eq(None::<String>),
                    guard_tasks::lease_until.eq(None::<i64>),
                ))
                .execute(c)?;
            Ok(version)
        })
        .await
    }

    async fn fail_guard_task(&self, id: GuardTaskId, token: Uuid, now: OffsetDateTime, error: &str) -> Result<()> {
        let (task, token_text, error) = (id_text(id.0), id_text(token), error.to_owned());
        self.transaction(move |c| {
            let n = diesel::update(held!(task, token_text))
                .set((
                    guard_tasks::status.eq(JobStatus::Failed.as_str()),
                    guard_tasks::error.eq(error),
                    guard_tasks::finished_at.eq(unix_micros(now)),
                    guard_tasks::lease_token.eq(None::<String>),
                    guard_tasks::lease_until.eq(None::<i64>),
                ))
                .execute(c)?;
            if n == 0 { Err(lease_lost(id)) } else { Ok(()) }
        })
        .await
    }

    async fn cancel_guard_task(&self, tenant: TenantId, now: OffsetDateTime) -> Result<Option<GuardTask>> {
        let tenant = id_text(tenant.0);
        self.transaction(move |c| {
            let id: Option<String> = pending!(&tenant).select(guard_tasks::id).first(c).optional()?;
            let Some(id) = id else { return Ok(None) };
            diesel::update(guard_tasks::table.find(&id))
                .set((
                    guard_tasks::status.eq(JobStatus::Cancelled.as_str()),
                    guard_tasks::finished_at.eq(unix_micros(now)),
                    guard_tasks::lease_token.eq(None::<String>),
                    guard_tasks::lease_until.eq(None::<i64>),
                ))
                .execute(c)?;
            task_by_id(c, &id)
        })
        .await
    }

    async fn add_guard_stats(&self, counts: &[(GuardStatsKey, i64)]) -> Result<()> {
        if counts.is_empty() {
            return Ok(());
        }
        let counts = counts.to_vec();
        self.transaction(move |c| {
            for (key, count) in counts {
                diesel::insert_into(guard_stats::table)
                    .values((
                        guard_stats::tenant_id.eq(id_text(key.tenant_id.0)),
                        guard_stats::hour.eq(key.hour),
                        guard_stats::verdict.eq(key.verdict.as_str()),
                        guard_stats::bucket.eq(key.bucket),
                        guard_stats::count.eq(count),
                    ))
                    .on_conflict((guard_stats::tenant_id, guard_stats::hour, guard_stats::verdict, guard_stats::bucket))
                    .do_update()
                    .set(guard_stats::count.eq(guard_stats::count + excluded(guard_stats::count)))
                    .execute(c)?;
            }
            Ok(())
        })
        .await
    }

    async fn guard_stats(&self, tenant: TenantId, from_hour: i64) -> Result<Vec<(GuardStatsKey, i64)>> {
        let tenant_id = tenant;
        let tenant = id_text(tenant.0);
        self.read(move |c| {
            let rows: Vec<StatsRow> =
                diesel::sql_query(STATS_SQL).bind::<Text, _>(tenant).bind::<BigInt, _>(from_hour).load(c)?;
            rows.into_iter()
                .map(|r| {
                    let label = GuardLabel::parse(&r.verdict).ok_or_else(|| {
                        DomainError::Internal(format!(
                            "unreadable stored value in guard_stats.verdict: {:?}",
                            r.verdict
                        ))
                    })?;
                    Ok((GuardStatsKey { tenant_id, hour: r.hour, verdict: label, bucket: r.bucket }, r.total))
                })
                .collect::<Result<Vec<_>>>()
                .map_err(TxError::Domain)
        })
        .await
    }
}
