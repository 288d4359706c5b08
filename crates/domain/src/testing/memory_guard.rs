//! The Prompt Guard's models, feedback, training tasks and statistics in `MemoryStore`.

use std::collections::{BTreeMap, HashMap};
use std::sync::MutexGuard;

use async_trait::async_trait;
use time::OffsetDateTime;
use uuid::Uuid;

use super::memory_store::{MemoryStore, conflict};
use crate::error::{DomainError, Result};
use crate::ids::{GuardTaskId, TenantId};
use crate::model::{
    GuardExample, GuardFeedback, GuardLabel, GuardModelInfo, GuardModelRecord, GuardStatsKey, GuardTask, JobStatus,
    Lease,
};
use crate::ports::store::GuardRepo;

#[derive(Debug, Default)]
pub(super) struct GuardTables {
    /// Keyed by tenant, then version.
    models: BTreeMap<(TenantId, i32), GuardModelRecord>,
    feedback: BTreeMap<Uuid, GuardFeedback>,
    tasks: BTreeMap<Uuid, GuardTask>,
    examples: HashMap<Uuid, Vec<GuardExample>>,
    stats: HashMap<GuardStatsKey, i64>,
}

impl GuardTables {
    fn versions_mut(&mut self, tenant: TenantId) -> impl Iterator<Item = &mut GuardModelRecord> {
        self.models.range_mut((tenant, i32::MIN)..=(tenant, i32::MAX)).map(|(_, m)| m)
    }

    fn versions(&self, tenant: TenantId) -> impl DoubleEndedIterator<Item = &GuardModelRecord> {
        self.models.range((tenant, i32::MIN)..=(tenant, i32::MAX)).map(|(_, m)| m)
    }

    /// The task if it is `running` under `token`.
    fn held(&mut self, id: GuardTaskId, token: Uuid) -> Result<&mut GuardTask> {
        self.tasks
            .get_mut(&id.0)
            .filter(|t| t.status == JobStatus::Running && t.lease.is_some_and(|l| l.token == token))
            .ok_or_else(|| lease_lost(id))
    }
}

fn lease_lost(id: GuardTaskId) -> DomainError {
    DomainError::Conflict(format!("guard task {id} is no longer held by this worker"))
}

fn is_active(status: JobStatus) -> bool {
    matches!(status, JobStatus::Queued | JobStatus::Running)
}

impl MemoryStore {
    fn guard_tables(&self) -> MutexGuard<'_, GuardTables> {
        self.guard.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[async_trait]
impl GuardRepo for MemoryStore {
    async fn list_guard_models(&self, tenant: TenantId) -> Result<Vec<GuardModelInfo>> {
        Ok(self.guard_tables().versions(tenant).rev().map(|m| m.info.clone()).collect())
    }

    async fn get_guard_model(&self, tenant: TenantId, version: i32) -> Result<Option<GuardModelRecord>> {
        Ok(self.guard_tables().models.get(&(tenant, version)).cloned())
    }

    async fn active_guard_model(&self, tenant: TenantId) -> Result<i32> {
        Ok(self.guard_tables().versions(tenant).find(|m| m.info.active).map_or(0, |m| m.info.version))
    }

    async fn activate_guard_model(&self, tenant: TenantId, version: i32) -> Result<bool> {
        let mut t = self.guard_tables();
        if version != 0 && !t.models.contains_key(&(tenant, version)) {
            return Ok(false);
        }
        for m in t.versions_mut(tenant) {
            m.info.active = m.info.version == version;
        }
        Ok(true)
    }

    async fn insert_guard_feedback(&self, feedback: &GuardFeedback) -> Result<()> {
        if !self.tenant_exists(feedback.tenant_id) {
            return Err(conflict("tenant does not exist"));
        }
        let mut t = self.guard_tables();
        if t.feedback.contains_key(&feedback.id.0) {
            return Err(conflict("guard feedback with this id exists"));
        }
        t.feedback.insert(feedback.id.0, feedback.clone());
        Ok(())
    }

    async fn list_guard_feedback(&self, tenant: TenantId, limit: i64) -> Result<Vec<GuardFeedback>> {
        let limit = usize::try_from(limit).unwrap_or(0);
        let t = self.guard_tables();
        Ok(t.feedback.values().filter(|f| f.tenant_id == tenant).take(limit).cloned().collect())
    }

    async fn insert_guard_task(&self, task: &GuardTask, examples: &[GuardExample]) -> Result<()> {
        if !self.tenant_exists(task.tenant_id) {
            return Err(conflict("tenant does not exist"));
        }
        let mut t = self.guard_tables();
        if t.tasks.contains_key(&task.id.0) {
            return Err(conflict("a guard task with this id exists"));
        }
        if is_active(task.status) && t.tasks.values().any(|o| o.tenant_id == task.tenant_id && is_active(o.status)) {
            return Err(conflict("the tenant already has a training task queued or running"));
        }
        t.tasks.insert(task.id.0, task.clone());
        t.examples.insert(task.id.0, examples.to_vec());
        Ok(())
    }

    async fn pending_guard_task(&self, tenant: TenantId) -> Result<Option<GuardTask>> {
        let t = self.guard_tables();
        Ok(t.tasks.values().find(|task| task.tenant_id == tenant && is_active(task.status)).cloned())
    }

    async fn get_guard_task(&self, id: GuardTaskId) -> Result<Option<GuardTask>> {
        Ok(self.guard_tables().tasks.get(&id.0).cloned())
    }

    async fn guard_task_examples(&self, id: GuardTaskId) -> Result<Vec<GuardExample>> {
        Ok(self.guard_tables().examples.get(&id.0).cloned().unwrap_or_default())
    }

    async fn claim_guard_task(
        &self,
        now: OffsetDateTime,
        token: Uuid,
        lease_until: OffsetDateTime,
    ) -> Result<Option<GuardTask>> {
        let mut t = self.guard_tables();
        let claimable = |task: &GuardTask| match task.status {
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

    async fn progress_guard_task(
        &self,
        id: GuardTaskId,
        token: Uuid,
        progress: f64,
        lease_until: OffsetDateTime,
    ) -> Result<()> {
        let mut t = self.guard_tables();
        let task = t.held(id, token)?;
        task.progress = progress;
        task.lease = Some(Lease { token, until: lease_until });
        Ok(())
    }

    async fn complete_guard_task(
        &self,
        id: GuardTaskId,
        token: Uuid,
        now: OffsetDateTime,
        model: &GuardModelRecord,
    ) -> Result<i32> {
        let mut t = self.guard_tables();
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

    async fn fail_guard_task(&self, id: GuardTaskId, token: Uuid, now: OffsetDateTime, error: &str) -> Result<()> {
        let mut t = self.guard_tables();
        let task = t.held(id, token)?;
        task.status = JobStatus::Failed;
        task.error = Some(error.to_owned());
        task.finished_at = Some(now);
        task.lease = None;
        Ok(())
    }

    async fn cancel_guard_task(&self, tenant: TenantId, now: OffsetDateTime) -> Result<Option<GuardTask>> {
        let mut t = self.guard_tables();
        let Some(task) = t.tasks.values_mut().find(|task| task.tenant_id == tenant && is_active(task.status)) else {
            return Ok(None);
        };
        task.status = JobStatus::Cancelled;
        task.finished_at = Some(now);
        task.lease = None;
        Ok(Some(task.clone()))
    }

    async fn add_guard_stats(&self, counts: &[(GuardStatsKey, i64)]) -> Result<()> {
        if counts.iter().any(|(k, _)| !self.tenant_exists(k.tenant_id)) {
            return Err(conflict("tenant does not exist"));
        }
        let mut t = self.guard_tables();
        for (key, count) in counts {
            *t.stats.entry(*key).or_default() += count;
        }
        Ok(())
    }

    async fn guard_stats(&self, tenant: TenantId, from_hour: i64) -> Result<Vec<(GuardStatsKey, i64)>> {
        let t = self.guard_tables();
        let mut totals: BTreeMap<(i64, GuardLabel, i16), i64> = BTreeMap::new();
        for (key, count) in t.stats.iter().filter(|(k, _)| k.tenant_id == tenant && k.hour >= from_hour) {
            *totals.entry((key.hour, key.verdict, key.bucket)).or_default() += count;
        }
        Ok(totals
            .into_iter()
            .map(|((hour, verdict, bucket), count)| (GuardStatsKey { tenant_id: tenant, hour, verdict, bucket }, count))
            .collect())
    }
}
