//! Shadow-agent discovery on SQLite: ingested events and candidates.
//!
//! Events and candidates are stored as the JSON text of their `Serialize` form (`body`,
//! which leaves out `tenant_id`) beside the columns that SQL filters on: id, tenant,
//! and the event's `disposition` or the candidate's `status`. Reading, `body` is parsed and
//! `tenant_id` set from its column. Clustering jobs are the job queue's (`jobs.rs`).
//!
//! Every write runs in a `BEGIN IMMEDIATE` transaction on the single writer. A batch of
//! events is serialised before the writer is taken and goes in as one transaction of
//! multi-row `INSERT`s of fixed sizes (statements prepared once per connection, well under
//! SQLite's bound-variable limit). A missing tenant (looked up first, to name it; the
//! foreign key would fail too) or a taken id rolls the whole batch back: `Conflict`, nothing
//! stored. Clustering scans a tenant's shadow events by keyset, one query walking the
//! `(tenant_id, disposition, id)` index.
//!
//! A clustering job's completion writes its candidates in the same transaction as the job's
//! end, if the worker still holds the job (else `Conflict`, writing nothing), replacing or
//! deleting only those still `pending` (`status = 'pending'` in the statement), so a
//! candidate decided while clustering ran is left as it is.

use std::collections::BTreeSet;

use agentgov_domain::ids::{CandidateId, ClusterJobId, DiscoveryEventId, TenantId};
use agentgov_domain::model::{
    CandidateFilter, CandidateStatus, ClusterOutcome, DiscoveryCandidate, DiscoveryEvent, EventDisposition, JobEnd,
};
use agentgov_domain::page::{Page, PageRequest};
use agentgov_domain::ports::store::DiscoveryRepo;
use agentgov_domain::{DomainError, Result};
use async_trait::async_trait;
use diesel::SqliteConnection;
use diesel::prelude::*;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::SqliteStore;
use crate::columns::Id;
use crate::error::{TxError, TxResult};
use crate::repo::check_tenant;
use crate::repo::jobs::{finish, held_tenant};
use crate::rows::{DiscoveryCandidateRow, DiscoveryEventRow, NewCandidateRow, NewDiscoveryEventRow, convert, id_text};
use crate::schema::{discovery_candidates, discovery_events};

const PENDING: &str = "pending";

/// Ids looked up (or deleted) per statement, well under SQLite's bound-variable limit.
const IDS_PER_STATEMENT: usize = 500;

/// Inserts `rows` as multi-row `INSERT`s of fixed sizes (500, 50, 5, then 1 rows; 4 bound
/// values a row): diesel prepares a statement of a fixed row count once per connection and
/// reuses it, where a statement sized to each batch would be parsed again every time.
fn insert_events(c: &mut SqliteConnection, rows: &[NewDiscoveryEventRow]) -> TxResult<()> {
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

#[async_trait]
impl DiscoveryRepo for SqliteStore {
    async fn insert_discovery_events(&self, events: &[DiscoveryEvent]) -> Result<()> {
        if events.is_empty() {
            return Ok(());
        }
        // Serialised here, before the writer is taken: the transaction only inserts.
        let rows = events.iter().map(NewDiscoveryEventRow::try_from).collect::<Result<Vec<_>>>()?;
        let tenants: BTreeSet<Uuid> = rows.iter().map(|r| r.tenant_id.0).collect();
        self.transaction(move |c| {
            // Names a missing tenant (the foreign key would fail the insert too, unnamed).
            for tenant in &tenants {
                check_tenant(c, Id(*tenant))?;
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
                .select(DiscoveryEventRow::as_select())
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
                    .select(DiscoveryEventRow::as_select())
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
                .select(DiscoveryCandidateRow::as_select())
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
                    .select(DiscoveryCandidateRow::as_select())
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
                .select(DiscoveryCandidateRow::as_select())
                .load(c)?;
            Ok(convert(rows)?)
        })
        .await
    }

    async fn update_candidate(&self, candidate: &DiscoveryCandidate, expected: CandidateStatus) -> Result<bool> {
        let (row, id) = (NewCandidateRow::new(candidate.tenant_id, candidate)?, candidate.id);
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
            .map(|u| Ok((u.id, NewCandidateRow::new(u.tenant_id, u)?)))
            .collect::<Result<Vec<_>>>()?;
        let removed: Vec<String> = outcome.removed.iter().map(|r| id_text(r.0)).collect();
        let end = JobEnd::completed(now, outcome.summary.to_state());
        self.transaction(move |c| {
            let tenant = held_tenant(c, &job, &token_text)?;

            let mut inserted = Vec::new();
            for (candidate, row) in &mut upserts {
                row.tenant_id = tenant;
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

            finish(c, &job, &token_text, &end)?;
            Ok(inserted)
        })
        .await
    }
}
