//! The audit log and export jobs of `MemoryStore`.

use std::collections::BTreeMap;
use std::sync::MutexGuard;

use async_trait::async_trait;
use time::OffsetDateTime;
use uuid::Uuid;

use super::memory_store::{MemoryStore, conflict};
use crate::error::{DomainError, Result};
use crate::ids::{AuditId, ExportJobId, TenantId};
use crate::model::{
    AuditEntry, AuditFilter, AuditRecord, AuditScan, ChainHead, ExportJob, ExportOutcome, ExportProgress, JobStatus,
    Lease, SeqOrder,
};
use crate::ports::store::{AuditRepo, ExportRepo};

#[derive(Debug, Default)]
pub(super) struct AuditTables {
    /// Each tenant's chain, in `seq` order (index `seq - 1`).
    chains: BTreeMap<TenantId, Vec<AuditRecord>>,
    heads: BTreeMap<TenantId, ChainHead>,
    jobs: BTreeMap<Uuid, ExportJob>,
    chunks: BTreeMap<(Uuid, i32), Vec<u8>>,
}

impl MemoryStore {
    fn audit_tables(&self) -> MutexGuard<'_, AuditTables> {
        self.audit.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Every tenant's chain head `seq`, in tenant id order.
    pub(super) fn audit_heads(&self) -> Vec<(TenantId, i64)> {
        self.audit_tables().heads.iter().map(|(t, h)| (*t, h.seq)).collect()
    }
}

fn lease_lost(id: ExportJobId) -> DomainError {
    DomainError::Conflict(format!("export job {id} is no longer held by this worker"))
}

fn held(job: &ExportJob, token: Uuid) -> bool {
    job.status == JobStatus::Running && job.lease.is_some_and(|l| l.token == token)
}

#[async_trait]
impl AuditRepo for MemoryStore {
    async fn append_audit(&self, entries: Vec<AuditEntry>) -> Result<Vec<AuditRecord>> {
        if let Some(e) = entries.iter().find(|e| !self.tenant_exists(e.tenant_id)) {
            return Err(conflict(&format!("tenant {} does not exist", e.tenant_id)));
        }
        let mut t = self.audit_tables();
        let ids: std::collections::HashSet<_> = t.chains.values().flatten().map(|r| r.id).collect();
        if entries.iter().any(|e| ids.contains(&e.id)) {
            return Err(conflict("an audit record with this id exists"));
        }
        let mut out = Vec::with_capacity(entries.len());
        for entry in entries {
            let tenant = entry.tenant_id;
            let head = t.heads.entry(tenant).or_insert(ChainHead::GENESIS);
            let record = head.seal(entry);
            t.chains.entry(tenant).or_default().push(record.clone());
            out.push(record);
        }
        Ok(out)
    }

    async fn get_audit(&self, tenant: TenantId, id: AuditId) -> Result<Option<AuditRecord>> {
        let t = self.audit_tables();
        Ok(t.chains.get(&tenant).and_then(|c| c.iter().find(|r| r.id == id)).cloned())
    }

    async fn scan_audit(&self, tenant: TenantId, filter: &AuditFilter, scan: AuditScan) -> Result<Vec<AuditRecord>> {
        let t = self.audit_tables();
        let Some(chain) = t.chains.get(&tenant) else { return Ok(Vec::new()) };
        let after = |r: &&AuditRecord| match (scan.order, scan.after_seq) {
            (_, None) => true,
            (SeqOrder::Asc, Some(a)) => r.seq > a,
            (SeqOrder::Desc, Some(a)) => r.seq < a,
        };
        let keep = |r: &&AuditRecord| after(r) && filter.matches(r);
        let limit = scan.limit as usize;
        Ok(match scan.order {
            SeqOrder::Asc => chain.iter().filter(keep).take(limit).cloned().collect(),
            SeqOrder::Desc => chain.iter().rev().filter(keep).take(limit).cloned().collect(),
        })
    }

    async fn count_audit(&self, tenant: TenantId, filter: &AuditFilter) -> Result<u64> {
        let t = self.audit_tables();
        Ok(t.chains.get(&tenant).map_or(0, |c| c.iter().filter(|r| filter.matches(r)).count() as u64))
    }

    async fn audit_head(&self, tenant: TenantId) -> Result<Option<ChainHead>> {
        Ok(self.audit_tables().heads.get(&tenant).copied())
    }
}

#[async_trait]
impl ExportRepo for MemoryStore {
    async fn insert_export_job(&self, job: &ExportJob, max_active_per_tenant: u64) -> Result<()> {
        if !self.tenant_exists(job.tenant_id) {
            return Err(conflict("tenant does not exist"));
        }
        let mut t = self.audit_tables();
        if t.jobs.contains_key(&job.id.0) {
            return Err(conflict("an export job with this id exists"));
        }
        let active = t
            .jobs
            .values()
            .filter(|j| j.tenant_id == job.tenant_id && matches!(j.status, JobStatus::Queued | JobStatus::Running))
            .count();
        if u64::try_from(active).unwrap_or(u64::MAX) >= max_active_per_tenant {
            return Err(conflict(crate::ports::store::EXPORT_LIMIT_REACHED));
        }
        t.jobs.insert(job.id.0, job.clone());
        Ok(())
    }

    async fn get_export_job(&self, tenant: TenantId, id: ExportJobId) -> Result<Option<ExportJob>> {
        Ok(self.audit_tables().jobs.get(&id.0).filter(|j| j.tenant_id == tenant).cloned())
    }

    async fn claim_export_job(
        &self,
        now: OffsetDateTime,
        token: Uuid,
        lease_until: OffsetDateTime,
    ) -> Result<Option<ExportJob>> {
        let mut t = self.audit_tables();
        let claimable = |j: &ExportJob| match j.status {
            JobStatus::Queued => true,
            JobStatus::Running => j.lease.is_none_or(|l| l.until < now),
            _ => false,
        };
        let Some(id) = t.jobs.values().find(|j| claimable(j)).map(|j| j.id.0) else { return Ok(None) };
        t.chunks.retain(|(job, _), _| *job != id);
        let Some(job) = t.jobs.get_mut(&id) else { return Ok(None) };
        job.status = JobStatus::Running;
        job.lease = Some(Lease { token, until: lease_until });
        job.started_at = job.started_at.or(Some(now));
        job.attempts += 1;
        job.rows = 0;
        job.bytes = 0;
        job.progress = 0.0;
        job.chunks = 0;
        Ok(Some(job.clone()))
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
        let mut t = self.audit_tables();
        let job = t.jobs.get_mut(&id.0).filter(|j| held(j, token)).ok_or_else(|| lease_lost(id))?;
        job.rows = progress.rows;
        job.bytes = progress.bytes;
        job.progress = progress.progress;
        job.chunks = job.chunks.max(index + 1);
        job.lease = Some(Lease { token, until: lease_until });
        t.chunks.insert((id.0, index), data);
        Ok(())
    }

    async fn finish_export_job(&self, id: ExportJobId, token: Uuid, outcome: &ExportOutcome) -> Result<()> {
        let mut t = self.audit_tables();
        let job = t.jobs.get_mut(&id.0).filter(|j| held(j, token)).ok_or_else(|| lease_lost(id))?;
        job.status = outcome.status;
        job.error = outcome.error.clone();
        job.rows = outcome.progress.rows;
        job.bytes = outcome.progress.bytes;
        job.progress = outcome.progress.progress;
        job.chunks = outcome.chunks;
        job.finished_at = Some(outcome.finished_at);
        job.expires_at = Some(outcome.expires_at);
        job.lease = None;
        Ok(())
    }

    async fn export_chunk(&self, tenant: TenantId, id: ExportJobId, index: i32) -> Result<Option<Vec<u8>>> {
        let t = self.audit_tables();
        if t.jobs.get(&id.0).is_none_or(|j| j.tenant_id != tenant) {
            return Ok(None);
        }
        Ok(t.chunks.get(&(id.0, index)).cloned())
    }

    async fn purge_expired_exports(&self, now: OffsetDateTime) -> Result<u64> {
        let mut t = self.audit_tables();
        let expired: Vec<Uuid> =
            t.jobs.values().filter(|j| j.expires_at.is_some_and(|e| e < now)).map(|j| j.id.0).collect();
        for id in &expired {
            t.jobs.remove(id);
        }
        t.chunks.retain(|(job, _), _| !expired.contains(job));
        Ok(expired.len() as u64)
    }
}
