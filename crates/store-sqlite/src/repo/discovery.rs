//! Shadow-agent discovery on SQLite: ingested events, candidates and clustering jobs.
//!
//! Events and candidates are stored as the JSON text of their `Serialize` form (`body`,
//! which leaves out `tenant_id`) beside the columns that SQL filters on: id, tenant,
//! and the event's `disposition` or the candidate's `status`. Reading, `body` is parsed and
//! `tenant_id` set from its column. Jobs have a column per field, their summary as JSON.
//!
//! Every write runs in a `BEGIN IMMEDIATE` transaction on the single writer. A batch of
//! events is serialised before the writer is taken and goes in as one transaction of
//! multi-row `INSERT`s of fixed sizes (statements prepared once per connection, well under
//! SQLite's bound-variable limit). A missing tenant (looked up first, to name it; the
//! foreign key would fail too) or a taken id rolls the whole batch back: `Conflict`, nothing
//! stored. Clustering scans a tenant's shadow events by keyset, one query walking the
//! `(tenant_id, disposition, id)` index.
//!
//! A worker's writes to a job are conditioned on its lease token (`status = 'running' AND
//! lease_token = ?`), so a worker whose job was reclaimed gets `Conflict` and writes
//! nothing; a job's completion writes its candidates in the same transaction, replacing or
//! deleting only those still `pending` (`status = 'pending'` in the statement), so a
//! candidate decided while clustering ran is left as it is. The index
//! `discovery_jobs_active_key` keeps one queued or running job per tenant.

use std::collections::BTreeSet;

use agentgov_domain::ids::{CandidateId, ClusterJobId, DiscoveryEventId, TenantId};
use agentgov_domain::model::audit::unix_micros;
use agentgov_domain::model::{
    CandidateFilter, CandidateStatus, ClusterJob, ClusterOutcome, DiscoveryCandidate, DiscoveryEvent, EventDisposition,
    JobStatus, Lease,
};
use agentgov_domain::page::{Page, PageRequest};
use agentgov_domain::ports::store::DiscoveryRepo;
use agentgov_domain::{DomainError, Result};
use async_trait::async_trait;
use diesel::SqliteConnection;
use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::sql_types::Bool;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::SqliteStore;
use crate::error::{TxError, TxResult};
use crate::repo::check_tenant;
use crate::rows::{
    CandidateBody, CandidateRow, ClusterJobRow, DiscoveryEventBody, DiscoveryEventRow, convert, id_text,
};
use crate::schema::{discovery_candidates, discovery_events, discovery_jobs};

const QUEUED: &str = "queued";
const RUNNING: &str = "running";
const PENDING: &str = "pending";

/// Ids looked up (or deleted) per statement, well under SQLite's bound-variable limit.
const IDS_PER_STATEMENT: usize = 500;

fn lease_lost(id: ClusterJobId) -> TxError {
    TxError::Domain(DomainError::Conflict(format!("clustering job {id} is no longer held by this worker")))
}

/// The job `id` if it is `running` under `token`.
macro_rules! held {
    ($id:expr, $token:expr) => {
        discovery_jobs::table
            .filter(discovery_jobs::id.eq($id))
            .filter(discovery_jobs::status.eq(RUNNING))
            .filter(discovery_jobs::lease_token.eq($token))
    };
}

/// Inserts `rows` as multi-row `INSERT`s of fixed sizes (500, 50, 5, then 1 rows; 4 bound
/// values a row): diesel prepares a statement of a fixed row count once per connection and
/// reuses it, where a statement sized to each batch would be parsed again every time.
fn insert_events(c: &mut SqliteConnection, rows: &[DiscoveryEventRow]) -> TxResult<()> {
    let mut rest = rows;
    macro_rules! in_chunks_of {
        ($($n:literal),*) => {$(
            while let Some((chunk, tail)) = rest.split_first_chunk::<$n>() {
                diesel::insert_into(discovery_events::table).values(chunk).execute(c)?;
                rest = tail;
            }
        )*};
    }
    in_chunks_of!(500, 50, 5, 1);
    Ok(())
}

/// The oldest claimable job: `queued`, or `running` with a lease that ended before `now`.
/// Two look-ups, each a short walk of the `(status, id)` index.
fn claimable(c: &mut SqliteConnection, now: i64) -> TxResult<Option<String>> {
    let queued: Option<String> = discovery_jobs::table
        .filter(discovery_jobs::status.eq(QUEUED))
        .order(discovery_jobs::id.asc())
        .select(discovery_jobs::id)
        .first(c)
        .optional()?;
    let abandoned: Option<String> = discovery_jobs::table
        .filter(discovery_jobs::status.eq(RUNNING))
        .filter(discovery_jobs::lease_until.is_null().or(discovery_jobs::lease_until.lt(now)))
        .order(discovery_jobs::id.asc())
        .select(discovery_jobs::id)
        .first(c)
        .optional()?;
    Ok(queued.into_iter().chain(abandoned).min())
}

fn job_by_id(c: &mut SqliteConnection, id: &str) -> TxResult<Option<ClusterJob>> {
    let row = discovery_jobs::table.find(id).select(ClusterJobRow::as_select()).first(c).optional()?;
    Ok(row.map(ClusterJob::try_from).transpose()?)
}

#[async_trait]
impl DiscoveryRepo for SqliteStore {
    async fn insert_discovery_events(&self, events: &[DiscoveryEvent]) -> Result<()> {
        if events.is_empty() {
            return Ok(());
        }
        // Serialised here, before the writer is taken: the transaction only inserts.
        let rows = events.iter().map(DiscoveryEventRow::try_from).collect::<Result<Vec<_>>>()?;
        let tenants: Vec<String> =
            rows.iter().map(|r| r.tenant_id.as_str()).collect::<BTreeSet<_>>().into_iter().map(str::to_owned).collect();
        self.transaction(move |c| {
            // Names a missing tenant (the foreign key would fail the insert too, unnamed).
            for tenant in &tenants {
                check_tenant(c, tenant)?;
            }
            insert_events(c, &rows)
        })
        .await
    }

    async fn scan_shadow_events(
        &self,
        tenant: TenantId,
        after: Option<DiscoveryEventId>,
        limit: i64,
    ) -> Result<Vec<DiscoveryEvent>> {
        if limit <= 0 {
            return Ok(Vec::new());
        }
        // Every id text is greater than the empty string: one statement shape either way.
        let (tenant, after) = (id_text(tenant.0), after.map(|a| id_text(a.0)).unwrap_or_default());
        self.read(move |c| {
            let rows = discovery_events::table
                .filter(discovery_events::tenant_id.eq(tenant))
                .filter(discovery_events::disposition.eq(EventDisposition::Shadow.as_str()))
                .filter(discovery_events::id.gt(after))
                .order(discovery_events::id.asc())
                .limit(limit)
                .select(DiscoveryEventBody::as_select())
                .load(c)?;
            Ok(convert(rows)?)
        })
        .await
    }

    async fn get_discovery_events(&self, tenant: TenantId, ids: &[DiscoveryEventId]) -> Result<Vec<DiscoveryEvent>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let (tenant, ids) = (id_text(tenant.0), ids.iter().map(|i| id_text(i.0)).collect::<Vec<_>>());
        self.read(move |c| {
            let mut events = Vec::with_capacity(ids.len());
            for chunk in ids.chunks(IDS_PER_STATEMENT) {
                let rows = discovery_events::table
                    .filter(discovery_events::tenant_id.eq(&tenant))
                    .filter(discovery_events::id.eq_any(chunk))
                    .select(DiscoveryEventBody::as_select())
                    .load(c)?;
                events.extend(convert::<_, DiscoveryEvent>(rows)?);
            }
            Ok(events)
        })
        .await
    }

    async fn get_candidate(&self, tenant: TenantId, id: CandidateId) -> Result<Option<DiscoveryCandidate>> {
        let (tenant, id) = (id_text(tenant.0), id_text(id.0));
        self.read(move |c| {
            let row = discovery_candidates::table
                .find(id)
                .filter(discovery_candidates::tenant_id.eq(tenant))
                .select(CandidateBody::as_select())
                .first(c)
                .optional()?;
            Ok(row.map(DiscoveryCandidate::try_from).transpose()?)
        })
        .await
    }

    async fn list_candidates(
        &self,
        tenant: TenantId,
        filter: &CandidateFilter,
        page: &PageRequest,
    ) -> Result<Page<DiscoveryCandidate>> {
        let (tenant, status) = (id_text(tenant.0), filter.status);
        let (after, limit) = (page.after.map(id_text), page.fetch_limit());
        let rows = self
            .read(move |c| {
                let mut q = discovery_candidates::table
                    .filter(discovery_candidates::tenant_id.eq(tenant))
                    .select(CandidateBody::as_select())
                    .order(discovery_candidates::id.desc())
                    .limit(limit)
                    .into_boxed();
                if let Some(status) = status {
                    q = q.filter(discovery_candidates::status.eq(status.as_str()));
                }
                if let Some(after) = after {
                    q = q.filter(discovery_candidates::id.lt(after));
                }
                Ok(convert(q.load(c)?)?)
            })
            .await?;
        Ok(Page::from_rows(rows, page, |c: &DiscoveryCandidate| c.id.0))
    }

    async fn decided_candidates(&self, tenant: TenantId) -> Result<Vec<DiscoveryCandidate>> {
        let tenant = id_text(tenant.0);
        self.read(move |c| {
            let rows = discovery_candidates::table
                .filter(discovery_candidates::tenant_id.eq(tenant))
                .filter(
                    discovery_candidates::status
                        .eq_any([CandidateStatus::Confirmed.as_str(), CandidateStatus::Dismissed.as_str()]),
                )
                .select(CandidateBody::as_select())
                .load(c)?;
            Ok(convert(rows)?)
        })
        .await
    }

    async fn update_candidate(&self, candidate: &DiscoveryCandidate, expected: CandidateStatus) -> Result<bool> {
        let (row, id) = (CandidateRow::new(candidate.tenant_id, candidate)?, candidate.id);
        self.transaction(move |c| {
            let target = discovery_candidates::table
                .filter(discovery_candidates::id.eq(&row.id))
                .filter(discovery_candidates::tenant_id.eq(&row.tenant_id));
            let n = diesel::update(target.filter(discovery_candidates::status.eq(expected.as_str())))
                .set((discovery_candidates::status.eq(&row.status), discovery_candidates::body.eq(&row.body)))
                .execute(c)?;
            if n > 0 {
                return Ok(true);
            }
            let exists: i64 = target.count().get_result(c)?;
            if exists == 0 { Err(TxError::Domain(DomainError::not_found("candidate", id))) } else { Ok(false) }
        })
        .await
    }

    async fn insert_cluster_job(&self, job: &ClusterJob) -> Result<()> {
        let row = ClusterJobRow::try_from(job)?;
        self.transaction(move |c| {
            check_tenant(c, &row.tenant_id)?;
            // A second active job of the tenant fails `discovery_jobs_active_key`: `Conflict`.
            diesel::insert_into(discovery_jobs::table).values(&row).execute(c)?;
            Ok(())
        })
        .await
    }

    async fn active_cluster_job(&self, tenant: TenantId) -> Result<Option<ClusterJob>> {
        let tenant = id_text(tenant.0);
        self.read(move |c| {
            // The condition as written in `discovery_jobs_active_key`, so SQLite uses it (a
            // bound `IN (?, ?)` would not match the partial index's condition).
            let row = discovery_jobs::table
                .filter(discovery_jobs::tenant_id.eq(tenant))
                .filter(sql::<Bool>("status IN ('queued', 'running')"))
                .select(ClusterJobRow::as_select())
                .first(c)
                .optional()?;
            Ok(row.map(ClusterJob::try_from).transpose()?)
        })
        .await
    }

    async fn get_cluster_job(&self, tenant: TenantId, id: ClusterJobId) -> Result<Option<ClusterJob>> {
        let (tenant, id) = (id_text(tenant.0), id_text(id.0));
        self.read(move |c| {
            let row = discovery_jobs::table
                .find(id)
                .filter(discovery_jobs::tenant_id.eq(tenant))
                .select(ClusterJobRow::as_select())
                .first(c)
                .optional()?;
            Ok(row.map(ClusterJob::try_from).transpose()?)
        })
        .await
    }

    async fn claim_cluster_job(
        &self,
        now: OffsetDateTime,
        token: Uuid,
        lease_until: OffsetDateTime,
    ) -> Result<Option<ClusterJob>> {
        self.transaction(move |c| {
            let Some(id) = claimable(c, unix_micros(now))? else { return Ok(None) };
            let Some(mut job) = job_by_id(c, &id)? else { return Ok(None) };
            job.status = JobStatus::Running;
            job.lease = Some(Lease { token, until: lease_until });
            job.started_at = job.started_at.or(Some(now));
            job.attempts += 1;
            job.progress = 0.0;
            let row = ClusterJobRow::try_from(&job)?;
            diesel::update(discovery_jobs::table.find(&id))
                .set((
                    discovery_jobs::status.eq(row.status),
                    discovery_jobs::lease_token.eq(row.lease_token),
                    discovery_jobs::lease_until.eq(row.lease_until),
                    discovery_jobs::started_at.eq(row.started_at),
                    discovery_jobs::attempts.eq(row.attempts),
                    discovery_jobs::progress.eq(row.progress),
                ))
                .execute(c)?;
            Ok(Some(job))
        })
        .await
    }

    async fn progress_cluster_job(
        &self,
        id: ClusterJobId,
        token: Uuid,
        progress: f64,
        lease_until: OffsetDateTime,
    ) -> Result<()> {
        let (job, token_text) = (id_text(id.0), id_text(token));
        self.transaction(move |c| {
            let n = diesel::update(held!(job, token_text))
                .set((discovery_jobs::progress.eq(progress), discovery_jobs::lease_until.eq(unix_micros(lease_until))))
                .execute(c)?;
            if n == 0 { Err(lease_lost(id)) } else { Ok(()) }
        })
        .await
    }

    async fn complete_cluster_job(
        &self,
        id: ClusterJobId,
        token: Uuid,
        now: OffsetDateTime,
        outcome: &ClusterOutcome,
    ) -> Result<Vec<CandidateId>> {
        let (job, token_text) = (id_text(id.0), id_text(token));
        // Serialised here, before the writer is taken; the tenant is set to the job's inside.
        let mut upserts = outcome
            .upserts
            .iter()
            .map(|u| Ok((u.id, CandidateRow::new(u.tenant_id, u)?)))
            .collect::<Result<Vec<_>>>()?;
        let removed: Vec<String> = outcome.removed.iter().map(|r| id_text(r.0)).collect();
        let summary = serde_json::to_string(&outcome.summary).map_err(DomainError::internal)?;
        self.transaction(move |c| {
            let tenant: Option<String> =
                held!(&job, &token_text).select(discovery_jobs::tenant_id).first(c).optional()?;
            let Some(tenant) = tenant else { return Err(lease_lost(id)) };

            let mut inserted = Vec::new();
            for (candidate, row) in &mut upserts {
                row.tenant_id.clone_from(&tenant);
                let n = diesel::insert_into(discovery_candidates::table)
                    .values(&*row)
                    .on_conflict_do_nothing()
                    .execute(c)?;
                if n > 0 {
                    inserted.push(*candidate);
                    continue;
                }
                // It exists: replaced only while still pending.
                diesel::update(
                    discovery_candidates::table
                        .filter(discovery_candidates::id.eq(&row.id))
                        .filter(discovery_candidates::tenant_id.eq(&tenant))
                        .filter(discovery_candidates::status.eq(PENDING)),
                )
                .set((discovery_candidates::status.eq(&row.status), discovery_candidates::body.eq(&row.body)))
                .execute(c)?;
            }
            for chunk in removed.chunks(IDS_PER_STATEMENT) {
                diesel::delete(
                    discovery_candidates::table
                        .filter(discovery_candidates::id.eq_any(chunk))
                        .filter(discovery_candidates::tenant_id.eq(&tenant))
                        .filter(discovery_candidates::status.eq(PENDING)),
                )
                .execute(c)?;
            }

            diesel::update(held!(&job, &token_text))
                .set((
                    discovery_jobs::status.eq(JobStatus::Completed.as_str()),
                    discovery_jobs::progress.eq(1.0),
                    discovery_jobs::summary.eq(summary),
                    discovery_jobs::finished_at.eq(unix_micros(now)),
                    discovery_jobs::lease_token.eq(None::<String>),
                    discovery_jobs::lease_until.eq(None::<i64>),
                ))
                .execute(c)?;
            Ok(inserted)
        })
        .await
    }

    async fn fail_cluster_job(&self, id: ClusterJobId, token: Uuid, now: OffsetDateTime, error: &str) -> Result<()> {
        let (job, token_text, error) = (id_text(id.0), id_text(token), error.to_owned());
        self.transaction(move |c| {
            let n = diesel::update(held!(job, token_text))
                .set((
                    discovery_jobs::status.eq(JobStatus::Failed.as_str()),
                    discovery_jobs::error.eq(error),
                    discovery_jobs::finished_at.eq(unix_micros(now)),
                    discovery_jobs::lease_token.eq(None::<String>),
                    discovery_jobs::lease_until.eq(None::<i64>),
                ))
                .execute(c)?;
            if n == 0 { Err(lease_lost(id)) } else { Ok(()) }
        })
        .await
    }
}
