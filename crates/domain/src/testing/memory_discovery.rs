//! Shadow-agent discovery in `MemoryStore`: ingested events, candidates and clustering jobs.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::MutexGuard;

use async_trait::async_trait;
use time::OffsetDateTime;
use uuid::Uuid;

use super::memory_store::{MemoryStore, conflict, page_of};
use crate::error::{DomainError, Result};
use crate::ids::{CandidateId, ClusterJobId, DiscoveryEventId, TenantId};
use crate::model::{
    CandidateFilter, CandidateStatus, ClusterJob, ClusterOutcome, DiscoveryCandidate, DiscoveryEvent, EventDisposition,
    JobStatus, Lease,
};
use crate::page::{Page, PageRequest};
use crate::ports::store::DiscoveryRepo;

/// Tables keyed by id; `BTreeMap` keeps them in id order, which is creation order for v7 ids.
#[derive(Debug, Default)]
pub(super) struct DiscoveryTables {
    events: BTreeMap<Uuid, DiscoveryEvent>,
    candidates: BTreeMap<Uuid, DiscoveryCandidate>,
    jobs: BTreeMap<Uuid, ClusterJob>,
}

impl DiscoveryTables {
    /// The job if it is `running` under `token`.
    fn held(&mut self, id: ClusterJobId, token: Uuid) -> Result<&mut ClusterJob> {
        self.jobs
            .get_mut(&id.0)
            .filter(|j| j.status == JobStatus::Running && j.lease.is_some_and(|l| l.token == token))
            .ok_or_else(|| lease_lost(id))
    }

    fn candidate_of(&self, tenant: TenantId, id: CandidateId) -> Option<&DiscoveryCandidate> {
        self.candidates.get(&id.0).filter(|c| c.tenant_id == tenant)
    }

    /// Whether `tenant`'s candidate `id` exists and is still `pending`.
    fn is_pending(&self, tenant: TenantId, id: CandidateId) -> bool {
        self.candidate_of(tenant, id).is_some_and(|c| c.status == CandidateStatus::Pending)
    }
}

/// `candidate` as stored for `tenant`: the record keeps no tenant of its own, so it and its
/// sample events read back with the tenant it is stored under.
fn stored(candidate: &DiscoveryCandidate, tenant: TenantId) -> DiscoveryCandidate {
    let mut stored = candidate.clone();
    stored.tenant_id = tenant;
    for event in &mut stored.sample_events {
        event.tenant_id = tenant;
    }
    stored
}

fn lease_lost(id: ClusterJobId) -> DomainError {
    DomainError::Conflict(format!("clustering job {id} is no longer held by this worker"))
}

fn is_active(status: JobStatus) -> bool {
    matches!(status, JobStatus::Queued | JobStatus::Running)
}

impl MemoryStore {
    fn discovery_tables(&self) -> MutexGuard<'_, DiscoveryTables> {
        self.discovery.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[async_trait]
impl DiscoveryRepo for MemoryStore {
    async fn insert_discovery_events(&self, events: &[DiscoveryEvent]) -> Result<()> {
        let tenants: BTreeSet<TenantId> = events.iter().map(|e| e.tenant_id).collect();
        if tenants.into_iter().any(|t| !self.tenant_exists(t)) {
            return Err(conflict("tenant does not exist"));
        }
        let mut t = self.discovery_tables();
        let mut ids = BTreeSet::new();
        if events.iter().any(|e| t.events.contains_key(&e.id.0) || !ids.insert(e.id.0)) {
            return Err(conflict("a discovery event with this id exists"));
        }
        for event in events {
            t.events.insert(event.id.0, event.clone());
        }
        Ok(())
    }

    async fn scan_shadow_events(
        &self,
        tenant: TenantId,
        after: Option<DiscoveryEventId>,
        limit: i64,
    ) -> Result<Vec<DiscoveryEvent>> {
        let limit = usize::try_from(limit).unwrap_or(0);
        let t = self.discovery_tables();
        let keep = |e: &&DiscoveryEvent| e.tenant_id == tenant && e.disposition == EventDisposition::Shadow;
        Ok(match after {
            Some(after) => t
                .events
                .range((std::ops::Bound::Excluded(after.0), std::ops::Bound::Unbounded))
                .map(|(_, e)| e)
                .filter(keep)
                .take(limit)
                .cloned()
                .collect(),
            None => t.events.values().filter(keep).take(limit).cloned().collect(),
        })
    }

    async fn get_discovery_events(&self, tenant: TenantId, ids: &[DiscoveryEventId]) -> Result<Vec<DiscoveryEvent>> {
        let ids: BTreeSet<Uuid> = ids.iter().map(|id| id.0).collect();
        let t = self.discovery_tables();
        Ok(ids.iter().filter_map(|id| t.events.get(id)).filter(|e| e.tenant_id == tenant).cloned().collect())
    }

    async fn get_candidate(&self, tenant: TenantId, id: CandidateId) -> Result<Option<DiscoveryCandidate>> {
        Ok(self.discovery_tables().candidate_of(tenant, id).cloned())
    }

    async fn list_candidates(
        &self,
        tenant: TenantId,
        filter: &CandidateFilter,
        page: &PageRequest,
    ) -> Result<Page<DiscoveryCandidate>> {
        let keep = |c: &DiscoveryCandidate| c.tenant_id == tenant && filter.matches(c);
        Ok(page_of(&self.discovery_tables().candidates, page, keep, |c| c.id.0))
    }

    async fn decided_candidates(&self, tenant: TenantId) -> Result<Vec<DiscoveryCandidate>> {
        let t = self.discovery_tables();
        let decided = |c: &&DiscoveryCandidate| {
            c.tenant_id == tenant && matches!(c.status, CandidateStatus::Confirmed | CandidateStatus::Dismissed)
        };
        Ok(t.candidates.values().filter(decided).cloned().collect())
    }

    async fn update_candidate(&self, candidate: &DiscoveryCandidate, expected: CandidateStatus) -> Result<bool> {
        let mut t = self.discovery_tables();
        let tenant = candidate.tenant_id;
        let Some(current) = t.candidate_of(tenant, candidate.id) else {
            return Err(DomainError::not_found("candidate", candidate.id));
        };
        if current.status != expected {
            return Ok(false);
        }
        t.candidates.insert(candidate.id.0, stored(candidate, tenant));
        Ok(true)
    }

    async fn insert_cluster_job(&self, job: &ClusterJob) -> Result<()> {
        if !self.tenant_exists(job.tenant_id) {
            return Err(conflict("tenant does not exist"));
        }
        let mut t = self.discovery_tables();
        if t.jobs.contains_key(&job.id.0) {
            return Err(conflict("a clustering job with this id exists"));
        }
        if is_active(job.status) && t.jobs.values().any(|o| o.tenant_id == job.tenant_id && is_active(o.status)) {
            return Err(conflict("the tenant already has a clustering job queued or running"));
        }
        t.jobs.insert(job.id.0, job.clone());
        Ok(())
    }

    async fn active_cluster_job(&self, tenant: TenantId) -> Result<Option<ClusterJob>> {
        let t = self.discovery_tables();
        Ok(t.jobs.values().find(|j| j.tenant_id == tenant && is_active(j.status)).cloned())
    }

    async fn get_cluster_job(&self, tenant: TenantId, id: ClusterJobId) -> Result<Option<ClusterJob>> {
        Ok(self.discovery_tables().jobs.get(&id.0).filter(|j| j.tenant_id == tenant).cloned())
    }

    async fn claim_cluster_job(
        &self,
        now: OffsetDateTime,
        token: Uuid,
        lease_until: OffsetDateTime,
    ) -> Result<Option<ClusterJob>> {
        let mut t = self.discovery_tables();
        let claimable = |j: &ClusterJob| match j.status {
            JobStatus::Queued => true,
            JobStatus::Running => j.lease.is_none_or(|l| l.until < now),
            _ => false,
        };
        let Some(job) = t.jobs.values_mut().find(|j| claimable(j)) else { return Ok(None) };
        job.status = JobStatus::Running;
        job.lease = Some(Lease { token, until: lease_until });
        job.started_at = job.started_at.or(Some(now));
        job.attempts += 1;
        job.progress = 0.0;
        Ok(Some(job.clone()))
    }

    async fn progress_cluster_job(
        &self,
        id: ClusterJobId,
        token: Uuid,
        progress: f64,
        lease_until: OffsetDateTime,
    ) -> Result<()> {
        let mut t = self.discovery_tables();
        let job = t.held(id, token)?;
        job.progress = progress;
        job.lease = Some(Lease { token, until: lease_until });
        Ok(())
    }

    async fn complete_cluster_job(
        &self,
        id: ClusterJobId,
        token: Uuid,
        now: OffsetDateTime,
        outcome: &ClusterOutcome,
    ) -> Result<Vec<CandidateId>> {
        let mut t = self.discovery_tables();
        let tenant = t.held(id, token)?.tenant_id;
        let mut inserted = Vec::new();
        for candidate in &outcome.upserts {
            match t.candidates.get(&candidate.id.0) {
                None => {
                    t.candidates.insert(candidate.id.0, stored(candidate, tenant));
                    inserted.push(candidate.id);
                }
                // Replaced only while pending; decided ones (and other tenants') are left as is.
                Some(_) if t.is_pending(tenant, candidate.id) => {
                    t.candidates.insert(candidate.id.0, stored(candidate, tenant));
                }
                Some(_) => {}
            }
        }
        for removed in &outcome.removed {
            if t.is_pending(tenant, *removed) {
                t.candidates.remove(&removed.0);
            }
        }
        let job = t.held(id, token)?;
        job.status = JobStatus::Completed;
        job.progress = 1.0;
        job.summary = Some(outcome.summary);
        job.finished_at = Some(now);
        job.lease = None;
        Ok(inserted)
    }

    async fn fail_cluster_job(&self, id: ClusterJobId, token: Uuid, now: OffsetDateTime, error: &str) -> Result<()> {
        let mut t = self.discovery_tables();
        let job = t.held(id, token)?;
        job.status = JobStatus::Failed;
        job.error = Some(error.to_owned());
        job.finished_at = Some(now);
        job.lease = None;
        Ok(())
    }
}
