//! The `Offload` port on tokio's blocking threads, shared fairly between tenants.
//!
//! Three bounds: at most `threads` jobs run at once in all; at most `per_tenant` of them
//! belong to one tenant; at most `queue` jobs of one tenant are in the pool (waiting or
//! running) before the next is refused as `Busy`. A job past its budget is answered
//! `TimedOut`; it keeps its thread and its slots until it really ends, so a tenant whose
//! jobs never end uses up its own share only. Panics are caught on the pool thread.

use std::any::Any;
use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentgov_domain::ids::TenantId;
use agentgov_domain::ports::{Job, Offload, OffloadError};
use async_trait::async_trait;
use tokio::sync::Semaphore;

pub struct TenantPool {
    threads: Arc<Semaphore>,
    per_tenant: usize,
    queue: usize,
    tenants: Mutex<HashMap<TenantId, Arc<Slots>>>,
}

/// One tenant's share.
struct Slots {
    running: Arc<Semaphore>,
    /// Jobs in the pool (waiting or running), for the queue bound.
    admitted: AtomicUsize,
}

/// Counts a job as admitted until dropped.
struct Admitted(Arc<Slots>);

impl Drop for Admitted {
    fn drop(&mut self) {
        self.0.admitted.fetch_sub(1, Ordering::AcqRel);
    }
}

impl TenantPool {
    /// `threads` in all, `per_tenant` of them for one tenant, `queue` jobs of one tenant in
    /// the pool at most. Every bound is at least 1.
    pub fn new(threads: usize, per_tenant: usize, queue: usize) -> Self {
        let threads = threads.max(1);
        Self {
            threads: Arc::new(Semaphore::new(threads)),
            per_tenant: per_tenant.clamp(1, threads),
            queue: queue.max(1),
            tenants: Mutex::new(HashMap::new()),
        }
    }

    fn admit(&self, tenant: TenantId) -> Result<Admitted, OffloadError> {
        let slots = {
            let mut tenants = self.tenants.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            tenants
                .entry(tenant)
                .or_insert_with(|| {
                    Arc::new(Slots {
                        running: Arc::new(Semaphore::new(self.per_tenant)),
                        admitted: AtomicUsize::new(0),
                    })
                })
                .clone()
        };
        if slots.admitted.fetch_add(1, Ordering::AcqRel) >= self.queue {
            slots.admitted.fetch_sub(1, Ordering::AcqRel);
            return Err(OffloadError::Busy);
        }
        Ok(Admitted(slots))
    }
}

#[async_trait]
impl Offload for TenantPool {
    async fn run(&self, tenant: TenantId, budget: Duration, job: Job) -> Result<Box<dyn Any + Send>, OffloadError> {
        let admitted = self.admit(tenant)?;
        let run = async {
            // The tenant's slot first: a tenant at its share waits without holding a thread.
            let own = admitted.0.running.clone().acquire_owned().await.map_err(|_| OffloadError::Panicked)?;
            let shared = self.threads.clone().acquire_owned().await.map_err(|_| OffloadError::Panicked)?;
            let handle = tokio::task::spawn_blocking(move || {
                let _slots = (own, shared);
                catch_unwind(AssertUnwindSafe(job))
            });
            match handle.await {
                Ok(Ok(out)) => Ok(out),
                Ok(Err(_)) | Err(_) => Err(OffloadError::Panicked),
            }
        };
        let out = tokio::time::timeout(budget, run).await.unwrap_or(Err(OffloadError::TimedOut));
        drop(admitted);
        out
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;

    use uuid::Uuid;

    use super::*;

    fn tenant() -> TenantId {
        TenantId(Uuid::now_v7())
    }

    fn job<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Job {
        Box::new(move || Box::new(f()) as Box<dyn Any + Send>)
    }

    #[tokio::test]
    async fn runs_a_job_and_catches_a_panic() {
        let pool = TenantPool::new(2, 1, 4);
        let out = pool.run(tenant(), Duration::from_secs(5), job(|| 41 + 1)).await.unwrap();
        assert_eq!(*out.downcast::<i32>().unwrap(), 42);
        let panicked = pool.run(tenant(), Duration::from_secs(5), job(|| panic!("inside a job"))).await;
        assert_eq!(panicked.err(), Some(OffloadError::Panicked));
    }

    #[tokio::test]
    async fn a_job_past_its_budget_is_answered_and_keeps_only_its_tenants_share() {
        let pool = Arc::new(TenantPool::new(2, 1, 8));
        let (hostile, other) = (tenant(), tenant());
        let (release, wait) = mpsc::channel::<()>();
        // The hostile tenant's job never ends within its budget.
        let stuck = pool.run(hostile, Duration::from_millis(50), job(move || wait.recv().ok())).await;
        assert_eq!(stuck.err(), Some(OffloadError::TimedOut));
        // Its next job waits for its own slot, still held, and times out too...
        let queued = pool.run(hostile, Duration::from_millis(50), job(|| ())).await;
        assert_eq!(queued.err(), Some(OffloadError::TimedOut));
        // ...while another tenant is answered on the thread left.
        let answered = pool.run(other, Duration::from_secs(5), job(|| "answered")).await.unwrap();
        assert_eq!(*answered.downcast::<&str>().unwrap(), "answered");
        release.send(()).unwrap();
    }

    #[tokio::test]
    async fn a_tenant_past_its_queue_is_busy_and_others_are_not() {
        let pool = Arc::new(TenantPool::new(1, 1, 2));
        let (hostile, other) = (tenant(), tenant());
        let (release, wait) = mpsc::channel::<()>();
        let wait = Arc::new(Mutex::new(wait));
        let mut held = Vec::new();
        for _ in 0..2 {
            let (pool, wait) = (pool.clone(), wait.clone());
            held.push(tokio::spawn(async move {
                pool.run(hostile, Duration::from_secs(30), job(move || wait.lock().unwrap().recv().ok())).await
            }));
        }
        // Both admitted (one running, one waiting for the tenant's slot).
        while pool.tenants.lock().unwrap().get(&hostile).map(|s| s.admitted.load(Ordering::Acquire)) != Some(2) {
            tokio::task::yield_now().await;
        }
        let refused = pool.run(hostile, Duration::from_secs(5), job(|| ())).await;
        assert_eq!(refused.err(), Some(OffloadError::Busy));
        // Another tenant is admitted (it waits for the one thread, then runs).
        let other_job = tokio::spawn({
            let pool = pool.clone();
            async move { pool.run(other, Duration::from_secs(30), job(|| 7)).await.map(|b| *b.downcast::<i32>().unwrap()) }
        });
        release.send(()).unwrap();
        release.send(()).unwrap();
        for h in held {
            assert!(h.await.unwrap().is_ok());
        }
        assert_eq!(other_job.await.unwrap(), Ok(7));
    }
}
