//! Shadow-agent discovery: ingested events, candidates and clustering jobs.
//!
//! Storage: events and candidates keep the columns their queries filter on (`tenant_id`,
//! the event's `disposition`, the candidate's `status`) beside `body`, the JSON text of the
//! record's `Serialize` form, which leaves the tenant out; reading sets it from the column.
//! Jobs are stored by column, their summary as JSON text.
//!
//! Ingestion inserts a batch of events as four arrays unnested by one `INSERT … SELECT`:
//! four parameters however many rows, one round trip per [`EVENTS_CHUNK`] events. A batch
//! of one chunk is a single statement, atomic by itself; a larger one runs its chunks in one
//! transaction. A missing tenant fails the foreign key and a taken id the primary key
//! (`Conflict`), and nothing of the batch is stored. Clustering reads shadow events by
//! keyset on id through the index `(tenant_id, disposition, id)`.
//!
//! Workers claim jobs with `FOR UPDATE SKIP LOCKED`, as Prompt Guard workers claim tasks;
//! every later write is conditional on the job still being `running` under the worker's
//! lease token. A completion first locks the job row under that condition (a reclaim or a
//! second completion waits, then finds it no longer held and writes nothing), then, in the
//! same transaction, inserts the new candidates (`ON CONFLICT DO NOTHING RETURNING id`
//! tells which were new), replaces the others that are still `pending`, deletes the removed
//! ones still `pending`, and marks the job completed. Candidates are written to, and
//! removed from, the job's tenant only: an id of another tenant's candidate is skipped.
//!
//! Deciding a candidate is one conditional `UPDATE … WHERE status = expected`. Postgres
//! re-checks such a condition on the row a concurrent writer left once it commits, so of
//! two racing decisions only the first applies; likewise a completion's replacements and
//! deletions leave alone a candidate that a decision took out of `pending` before them.
//!
//! The partial unique index `discovery_jobs_active_key` keeps one queued or running job per
//! tenant; a second insert fails it (`Conflict`).

use std::collections::{HashMap, HashSet};

use agentgov_domain::ids::{CandidateId, ClusterJobId, DiscoveryEventId, TenantId};
use agentgov_domain::model::{
    CandidateFilter, CandidateStatus, ClusterJob, ClusterOutcome, DiscoveryCandidate, DiscoveryEvent, EventDisposition,
    JobStatus, Lease,
};
use agentgov_domain::page::{Page, PageRequest};
use agentgov_domain::ports::DiscoveryRepo;
use agentgov_domain::{DomainError, Result};
use async_trait::async_trait;
use diesel::prelude::*;
use diesel::sql_query;
use diesel::sql_types::{Array, Text, Uuid as SqlUuid};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::error::{self, TxError};
use crate::rows::{
    DiscoveryCandidateRow, DiscoveryEventRow, DiscoveryJobRow, candidate_body, event_body, summary_text,
};
use crate::schema::{discovery_candidates, discovery_events, discovery_jobs};
use crate::store::PgStore;

use super::page_of;

use super::{QUEUED, RUNNING};
const PENDING: &str = "pending";
const SHADOW: &str = "shadow";

/// Events per `INSERT`: the service's largest batch, so that a batch is one statement.
/// Bounds the size of one message to the server when a caller passes more.
const EVENTS_CHUNK: usize = 10_000;

/// The arrays are unnested in the select list, where they advance in step (`ProjectSet`):
/// `FROM unnest(a, b, …)` would first copy them whole into a tuplestore, which for a large
/// batch spills to a temporary file.
const INSERT_EVENTS_SQL: &str = "\
INSERT INTO discovery_events (id, tenant_id, disposition, body)
SELECT unnest($1::uuid[]), unnest($2::uuid[]), unnest($3::text[]), unnest($4::text[])";

/// New candidates of the job's tenant (`$1`); those whose id exists are left to
/// [`REPLACE_CANDIDATES_SQL`]. Answers the ids inserted.
const INSERT_CANDIDATES_SQL: &str = "\
INSERT INTO discovery_candidates (id, tenant_id, status, body)
SELECT u.id, $1, u.status, u.body FROM unnest($2::uuid[], $3::text[], $4::text[]) AS u (id, status, body)
ON CONFLICT (id) DO NOTHING
RETURNING id";

/// New versions of the tenant's candidates, applied only to those still pending.
const REPLACE_CANDIDATES_SQL: &str = "\
UPDATE discovery_candidates AS c SET status = u.status, body = u.body
FROM unnest($2::uuid[], $3::text[], $4::text[]) AS u (id, status, body)
WHERE c.id = u.id AND c.tenant_id = $1 AND c.status = 'pending'";

#[derive(QueryableByName)]
struct IdRow {
    #[diesel(sql_type = SqlUuid)]
    id: Uuid,
}

fn lease_lost(id: ClusterJobId) -> DomainError {
    DomainError::Conflict(format!("clustering job {id} is no longer held by this worker"))
}

/// The tenant's candidate `id`.
macro_rules! candidate {
    ($tenant:expr, $id:expr) => {
        discovery_candidates::table
            .filter(discovery_candidates::id.eq($id.as_uuid()))
            .filter(discovery_candidates::tenant_id.eq($tenant.as_uuid()))
    };
}

/// Candidates as the three arrays the upsert statements unnest: ids, statuses and bodies.
/// An id given twice keeps its last version (one statement cannot write a row twice).
struct CandidateColumns {
    ids: Vec<Uuid>,
    statuses: Vec<&'static str>,
    bodies: Vec<String>,
}

impl CandidateColumns {
    fn of<'a>(candidates: impl IntoIterator<Item = &'a DiscoveryCandidate>) -> Result<Self> {
        let mut columns = CandidateColumns { ids: Vec::new(), statuses: Vec::new(), bodies: Vec::new() };
        let mut at: HashMap<Uuid, usize> = HashMap::new();
        for c in candidates {
            let (id, status, body) = (c.id.as_uuid(), c.status.as_str(), candidate_body(c)?);
            if let Some(&i) = at.get(&id) {
                columns.statuses[i] = status;
                columns.bodies[i] = body;
            } else {
                at.insert(id, columns.ids.len());
                columns.ids.push(id);
                columns.statuses.push(status);
                columns.bodies.push(body);
            }
        }
        Ok(columns)
    }

    fn without(self, ids: &HashSet<Uuid>) -> Self {
        let mut rest = CandidateColumns { ids: Vec::new(), statuses: Vec::new(), bodies: Vec::new() };
        for ((id, status), body) in self.ids.into_iter().zip(self.statuses).zip(self.bodies) {
            if !ids.contains(&id) {
                rest.ids.push(id);
                rest.statuses.push(status);
                rest.bodies.push(body);
            }
        }
        rest
    }
}

/// `sql` (one of the candidate statements) bound to `tenant` and the columns.
macro_rules! candidate_query {
    ($sql:expr, $tenant:expr, $columns:expr) => {
        sql_query($sql)
            .bind::<SqlUuid, _>($tenant)
            .bind::<Array<SqlUuid>, _>(&$columns.ids)
            .bind::<Array<Text>, _>(&$columns.statuses)
            .bind::<Array<Text>, _>(&$columns.bodies)
    };
}

#[async_trait]
impl DiscoveryRepo for PgStore {
    async fn insert_discovery_events(&self, events: &[DiscoveryEvent]) -> Result<()> {
        if events.is_empty() {
            return Ok(());
        }
        let mut chunks = Vec::with_capacity(events.len().div_ceil(EVENTS_CHUNK));
        for chunk in events.chunks(EVENTS_CHUNK) {
            chunks.push(EventColumns::of(chunk)?);
        }
        let mut conn = self.tx_conn().await?;
        let conn: &mut AsyncPgConnection = &mut conn;
        if let [only] = chunks.as_slice() {
            // One statement: all or nothing without a transaction around it.
            only.insert(conn).await.map_err(error::db)?;
            return Ok(());
        }
        conn.transaction(async move |conn| -> Result<(), TxError> {
            for chunk in &chunks {
                chunk.insert(conn).await?;
            }
            Ok(())
        })
        .await
        .map_err(DomainError::from)
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
        // The index `(tenant_id, disposition, id)` answers this in id order, no sort.
        let mut query = discovery_events::table
            .filter(discovery_events::tenant_id.eq(tenant.as_uuid()))
            .filter(discovery_events::disposition.eq(SHADOW))
            .order(discovery_events::id.asc())
            .limit(limit)
            .select(DiscoveryEventRow::as_select())
            .into_boxed();
        if let Some(after) = after {
            query = query.filter(discovery_events::id.gt(after.as_uuid()));
        }
        let mut conn = self.conn().await?;
        let rows: Vec<DiscoveryEventRow> = query.load(&mut conn).await.map_err(error::db)?;
        rows.into_iter().map(DiscoveryEvent::try_from).collect()
    }

    async fn get_discovery_events(&self, tenant: TenantId, ids: &[DiscoveryEventId]) -> Result<Vec<DiscoveryEvent>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let ids: Vec<Uuid> = ids.iter().map(DiscoveryEventId::as_uuid).collect();
        let mut conn = self.conn().await?;
        // `= ANY($2)`: one parameter however many ids.
        let rows: Vec<DiscoveryEventRow> = discovery_events::table
            .filter(discovery_events::id.eq_any(&ids))
            .filter(discovery_events::tenant_id.eq(tenant.as_uuid()))
            .select(DiscoveryEventRow::as_select())
            .load(&mut conn)
            .await
            .map_err(error::db)?;
        rows.into_iter().map(DiscoveryEvent::try_from).collect()
    }

    async fn get_candidate(&self, tenant: TenantId, id: CandidateId) -> Result<Option<DiscoveryCandidate>> {
        let mut conn = self.conn().await?;
        let row = candidate!(tenant, id)
            .select(DiscoveryCandidateRow::as_select())
            .first(&mut conn)
            .await
            .optional()
            .map_err(error::db)?;
        row.map(DiscoveryCandidate::try_from).transpose()
    }

    async fn list_candidates(
        &self,
        tenant: TenantId,
        filter: &CandidateFilter,
        page: &PageRequest,
    ) -> Result<Page<DiscoveryCandidate>> {
        let mut query = discovery_candidates::table
            .filter(discovery_candidates::tenant_id.eq(tenant.as_uuid()))
            .select(DiscoveryCandidateRow::as_select())
            .order(discovery_candidates::id.desc())
            .limit(page.fetch_limit())
            .into_boxed();
        if let Some(after) = page.after {
            query = query.filter(discovery_candidates::id.lt(after));
        }
        if let Some(status) = filter.status {
            query = query.filter(discovery_candidates::status.eq(status.as_str()));
        }
        let mut conn = self.conn().await?;
        let rows: Vec<DiscoveryCandidateRow> = query.load(&mut conn).await.map_err(error::db)?;
        page_of(rows, page, |c: &DiscoveryCandidate| c.id.as_uuid())
    }

    async fn decided_candidates(&self, tenant: TenantId) -> Result<Vec<DiscoveryCandidate>> {
        let decided = [CandidateStatus::Confirmed.as_str(), CandidateStatus::Dismissed.as_str()];
        let mut conn = self.conn().await?;
        let rows: Vec<DiscoveryCandidateRow> = discovery_candidates::table
            .filter(discovery_candidates::tenant_id.eq(tenant.as_uuid()))
            .filter(discovery_candidates::status.eq_any(decided))
            .select(DiscoveryCandidateRow::as_select())
            .load(&mut conn)
            .await
            .map_err(error::db)?;
        rows.into_iter().map(DiscoveryCandidate::try_from).collect()
    }

    async fn update_candidate(&self, candidate: &DiscoveryCandidate, expected: CandidateStatus) -> Result<bool> {
        let (tenant, id) = (candidate.tenant_id, candidate.id);
        let body = candidate_body(candidate)?;
        let mut conn = self.conn().await?;
        // One statement: a concurrent writer holding the row is waited for, and the status
        // is checked again on the row it left.
        let updated = diesel::update(candidate!(tenant, id).filter(discovery_candidates::status.eq(expected.as_str())))
            .set((discovery_candidates::status.eq(candidate.status.as_str()), discovery_candidates::body.eq(body)))
            .execute(&mut conn)
            .await
            .map_err(error::db)?;
        if updated > 0 {
            return Ok(true);
        }
        let present: bool = diesel::select(diesel::dsl::exists(candidate!(tenant, id)))
            .get_result(&mut conn)
            .await
            .map_err(error::db)?;
        if present { Ok(false) } else { Err(DomainError::not_found("candidate", id)) }
    }

    async fn insert_cluster_job(&self, job: &ClusterJob) -> Result<()> {
        let row = DiscoveryJobRow::try_from(job)?;
        let mut conn = self.conn().await?;
        // A second active job of the tenant fails `discovery_jobs_active_key`, a missing
        // tenant the foreign key: `Conflict` either way.
        diesel::insert_into(discovery_jobs::table).values(&row).execute(&mut conn).await.map_err(error::db)?;
        Ok(())
    }

    async fn active_cluster_job(&self, tenant: TenantId) -> Result<Option<ClusterJob>> {
        let mut conn = self.conn().await?;
        // The condition as written in `discovery_jobs_active_key`'s, so the planner uses it.
        let row = discovery_jobs::table
            .filter(discovery_jobs::tenant_id.eq(tenant.as_uuid()))
            .filter(discovery_jobs::status.eq_any([QUEUED, RUNNING]))
            .select(DiscoveryJobRow::as_select())
            .first(&mut conn)
            .await
            .optional()
            .map_err(error::db)?;
        row.map(ClusterJob::try_from).transpose()
    }

    async fn get_cluster_job(&self, tenant: TenantId, id: ClusterJobId) -> Result<Option<ClusterJob>> {
        let mut conn = self.conn().await?;
        let row = discovery_jobs::table
            .filter(discovery_jobs::id.eq(id.as_uuid()))
            .filter(discovery_jobs::tenant_id.eq(tenant.as_uuid()))
            .select(DiscoveryJobRow::as_select())
            .first(&mut conn)
            .await
            .optional()
            .map_err(error::db)?;
        row.map(ClusterJob::try_from).transpose()
    }

    async fn claim_cluster_job(
        &self,
        now: OffsetDateTime,
        token: Uuid,
        lease_until: OffsetDateTime,
    ) -> Result<Option<ClusterJob>> {
        let mut conn = self.tx_conn().await?;
        let conn: &mut AsyncPgConnection = &mut conn;
        conn.transaction(async move |conn| -> Result<Option<ClusterJob>, TxError> {
            let row = next_claimable!(discovery_jobs, DiscoveryJobRow, now, conn)?;
            let Some(row) = row else { return Ok(None) };
            let mut job = ClusterJob::try_from(row)?;
            job.status = JobStatus::Running;
            job.lease = Some(Lease { token, until: lease_until });
            job.started_at = job.started_at.or(Some(now));
            job.attempts += 1;
            job.progress = 0.0;
            diesel::update(discovery_jobs::table.find(job.id.as_uuid()))
                .set((
                    discovery_jobs::status.eq(RUNNING),
                    discovery_jobs::lease_token.eq(token),
                    discovery_jobs::lease_until.eq(lease_until),
                    discovery_jobs::started_at.eq(job.started_at),
                    discovery_jobs::attempts.eq(job.attempts),
                    discovery_jobs::progress.eq(0.0),
                ))
                .execute(conn)
                .await?;
            Ok(Some(job))
        })
        .await
        .map_err(DomainError::from)
    }

    async fn progress_cluster_job(
        &self,
        id: ClusterJobId,
        token: Uuid,
        progress: f64,
        lease_until: OffsetDateTime,
    ) -> Result<()> {
        let mut conn = self.conn().await?;
        let updated = diesel::update(held!(discovery_jobs, id, token))
            .set((discovery_jobs::progress.eq(progress), discovery_jobs::lease_until.eq(lease_until)))
            .execute(&mut conn)
            .await
            .map_err(error::db)?;
        if updated == 0 { Err(lease_lost(id)) } else { Ok(()) }
    }

    async fn complete_cluster_job(
        &self,
        id: ClusterJobId,
        token: Uuid,
        now: OffsetDateTime,
        outcome: &ClusterOutcome,
    ) -> Result<Vec<CandidateId>> {
        let upserts = CandidateColumns::of(&outcome.upserts)?;
        let removed: Vec<Uuid> = outcome.removed.iter().map(CandidateId::as_uuid).collect();
        let summary = summary_text(&outcome.summary)?;
        let order: Vec<CandidateId> = outcome.upserts.iter().map(|c| c.id).collect();
        let mut conn = self.tx_conn().await?;
        let conn: &mut AsyncPgConnection = &mut conn;
        conn.transaction(async move |conn| -> Result<Vec<CandidateId>, TxError> {
            // The job row first: a reclaim or another completion waits for this commit, or
            // this finds the job no longer held and writes nothing.
            let tenant: Option<Uuid> = held!(discovery_jobs, id, token)
                .select(discovery_jobs::tenant_id)
                .for_update()
                .first(conn)
                .await
                .optional()?;
            let Some(tenant) = tenant else { return Err(TxError::Domain(lease_lost(id))) };
            // Candidates are written to the job's tenant, whatever their `tenant_id` says.
            let mut inserted = HashSet::new();
            if !upserts.ids.is_empty() {
                let rows: Vec<IdRow> = candidate_query!(INSERT_CANDIDATES_SQL, tenant, upserts).load(conn).await?;
                inserted.extend(rows.into_iter().map(|r| r.id));
                let existing = upserts.without(&inserted);
                if !existing.ids.is_empty() {
                    candidate_query!(REPLACE_CANDIDATES_SQL, tenant, existing).execute(conn).await?;
                }
            }
            if !removed.is_empty() {
                diesel::delete(
                    discovery_candidates::table
                        .filter(discovery_candidates::tenant_id.eq(tenant))
                        .filter(discovery_candidates::id.eq_any(&removed))
                        .filter(discovery_candidates::status.eq(PENDING)),
                )
                .execute(conn)
                .await?;
            }
            diesel::update(discovery_jobs::table.find(id.as_uuid()))
                .set((
                    discovery_jobs::status.eq(JobStatus::Completed.as_str()),
                    discovery_jobs::progress.eq(1.0),
                    discovery_jobs::summary.eq(summary),
                    discovery_jobs::finished_at.eq(now),
                    discovery_jobs::lease_token.eq(None::<Uuid>),
                    discovery_jobs::lease_until.eq(None::<OffsetDateTime>),
                ))
                .execute(conn)
                .await?;
            // In the order given, each once.
            let mut seen = HashSet::new();
            Ok(order.into_iter().filter(|c| inserted.contains(&c.as_uuid()) && seen.insert(*c)).collect())
        })
        .await
        .map_err(DomainError::from)
    }

    async fn fail_cluster_job(&self, id: ClusterJobId, token: Uuid, now: OffsetDateTime, error: &str) -> Result<()> {
        let mut conn = self.conn().await?;
        let updated = diesel::update(held!(discovery_jobs, id, token))
            .set((
                discovery_jobs::status.eq(JobStatus::Failed.as_str()),
                discovery_jobs::error.eq(error),
                discovery_jobs::finished_at.eq(now),
                discovery_jobs::lease_token.eq(None::<Uuid>),
                discovery_jobs::lease_until.eq(None::<OffsetDateTime>),
            ))
            .execute(&mut conn)
            .await
            .map_err(error::db)?;
        if updated == 0 { Err(lease_lost(id)) } else { Ok(()) }
    }
}

/// A chunk of events as the four arrays [`INSERT_EVENTS_SQL`] unnests.
struct EventColumns {
    ids: Vec<Uuid>,
    tenants: Vec<Uuid>,
    dispositions: Vec<&'static str>,
    bodies: Vec<String>,
}

impl EventColumns {
    fn of(events: &[DiscoveryEvent]) -> Result<Self> {
        let mut columns = EventColumns {
            ids: Vec::with_capacity(events.len()),
            tenants: Vec::with_capacity(events.len()),
            dispositions: Vec::with_capacity(events.len()),
            bodies: Vec::with_capacity(events.len()),
        };
        for event in events {
            columns.ids.push(event.id.as_uuid());
            columns.tenants.push(event.tenant_id.as_uuid());
            columns.dispositions.push(EventDisposition::as_str(event.disposition));
            columns.bodies.push(event_body(event)?);
        }
        Ok(columns)
    }

    async fn insert(&self, conn: &mut AsyncPgConnection) -> QueryResult<usize> {
        sql_query(INSERT_EVENTS_SQL)
            .bind::<Array<SqlUuid>, _>(&self.ids)
            .bind::<Array<SqlUuid>, _>(&self.tenants)
            .bind::<Array<Text>, _>(&self.dispositions)
            .bind::<Array<Text>, _>(&self.bodies)
            .execute(conn)
            .await
    }
}
