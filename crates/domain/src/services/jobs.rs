//! The typed side of the one job queue: each service reads and claims its own kind's jobs
//! through these, as its typed record (a [`JobView`]).

use time::OffsetDateTime;
use uuid::Uuid;

use crate::error::Result;
use crate::ids::TenantId;
use crate::model::JobView;
use crate::ports::JobQueue;

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

/// Claims a `T` (see [`JobQueue::claim_job`]).
pub(crate) async fn claim<T: JobView>(
    jobs: &dyn JobQueue,
    now: OffsetDateTime,
    token: Uuid,
    lease_until: OffsetDateTime,
) -> Result<Option<T>> {
    jobs.claim_job(&[T::KIND], now, token, lease_until).await?.map(T::from_job).transpose()
}
