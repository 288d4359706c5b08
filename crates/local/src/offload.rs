//! The `Offload` port on threads of its own, shared fairly between tenants.
//!
//! Three bounds: at most `threads` jobs run at once in all; at most `per_tenant` of them
//! belong to one tenant; at most `queue` jobs of one tenant are in the pool (waiting or
//! running) before the next is refused as `Busy`. Tenants with a job waiting and a free slot
//! of their share take turns for the next free thread, and a thread that finishes a job
//! takes the next one itself: no trip through the async runtime between two jobs, which
//! would make one tenant's checks wait for a busy request thread to hand the next one over.
//! A thread that takes a batched item also takes the tenant's other waiting items of the
//! same batch key (up to [`MAX_BATCH`]) and runs them in one call, in one slot: one tenant's
//! checks then cost one hand-over (and one round trip to a policy worker) per batch.
//! A job past its budget is answered `TimedOut`; it keeps its thread and its slot until it
//! really ends, so a tenant whose jobs never end uses up its own share only (a job still
//! waiting when its caller gave up is dropped unrun). Panics are caught on the pool thread.

use std::any::Any;
use std::collections::{HashMap, VecDeque};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use agentgov_domain::ids::TenantId;
use agentgov_domain::ports::{BatchRun, Job, Offload, OffloadError};
use async_trait::async_trait;
use tokio::sync::oneshot;

type Answer = Result<Box<dyn Any + Send>, OffloadError>;

/// Most batched items run in one call.
pub const MAX_BATCH: usize = 32;

pub struct TenantPool {
    shared: Arc<Shared>,
}

struct Shared {
    state: Mutex<State>,
    /// Signalled when a tenant joins `turns`, or at shutdown.
    ready: Condvar,
    per_tenant: usize,
    queue: usize,
}

#[derive(Default)]
struct State {
    tenants: HashMap<TenantId, Tenant>,
    /// The tenants that have a job waiting and a free slot of their share, in turn order.
    turns: VecDeque<TenantId>,
    shutdown: bool,
}

/// One tenant's jobs in the pool (an entry exists while it has any).
#[derive(Default)]
struct Tenant {
    waiting: VecDeque<Queued>,
    running: usize,
    /// Whether the tenant is in `turns`.
    in_turn: bool,
}

struct Queued {
    work: Work,
    answer: oneshot::Sender<Answer>,
}

enum Work {
    Job(Job),
    Batched { key: usize, item: Box<dyn Any + Send>, deadline: Instant, run: BatchRun },
}

impl Work {
    fn key(&self) -> Option<usize> {
        match self {
            Work::Job(_) => None,
            Work::Batched { key, .. } => Some(*key),
        }
    }
}

impl TenantPool {
    /// `threads` threads named `{name}-N`, `per_tenant` of them for one tenant at once,
    /// `queue` jobs of one tenant in the pool at most. Every bound is at least 1.
    pub fn new(name: &str, threads: usize, per_tenant: usize, queue: usize) -> std::io::Result<Self> {
        let threads = threads.max(1);
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            ready: Condvar::new(),
            per_tenant: per_tenant.clamp(1, threads),
            queue: queue.max(1),
        });
        let pool = Self { shared };
        for n in 0..threads {
            let shared = pool.shared.clone();
            // On failure the pool is dropped, which stops the threads already started.
            std::thread::Builder::new().name(format!("{name}-{n}")).spawn(move || shared.work())?;
        }
        Ok(pool)
    }
}

impl Drop for TenantPool {
    fn drop(&mut self) {
        self.shared.lock().shutdown = true;
        self.shared.ready.notify_all();
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // Jobs run outside the lock, so a poisoned lock means only a bug in this file.
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Queues `job` for `tenant`, or refuses it past the tenant's queue.
    fn submit(&self, tenant: TenantId, work: Work) -> Result<oneshot::Receiver<Answer>, OffloadError> {
        let (answer, received) = oneshot::channel();
        let mut state = self.lock();
        let queued = state.tenants.entry(tenant).or_default();
        if queued.waiting.len() + queued.running >= self.queue {
            return Err(OffloadError::Busy);
        }
        queued.waiting.push_back(Queued { work, answer });
        if state.take_turn(tenant, self.per_tenant) {
            drop(state);
            self.ready.notify_one();
        }
        Ok(received)
    }

    /// A pool thread: runs the next tenant's next job until the pool is dropped.
    fn work(&self) {
        loop {
            let (tenant, next) = {
                let mut state = self.lock();
                loop {
                    if state.shutdown {
                        return;
                    }
                    if let Some(next) = state.next(self.per_tenant) {
                        // The same tenant may have gone back in line, for another thread.
                        if !state.turns.is_empty() {
                            self.ready.notify_one();
                        }
                        break next;
                    }
                    state = self.ready.wait(state).unwrap_or_else(|poisoned| poisoned.into_inner());
                }
            };
            let answers = run(next);
            // The slot is given back before the callers hear their answers, so a caller
            // that submits again as soon as it is answered finds its share free.
            let mut state = self.lock();
            if let Some(queued) = state.tenants.get_mut(&tenant) {
                queued.running -= 1;
            }
            let joined = state.take_turn(tenant, self.per_tenant);
            drop(state);
            if joined {
                self.ready.notify_one();
            }
            for (sender, answer) in answers {
                let _ = sender.send(answer);
            }
        }
    }
}

/// Runs what [`State::next`] took, skipping what its caller stopped waiting for before it
/// started (past its budget), and returns each caller's answer, to be sent once the slot is
/// given back.
fn run(next: Vec<Queued>) -> Vec<(oneshot::Sender<Answer>, Answer)> {
    let mut live = next.into_iter().filter(|q| !q.answer.is_closed());
    let Some(first) = live.next() else { return Vec::new() };
    let (run, first_item) = match first.work {
        Work::Job(job) => {
            let answer = catch_unwind(AssertUnwindSafe(job)).map_err(|_| OffloadError::Panicked);
            return vec![(first.answer, answer)];
        }
        Work::Batched { item, deadline, run, .. } => (run, (item, deadline)),
    };
    let mut items = vec![first_item];
    let mut answers = vec![first.answer];
    for queued in live {
        if let Work::Batched { item, deadline, .. } = queued.work {
            items.push((item, deadline));
            answers.push(queued.answer);
        }
    }
    match catch_unwind(AssertUnwindSafe(|| run(items))) {
        Ok(results) => {
            let mut results = results.into_iter();
            answers.into_iter().map(|answer| (answer, results.next().ok_or(OffloadError::Panicked))).collect()
        }
        Err(_) => answers.into_iter().map(|answer| (answer, Err(OffloadError::Panicked))).collect(),
    }
}

impl State {
    /// The work to run next, from the tenant whose turn it is (counted as running once): a
    /// job, or a batched item with the tenant's other waiting items of its key.
    fn next(&mut self, per_tenant: usize) -> Option<(TenantId, Vec<Queued>)> {
        while let Some(tenant) = self.turns.pop_front() {
            let Some(queued) = self.tenants.get_mut(&tenant) else { continue };
            queued.in_turn = false;
            let Some(first) = queued.waiting.pop_front() else { continue };
            let key = first.work.key();
            let mut next = vec![first];
            if key.is_some() && !queued.waiting.is_empty() {
                let mut rest = VecDeque::with_capacity(queued.waiting.len());
                for waiting in queued.waiting.drain(..) {
                    if next.len() < MAX_BATCH && waiting.work.key() == key {
                        next.push(waiting);
                    } else {
                        rest.push_back(waiting);
                    }
                }
                queued.waiting = rest;
            }
            queued.running += 1;
            self.take_turn(tenant, per_tenant);
            return Some((tenant, next));
        }
        None
    }

    /// Puts `tenant` in line if it has a job waiting and a free slot (and is not in line
    /// yet); forgets a tenant with nothing in the pool. True if it joined the line.
    fn take_turn(&mut self, tenant: TenantId, per_tenant: usize) -> bool {
        let Some(queued) = self.tenants.get_mut(&tenant) else { return false };
        if queued.waiting.is_empty() && queued.running == 0 {
            self.tenants.remove(&tenant);
            return false;
        }
        if queued.in_turn || queued.waiting.is_empty() || queued.running >= per_tenant {
            return false;
        }
        queued.in_turn = true;
        self.turns.push_back(tenant);
        true
    }
}

#[async_trait]
impl Offload for TenantPool {
    async fn run(&self, tenant: TenantId, budget: Duration, job: Job) -> Result<Box<dyn Any + Send>, OffloadError> {
        let received = self.shared.submit(tenant, Work::Job(job))?;
        answered(budget, received).await
    }

    async fn run_batched(
        &self,
        tenant: TenantId,
        budget: Duration,
        key: usize,
        item: Box<dyn Any + Send>,
        run: BatchRun,
    ) -> Result<Box<dyn Any + Send>, OffloadError> {
        let deadline = Instant::now() + budget;
        let received = self.shared.submit(tenant, Work::Batched { key, item, deadline, run })?;
        answered(budget, received).await
    }
}

/// The pool's answer, or `TimedOut` after `budget`.
async fn answered(budget: Duration, received: oneshot::Receiver<Answer>) -> Answer {
    match tokio::time::timeout(budget, received).await {
        Ok(Ok(answer)) => answer,
        // The thread dropped the job's sender without answering: only at shutdown.
        Ok(Err(_)) => Err(OffloadError::Panicked),
        Err(_) => Err(OffloadError::TimedOut),
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
        let pool = TenantPool::new("test", 2, 1, 4).unwrap();
        let out = pool.run(tenant(), Duration::from_secs(5), job(|| 41 + 1)).await.unwrap();
        assert_eq!(*out.downcast::<i32>().unwrap(), 42);
        let panicked = pool.run(tenant(), Duration::from_secs(5), job(|| panic!("inside a job"))).await;
        assert_eq!(panicked.err(), Some(OffloadError::Panicked));
    }

    #[tokio::test]
    async fn a_job_past_its_budget_is_answered_and_keeps_only_its_tenants_share() {
        let pool = Arc::new(TenantPool::new("test", 2, 1, 8).unwrap());
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
        let pool = Arc::new(TenantPool::new("test", 1, 1, 2).unwrap());
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
        while pool.shared.lock().tenants.get(&hostile).map(|t| t.waiting.len() + t.running) != Some(2) {
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

    #[tokio::test]
    async fn a_caller_answered_finds_its_slot_free() {
        // With room for one job per tenant, a caller that submits as soon as it is answered
        // is never refused: the slot is given back before the answer is sent.
        let pool = TenantPool::new("test", 1, 1, 1).unwrap();
        let who = tenant();
        for n in 0..500 {
            let out = pool.run(who, Duration::from_secs(5), job(move || n)).await.unwrap();
            assert_eq!(*out.downcast::<i32>().unwrap(), n);
        }
        assert!(pool.shared.lock().tenants.is_empty());
    }

    #[tokio::test]
    async fn tenants_take_turns_for_a_thread() {
        let pool = Arc::new(TenantPool::new("test", 1, 1, 8).unwrap());
        let (first, second) = (tenant(), tenant());
        let order = Arc::new(Mutex::new(Vec::new()));
        let (release, wait) = mpsc::channel::<()>();
        let mut runs = Vec::new();
        let mut submit = |tenant: TenantId, label: &'static str, wait: Option<mpsc::Receiver<()>>| {
            let (pool, order) = (pool.clone(), order.clone());
            runs.push(tokio::spawn(async move {
                let job = job(move || {
                    if let Some(wait) = wait {
                        wait.recv().ok();
                    }
                    order.lock().unwrap().push(label);
                });
                pool.run(tenant, Duration::from_secs(30), job).await
            }));
        };
        // The first tenant's job holds the one thread; two more of its jobs wait...
        submit(first, "first 1", Some(wait));
        while pool.shared.lock().tenants.get(&first).map(|t| t.running) != Some(1) {
            tokio::task::yield_now().await;
        }
        submit(first, "first 2", None);
        submit(first, "first 3", None);
        // ...and the second tenant's job, submitted last, runs right after the running one.
        submit(second, "second 1", None);
        while pool.shared.lock().tenants.get(&second).map(|t| t.waiting.len()) != Some(1) {
            tokio::task::yield_now().await;
        }
        release.send(()).unwrap();
        for run in runs {
            run.await.unwrap().unwrap();
        }
        assert_eq!(*order.lock().unwrap(), ["first 1", "second 1", "first 2", "first 3"]);
        assert!(pool.shared.lock().tenants.is_empty(), "a tenant with nothing in the pool is forgotten");
    }

    #[tokio::test]
    async fn a_tenants_waiting_items_of_one_key_run_in_one_batch() {
        let pool = Arc::new(TenantPool::new("test", 1, 1, 64).unwrap());
        let (tenant, other) = (tenant(), tenant());
        let (release, wait) = mpsc::channel::<()>();
        // The tenant's first job holds the one thread while the rest queue up.
        let holding = {
            let pool = pool.clone();
            tokio::spawn(async move { pool.run(tenant, Duration::from_secs(30), job(move || wait.recv().ok())).await })
        };
        while pool.shared.lock().tenants.get(&tenant).map(|t| t.running) != Some(1) {
            tokio::task::yield_now().await;
        }
        let batches = Arc::new(Mutex::new(Vec::new()));
        let mut calls = Vec::new();
        for (who, key, n) in [(tenant, 1, 10), (tenant, 2, 20), (tenant, 1, 11), (other, 1, 30), (tenant, 1, 12)] {
            let (pool, batches) = (pool.clone(), batches.clone());
            let run = move |items: Vec<(u32, Instant)>| {
                let ns: Vec<u32> = items.iter().map(|(n, _)| *n).collect();
                batches.lock().unwrap().push(ns.clone());
                ns.into_iter().map(|n| n * 2).collect::<Vec<_>>()
            };
            let waiting =
                |pool: &TenantPool| pool.shared.lock().tenants.values().map(|t| t.waiting.len()).sum::<usize>();
            let queued = waiting(&pool);
            let submitting = pool.clone();
            calls.push(tokio::spawn(async move {
                let offload: &dyn Offload = &*submitting;
                offload.call_batched(who, Duration::from_secs(30), key, n, run).await
            }));
            while waiting(&pool) == queued {
                tokio::task::yield_now().await;
            }
        }
        release.send(()).unwrap();
        holding.await.unwrap().unwrap();
        let answers: Vec<u32> =
            futures::future::join_all(calls).await.into_iter().map(|r| r.unwrap().unwrap()).collect();
        assert_eq!(answers, [20, 40, 22, 60, 24], "each caller gets its own item's result");
        // The tenant's three items of key 1 ran together, in order; another key, and another
        // tenant's item of the same key, ran apart (the other tenant's in its turn).
        assert_eq!(*batches.lock().unwrap(), [vec![30], vec![10, 11, 12], vec![20]]);
    }
}
