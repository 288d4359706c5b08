//! Asynchronous export jobs and their files.

use agentgov_domain::ids::{ExportJobId, TenantId};
use agentgov_domain::model::audit::unix_micros;
use agentgov_domain::model::{ExportJob, ExportOutcome, ExportProgress, JobStatus, Lease};
use agentgov_domain::ports::store::{EXPORT_LIMIT_REACHED, ExportRepo};
use agentgov_domain::{DomainError, Result};
use async_trait::async_trait;
use diesel::SqliteConnection;
use diesel::prelude::*;
use diesel::sql_types::Integer;
use diesel::upsert::excluded;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::SqliteStore;
use crate::error::{TxError, TxResult};
use crate::rows::{ExportJobRow, id_text};
use crate::schema::{export_chunks, export_jobs};

#[async_trait]
impl ExportRepo for SqliteStore {
    async fn insert_export_job(&self, job: &ExportJob, max_active_per_tenant: u64) -> Result<()> {
        let row = ExportJobRow::try_from(job)?;
        self.transaction(move |c| {
            // The writer's lock makes the count and the insert one step.
            let active: i64 = export_jobs::table
                .filter(export_jobs::tenant_id.eq(&row.tenant_id))
                .filter(export_jobs::status.eq_any([JobStatus::Queued.as_str(), JobStatus::Running.as_str()]))
                .count()
                .get_result(c)?;
            if u64::try_from(active).unwrap_or(u64::MAX) >= max_active_per_tenant {
                return Err(TxError::Domain(DomainError::Conflict(EXPORT_LIMIT_REACHED.into())));
            }
            diesel::insert_into(export_jobs::table).values(&row).execute(c)?;
            Ok(())
        })
        .await
    }

    async fn get_export_job(&self, tenant: TenantId, id: ExportJobId) -> Result<Option<ExportJob>> {
        let (tenant, id) = (id_text(tenant.0), id_text(id.0));
        self.read(move |c| {
            let row = export_jobs::table
                .filter(export_jobs::id.eq(id))
                .filter(export_jobs::tenant_id.eq(tenant))
                .select(ExportJobRow::as_select())
                .first(c)
                .optional()?;
            Ok(row.map(ExportJob::try_from).transpose()?)
        })
        .await
    }

    async fn claim_export_job(
        &self,
        now: OffsetDateTime,
        token: Uuid,
        lease_until: OffsetDateTime,
    ) -> Result<Option<ExportJob>> {
        self.transaction(move |c| {
            let Some(id) = claimable(c, unix_micros(now))? else { return Ok(None) };
            let row = export_jobs::table.find(&id).select(ExportJobRow::as_select()).first(c)?;
            let mut job = ExportJob::try_from(row)?;
            job.status = JobStatus::Running;
            job.lease = Some(Lease { token, until: lease_until });
            job.started_at = job.started_at.or(Some(now));
            job.attempts += 1;
            job.rows = 0;
            job.bytes = 0;
            job.progress = 0.0;
            job.chunks = 0;
            let row = ExportJobRow::try_from(&job)?;
            diesel::update(export_jobs::table.find(&id))
                .set((
                    export_jobs::status.eq(row.status),
                    export_jobs::lease_token.eq(row.lease_token),
                    export_jobs::lease_until.eq(row.lease_until),
                    export_jobs::started_at.eq(row.started_at),
                    export_jobs::attempts.eq(row.attempts),
                    export_jobs::rows.eq(row.rows),
                    export_jobs::bytes.eq(row.bytes),
                    export_jobs::progress.eq(row.progress),
                    export_jobs::chunks.eq(row.chunks),
                ))
                .execute(c)?;
            diesel::delete(export_chunks::table.filter(export_chunks::job_id.eq(&id))).execute(c)?;
            Ok(Some(job))
        })
        .await
    }

    async fn put_export_chunk(
        &self,
        id: ExportJobId,
        token: Uuid,
        index: i32,
        data: Vec<u8>,
        progress: ExportProgress,
        lease_until: OffsetDateTime,
    ) -> Result<()> {
        let (job, token_text) = (id_text(id.0), id_text(token));
        self.transaction(move |c| {
            let held = export_jobs::table
                .filter(export_jobs::id.eq(&job))
                .filter(export_jobs::status.eq(JobStatus::Running.as_str()))
                .filter(export_jobs::lease_token.eq(token_text));
            let n = diesel::update(held)
                .set((
                    export_jobs::rows.eq(progress.rows),
                    export_jobs::bytes.eq(progress.bytes),
                    export_jobs::progress.eq(progress.progress),
                    export_jobs::chunks.eq(greatest(export_jobs::chunks, index.saturating_add(1))),
                    export_jobs::lease_until.eq(unix_micros(lease_until)),
                ))
                .execute(c)?;
            if n == 0 {
                return Err(lease_lost(id));
            }
            diesel::insert_into(export_chunks::table)
                .values((export_chunks::job_id.eq(&job), export_chunks::idx.eq(index), export_chunks::data.eq(&data)))
                .on_conflict((export_chunks::job_id, export_chunks::idx))
                .do_update()
                .set(export_chunks::data.eq(excluded(export_chunks::data)))
                .execute(c)?;
            Ok(())
        })
        .await
    }

    async fn finish_export_job(&self, id: ExportJobId, token: Uuid, outcome: &ExportOutcome) -> Result<()> {
        let (job, token_text, outcome) = (id_text(id.0), id_text(token), outcome.clone());
        self.transaction(move |c| {
            let held = export_jobs::table
                .filter(export_jobs::id.eq(&job))
                .filter(export_jobs::status.eq(JobStatus::Running.as_str()))
                .filter(export_jobs::lease_token.eq(token_text));
            let n = diesel::update(held)
                .set((
                    export_jobs::status.eq(outcome.status.as_str()),
                    export_jobs::error.eq(outcome.error),
                    export_jobs::rows.eq(outcome.progress.rows),
                    export_jobs::bytes.eq(outcome.progress.bytes),
                    export_jobs::progress.eq(outcome.progress.progress),
                    export_jobs::chunks.eq(outcome.chunks),
                    export_jobs::finished_at.eq(unix_micros(outcome.finished_at)),
                    export_jobs::expires_at.eq(unix_micros(outcome.expires_at)),
                    export_jobs::lease_token.eq(None::<String>),
                    export_jobs::lease_until.eq(None::<i64>),
                ))
                .execute(c)?;
            if n == 0 { Err(lease_lost(id)) } else { Ok(()) }
        })
        .await
    }

    async fn export_chunk(&self, tenant: TenantId, id: ExportJobId, index: i32) -> Result<Option<Vec<u8>>> {
        let (tenant, id) = (id_text(tenant.0), id_text(id.0));
        self.read(move |c| {
            Ok(export_chunks::table
                .inner_join(export_jobs::table)
                .filter(export_chunks::job_id.eq(id))
                .filter(export_chunks::idx.eq(index))
                .filter(export_jobs::tenant_id.eq(tenant))
                .select(export_chunks::data)
                .first(c)
                .optional()?)
        })
        .await
    }

    async fn purge_expired_exports(&self, now: OffsetDateTime) -> Result<u64> {
        let now = unix_micros(now);
        self.transaction(move |c| {
            let expired = export_jobs::table.filter(export_jobs::expires_at.lt(now)).select(export_jobs::id);
            // The schema cascades too; deleting explicitly does not depend on the pragma.
            diesel::delete(export_chunks::table.filter(export_chunks::job_id.eq_any(expired))).execute(c)?;
            let n = diesel::delete(export_jobs::table.filter(export_jobs::expires_at.lt(now))).execute(c)?;
            Ok(u64::try_from(n).unwrap_or_default())
        })
        .await
    }
}

diesel::define_sql_function! {
    /// SQLite's two-argument (scalar) `max`.
    #[sql_name = "max"]
    fn greatest(a: Integer, b: Integer) -> Integer;
}

fn lease_lost(id: ExportJobId) -> TxError {
    TxError::Domain(DomainError::Conflict(format!("export job {id} is no longer held by this worker")))
}

/// The oldest claimable job: `queued`, or `running` with a lease that ended before `now`.
/// Two look-ups, each a short walk of the `(status, id)` index.
fn claimable(c: &mut SqliteConnection, now: i64) -> TxResult<Option<String>> {
    let queued: Option<String> = export_jobs::table
        .filter(export_jobs::status.eq(JobStatus::Queued.as_str()))
        .order(export_jobs::id.asc())
        .select(export_jobs::id)
        .first(c)
        .optional()?;
    let abandoned: Option<String> = export_jobs::table
        .filter(export_jobs::status.eq(JobStatus::Running.as_str()))
        .filter(export_jobs::lease_until.is_null().or(export_jobs::lease_until.lt(now)))
        .order(export_jobs::id.asc())
        .select(export_jobs::id)
        .first(c)
        .optional()?;
    Ok(queued.into_iter().chain(abandoned).min())
}
