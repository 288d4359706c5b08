//! The one job queue seen from the services: each reads its own kind's jobs as its typed
//! record (a [`JobView`]), and [`JobClaims`] claims jobs of any kind for the server's one
//! worker, which hands each to the service of its kind.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use uuid::Uuid;

use crate::error::{DomainError, Result};
use crate::ids::TenantId;
use crate::model::{Job, JobEnd, JobKind, JobView};
use crate::ports::{Clock, IdGen, JobQueue};

/// The job `id` as a `T`, if it is one: a job of another kind is none (so is another
/// tenant's, when `tenant` is given).
pub(crate) async fn get<T: JobView>(jobs: &dyn JobQueue, tenant: Option<TenantId>, id: Uuid) -> Result<Option<T>> {
    match jobs.get_job(id).await? {
        Some(job) if job.kind == T::KIND && tenant.is_none_or(|t| t == job.tenant_id) => T::from_job(job).map(Some),
        _ => Ok(None),
    }
}

/// The tenant's `queued` or `running` `T`, if any.
pub(crate) async fn active<T: JobView>(jobs: &dyn JobQueue, tenant: TenantId) -> Result<Option<T>> {
    jobs.active_job(tenant, T::KIND).await?.map(T::from_job).transpose()
}

/// A worker's write as done, or `None` when the store refused it because the job is no
/// longer the worker's (cancelled, or taken over after its lease ran out): then there is
/// nothing left to do, and nothing was written.
pub(crate) fn unless_lost<T>(written: Result<T>) -> Result<Option<T>> {
    match written {
        Ok(value) => Ok(Some(value)),
        Err(DomainError::Conflict(_)) => Ok(None),
        Err(e) => Err(e),
    }
}

/// A job this process's worker claimed, with the token every write of its run carries.
#[derive(Debug, Clone)]
pub struct ClaimedJob {
    pub job: Job,
    pub token: Uuid,
}

/// How long a claim of a kind holds before its run renews it, how many claims a job of the
/// kind gets before it is failed, and how long a finished one is kept (`None`: for good).
#[derive(Debug, Clone, Copy)]
pub struct KindSettings {
    pub lease: Duration,
    pub max_attempts: i32,
    pub keep_for: Option<Duration>,
}

/// Claims jobs from the queue for this process's one worker, which runs each with the
/// service of its kind (`AuditService::run_export`, `GuardService::begin_training`, …).
#[derive(Clone)]
pub struct JobClaims {
    jobs: Arc<dyn JobQueue>,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn IdGen>,
    kinds: Arc<HashMap<JobKind, KindSettings>>,
}

impl JobClaims {
    pub(crate) fn new(
        jobs: Arc<dyn JobQueue>,
        clock: Arc<dyn Clock>,
        ids: Arc<dyn IdGen>,
        kinds: HashMap<JobKind, KindSettings>,
    ) -> Self {
        Self { jobs, clock, ids, kinds: Arc::new(kinds) }
    }

    /// Deletes the finished jobs past their keeping (export files after their retention),
    /// with their chunks; returns how many.
    pub async fn purge_expired(&self) -> Result<u64> {
        self.jobs.purge_expired_jobs(self.clock.now()).await
    }

    fn settings(&self, kind: JobKind) -> KindSettings {
        let default = KindSettings { lease: Duration::from_secs(60), max_attempts: 3, keep_for: None };
        self.kinds.get(&kind).copied().unwrap_or(default)
    }

    /// Claims a job of one of `kinds` (queued on any replica, or abandoned by a worker whose
    /// lease ran out), the tenant with the fewest running first (see `JobQueue::claim_job`),
    /// under its kind's lease. A job claimed more often than its kind allows is failed
    /// ("gave up after N attempts") and the next one looked at. `None` when there is none.
    pub async fn claim(&self, kinds: &[JobKind]) -> Result<Option<ClaimedJob>> {
        let lease = kinds.iter().map(|k| self.settings(*k).lease).min().unwrap_or(Duration::from_secs(60));
        loop {
            let now = self.clock.now();
            let token = self.ids.new_id();
            let Some(job) = self.jobs.claim_job(kinds, now, token, now + lease).await? else { return Ok(None) };
            let settings = self.settings(job.kind);
            if job.attempts > settings.max_attempts {
                let end = JobEnd {
                    expires_at: settings.keep_for.map(|keep| now + keep),
                    ..JobEnd::failed(now, format!("gave up after {} attempts", job.attempts - 1))
                };
                unless_lost(self.jobs.finish_job(job.id, token, &end).await)?;
                continue;
            }
            if settings.lease > lease {
                self.jobs.renew_job(job.id, token, 0.0, None, now + settings.lease).await?;
            }
            return Ok(Some(ClaimedJob { job, token }));
        }
    }
}
