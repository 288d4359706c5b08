//! Human-in-the-loop approval requests in `MemoryStore`.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::MutexGuard;

use async_trait::async_trait;
use time::OffsetDateTime;
use uuid::Uuid;

use super::memory_store::{MemoryStore, conflict};
use crate::error::{DomainError, Result};
use crate::ids::{HitlId, TenantId};
use crate::model::{HitlCallback, HitlFilter, HitlRequest, HitlStatus};
use crate::page::{Page, PageRequest};
use crate::ports::store::HitlRepo;

/// Requests keyed by id; `BTreeMap` keeps them in id order, which is creation order for v7 ids.
#[derive(Debug, Default)]
pub(super) struct HitlTables {
    requests: BTreeMap<Uuid, HitlRequest>,
}

impl HitlTables {
    fn request_of(&mut self, tenant: TenantId, id: HitlId) -> Option<&mut HitlRequest> {
        self.requests.get_mut(&id.0).filter(|r| r.tenant_id == tenant)
    }

    /// Up to `limit` requests passing `keep`, ordered by `key` (then id).
    fn scan<K: Ord>(&self, limit: i64, keep: impl Fn(&HitlRequest) -> Option<K>) -> Vec<HitlRequest> {
        let limit = usize::try_from(limit).unwrap_or(0);
        let mut found: Vec<(K, &HitlRequest)> = self.requests.values().filter_map(|r| Some((keep(r)?, r))).collect();
        // Stable: requests of one key stay in id order.
        found.sort_by(|a, b| a.0.cmp(&b.0));
        found.into_iter().take(limit).map(|(_, r)| r.clone()).collect()
    }
}

impl MemoryStore {
    fn hitl_tables(&self) -> MutexGuard<'_, HitlTables> {
        self.hitl.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[async_trait]
impl HitlRepo for MemoryStore {
    async fn insert_hitl(&self, request: &HitlRequest, max_open_callbacks: u64) -> Result<()> {
        if !self.tenant_exists(request.tenant_id) {
            return Err(conflict("tenant does not exist"));
        }
        let mut t = self.hitl_tables();
        if t.requests.contains_key(&request.id.0) {
            return Err(conflict("an approval request with this id exists"));
        }
        if request.callback_open() {
            let open = t.requests.values().filter(|r| r.tenant_id == request.tenant_id && r.callback_open()).count();
            if u64::try_from(open).unwrap_or(u64::MAX) >= max_open_callbacks {
                return Err(conflict(crate::ports::store::CALLBACK_LIMIT_REACHED));
            }
        }
        t.requests.insert(request.id.0, request.clone());
        Ok(())
    }

    async fn get_hitl(&self, tenant: TenantId, id: HitlId) -> Result<Option<HitlRequest>> {
        Ok(self.hitl_tables().request_of(tenant, id).map(|r| r.clone()))
    }

    async fn list_hitl(&self, tenant: TenantId, filter: &HitlFilter, page: &PageRequest) -> Result<Page<HitlRequest>> {
        let t = self.hitl_tables();
        let fetch = usize::try_from(page.fetch_limit()).unwrap_or(usize::MAX);
        let from = page.after.map_or(Bound::Unbounded, Bound::Excluded);
        let rows: Vec<HitlRequest> = t
            .requests
            .range((from, Bound::Unbounded))
            .map(|(_, r)| r)
            .filter(|r| r.tenant_id == tenant && filter.matches(r))
            .take(fetch)
            .cloned()
            .collect();
        Ok(Page::from_rows(rows, page, |r| r.id.0))
    }

    async fn decide_hitl(&self, request: &HitlRequest) -> Result<bool> {
        let mut t = self.hitl_tables();
        let Some(stored) = t.request_of(request.tenant_id, request.id) else {
            return Err(DomainError::not_found("approval request", request.id));
        };
        if stored.status != HitlStatus::Pending {
            return Ok(false);
        }
        // As the real stores: the served approval token is never kept.
        *stored = HitlRequest { approval_token: None, ..request.clone() };
        Ok(true)
    }

    async fn expired_hitl(&self, now: OffsetDateTime, limit: i64) -> Result<Vec<HitlRequest>> {
        let expired =
            |r: &HitlRequest| (r.status == HitlStatus::Pending && r.expires_at <= now).then_some(r.expires_at);
        Ok(self.hitl_tables().scan(limit, expired))
    }

    async fn due_hitl_callbacks(&self, now: OffsetDateTime, limit: i64, per_tenant: i64) -> Result<Vec<HitlRequest>> {
        let due = |r: &HitlRequest| r.callback_due_at().filter(|at| *at <= now);
        let all = self.hitl_tables().scan(i64::MAX, due);
        // Each request's turn: its place among its tenant's due ones (soonest first).
        let mut seen: std::collections::HashMap<TenantId, i64> = std::collections::HashMap::new();
        let mut turns: Vec<(i64, HitlRequest)> = Vec::new();
        for r in all {
            let turn = seen.entry(r.tenant_id).or_default();
            *turn += 1;
            if *turn <= per_tenant {
                turns.push((*turn, r));
            }
        }
        // Stable: within a turn, soonest (then id) first, as scanned.
        turns.sort_by_key(|(turn, _)| *turn);
        let limit = usize::try_from(limit).unwrap_or(0);
        Ok(turns.into_iter().take(limit).map(|(_, r)| r).collect())
    }

    async fn update_hitl_callback(&self, tenant: TenantId, id: HitlId, callback: &HitlCallback) -> Result<()> {
        let mut t = self.hitl_tables();
        let Some(stored) = t.request_of(tenant, id) else {
            return Err(DomainError::not_found("approval request", id));
        };
        if !stored.status.is_final() {
            return Err(conflict("the approval request is still pending: its callback is the decision's to set"));
        }
        stored.callback = Some(callback.clone());
        Ok(())
    }

    async fn spend_hitl_grant(&self, request: &HitlRequest) -> Result<bool> {
        let mut t = self.hitl_tables();
        let Some(stored) = t.request_of(request.tenant_id, request.id) else {
            return Err(DomainError::not_found("approval request", request.id));
        };
        if !stored.grant_open() {
            return Ok(false);
        }
        *stored = HitlRequest { approval_token: None, ..request.clone() };
        Ok(true)
    }

    async fn due_hitl_escalations(&self, now: OffsetDateTime, limit: i64) -> Result<Vec<HitlRequest>> {
        let due = |r: &HitlRequest| r.escalate_at().filter(|at| *at <= now);
        Ok(self.hitl_tables().scan(limit, due))
    }

    async fn escalate_hitl(&self, request: &HitlRequest, due: OffsetDateTime) -> Result<bool> {
        let mut t = self.hitl_tables();
        let Some(stored) = t.request_of(request.tenant_id, request.id) else {
            return Err(DomainError::not_found("approval request", request.id));
        };
        if stored.escalate_at() != Some(due) {
            return Ok(false);
        }
        *stored = HitlRequest { approval_token: None, ..request.clone() };
        Ok(true)
    }
}
