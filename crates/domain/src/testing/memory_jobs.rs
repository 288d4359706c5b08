//! The job queue and the model registry of `MemoryStore`.

use std::collections::BTreeMap;
use std::sync::MutexGuard;

use async_trait::async_trait;
use serde_json::{Value, json};
use time::OffsetDateTime;
use uuid::Uuid;

use super::memory_store::{MemoryStore, conflict};
use crate::error::{DomainError, Result};
use crate::ids::TenantId;
use crate::model::{Job, JobEnd, JobKind, JobStatus, Lease, ModelKind, ModelVersion, StoredModel};
use crate::ports::store::{JOB_LIMIT_REACHED, JobQueue, ModelRegistry};

#[derive(Debug, Default)]
pub(super) struct JobTables {
    jobs: BTreeMap<Uuid, Job>,
    chunks: BTreeMap<(Uuid, i32), Vec<u8>>,
    /// Keyed by (tenant, kind, version).
    models: BTreeMap<(Uuid, ModelKind, i32), StoredModel>,
}

impl JobTables {
    /// The job `id` if it is `running` under `token`.
    pub(super) fn held(&mut self, id: Uuid, token: Uuid) -> Result<&mut Job> {
        self.jobs
            .get_mut(&id)
            .filter(|j| j.status == JobStatus::Running && j.lease.is_some_and(|l| l.token == token))
            .ok_or_else(|| DomainError::Conflict(format!("job {id} is no longer held by this worker")))
    }

    fn models_of(&mut self, tenant: TenantId, kind: ModelKind) -> impl Iterator<Item = &mut StoredModel> {
        self.models.values_mut().filter(move |m| m.version.tenant_id == tenant && m.version.kind == kind)
    }
}

/// Ends a held job as `end` says.
pub(super) fn finish(job: &mut Job, end: &JobEnd) {
    job.status = end.status;
    job.error.clone_from(&end.error);
    if let Some(progress) = end.progress {
        job.progress = progress;
    }
    if let Some(state) = &end.state {
        job.state = state.clone();
    }
    job.finished_at = Some(end.at);
    job.expires_at = end.expires_at;
    job.lease = None;
}

fn is_active(job: &Job) -> bool {
    matches!(job.status, JobStatus::Queued | JobStatus::Running)
}

impl MemoryStore {
    pub(super) fn job_tables(&self) -> MutexGuard<'_, JobTables> {
        self.jobs.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[async_trait]
impl JobQueue for MemoryStore {
    async fn enqueue_job(&self, job: &Job, max_active: u64) -> Result<()> {
        if !self.tenant_exists(job.tenant_id) {
            return Err(conflict("tenant does not exist"));
        }
        let mut t = self.job_tables();
        if t.jobs.contains_key(&job.id) {
            return Err(conflict("a job with this id exists"));
        }
        let active =
            t.jobs.values().filter(|j| j.tenant_id == job.tenant_id && j.kind == job.kind && is_active(j)).count();
        if u64::try_from(active).unwrap_or(u64::MAX) >= max_active {
            return Err(conflict(JOB_LIMIT_REACHED));
        }
        t.jobs.insert(job.id, job.clone());
        Ok(())
    }

    async fn get_job(&self, id: Uuid) -> Result<Option<Job>> {
        Ok(self.job_tables().jobs.get(&id).cloned())
    }

    async fn active_job(&self, tenant: TenantId, kind: JobKind) -> Result<Option<Job>> {
        let t = self.job_tables();
        Ok(t.jobs.values().find(|j| j.tenant_id == tenant && j.kind == kind && is_active(j)).cloned())
    }

    async fn claim_job(
        &self,
        kinds: &[JobKind],
        now: OffsetDateTime,
        token: Uuid,
        lease_until: OffsetDateTime,
    ) -> Result<Option<Job>> {
        let mut t = self.job_tables();
        let claimable = |j: &Job| {
            kinds.contains(&j.kind)
                && match j.status {
                    JobStatus::Queued => true,
                    JobStatus::Running => j.lease.is_none_or(|l| l.until < now),
                    _ => false,
                }
        };
        let running = |tenant: TenantId| {
            t.jobs
                .values()
                .filter(|j| j.tenant_id == tenant && j.status == JobStatus::Running)
                .filter(|j| j.lease.is_some_and(|l| l.until >= now))
                .count()
        };
        // Fewest running first, then the oldest job: `min_by_key` keeps the first of equals,
        // and the map is in id order.
        let Some(id) = t.jobs.values().filter(|j| claimable(j)).min_by_key(|j| running(j.tenant_id)).map(|j| j.id)
        else {
            return Ok(None);
        };
        t.chunks.retain(|(job, _), _| *job != id);
        let Some(job) = t.jobs.get_mut(&id) else { return Ok(None) };
        job.status = JobStatus::Running;
        job.lease = Some(Lease { token, until: lease_until });
        job.started_at = job.started_at.or(Some(now));
        job.attempts += 1;
        job.progress = 0.0;
        job.state = Value::Null;
        Ok(Some(job.clone()))
    }

    async fn renew_job(
        &self,
        id: Uuid,
        token: Uuid,
        progress: f64,
        state: Option<&Value>,
        lease_until: OffsetDateTime,
    ) -> Result<()> {
        let mut t = self.job_tables();
        let job = t.held(id, token)?;
        job.progress = progress;
        if let Some(state) = state {
            job.state = state.clone();
        }
        job.lease = Some(Lease { token, until: lease_until });
        Ok(())
    }

    async fn put_job_chunk(&self, id: Uuid, token: Uuid, index: i32, data: Vec<u8>) -> Result<()> {
        let mut t = self.job_tables();
        t.held(id, token)?;
        t.chunks.insert((id, index), data);
        Ok(())
    }

    async fn job_chunk(&self, tenant: TenantId, id: Uuid, index: i32) -> Result<Option<Vec<u8>>> {
        let t = self.job_tables();
        if t.jobs.get(&id).is_none_or(|j| j.tenant_id != tenant) {
            return Ok(None);
        }
        Ok(t.chunks.get(&(id, index)).cloned())
    }

    async fn finish_job(&self, id: Uuid, token: Uuid, end: &JobEnd) -> Result<()> {
        let mut t = self.job_tables();
        finish(t.held(id, token)?, end);
        Ok(())
    }

    async fn cancel_job(&self, tenant: TenantId, kind: JobKind, now: OffsetDateTime) -> Result<Option<Job>> {
        let mut t = self.job_tables();
        let Some(job) = t.jobs.values_mut().find(|j| j.tenant_id == tenant && j.kind == kind && is_active(j)) else {
            return Ok(None);
        };
        job.status = JobStatus::Cancelled;
        job.finished_at = Some(now);
        job.lease = None;
        Ok(Some(job.clone()))
    }

    async fn purge_expired_jobs(&self, now: OffsetDateTime) -> Result<u64> {
        let mut t = self.job_tables();
        let expired: Vec<Uuid> =
            t.jobs.values().filter(|j| j.expires_at.is_some_and(|e| e < now)).map(|j| j.id).collect();
        for id in &expired {
            t.jobs.remove(id);
        }
        t.chunks.retain(|(job, _), _| !expired.contains(job));
        Ok(expired.len() as u64)
    }
}

#[async_trait]
impl ModelRegistry for MemoryStore {
    async fn list_models(&self, tenant: TenantId, kind: ModelKind) -> Result<Vec<ModelVersion>> {
        let mut t = self.job_tables();
        let mut versions: Vec<ModelVersion> = t.models_of(tenant, kind).map(|m| m.version.clone()).collect();
        versions.reverse();
        Ok(versions)
    }

    async fn get_model(&self, tenant: TenantId, kind: ModelKind, version: i32) -> Result<Option<StoredModel>> {
        Ok(self.job_tables().models.get(&(tenant.0, kind, version)).cloned())
    }

    async fn active_model(&self, tenant: TenantId, kind: ModelKind) -> Result<i32> {
        let mut t = self.job_tables();
        Ok(t.models_of(tenant, kind).find(|m| m.version.active).map_or(0, |m| m.version.version))
    }

    async fn activate_model(&self, tenant: TenantId, kind: ModelKind, version: i32) -> Result<bool> {
        let mut t = self.job_tables();
        if version != 0 && !t.models.contains_key(&(tenant.0, kind, version)) {
            return Ok(false);
        }
        for m in t.models_of(tenant, kind) {
            m.version.active = m.version.version == version;
        }
        Ok(true)
    }

    async fn complete_training(&self, job: Uuid, token: Uuid, now: OffsetDateTime, model: &StoredModel) -> Result<i32> {
        let mut t = self.job_tables();
        let tenant = t.held(job, token)?.tenant_id;
        let kind = model.version.kind;
        let version = t.models_of(tenant, kind).map(|m| m.version.version).max().unwrap_or(0) + 1;
        for m in t.models_of(tenant, kind) {
            m.version.active = false;
        }
        let stored = StoredModel {
            version: ModelVersion { tenant_id: tenant, version, active: true, ..model.version.clone() },
            model: model.model.clone(),
        };
        t.models.insert((tenant.0, kind, version), stored);
        finish(t.held(job, token)?, &JobEnd::completed(now, json!({ "model_version": version })));
        Ok(version)
    }
}
