//! Leases and SIEM forwarding state in `MemoryStore`.

use std::collections::BTreeMap;
use std::sync::MutexGuard;

use async_trait::async_trait;
use time::OffsetDateTime;
use uuid::Uuid;

use super::memory_store::MemoryStore;
use crate::error::Result;
use crate::ids::TenantId;
use crate::model::{SiemBacklog, SiemSinkState};
use crate::ports::store::{LeaseRepo, SiemRepo};

#[derive(Debug, Default)]
pub(super) struct SiemTables {
    /// Lease name → (holder, until).
    leases: BTreeMap<String, (Uuid, OffsetDateTime)>,
    /// Sink name → totals (`queue_depth` unused here: it is computed).
    sinks: BTreeMap<String, SiemSinkState>,
    /// (sink, tenant) → last forwarded seq.
    cursors: BTreeMap<(String, TenantId), i64>,
}

impl MemoryStore {
    fn siem_tables(&self) -> MutexGuard<'_, SiemTables> {
        self.siem.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[async_trait]
impl LeaseRepo for MemoryStore {
    async fn try_lease(&self, name: &str, holder: Uuid, now: OffsetDateTime, until: OffsetDateTime) -> Result<bool> {
        let mut t = self.siem_tables();
        match t.leases.get(name) {
            Some((h, u)) if *h != holder && *u > now => Ok(false),
            _ => {
                t.leases.insert(name.to_owned(), (holder, until));
                Ok(true)
            }
        }
    }

    async fn release_lease(&self, name: &str, holder: Uuid) -> Result<()> {
        let mut t = self.siem_tables();
        if t.leases.get(name).is_some_and(|(h, _)| *h == holder) {
            t.leases.remove(name);
        }
        Ok(())
    }
}

#[async_trait]
impl SiemRepo for MemoryStore {
    async fn register_siem_sink(&self, sink: &str, from_latest: bool, _now: OffsetDateTime) -> Result<bool> {
        let heads = self.audit_heads();
        let mut t = self.siem_tables();
        if t.sinks.contains_key(sink) {
            return Ok(false);
        }
        t.sinks.insert(sink.to_owned(), SiemSinkState::default());
        if from_latest {
            for (tenant, head) in heads {
                t.cursors.insert((sink.to_owned(), tenant), head);
            }
        }
        Ok(true)
    }

    async fn siem_backlog(&self, sink: &str) -> Result<Vec<SiemBacklog>> {
        let heads = self.audit_heads();
        let t = self.siem_tables();
        Ok(heads
            .into_iter()
            .map(|(tenant, head)| SiemBacklog {
                tenant_id: tenant,
                cursor: t.cursors.get(&(sink.to_owned(), tenant)).copied().unwrap_or(0),
                head,
            })
            .filter(|b| b.head > b.cursor)
            .collect())
    }

    async fn advance_siem_cursor(
        &self,
        sink: &str,
        tenant: TenantId,
        seq: i64,
        forwarded: u64,
        at: OffsetDateTime,
    ) -> Result<()> {
        let mut t = self.siem_tables();
        let cursor = t.cursors.entry((sink.to_owned(), tenant)).or_insert(0);
        *cursor = (*cursor).max(seq);
        let state = t.sinks.entry(sink.to_owned()).or_default();
        state.forwarded += forwarded;
        if forwarded > 0 {
            state.last_success_at = Some(at);
        }
        Ok(())
    }

    async fn record_siem_failure(&self, sink: &str, failed: u64, error: &str, at: OffsetDateTime) -> Result<()> {
        let mut t = self.siem_tables();
        let state = t.sinks.entry(sink.to_owned()).or_default();
        state.failed += failed;
        state.last_error = Some(error.to_owned());
        state.last_error_at = Some(at);
        Ok(())
    }

    async fn siem_sink_state(&self, sink: &str) -> Result<SiemSinkState> {
        let backlog = self.siem_backlog(sink).await?;
        let t = self.siem_tables();
        let mut state = t.sinks.get(sink).cloned().unwrap_or_default();
        state.queue_depth = backlog.iter().map(|b| (b.head - b.cursor).unsigned_abs()).sum();
        Ok(state)
    }
}
