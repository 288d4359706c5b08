//! Anomaly reports, and the anomaly detector's versions and training tasks, in
//! `MemoryStore`.

use std::collections::{BTreeMap, HashMap};
use std::sync::MutexGuard;

use async_trait::async_trait;
use time::OffsetDateTime;
use uuid::Uuid;

use super::memory_store::{MemoryStore, conflict, page_of};
use crate::error::{DomainError, Result};
use crate::ids::{AnomalyId, AnomalyTaskId, TenantId};
use crate::model::{
    AnomalyCount, AnomalyFilter, AnomalyModelInfo, AnomalyModelRecord, AnomalyReport, AnomalyTask, JobStatus, Lease,
};
use crate::page::{Page, PageRequest};
use crate::ports::store::AnomalyRepo;

/// Reports and tasks keyed by id; `BTreeMap` keeps them in id order, which is creation
/// order for v7 ids.
#[derive(Debug, Default)]
pub(super) struct AnomalyTables {
    reports: BTreeMap<Uuid, AnomalyReport>,
    /// Keyed by tenant, then version.
    models: BTreeMap<(TenantId, i32), AnomalyModelRecord>,
    tasks: BTreeMap<Uuid, AnomalyTask>,
}

impl AnomalyTables {
    fn report_of(&mut self, tenant: TenantId, id: AnomalyId) -> Option<&mut AnomalyReport> {
        self.reports.get_mut(&id.0).filter(|r| r.tenant_id == tenant)
    }

    fn versions_mut(&mut self, tenant: TenantId) -> impl Iterator<Item = &mut AnomalyModelRecord> {
        self.models.range_mut((tenant, i32::MIN)..=(tenant, i32::MAX)).map(|(_, m)| m)
    }

    fn versions(&self, tenant: TenantId) -> impl DoubleEndedIterator<Item = &AnomalyModelRecord> {
        self.models.range((tenant, i32::MIN)..=(tenant, i32::MAX)).map(|(_, m)| m)
    }

    /// The task if it is `running` under `token`.
    fn held(&mut self, id: AnomalyTaskId, token: Uuid) -> Result<&mut AnomalyTask> {
        self.tasks
            .get_mut(&id.0)
            .filter(|t| t.status == JobStatus::Running && t.lease.is_some_and(|l| l.token == token))
            .ok_or_else(|| lease_lost(id))
    }
}

fn lease_lost(id: AnomalyTaskId) -> DomainError {
    DomainError::Conflict(format!("anomaly task {id} is no longer held by this worker"))
}

fn is_active(status: JobStatus) -> bool {
    matches!(status, JobStatus::Queued | JobStatus::Running)
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

    async fn list_anomaly_models(&self, tenant: TenantId) -> Result<Vec<AnomalyModelInfo>> {
        Ok(self.anomaly_tables().versions(tenant).rev().map(|m| m.info.clone()).collect())
    }

    async fn get_anomaly_model(&self, tenant: TenantId, version: i32) -> Result<Option<AnomalyModelRecord>> {
        Ok(self.anomaly_tables().models.get(&(tenant, version)).cloned())
    }

    async fn active_anomaly_model(&self, tenant: TenantId) -> Result<Option<AnomalyModelRecord>> {
        Ok(self.anomaly_tables().versions(tenant).find(|m| m.info.active).cloned())
    }

    async fn activate_anomaly_model(&self, tenant: TenantId, version: i32) -> Result<bool> {
        let mut t = self.anomaly_tables();
        if version != 0 && !t.models.contains_key(&(tenant, version)) {
            return Ok(false);
        }
        for m in t.versions_mut(tenant) {
            m.info.active = m.info.version == version;
        }
        Ok(true)
    }

    async fn insert_anomaly_task(&self, task: &AnomalyTask) -> Result<()> {
        if !self.tenant_exists(task.tenant_id) {
            return Err(conflict("tenant does not exist"));
        }
        let mut t = self.anomaly_tables();
        if t.tasks.contains_key(&task.id.0) {
            return Err(conflict("an anomaly task with this id exists"));
        }
        if is_active(task.status) && t.tasks.values().any(|o| o.tenant_id == task.tenant_id && is_active(o.status)) {
            return Err(conflict("the tenant already has an anomaly training task queued or running"));
        }
        t.tasks.insert(task.id.0, task.clone());
        Ok(())
    }

    async fn pending_anomaly_task(&self, tenant: TenantId) -> Result<Option<AnomalyTask>> {
        let t = self.anomaly_tables();
        Ok(t.tasks.values().find(|task| task.tenant_id == tenant && is_active(task.status)).cloned())
    }

    async fn get_anomaly_task(&self, tenant: TenantId, id: AnomalyTaskId) -> Result<Option<AnomalyTask>> {
        Ok(self.anomaly_tables().tasks.get(&id.0).filter(|t| t.tenant_id == tenant).cloned())
    }

    async fn claim_anomaly_task(
        &self,
        now: OffsetDateTime,
        token: Uuid,
        lease_until: OffsetDateTime,
    ) -> Result<Option<AnomalyTask>> {
        let mut t = self.anomaly_tables();
        let claimable = |task: &AnomalyTask| match task.status {
            JobStatus::Queued => true,
            JobStatus::Running => task.lease.is_none_or(|l| l.until < now),
            _ => false,
        };
        let Some(task) = t.tasks.values_mut().find(|task| claimable(task)) else { return Ok(None) };
        task.status = JobStatus::Running;
        task.lease = Some(Lease { token, until: lease_until });
        task.started_at = task.started_at.or(Some(now));
        task.attempts += 1;
        task.progress = 0.0;
        Ok(Some(task.clone()))
    }

    async fn progress_anomaly_task(
        &self,
        id: AnomalyTaskId,
        token: Uuid,
        progress: f64,
        lease_until: OffsetDateTime,
    ) -> Result<()> {
        let mut t = self.anomaly_tables();
        let task = t.held(id, token)?;
        task.progress = progress;
        task.lease = Some(Lease { token, until: lease_until });
        Ok(())
    }

    async fn complete_anomaly_task(
        &self,
        id: AnomalyTaskId,
        token: Uuid,
        now: OffsetDateTime,
        model: &AnomalyModelRecord,
    ) -> Result<i32> {
        let mut t = self.anomaly_tables();
        let tenant = t.held(id, token)?.tenant_id;
        let version = t.versions(tenant).next_back().map_or(1, |m| m.info.version + 1);
        for m in t.versions_mut(tenant) {
            m.info.active = false;
        }
        let mut stored = model.clone();
        stored.info.tenant_id = tenant;
        stored.info.version = version;
        stored.info.active = true;
        t.models.insert((tenant, version), stored);
        let task = t.held(id, token)?;
        task.status = JobStatus::Completed;
        task.progress = 1.0;
        task.model_version = Some(version);
        task.finished_at = Some(now);
        task.lease = None;
        Ok(version)
    }

    async fn fail_anomaly_task(&self, id: AnomalyTaskId, token: Uuid, now: OffsetDateTime, error: &str) -> Result<()> {
        let mut t = self.anomaly_tables();
        let task = t.held(id, token)?;
        task.status = JobStatus::Failed;
        task.error = Some(error.to_owned());
        task.finished_at = Some(now);
        task.lease = None;
        Ok(())
    }
}
