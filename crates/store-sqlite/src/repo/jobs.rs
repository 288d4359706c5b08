//! The job queue (with its chunks) and the model registry. Every write runs in a
//! `BEGIN IMMEDIATE` transaction on the one writer, so a claim (find, then update) is atomic
//! without row locks, and a new version's number (the highest plus one) is computed and used
//! with no other writer in between. Every write by a worker is conditional on the job still
//! being `running` under its lease token (`status = 'running' AND lease_token = ?`), so a
//! worker whose job was cancelled or taken over gets `Conflict` and writes nothing. The
//! active version changes in two statements, all off and then one on, because the partial
//! unique index `model_versions_active_key` is checked row by row.

use std::collections::HashMap;

use agentgov_domain::ids::TenantId;
use agentgov_domain::model::audit::unix_micros;
use agentgov_domain::model::{Job, JobEnd, JobKind, JobStatus, ModelKind, ModelVersion, StoredModel};
use agentgov_domain::ports::store::{JOB_LIMIT_REACHED, JobQueue, ModelRegistry};
use agentgov_domain::{DomainError, Result};
use async_trait::async_trait;
use diesel::SqliteConnection;
use diesel::dsl::{count_star, max, min};
use diesel::prelude::*;
use diesel::upsert::excluded;
use serde_json::{Value, json};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::SqliteStore;
use crate::columns::Id;
use crate::error::{TxError, TxResult};
use crate::repo::check_tenant;
use crate::rows::{JobRow, ModelVersionRow, StoredModelRow, convert, id_text};
use crate::schema::{job_chunks, jobs, model_versions};

const QUEUED: &str = "queued";
const RUNNING: &str = "running";

/// The job `id` if it is `running` under `token`.
macro_rules! held {
    ($id:expr, $token:expr) => {
        jobs::table.filter(jobs::id.eq($id)).filter(jobs::status.eq(RUNNING)).filter(jobs::lease_token.eq($token))
    };
}

fn lease_lost(id: &str) -> TxError {
    TxError::Domain(DomainError::Conflict(format!("job {id} is no longer held by this worker")))
}

/// The tenant of job `id` if it is `running` under `token`; `Conflict` otherwise.
pub(crate) fn held_tenant(c: &mut SqliteConnection, id: &str, token: &str) -> TxResult<Id> {
    let tenant: Option<Id> = held!(id, token).select(jobs::tenant_id).first(c).optional()?;
    tenant.ok_or_else(|| lease_lost(id))
}

/// Ends job `id`, held under `token`, as `end` says, in the caller's transaction.
pub(crate) fn finish(c: &mut SqliteConnection, id: &str, token: &str, end: &JobEnd) -> TxResult<()> {
    held_tenant(c, id, token)?;
    if let Some(progress) = end.progress {
        diesel::update(jobs::table.find(id)).set(jobs::progress.eq(progress)).execute(c)?;
    }
    if let Some(state) = &end.state {
        diesel::update(jobs::table.find(id)).set(jobs::state.eq(state)).execute(c)?;
    }
    diesel::update(jobs::table.find(id))
        .set((
            jobs::status.eq(end.status.as_str()),
            jobs::error.eq(&end.error),
            jobs::finished_at.eq(unix_micros(end.at)),
            jobs::expires_at.eq(end.expires_at.map(unix_micros)),
            jobs::lease_token.eq(None::<String>),
            jobs::lease_until.eq(None::<i64>),
        ))
        .execute(c)?;
    Ok(())
}

/// Renews job `id` held under `token`: `progress`, `state` when given, the lease.
fn renew(
    c: &mut SqliteConnection,
    id: &str,
    token: &str,
    progress: f64,
    state: Option<&Value>,
    lease_until: OffsetDateTime,
) -> TxResult<()> {
    let until = unix_micros(lease_until);
    let n = match state {
        Some(state) => diesel::update(held!(id, token))
            .set((jobs::progress.eq(progress), jobs::state.eq(state), jobs::lease_until.eq(until)))
            .execute(c)?,
        None => diesel::update(held!(id, token))
            .set((jobs::progress.eq(progress), jobs::lease_until.eq(until)))
            .execute(c)?,
    };
    if n == 0 { Err(lease_lost(id)) } else { Ok(()) }
}

/// The job to claim: of the tenants with a claimable job of `kinds` (`queued`, or `running`
/// with a lease that ended before `now`), the one with the fewest jobs running under a live
/// lease, and its oldest claimable job.
fn claimable(c: &mut SqliteConnection, kinds: &[&str], now: i64) -> TxResult<Option<String>> {
    let oldest: Vec<(String, Option<String>)> = jobs::table
        .filter(jobs::kind.eq_any(kinds))
        .filter(
            jobs::status
                .eq(QUEUED)
                .or(jobs::status.eq(RUNNING).and(jobs::lease_until.is_null().or(jobs::lease_until.lt(now)))),
        )
        .group_by(jobs::tenant_id)
        .select((jobs::tenant_id, min(jobs::id)))
        .load(c)?;
    if oldest.len() <= 1 {
        return Ok(oldest.into_iter().next().and_then(|(_, id)| id));
    }
    let running: HashMap<String, i64> = jobs::table
        .filter(jobs::status.eq(RUNNING))
        .filter(jobs::lease_until.ge(now))
        .group_by(jobs::tenant_id)
        .select((jobs::tenant_id, count_star()))
        .load::<(String, i64)>(c)?
        .into_iter()
        .collect();
    Ok(oldest
        .into_iter()
        .filter_map(|(tenant, id)| id.map(|id| (running.get(&tenant).copied().unwrap_or(0), id)))
        .min()
        .map(|(_, id)| id))
}

fn job_by_id(c: &mut SqliteConnection, id: &str) -> TxResult<Option<Job>> {
    let row = jobs::table.find(id).select(JobRow::as_select()).first(c).optional()?;
    Ok(row.map(Job::try_from).transpose()?)
}

#[async_trait]
impl JobQueue for SqliteStore {
    async fn enqueue_job(&self, job: &Job, max_active: u64) -> Result<()> {
        let row = JobRow::from(job);
        self.transaction(move |c| {
            check_tenant(c, row.tenant_id)?;
            // The writer's lock makes the count and the insert one step.
            let active: i64 = jobs::table
                .filter(jobs::tenant_id.eq(&row.tenant_id))
                .filter(jobs::kind.eq(&row.kind))
                .filter(jobs::status.eq_any([QUEUED, RUNNING]))
                .count()
                .get_result(c)?;
            if u64::try_from(active).unwrap_or(u64::MAX) >= max_active {
                return Err(TxError::Domain(DomainError::Conflict(JOB_LIMIT_REACHED.into())));
            }
            diesel::insert_into(jobs::table).values(&row).execute(c)?;
            Ok(())
        })
        .await
    }

    async fn get_job(&self, id: Uuid) -> Result<Option<Job>> {
        let id = id_text(id);
        self.read(move |c| job_by_id(c, &id)).await
    }

    async fn active_job(&self, tenant: TenantId, kind: JobKind) -> Result<Option<Job>> {
        let tenant = id_text(tenant.0);
        self.read(move |c| {
            let row = jobs::table
                .filter(jobs::tenant_id.eq(tenant))
                .filter(jobs::kind.eq(kind.as_str()))
                .filter(jobs::status.eq_any([QUEUED, RUNNING]))
                .order(jobs::id.asc())
                .select(JobRow::as_select())
                .first(c)
                .optional()?;
            Ok(row.map(Job::try_from).transpose()?)
        })
        .await
    }

    async fn claim_job(
        &self,
        kinds: &[JobKind],
        now: OffsetDateTime,
        token: Uuid,
        lease_until: OffsetDateTime,
    ) -> Result<Option<Job>> {
        let kinds: Vec<&'static str> = kinds.iter().map(|k| k.as_str()).collect();
        self.transaction(move |c| {
            let Some(id) = claimable(c, &kinds, unix_micros(now))? else { return Ok(None) };
            let started: Option<i64> = jobs::table.find(&id).select(jobs::started_at).first(c)?;
            diesel::update(jobs::table.find(&id))
                .set((
                    jobs::status.eq(RUNNING),
                    jobs::lease_token.eq(id_text(token)),
                    jobs::lease_until.eq(unix_micros(lease_until)),
                    jobs::started_at.eq(started.unwrap_or(unix_micros(now))),
                    jobs::attempts.eq(jobs::attempts + 1),
                    jobs::progress.eq(0.0),
                    jobs::state.eq(Value::Null),
                ))
                .execute(c)?;
            diesel::delete(job_chunks::table.filter(job_chunks::job_id.eq(&id))).execute(c)?;
            job_by_id(c, &id)
        })
        .await
    }

    async fn renew_job(
        &self,
        id: Uuid,
        token: Uuid,
        progress: f64,
        state: Option<&Value>,
        lease_until: OffsetDateTime,
    ) -> Result<()> {
        let (id, token, state) = (id_text(id), id_text(token), state.cloned());
        self.transaction(move |c| renew(c, &id, &token, progress, state.as_ref(), lease_until)).await
    }

    async fn put_job_chunk(&self, id: Uuid, token: Uuid, index: i32, data: Vec<u8>) -> Result<()> {
        let (id, token) = (id_text(id), id_text(token));
        self.transaction(move |c| {
            held_tenant(c, &id, &token)?;
            diesel::insert_into(job_chunks::table)
                .values((job_chunks::job_id.eq(&id), job_chunks::idx.eq(index), job_chunks::data.eq(&data)))
                .on_conflict((job_chunks::job_id, job_chunks::idx))
                .do_update()
                .set(job_chunks::data.eq(excluded(job_chunks::data)))
                .execute(c)?;
            Ok(())
        })
        .await
    }

    async fn job_chunk(&self, tenant: TenantId, id: Uuid, index: i32) -> Result<Option<Vec<u8>>> {
        let (tenant, id) = (id_text(tenant.0), id_text(id));
        self.read(move |c| {
            Ok(job_chunks::table
                .inner_join(jobs::table)
                .filter(job_chunks::job_id.eq(id))
                .filter(job_chunks::idx.eq(index))
                .filter(jobs::tenant_id.eq(tenant))
                .select(job_chunks::data)
                .first(c)
                .optional()?)
        })
        .await
    }

    async fn finish_job(&self, id: Uuid, token: Uuid, end: &JobEnd) -> Result<()> {
        let (id, token, end) = (id_text(id), id_text(token), end.clone());
        self.transaction(move |c| finish(c, &id, &token, &end)).await
    }

    async fn cancel_job(&self, tenant: TenantId, kind: JobKind, now: OffsetDateTime) -> Result<Option<Job>> {
        let tenant = id_text(tenant.0);
        self.transaction(move |c| {
            let id: Option<String> = jobs::table
                .filter(jobs::tenant_id.eq(tenant))
                .filter(jobs::kind.eq(kind.as_str()))
                .filter(jobs::status.eq_any([QUEUED, RUNNING]))
                .order(jobs::id.asc())
                .select(jobs::id)
                .first(c)
                .optional()?;
            let Some(id) = id else { return Ok(None) };
            diesel::update(jobs::table.find(&id))
                .set((
                    jobs::status.eq(JobStatus::Cancelled.as_str()),
                    jobs::finished_at.eq(unix_micros(now)),
                    jobs::lease_token.eq(None::<String>),
                    jobs::lease_until.eq(None::<i64>),
                ))
                .execute(c)?;
            job_by_id(c, &id)
        })
        .await
    }

    async fn purge_expired_jobs(&self, now: OffsetDateTime) -> Result<u64> {
        let now = unix_micros(now);
        self.transaction(move |c| {
            let expired = jobs::table.filter(jobs::expires_at.lt(now)).select(jobs::id);
            // The schema cascades too; deleting explicitly does not depend on the pragma.
            diesel::delete(job_chunks::table.filter(job_chunks::job_id.eq_any(expired))).execute(c)?;
            let n = diesel::delete(jobs::table.filter(jobs::expires_at.lt(now))).execute(c)?;
            Ok(u64::try_from(n).unwrap_or_default())
        })
        .await
    }
}

macro_rules! versions {
    ($tenant:expr, $kind:expr) => {
        model_versions::table.filter(model_versions::tenant_id.eq($tenant)).filter(model_versions::kind.eq($kind))
    };
}

#[async_trait]
impl ModelRegistry for SqliteStore {
    async fn list_models(&self, tenant: TenantId, kind: ModelKind) -> Result<Vec<ModelVersion>> {
        let tenant = id_text(tenant.0);
        self.read(move |c| {
            let rows = versions!(tenant, kind.as_str())
                .order(model_versions::version.desc())
                .select(ModelVersionRow::as_select())
                .load(c)?;
            Ok(convert(rows)?)
        })
        .await
    }

    async fn get_model(&self, tenant: TenantId, kind: ModelKind, version: i32) -> Result<Option<StoredModel>> {
        let tenant = id_text(tenant.0);
        self.read(move |c| {
            let row = model_versions::table
                .find((tenant, kind.as_str(), version))
                .select(StoredModelRow::as_select())
                .first(c)
                .optional()?;
            Ok(row.map(StoredModel::try_from).transpose()?)
        })
        .await
    }

    async fn active_model(&self, tenant: TenantId, kind: ModelKind) -> Result<i32> {
        let tenant = id_text(tenant.0);
        self.read(move |c| {
            let version = versions!(tenant, kind.as_str())
                .filter(model_versions::active)
                .select(model_versions::version)
                .first(c)
                .optional()?;
            Ok(version.unwrap_or(0))
        })
        .await
    }

    async fn activate_model(&self, tenant: TenantId, kind: ModelKind, version: i32) -> Result<bool> {
        let tenant = id_text(tenant.0);
        self.transaction(move |c| {
            let kind = kind.as_str();
            if version != 0 {
                let n: i64 =
                    versions!(&tenant, kind).filter(model_versions::version.eq(version)).count().get_result(c)?;
                if n == 0 {
                    return Ok(false);
                }
            }
            diesel::update(versions!(&tenant, kind).filter(model_versions::active))
                .set(model_versions::active.eq(false))
                .execute(c)?;
            if version != 0 {
                diesel::update(versions!(&tenant, kind).filter(model_versions::version.eq(version)))
                    .set(model_versions::active.eq(true))
                    .execute(c)?;
            }
            Ok(true)
        })
        .await
    }

    async fn complete_training(&self, job: Uuid, token: Uuid, now: OffsetDateTime, model: &StoredModel) -> Result<i32> {
        let (job, token) = (id_text(job), id_text(token));
        let mut row = StoredModelRow::from(model);
        self.transaction(move |c| {
            row.tenant_id = held_tenant(c, &job, &token)?;
            let latest: Option<i32> =
                versions!(&row.tenant_id, &row.kind).select(max(model_versions::version)).first(c)?;
            row.version = latest.unwrap_or(0) + 1;
            row.active = true;
            diesel::update(versions!(&row.tenant_id, &row.kind).filter(model_versions::active))
                .set(model_versions::active.eq(false))
                .execute(c)?;
            diesel::insert_into(model_versions::table).values(&row).execute(c)?;
            finish(c, &job, &token, &JobEnd::completed(now, json!({ "model_version": row.version })))?;
            Ok(row.version)
        })
        .await
    }
}
