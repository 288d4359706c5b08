//! The job queue (with its chunks) and the model registry. A worker claims a job with
//! `FOR UPDATE SKIP LOCKED`, so workers on every replica share the queue without ever
//! claiming the same job; every later write is conditional on the job still being `running`
//! under the worker's lease token (`status = 'running' AND lease_token = $token`), so a worker
//! whose job was cancelled or taken over gets `Conflict` and writes nothing. A tenant's jobs
//! are counted, and its versions numbered and switched, under a lock of its tenant row
//! (`FOR NO KEY UPDATE`: foreign-key checks elsewhere are not blocked).

use agentgov_domain::ids::TenantId;
use agentgov_domain::model::{Job, JobEnd, JobKind, JobStatus, ModelKind, ModelVersion, StoredModel};
use agentgov_domain::ports::store::{JOB_LIMIT_REACHED, JobQueue, ModelRegistry};
use agentgov_domain::{DomainError, Result};
use async_trait::async_trait;
use diesel::dsl::max;
use diesel::prelude::*;
use diesel::sql_types::{Array, Text, Timestamptz};
use diesel::upsert::excluded;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use serde_json::{Value, json};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::error::{self, TxError};
use crate::repo::guard::lock_tenant;
use crate::repo::{QUEUED, RUNNING};
use crate::rows::{JobRow, ModelVersionRow, StoredModelRow};
use crate::schema::{job_chunks, jobs, model_versions};
use crate::store::PgStore;

/// The job `id` if it is `running` under `token`.
macro_rules! held {
    ($id:expr, $token:expr) => {
        jobs::table.filter(jobs::id.eq($id)).filter(jobs::status.eq(RUNNING)).filter(jobs::lease_token.eq($token))
    };
}

fn lease_lost(id: Uuid) -> TxError {
    TxError::Domain(DomainError::Conflict(format!("job {id} is no longer held by this worker")))
}

/// Inside a transaction: the tenant of job `id` if it is `running` under `token`, its row
/// locked (a reclaim waits for the caller's commit, or this finds the job no longer held and
/// the caller writes nothing).
pub(crate) async fn held_tenant(conn: &mut AsyncPgConnection, id: Uuid, token: Uuid) -> Result<Uuid, TxError> {
    let tenant: Option<Uuid> = held!(id, token).select(jobs::tenant_id).for_update().first(conn).await.optional()?;
    tenant.ok_or_else(|| lease_lost(id))
}

/// Inside a transaction, after [`held_tenant`]: ends job `id` as `end` says.
pub(crate) async fn finish(conn: &mut AsyncPgConnection, id: Uuid, end: &JobEnd) -> Result<(), TxError> {
    let target = jobs::table.find(id);
    if let Some(progress) = end.progress {
        diesel::update(target).set(jobs::progress.eq(progress)).execute(conn).await?;
    }
    if let Some(state) = &end.state {
        diesel::update(target).set(jobs::state.eq(state)).execute(conn).await?;
    }
    diesel::update(target)
        .set((
            jobs::status.eq(end.status.as_str()),
            jobs::error.eq(&end.error),
            jobs::finished_at.eq(end.at),
            jobs::expires_at.eq(end.expires_at),
            jobs::lease_token.eq(None::<Uuid>),
            jobs::lease_until.eq(None::<OffsetDateTime>),
        ))
        .execute(conn)
        .await?;
    Ok(())
}

/// Of the tenants with a claimable job of the kinds (`queued`, or `running` under a lease
/// that ran out), the one with the fewest jobs running under a live lease goes first, then
/// the oldest job; a job another worker is claiming right now is locked already, so it is
/// skipped and the next one taken.
const CLAIMABLE_SQL: &str = "\
SELECT j.id FROM jobs j
WHERE j.kind = ANY($1)
  AND (j.status = 'queued' OR (j.status = 'running' AND (j.lease_until IS NULL OR j.lease_until < $2)))
ORDER BY (SELECT count(*) FROM jobs r
          WHERE r.tenant_id = j.tenant_id AND r.status = 'running' AND r.lease_until >= $2),
         j.id
LIMIT 1
FOR UPDATE OF j SKIP LOCKED";

#[derive(QueryableByName)]
struct IdRow {
    #[diesel(sql_type = diesel::sql_types::Uuid)]
    id: Uuid,
}

#[async_trait]
impl JobQueue for PgStore {
    async fn enqueue_job(&self, job: &Job, max_active: u64) -> Result<()> {
        let row = JobRow::from(job);
        let mut conn = self.tx_conn().await?;
        let conn: &mut AsyncPgConnection = &mut conn;
        conn.transaction(async |conn| -> Result<(), TxError> {
            // The tenant row lock orders concurrent requests: the count and the insert are one step.
            if !lock_tenant(conn, row.tenant_id).await? {
                return Err(TxError::Domain(DomainError::Conflict("tenant does not exist".into())));
            }
            let active: i64 = jobs::table
                .filter(jobs::tenant_id.eq(row.tenant_id))
                .filter(jobs::kind.eq(&row.kind))
                .filter(jobs::status.eq_any([QUEUED, RUNNING]))
                .count()
                .get_result(conn)
                .await?;
            if u64::try_from(active).unwrap_or(u64::MAX) >= max_active {
                return Err(TxError::Domain(DomainError::Conflict(JOB_LIMIT_REACHED.into())));
            }
            diesel::insert_into(jobs::table).values(&row).execute(conn).await?;
            Ok(())
        })
        .await
        .map_err(DomainError::from)
    }

    async fn get_job(&self, id: Uuid) -> Result<Option<Job>> {
        let mut conn = self.conn().await?;
        let row =
            jobs::table.find(id).select(JobRow::as_select()).first(&mut conn).await.optional().map_err(error::db)?;
        row.map(Job::try_from).transpose()
    }

    async fn active_job(&self, tenant: TenantId, kind: JobKind) -> Result<Option<Job>> {
        let mut conn = self.conn().await?;
        let row = jobs::table
            .filter(jobs::tenant_id.eq(tenant.as_uuid()))
            .filter(jobs::kind.eq(kind.as_str()))
            .filter(jobs::status.eq_any([QUEUED, RUNNING]))
            .order(jobs::id)
            .select(JobRow::as_select())
            .first(&mut conn)
            .await
            .optional()
            .map_err(error::db)?;
        row.map(Job::try_from).transpose()
    }

    async fn claim_job(
        &self,
        kinds: &[JobKind],
        now: OffsetDateTime,
        token: Uuid,
        lease_until: OffsetDateTime,
    ) -> Result<Option<Job>> {
        let kinds: Vec<String> = kinds.iter().map(|k| k.as_str().to_owned()).collect();
        let mut conn = self.tx_conn().await?;
        let conn: &mut AsyncPgConnection = &mut conn;
        conn.transaction(async move |conn| -> Result<Option<Job>, TxError> {
            let found: Option<IdRow> = diesel::sql_query(CLAIMABLE_SQL)
                .bind::<Array<Text>, _>(&kinds)
                .bind::<Timestamptz, _>(now)
                .get_result(conn)
                .await
                .optional()?;
            let Some(IdRow { id }) = found else { return Ok(None) };
            let started: Option<OffsetDateTime> = jobs::table.find(id).select(jobs::started_at).first(conn).await?;
            let row: JobRow = diesel::update(jobs::table.find(id))
                .set((
                    jobs::status.eq(RUNNING),
                    jobs::lease_token.eq(token),
                    jobs::lease_until.eq(lease_until),
                    jobs::started_at.eq(started.unwrap_or(now)),
                    jobs::attempts.eq(jobs::attempts + 1),
                    jobs::progress.eq(0.0),
                    jobs::state.eq(Value::Null),
                ))
                .returning(JobRow::as_returning())
                .get_result(conn)
                .await?;
            diesel::delete(job_chunks::table.filter(job_chunks::job_id.eq(id))).execute(conn).await?;
            Ok(Some(Job::try_from(row)?))
        })
        .await
        .map_err(DomainError::from)
    }

    async fn renew_job(
        &self,
        id: Uuid,
        token: Uuid,
        progress: f64,
        state: Option<&Value>,
        lease_until: OffsetDateTime,
    ) -> Result<()> {
        let mut conn = self.conn().await?;
        let updated = match state {
            Some(state) => {
                diesel::update(held!(id, token))
                    .set((jobs::progress.eq(progress), jobs::state.eq(state), jobs::lease_until.eq(lease_until)))
                    .execute(&mut conn)
                    .await
            }
            None => {
                diesel::update(held!(id, token))
                    .set((jobs::progress.eq(progress), jobs::lease_until.eq(lease_until)))
                    .execute(&mut conn)
                    .await
            }
        }
        .map_err(error::db)?;
        if updated == 0 { Err(lease_lost(id).into()) } else { Ok(()) }
    }

    async fn put_job_chunk(&self, id: Uuid, token: Uuid, index: i32, data: Vec<u8>) -> Result<()> {
        let mut conn = self.tx_conn().await?;
        let conn: &mut AsyncPgConnection = &mut conn;
        conn.transaction(async move |conn| -> Result<(), TxError> {
            held_tenant(conn, id, token).await?;
            diesel::insert_into(job_chunks::table)
                .values((job_chunks::job_id.eq(id), job_chunks::idx.eq(index), job_chunks::data.eq(&data)))
                .on_conflict((job_chunks::job_id, job_chunks::idx))
                .do_update()
                .set(job_chunks::data.eq(excluded(job_chunks::data)))
                .execute(conn)
                .await?;
            Ok(())
        })
        .await
        .map_err(DomainError::from)
    }

    async fn job_chunk(&self, tenant: TenantId, id: Uuid, index: i32) -> Result<Option<Vec<u8>>> {
        let mut conn = self.conn().await?;
        job_chunks::table
            .inner_join(jobs::table)
            .filter(job_chunks::job_id.eq(id))
            .filter(job_chunks::idx.eq(index))
            .filter(jobs::tenant_id.eq(tenant.as_uuid()))
            .select(job_chunks::data)
            .first(&mut conn)
            .await
            .optional()
            .map_err(error::db)
    }

    async fn finish_job(&self, id: Uuid, token: Uuid, end: &JobEnd) -> Result<()> {
        let end = end.clone();
        let mut conn = self.tx_conn().await?;
        let conn: &mut AsyncPgConnection = &mut conn;
        conn.transaction(async move |conn| -> Result<(), TxError> {
            held_tenant(conn, id, token).await?;
            finish(conn, id, &end).await
        })
        .await
        .map_err(DomainError::from)
    }

    async fn cancel_job(&self, tenant: TenantId, kind: JobKind, now: OffsetDateTime) -> Result<Option<Job>> {
        let mut conn = self.tx_conn().await?;
        let conn: &mut AsyncPgConnection = &mut conn;
        conn.transaction(async move |conn| -> Result<Option<Job>, TxError> {
            let id: Option<Uuid> = jobs::table
                .filter(jobs::tenant_id.eq(tenant.as_uuid()))
                .filter(jobs::kind.eq(kind.as_str()))
                .filter(jobs::status.eq_any([QUEUED, RUNNING]))
                .order(jobs::id)
                .select(jobs::id)
                .for_update()
                .first(conn)
                .await
                .optional()?;
            let Some(id) = id else { return Ok(None) };
            let row: JobRow = diesel::update(jobs::table.find(id))
                .set((
                    jobs::status.eq(JobStatus::Cancelled.as_str()),
                    jobs::finished_at.eq(now),
                    jobs::lease_token.eq(None::<Uuid>),
                    jobs::lease_until.eq(None::<OffsetDateTime>),
                ))
                .returning(JobRow::as_returning())
                .get_result(conn)
                .await?;
            Ok(Some(Job::try_from(row)?))
        })
        .await
        .map_err(DomainError::from)
    }

    async fn purge_expired_jobs(&self, now: OffsetDateTime) -> Result<u64> {
        let mut conn = self.conn().await?;
        // Chunks go with their job (ON DELETE CASCADE).
        let n =
            diesel::delete(jobs::table.filter(jobs::expires_at.lt(now))).execute(&mut conn).await.map_err(error::db)?;
        Ok(u64::try_from(n).unwrap_or_default())
    }
}

macro_rules! versions {
    ($tenant:expr, $kind:expr) => {
        model_versions::table.filter(model_versions::tenant_id.eq($tenant)).filter(model_versions::kind.eq($kind))
    };
}

#[async_trait]
impl ModelRegistry for PgStore {
    async fn list_models(&self, tenant: TenantId, kind: ModelKind) -> Result<Vec<ModelVersion>> {
        let mut conn = self.conn().await?;
        let rows: Vec<ModelVersionRow> = versions!(tenant.as_uuid(), kind.as_str())
            .order(model_versions::version.desc())
            .select(ModelVersionRow::as_select())
            .load(&mut conn)
            .await
            .map_err(error::db)?;
        rows.into_iter().map(ModelVersion::try_from).collect()
    }

    async fn get_model(&self, tenant: TenantId, kind: ModelKind, version: i32) -> Result<Option<StoredModel>> {
        let mut conn = self.conn().await?;
        let row = model_versions::table
            .find((tenant.as_uuid(), kind.as_str(), version))
            .select(StoredModelRow::as_select())
            .first(&mut conn)
            .await
            .optional()
            .map_err(error::db)?;
        row.map(StoredModel::try_from).transpose()
    }

    async fn active_model(&self, tenant: TenantId, kind: ModelKind) -> Result<i32> {
        let mut conn = self.conn().await?;
        let version = versions!(tenant.as_uuid(), kind.as_str())
            .filter(model_versions::active)
            .select(model_versions::version)
            .first(&mut conn)
            .await
            .optional()
            .map_err(error::db)?;
        Ok(version.unwrap_or(0))
    }

    async fn activate_model(&self, tenant: TenantId, kind: ModelKind, version: i32) -> Result<bool> {
        let tenant = tenant.as_uuid();
        let mut conn = self.tx_conn().await?;
        let conn: &mut AsyncPgConnection = &mut conn;
        conn.transaction(async move |conn| -> Result<bool, TxError> {
            if !lock_tenant(conn, tenant).await? {
                // No tenant, no versions: only the default (version 0) "exists".
                return Ok(version == 0);
            }
            let kind = kind.as_str();
            if version != 0 {
                let present: bool = diesel::select(diesel::dsl::exists(
                    versions!(tenant, kind).filter(model_versions::version.eq(version)),
                ))
                .get_result(conn)
                .await?;
                if !present {
                    return Ok(false);
                }
            }
            diesel::update(versions!(tenant, kind).filter(model_versions::active))
                .set(model_versions::active.eq(false))
                .execute(conn)
                .await?;
            if version != 0 {
                diesel::update(versions!(tenant, kind).filter(model_versions::version.eq(version)))
                    .set(model_versions::active.eq(true))
                    .execute(conn)
                    .await?;
            }
            Ok(true)
        })
        .await
        .map_err(DomainError::from)
    }

    async fn complete_training(&self, job: Uuid, token: Uuid, now: OffsetDateTime, model: &StoredModel) -> Result<i32> {
        let mut row = StoredModelRow::from(model);
        let mut conn = self.tx_conn().await?;
        let conn: &mut AsyncPgConnection = &mut conn;
        conn.transaction(async move |conn| -> Result<i32, TxError> {
            row.tenant_id = held_tenant(conn, job, token).await?;
            // Then the tenant's row: versions are numbered and switched one writer at a time.
            if !lock_tenant(conn, row.tenant_id).await? {
                return Err(lease_lost(job));
            }
            let highest: Option<i32> =
                versions!(row.tenant_id, &row.kind).select(max(model_versions::version)).first(conn).await?;
            row.version = highest.unwrap_or(0).checked_add(1).ok_or_else(|| {
                TxError::Domain(DomainError::Internal(format!(
                    "tenant {} has run out of model versions",
                    row.tenant_id
                )))
            })?;
            row.active = true;
            diesel::update(versions!(row.tenant_id, &row.kind).filter(model_versions::active))
                .set(model_versions::active.eq(false))
                .execute(conn)
                .await?;
            diesel::insert_into(model_versions::table).values(&row).execute(conn).await?;
            finish(conn, job, &JobEnd::completed(now, json!({ "model_version": row.version }))).await?;
            Ok(row.version)
        })
        .await
        .map_err(DomainError::from)
    }
}
