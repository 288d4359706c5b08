//! Export jobs and their files. A worker claims a job with `FOR UPDATE SKIP LOCKED`, so
//! workers on every replica share the queue without ever claiming the same job; every later
//! write is conditional on the job still being `running` under the worker's lease token.

use agentgov_domain::ids::{ExportJobId, TenantId};
use agentgov_domain::model::{ExportJob, ExportOutcome, ExportProgress, JobStatus, Lease};
use agentgov_domain::ports::ExportRepo;
use agentgov_domain::ports::store::EXPORT_LIMIT_REACHED;
use agentgov_domain::{DomainError, Result};
use async_trait::async_trait;
use diesel::prelude::*;
use diesel::sql_types::Integer;
use diesel::upsert::excluded;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::error::{self, TxError};
use crate::rows::ExportJobRow;
use crate::schema::{export_chunks, export_jobs, tenants};
use crate::store::PgStore;

define_sql_function! {
    /// Postgres's `GREATEST` of two integers.
    fn greatest(a: Integer, b: Integer) -> Integer;
}

fn lease_lost(id: ExportJobId) -> DomainError {
    DomainError::Conflict(format!("export job {id} is no longer held by this worker"))
}

#[async_trait]
impl ExportRepo for PgStore {
    async fn insert_export_job(&self, job: &ExportJob, max_active_per_tenant: u64) -> Result<()> {
        let row = ExportJobRow::try_from(job)?;
        let tenant = job.tenant_id.as_uuid();
        let mut conn = self.tx_conn().await?;
        let conn: &mut AsyncPgConnection = &mut conn;
        conn.transaction(async |conn| -> Result<(), TxError> {
            // The tenant row lock orders concurrent requests, so the count and the insert are
            // one step (`FOR NO KEY UPDATE`: foreign-key checks elsewhere are not blocked).
            let locked: Option<Uuid> =
                tenants::table.find(tenant).select(tenants::id).for_no_key_update().first(conn).await.optional()?;
            if locked.is_none() {
                return Err(TxError::Domain(DomainError::Conflict("tenant does not exist".into())));
            }
            let active: i64 = export_jobs::table
                .filter(export_jobs::tenant_id.eq(tenant))
                .filter(export_jobs::status.eq_any([JobStatus::Queued.as_str(), JobStatus::Running.as_str()]))
                .count()
                .get_result(conn)
                .await?;
            if u64::try_from(active).unwrap_or(u64::MAX) >= max_active_per_tenant {
                return Err(TxError::Domain(DomainError::Conflict(EXPORT_LIMIT_REACHED.into())));
            }
            diesel::insert_into(export_jobs::table).values(&row).execute(conn).await?;
            Ok(())
        })
        .await
        .map_err(DomainError::from)
    }

    async fn get_export_job(&self, tenant: TenantId, id: ExportJobId) -> Result<Option<ExportJob>> {
        let mut conn = self.conn().await?;
        let row = export_jobs::table
            .filter(export_jobs::id.eq(id.as_uuid()))
            .filter(export_jobs::tenant_id.eq(tenant.as_uuid()))
            .select(ExportJobRow::as_select())
            .first(&mut conn)
            .await
            .optional()
            .map_err(error::db)?;
        row.map(ExportJob::try_from).transpose()
    }

    async fn claim_export_job(
        &self,
        now: OffsetDateTime,
        token: Uuid,
        lease_until: OffsetDateTime,
    ) -> Result<Option<ExportJob>> {
        let mut conn = self.tx_conn().await?;
        let conn: &mut AsyncPgConnection = &mut conn;
        conn.transaction(async move |conn| -> Result<Option<ExportJob>, TxError> {
            let row = next_claimable!(export_jobs, ExportJobRow, now, conn)?;
            let Some(row) = row else { return Ok(None) };
            let mut job = ExportJob::try_from(row)?;
            job.status = JobStatus::Running;
            job.lease = Some(Lease { token, until: lease_until });
            job.started_at = job.started_at.or(Some(now));
            job.attempts += 1;
            job.rows = 0;
            job.bytes = 0;
            job.progress = 0.0;
            job.chunks = 0;
            let id = job.id.as_uuid();
            diesel::update(export_jobs::table.find(id))
                .set((
                    export_jobs::status.eq(job.status.as_str()),
                    export_jobs::lease_token.eq(token),
                    export_jobs::lease_until.eq(lease_until),
                    export_jobs::started_at.eq(job.started_at),
                    export_jobs::attempts.eq(job.attempts),
                    export_jobs::rows.eq(0),
                    export_jobs::bytes.eq(0),
                    export_jobs::progress.eq(0.0),
                    export_jobs::chunks.eq(0),
                ))
                .execute(conn)
                .await?;
            // The previous attempt's file, if any, is started over.
            diesel::delete(export_chunks::table.filter(export_chunks::job_id.eq(id))).execute(conn).await?;
            Ok(Some(job))
        })
        .await
        .map_err(DomainError::from)
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
        let mut conn = self.tx_conn().await?;
        let conn: &mut AsyncPgConnection = &mut conn;
        conn.transaction(async move |conn| -> Result<(), TxError> {
            // Updating first locks the job row: a worker reclaiming the job after an expired
            // lease waits for this commit, then drops the chunk with the rest.
            let updated = diesel::update(held!(export_jobs, id, token))
                .set((
                    export_jobs::rows.eq(progress.rows),
                    export_jobs::bytes.eq(progress.bytes),
                    export_jobs::progress.eq(progress.progress),
                    export_jobs::chunks.eq(greatest(export_jobs::chunks, index.saturating_add(1))),
                    export_jobs::lease_until.eq(lease_until),
                ))
                .execute(conn)
                .await?;
            if updated == 0 {
                return Err(TxError::Domain(lease_lost(id)));
            }
            diesel::insert_into(export_chunks::table)
                .values((
                    export_chunks::job_id.eq(id.as_uuid()),
                    export_chunks::idx.eq(index),
                    export_chunks::data.eq(data),
                ))
                .on_conflict((export_chunks::job_id, export_chunks::idx))
                .do_update()
                .set(export_chunks::data.eq(excluded(export_chunks::data)))
                .execute(conn)
                .await?;
            Ok(())
        })
        .await
        .map_err(DomainError::from)
    }

    async fn finish_export_job(&self, id: ExportJobId, token: Uuid, outcome: &ExportOutcome) -> Result<()> {
        let mut conn = self.conn().await?;
        let updated = diesel::update(held!(export_jobs, id, token))
            .set((
                export_jobs::status.eq(outcome.status.as_str()),
                export_jobs::error.eq(outcome.error.as_deref()),
                export_jobs::rows.eq(outcome.progress.rows),
                export_jobs::bytes.eq(outcome.progress.bytes),
                export_jobs::progress.eq(outcome.progress.progress),
                export_jobs::chunks.eq(outcome.chunks),
                export_jobs::finished_at.eq(outcome.finished_at),
                export_jobs::expires_at.eq(outcome.expires_at),
                export_jobs::lease_token.eq(None::<Uuid>),
                export_jobs::lease_until.eq(None::<OffsetDateTime>),
            ))
            .execute(&mut conn)
            .await
            .map_err(error::db)?;
        if updated == 0 { Err(lease_lost(id)) } else { Ok(()) }
    }

    async fn export_chunk(&self, tenant: TenantId, id: ExportJobId, index: i32) -> Result<Option<Vec<u8>>> {
        let mut conn = self.conn().await?;
        export_chunks::table
            .inner_join(export_jobs::table)
            .filter(export_chunks::job_id.eq(id.as_uuid()))
            .filter(export_chunks::idx.eq(index))
            .filter(export_jobs::tenant_id.eq(tenant.as_uuid()))
            .select(export_chunks::data)
            .first(&mut conn)
            .await
            .optional()
            .map_err(error::db)
    }

    async fn purge_expired_exports(&self, now: OffsetDateTime) -> Result<u64> {
        let mut conn = self.conn().await?;
        // Chunks go with their job (ON DELETE CASCADE).
        let deleted = diesel::delete(export_jobs::table.filter(export_jobs::expires_at.lt(now)))
            .execute(&mut conn)
            .await
            .map_err(error::db)?;
        Ok(deleted as u64)
    }
}
