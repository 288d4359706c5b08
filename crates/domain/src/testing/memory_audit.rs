//! The audit log of `MemoryStore`.

use std::collections::BTreeMap;
use std::sync::MutexGuard;

use async_trait::async_trait;

use super::memory_store::{MemoryStore, conflict};
use crate::error::Result;
use crate::ids::{AuditId, TenantId};
use crate::model::{AuditEntry, AuditFilter, AuditRecord, AuditScan, ChainHead, SeqOrder};
use crate::ports::store::AuditRepo;

#[derive(Debug, Default)]
pub(super) struct AuditTables {
    /// Each tenant's chain, in `seq` order (index `seq - 1`).
    chains: BTreeMap<TenantId, Vec<AuditRecord>>,
    heads: BTreeMap<TenantId, ChainHead>,
    /// Calls of `scan_audit_seqs` so far.
    seq_scans: u64,
}

impl MemoryStore {
    fn audit_tables(&self) -> MutexGuard<'_, AuditTables> {
        self.audit.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// How many times the `seq`s of records were scanned (a session's store reads).
    pub fn audit_seq_scans(&self) -> u64 {
        self.audit_tables().seq_scans
    }

    /// Every tenant's chain head `seq`, in tenant id order.
    pub(super) fn audit_heads(&self) -> Vec<(TenantId, i64)> {
        self.audit_tables().heads.iter().map(|(t, h)| (*t, h.seq)).collect()
    }
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

    async fn scan_audit_seqs(&self, tenant: TenantId, filter: &AuditFilter, scan: AuditScan) -> Result<Vec<i64>> {
        self.audit_tables().seq_scans += 1;
        // A database answers later: concurrent readers of a session meet.
        crate::services::YieldNow(false).await;
        Ok(self.scan_audit(tenant, filter, scan).await?.iter().map(|r| r.seq).collect())
    }

    async fn count_audit(&self, tenant: TenantId, filter: &AuditFilter) -> Result<u64> {
        let t = self.audit_tables();
        Ok(t.chains.get(&tenant).map_or(0, |c| c.iter().filter(|r| filter.matches(r)).count() as u64))
    }

    async fn audit_head(&self, tenant: TenantId) -> Result<Option<ChainHead>> {
        Ok(self.audit_tables().heads.get(&tenant).copied())
    }
}
