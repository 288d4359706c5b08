//! A database upgraded to the job queue keeps its jobs and versions: the rows each backend
//! writes into the tables the queue replaced (export_jobs and export_chunks, guard_tasks
//! and guard_models, anomaly_tasks and anomaly_models, discovery_jobs), as records, and
//! the check that the upgraded store answers them through `JobQueue` and `ModelRegistry`.
//! Each backend's test renders [`OldJobs`] as SQL of its own schema (the types differ), runs
//! the migration, and calls [`assert_upgraded`].
#![expect(clippy::unwrap_used, clippy::expect_used, reason = "test code: a failed unwrap is a failed test")]

use agentgov_domain::ids::{AnomalyTaskId, ClusterJobId, ExportJobId, GuardTaskId, TenantId};
use agentgov_domain::model::{
    Actor, ActorType, AnomalyModelRecord, AnomalyTask, AuditFilter, ClusterJob, ClusterSummary, ExportFormat,
    ExportJob, GuardExample, GuardModelInfo, GuardModelRecord, GuardTask, JobKind, JobStatus, JobView, Lease,
    ModelKind,
};
use agentgov_domain::ports::Store;
use uuid::Uuid;

use crate::fixtures::{guard_examples, new_anomaly_model, new_guard_model, precise};

/// Jobs and versions of one tenant as the tables before the job queue held them, with
/// every kind queued or running and finished, microsecond timestamps and non-ASCII text.
pub struct OldJobs {
    pub tenant: TenantId,
    /// Completed, with its file in `chunks`, and expiring.
    pub export_done: ExportJob,
    pub export_queued: ExportJob,
    pub chunks: Vec<(i32, Vec<u8>)>,
    /// Completed, having produced version 1.
    pub guard_done: GuardTask,
    /// Running under a lease, sent with `examples`.
    pub guard_running: GuardTask,
    pub examples: Vec<GuardExample>,
    /// Versions 1 (inactive) and 2 (active).
    pub guard_models: [GuardModelRecord; 2],
    pub anomaly_failed: AnomalyTask,
    /// Version 1, active.
    pub anomaly_model: AnomalyModelRecord,
    pub cluster_done: ClusterJob,
    pub cluster_queued: ClusterJob,
}

fn actor(seed: u128) -> Actor {
    Actor::new(ActorType::User, Uuid::from_u128(seed))
}

/// A v7-shaped id, ordered by `n`.
fn id(n: u128) -> Uuid {
    Uuid::from_u128((0x0190_0000_0000_7000_8000_0000_0000_0000) + n)
}

pub fn old_jobs(tenant: TenantId) -> OldJobs {
    let export = |n: u128, format, status| ExportJob {
        id: ExportJobId(id(n)),
        tenant_id: tenant,
        requested_by: actor(n),
        format,
        filters: AuditFilter {
            event_type: Some("policy.décision".into()),
            max_seq: Some(42),
            ..AuditFilter::default()
        },
        status,
        progress: 0.0,
        rows: 0,
        bytes: 0,
        error: None,
        created_at: precise(1_000, 1),
        started_at: None,
        finished_at: None,
        expires_at: None,
        chunks: 0,
        attempts: 0,
        lease: None,
    };
    let export_done = ExportJob {
        progress: 1.0,
        rows: 42,
        bytes: 5,
        started_at: Some(precise(1_001, 2)),
        finished_at: Some(precise(1_002, 3)),
        expires_at: Some(precise(90_000, 4)),
        chunks: 2,
        attempts: 1,
        ..export(1, ExportFormat::Csv, JobStatus::Completed)
    };
    let guard = |n: u128, status| GuardTask {
        id: GuardTaskId(id(n)),
        tenant_id: tenant,
        requested_by: actor(n),
        status,
        progress: 0.0,
        error: None,
        model_version: None,
        examples: 0,
        created_at: precise(2_000, 5),
        started_at: None,
        finished_at: None,
        attempts: 0,
        lease: None,
    };
    let guard_done = GuardTask {
        progress: 1.0,
        model_version: Some(1),
        started_at: Some(precise(2_001, 6)),
        finished_at: Some(precise(2_002, 7)),
        attempts: 1,
        ..guard(3, JobStatus::Completed)
    };
    let examples = guard_examples();
    let guard_running = GuardTask {
        progress: 0.5,
        examples: examples.len() as i64,
        started_at: Some(precise(2_003, 8)),
        attempts: 2,
        lease: Some(Lease { token: Uuid::from_u128(77), until: precise(2_100, 9) }),
        ..guard(4, JobStatus::Running)
    };
    let mut guard_models = [new_guard_model(tenant, Some(guard_done.id), 1), new_guard_model(tenant, None, 2)];
    for (i, model) in guard_models.iter_mut().enumerate() {
        model.info.version = i as i32 + 1;
        model.info.active = i == 1;
    }
    let anomaly_failed = AnomalyTask {
        id: AnomalyTaskId(id(5)),
        tenant_id: tenant,
        requested_by: actor(5),
        status: JobStatus::Failed,
        progress: 0.25,
        error: Some("out of memory: 0 of 3 ✗".into()),
        model_version: None,
        window_days: 14,
        created_at: precise(3_000, 10),
        started_at: Some(precise(3_001, 11)),
        finished_at: Some(precise(3_002, 12)),
        attempts: 3,
        lease: None,
    };
    let mut anomaly_model = new_anomaly_model(tenant, Some(anomaly_failed.id), 3, 4_096);
    anomaly_model.info.version = 1;
    anomaly_model.info.active = true;
    let cluster = |n: u128, status| ClusterJob {
        id: ClusterJobId(id(n)),
        tenant_id: tenant,
        requested_by: actor(n),
        status,
        progress: 0.0,
        error: None,
        summary: None,
        created_at: precise(4_000, 13),
        started_at: None,
        finished_at: None,
        attempts: 0,
        lease: None,
    };
    let cluster_done = ClusterJob {
        progress: 1.0,
        summary: Some(ClusterSummary { events: 1_000, noise_events: 7, candidates_created: 3, ..Default::default() }),
        started_at: Some(precise(4_001, 14)),
        finished_at: Some(precise(4_002, 15)),
        attempts: 1,
        ..cluster(6, JobStatus::Completed)
    };
    OldJobs {
        tenant,
        export_done,
        export_queued: export(2, ExportFormat::Jsonl, JobStatus::Queued),
        chunks: vec![(0, b"a,b\n".to_vec()), (1, vec![0xff])],
        guard_done,
        guard_running,
        examples,
        guard_models,
        anomaly_failed,
        anomaly_model,
        cluster_done,
        cluster_queued: cluster(7, JobStatus::Queued),
    }
}

async fn job<T: JobView>(store: &dyn Store, id: Uuid) -> T {
    T::from_job(store.get_job(id).await.unwrap().expect("the job moved over")).unwrap()
}

/// Every job, chunk and version of `old` reads back through the job queue and the model
/// registry as it was, and the queue goes on from there.
pub async fn assert_upgraded(store: &dyn Store, old: &OldJobs) {
    let t = old.tenant;
    assert_eq!(job::<ExportJob>(store, old.export_done.id.0).await, old.export_done);
    assert_eq!(job::<ExportJob>(store, old.export_queued.id.0).await, old.export_queued);
    for (index, data) in &old.chunks {
        assert_eq!(store.job_chunk(t, old.export_done.id.0, *index).await.unwrap().as_ref(), Some(data));
    }
    assert_eq!(job::<GuardTask>(store, old.guard_done.id.0).await, old.guard_done);
    assert_eq!(job::<GuardTask>(store, old.guard_running.id.0).await, old.guard_running);
    let running = store.get_job(old.guard_running.id.0).await.unwrap().unwrap();
    assert_eq!(GuardTask::examples_of(&running).unwrap(), old.examples, "the examples sent with it");
    assert_eq!(job::<AnomalyTask>(store, old.anomaly_failed.id.0).await, old.anomaly_failed);
    assert_eq!(job::<ClusterJob>(store, old.cluster_done.id.0).await, old.cluster_done);
    assert_eq!(job::<ClusterJob>(store, old.cluster_queued.id.0).await, old.cluster_queued);

    let guard: Vec<GuardModelInfo> = store
        .list_models(t, ModelKind::Guard)
        .await
        .unwrap()
        .into_iter()
        .map(|v| GuardModelInfo::from_version(v).unwrap())
        .collect();
    let expected: Vec<GuardModelInfo> = old.guard_models.iter().rev().map(|m| m.info.clone()).collect();
    assert_eq!(guard, expected, "newest first, as they were");
    assert_eq!(store.active_model(t, ModelKind::Guard).await.unwrap(), 2);
    for model in &old.guard_models {
        let stored = store.get_model(t, ModelKind::Guard, model.info.version).await.unwrap().unwrap();
        assert_eq!(&GuardModelRecord::from_stored(stored).unwrap(), model);
    }
    let stored = store.get_model(t, ModelKind::Anomaly, 1).await.unwrap().unwrap();
    assert_eq!(AnomalyModelRecord::from_stored(stored).unwrap(), old.anomaly_model);
    assert_eq!(store.active_model(t, ModelKind::Anomaly).await.unwrap(), 1);

    // The queue goes on: the queued jobs are claimed, the active ones counted, and the next
    // version numbered after the moved ones.
    let active = store.active_job(t, JobKind::GuardTraining).await.unwrap().map(|j| j.id);
    assert_eq!(active, Some(old.guard_running.id.0));
    let now = precise(5_000, 0);
    let token = Uuid::now_v7();
    let kinds = [JobKind::Export, JobKind::Clustering];
    let claimed = store.claim_job(&kinds, now, token, precise(5_060, 0)).await.unwrap().unwrap();
    assert_eq!(claimed.id, old.export_queued.id.0, "the oldest queued");
    let token = Uuid::now_v7();
    let lease_over = precise(2_100, 10);
    let taken = store.claim_job(&[JobKind::GuardTraining], lease_over, token, now).await.unwrap().unwrap();
    assert_eq!((taken.id, taken.attempts), (old.guard_running.id.0, 3), "its lease ran out: taken over");
    let next = new_guard_model(t, Some(old.guard_running.id), 9).to_stored().unwrap();
    assert_eq!(store.complete_training(taken.id, token, now, &next).await.unwrap(), 3);
}
