//! Shadow-agent discovery in `MemoryStore`: ingested events and candidates.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::MutexGuard;

use async_trait::async_trait;
use time::OffsetDateTime;
use uuid::Uuid;

use super::memory_store::{MemoryStore, conflict, page_of};
use crate::error::{DomainError, Result};
use crate::ids::{CandidateId, ClusterJobId, DiscoveryEventId, TenantId};
use crate::model::{
    CandidateFilter, CandidateStatus, ClusterOutcome, DiscoveryCandidate, DiscoveryEvent, EventDisposition, JobEnd,
};
use crate::page::{Page, PageRequest};
use crate::ports::store::DiscoveryRepo;

/// Tables keyed by id; `BTreeMap` keeps them in id order, which is creation order for v7 ids.
#[derive(Debug, Default)]
pub(super) struct DiscoveryTables {
    events: BTreeMap<Uuid, DiscoveryEvent>,
    candidates: BTreeMap<Uuid, DiscoveryCandidate>,
}

impl DiscoveryTables {
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

    async fn complete_cluster_job(
        &self,
        id: ClusterJobId,
        token: Uuid,
        now: OffsetDateTime,
        outcome: &ClusterOutcome,
    ) -> Result<Vec<CandidateId>> {
        // The job's lock first, then the candidates': the job cannot change meanwhile.
        let mut jobs = self.job_tables();
        let tenant = jobs.held(id.0, token)?.tenant_id;
        let mut t = self.discovery_tables();
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
        super::memory_jobs::finish(jobs.held(id.0, token)?, &JobEnd::completed(now, outcome.summary.to_state()));
        Ok(inserted)
    }
}
