//! Shadow-agent discovery: ingested events and candidates; clustering jobs are the job
//! queue's (`jobs.rs`).
//!
//! Storage: events and candidates keep the columns their queries filter on (`tenant_id`,
//! the event's `disposition`, the candidate's `status`) beside `body`, the JSON text of the
//! record's `Serialize` form, which leaves the tenant out; reading sets it from the column.
//!
//! Ingestion inserts a batch of events as four arrays unnested by one `INSERT … SELECT`:
//! four parameters however many rows, one round trip per [`EVENTS_CHUNK`] events. A batch
//! of one chunk is a single statement, atomic by itself; a larger one runs its chunks in one
//! transaction. A missing tenant fails the foreign key and a taken id the primary key
//! (`Conflict`), and nothing of the batch is stored. Clustering reads shadow events by
//! keyset on id through the index `(tenant_id, disposition, id)`.
//!
//! A completion first locks the job row if the worker still holds it (a reclaim or a
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

use std::collections::{HashMap, HashSet};

use agentgov_domain::ids::{CandidateId, ClusterJobId, DiscoveryEventId, TenantId};
use agentgov_domain::model::{
    CandidateFilter, CandidateStatus, ClusterOutcome, DiscoveryCandidate, DiscoveryEvent, EventDisposition, JobEnd,
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
use crate::repo::jobs::{finish, held_tenant};
use crate::rows::{DiscoveryCandidateRow, DiscoveryEventRow, body_text};
use crate::schema::{discovery_candidates, discovery_events};
use crate::store::PgStore;

use super::page_of;

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
            let (id, status, body) =
                (c.id.as_uuid(), c.status.as_str(), body_text(c, format_args!("discovery candidate {}", c.id))?);
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
        let body = body_text(candidate, format_args!("discovery candidate {}", candidate.id))?;
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

    async fn complete_cluster_job(
        &self,
        id: ClusterJobId,
        token: Uuid,
        now: OffsetDateTime,
        outcome: &ClusterOutcome,
    ) -> Result<Vec<CandidateId>> {
        let upserts = CandidateColumns::of(&outcome.upserts)?;
        let removed: Vec<Uuid> = outcome.removed.iter().map(CandidateId::as_uuid).collect();
        let end = JobEnd::completed(now, outcome.summary.to_state());
        let order: Vec<CandidateId> = outcome.upserts.iter().map(|c| c.id).collect();
        let mut conn = self.tx_conn().await?;
        let conn: &mut AsyncPgConnection = &mut conn;
        conn.transaction(async move |conn| -> Result<Vec<CandidateId>, TxError> {
            // The job row first: a reclaim or another completion waits for this commit, or
            // this finds the job no longer held and writes nothing.
            let tenant = held_tenant(conn, id.as_uuid(), token).await?;
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
            finish(conn, id.as_uuid(), &end).await?;
            // In the order given, each once.
            let mut seen = HashSet::new();
            Ok(order.into_iter().filter(|c| inserted.contains(&c.as_uuid()) && seen.insert(*c)).collect())
        })
        .await
        .map_err(DomainError::from)
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
            columns.bodies.push(body_text(event, format_args!("discovery event {}", event.id))?);
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
