//! Anomaly reports in `MemoryStore`.

use std::collections::{BTreeMap, HashMap};
use std::sync::MutexGuard;

use async_trait::async_trait;
use uuid::Uuid;

use super::memory_store::{MemoryStore, conflict, page_of};
use crate::error::{DomainError, Result};
use crate::ids::{AnomalyId, TenantId};
use crate::model::{AnomalyCount, AnomalyFilter, AnomalyReport};
use crate::page::{Page, PageRequest};
use crate::ports::store::AnomalyRepo;

/// Reports keyed by id; `BTreeMap` keeps them in id order, which is creation
/// order for v7 ids.
#[derive(Debug, Default)]
pub(super) struct AnomalyTables {
    reports: BTreeMap<Uuid, AnomalyReport>,
}

impl AnomalyTables {
    fn report_of(&mut self, tenant: TenantId, id: AnomalyId) -> Option<&mut AnomalyReport> {
        self.reports.get_mut(&id.0).filter(|r| r.tenant_id == tenant)
    }
}

impl MemoryStore {
    fn anomaly_tables(&self) -> MutexGuard<'_, AnomalyTables> {
        self.anomalies.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[async_trait]
impl AnomalyRepo for MemoryStore {
    async fn insert_anomaly(&self, report: &AnomalyReport) -> Result<()> {
        if !self.tenant_exists(report.tenant_id) {
            return Err(conflict("tenant does not exist"));
        }
        let mut t = self.anomaly_tables();
        if t.reports.contains_key(&report.id.0) {
            return Err(conflict("an anomaly report with this id exists"));
        }
        t.reports.insert(report.id.0, report.clone());
        Ok(())
    }

    async fn get_anomaly(&self, tenant: TenantId, id: AnomalyId) -> Result<Option<AnomalyReport>> {
        Ok(self.anomaly_tables().report_of(tenant, id).map(|r| r.clone()))
    }

    async fn list_anomalies(
        &self,
        tenant: TenantId,
        filter: &AnomalyFilter,
        page: &PageRequest,
    ) -> Result<Page<AnomalyReport>> {
        let t = self.anomaly_tables();
        Ok(page_of(&t.reports, page, |r| r.tenant_id == tenant && filter.matches(r), |r| r.id.0))
    }

    async fn update_anomaly(&self, report: &AnomalyReport) -> Result<()> {
        let mut t = self.anomaly_tables();
        let Some(stored) = t.report_of(report.tenant_id, report.id) else {
            return Err(DomainError::not_found("anomaly report", report.id));
        };
        // Every field but id, tenant and `created_at`.
        *stored = AnomalyReport {
            id: stored.id,
            tenant_id: stored.tenant_id,
            created_at: stored.created_at,
            ..report.clone()
        };
        Ok(())
    }

    async fn anomaly_counts(&self, tenant: TenantId, filter: &AnomalyFilter) -> Result<Vec<AnomalyCount>> {
        let t = self.anomaly_tables();
        let mut counts: HashMap<_, i64> = HashMap::new();
        for r in t.reports.values().filter(|r| r.tenant_id == tenant && filter.matches(r)) {
            let hour = r.created_at.unix_timestamp().div_euclid(3600);
            *counts.entry((r.agent_id, r.anomaly_type, r.severity, r.status, hour)).or_default() += 1;
        }
        Ok(counts
            .into_iter()
            .map(|((agent_id, anomaly_type, severity, status, hour), count)| AnomalyCount {
                agent_id,
                anomaly_type,
                severity,
                status,
                hour,
                count,
            })
            .collect())
    }
}
