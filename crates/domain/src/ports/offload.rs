//! CPU-heavy work (Rego compilation and evaluation) run away from the threads that answer
//! requests, on a bounded pool shared fairly between tenants.
//!
//! The adapter runs at most a few jobs at once in all, fewer per tenant, queues a bounded
//! number per tenant, and stops waiting for a job after its budget: one tenant's slow or
//! hostile policies then cost that tenant its own share, never the service's answer to
//! everyone else.

use std::any::Any;
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;

use crate::ids::TenantId;

/// A job: runs once on a pool thread, its result boxed.
pub type Job = Box<dyn FnOnce() -> Box<dyn Any + Send> + Send>;

/// Runs several items of one kind in one go, each with the instant its caller stops waiting:
/// one result per item, in order. A pool may run a tenant's waiting items that share a
/// batch key through one call of the first one's `BatchRun`, in the thread slot of one job.
pub type BatchRun = Arc<dyn Fn(Vec<(Box<dyn Any + Send>, Instant)>) -> Vec<Box<dyn Any + Send>> + Send + Sync>;

/// Why an offloaded job gave no result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum OffloadError {
    /// The tenant already has as many jobs waiting as it may: try again shortly.
    #[error("too many jobs of this tenant are waiting")]
    Busy,
    /// The job did not finish within its budget (it may still be running; its answer is
    /// dropped).
    #[error("the job did not finish within its budget")]
    TimedOut,
    /// The job panicked (the panic was caught on the pool thread).
    #[error("the job failed")]
    Panicked,
}

#[async_trait]
pub trait Offload: Send + Sync {
    /// Runs `job` for `tenant` on the pool; waits at most `budget` (queueing included).
    async fn run(&self, tenant: TenantId, budget: Duration, job: Job) -> Result<Box<dyn Any + Send>, OffloadError>;

    /// Runs `item` through `run`, possibly in one batch with the tenant's other waiting
    /// items of the same `key` (items of one key must be runnable by any of their `run`s);
    /// waits at most `budget`. By default, alone.
    async fn run_batched(
        &self,
        tenant: TenantId,
        budget: Duration,
        key: usize,
        item: Box<dyn Any + Send>,
        run: BatchRun,
    ) -> Result<Box<dyn Any + Send>, OffloadError> {
        let _ = key;
        let deadline = Instant::now() + budget;
        let job: Job =
            Box::new(move || run(vec![(item, deadline)]).pop().unwrap_or_else(|| Box::new(()) as Box<dyn Any + Send>));
        self.run(tenant, budget, job).await
    }
}

impl dyn Offload {
    /// [`Offload::run`] with a typed result.
    pub async fn call<T: Send + 'static>(
        &self,
        tenant: TenantId,
        budget: Duration,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, OffloadError> {
        let out = self.run(tenant, budget, Box::new(move || Box::new(f()) as Box<dyn Any + Send>)).await?;
        // The job above boxes a `T`, so the downcast cannot fail; a failure would be a bug.
        out.downcast::<T>().map(|b| *b).map_err(|_| OffloadError::Panicked)
    }

    /// [`Offload::run_batched`], typed: `run` answers a batch of `I` with one `T` each.
    pub async fn call_batched<I: Send + 'static, T: Send + 'static>(
        &self,
        tenant: TenantId,
        budget: Duration,
        key: usize,
        item: I,
        run: impl Fn(Vec<(I, Instant)>) -> Vec<T> + Send + Sync + 'static,
    ) -> Result<T, OffloadError> {
        let run: BatchRun = Arc::new(move |items: Vec<(Box<dyn Any + Send>, Instant)>| {
            // Items of one key are all `I` (the key names one kind of batch); another type
            // cannot be run here and is left out, so its caller is answered `Panicked`.
            let typed: Vec<(I, Instant)> = items
                .into_iter()
                .filter_map(|(item, deadline)| item.downcast::<I>().ok().map(|i| (*i, deadline)))
                .collect();
            run(typed).into_iter().map(|t| Box::new(t) as Box<dyn Any + Send>).collect()
        });
        let out = self.run_batched(tenant, budget, key, Box::new(item), run).await?;
        out.downcast::<T>().map(|b| *b).map_err(|_| OffloadError::Panicked)
    }
}

/// Runs every job at once on the calling thread, catching panics (tests and tools).
#[derive(Debug, Default, Clone, Copy)]
pub struct Inline;

#[async_trait]
impl Offload for Inline {
    async fn run(&self, _tenant: TenantId, _budget: Duration, job: Job) -> Result<Box<dyn Any + Send>, OffloadError> {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(job)).map_err(|_| OffloadError::Panicked)
    }
}
