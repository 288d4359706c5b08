//! A database upgraded to the job queue keeps its jobs and versions: the rows each backend
//! writes into the tables the queue replaced (export_jobs and export_chunks, guard_tasks
//! and guard_models, anomaly_tasks and anomaly_models, discovery_jobs), as records, and
//! the check that the upgraded store answers them through `JobQueue` and `ModelRegistry`.
//! Each backend's test renders [`OldJobs`] as SQL of its own schema (the types differ), runs
//! the migration, and calls [`assert_upgraded`].
#![expect(clippy::unwrap_used, clippy::expect_used, reason = "test code: a failed unwrap is a failed test")]

use agentgov_domain::ids::{AnomalyTaskId, ClusterJobId, ExportJobId, GuardTaskId, TenantId};
use agentgov_domain::model::audit::unix_micros;
use agentgov_domain::model::{
    Actor, ActorType, AnomalyModelRecord, AnomalyTask, AuditFilter, ClusterJob, ClusterSummary, ExportFormat,
    ExportJob, GuardExample, GuardModelInfo, GuardModelRecord, GuardTask, JobKind, JobStatus, JobView, Lease,
    ModelKind,
};
use agentgov_domain::ports::Store;
use time::OffsetDateTime;
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
fn v7(n: u128) -> Uuid {
    Uuid::from_u128((0x0190_0000_0000_7000_8000_0000_0000_0000) + n)
}

pub fn old_jobs(tenant: TenantId) -> OldJobs {
    let export = |n: u128, format, status| ExportJob {
        id: ExportJobId(v7(n)),
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
        id: GuardTaskId(v7(n)),
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
        id: AnomalyTaskId(v7(5)),
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
        id: ClusterJobId(v7(n)),
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

/// The SQL of a backend, for writing rows of the old tables by hand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// Timestamps as unix microseconds, booleans 0 or 1, blobs `X'…'`.
    Sqlite,
    /// `TIMESTAMPTZ`, `BOOLEAN`, `BYTEA`.
    Postgres,
}

impl Dialect {
    fn directory(self) -> &'static str {
        match self {
            Self::Sqlite => "sqlite",
            Self::Postgres => "postgres",
        }
    }
}

/// The versions of the backend's migrations after `version` (as diesel names them, the
/// dashes dropped), newest first: what a test reverts to reach `version`. Read from the
/// migrations directory, so a new migration does not have to be listed by hand.
pub fn migrations_after(dialect: Dialect, version: &str) -> Vec<String> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../migrations").join(dialect.directory());
    let mut later: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| {
            let name = entry.unwrap().file_name().into_string().unwrap();
            name.split('_').next().unwrap().replace('-', "")
        })
        .filter(|v| v.as_str() > version)
        .collect();
    later.sort_unstable_by(|a, b| b.cmp(a));
    later
}

impl Dialect {
    fn at(self, t: OffsetDateTime) -> String {
        match self {
            Dialect::Sqlite => unix_micros(t).to_string(),
            Dialect::Postgres => format!("(TIMESTAMPTZ 'epoch' + {} * INTERVAL '1 microsecond')", unix_micros(t)),
        }
    }

    fn blob(self, bytes: &[u8]) -> String {
        let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        match self {
            Dialect::Sqlite => format!("X'{hex}'"),
            Dialect::Postgres => format!("'\\x{hex}'::bytea"),
        }
    }

    fn boolean(self, b: bool) -> String {
        match self {
            Dialect::Sqlite => i32::from(b).to_string(),
            Dialect::Postgres => b.to_string(),
        }
    }

    /// `column` (a timestamp) as unix microseconds.
    fn micros(self, column: &str) -> String {
        match self {
            Dialect::Sqlite => column.to_owned(),
            Dialect::Postgres => format!("(extract(epoch FROM {column}) * 1000000)::bigint"),
        }
    }
}

/// After the migration is reverted: each query (answering one BIGINT `n`) with the count it
/// must answer, and what it checks. The upgraded store was used as [`assert_upgraded`] uses
/// it (a version trained, an export claimed).
pub fn reverted_counts(old: &OldJobs, dialect: Dialect) -> Vec<(String, i64, &'static str)> {
    let count = |table: &str| format!("SELECT count(*) AS n FROM {table}");
    let tenant = old.tenant.0.hyphenated();
    vec![
        (count("export_jobs"), 2, "exports"),
        (count("export_chunks"), 2, "the export's file"),
        (count("guard_tasks"), 2, "trainings"),
        (count("guard_models"), 3, "versions, the one trained since included"),
        (
            format!(
                "SELECT {} AS n FROM guard_models WHERE version = 1 AND tenant_id = '{tenant}'",
                dialect.micros("trained_at")
            ),
            unix_micros(old.guard_models[0].info.trained_at),
            "trained_at, to the microsecond",
        ),
        (count("anomaly_tasks"), 1, "detector trainings"),
        (count("anomaly_models"), 1, "detector versions"),
        (count("discovery_jobs"), 2, "clusterings"),
        ("SELECT count(*) AS n FROM export_jobs WHERE status = 'running'".to_owned(), 1, "the export claimed since"),
    ]
}

/// After the migration is reverted: the query answering the running training's
/// `training_examples` (TEXT), which must read back as `old.examples`.
pub fn reverted_examples_query(old: &OldJobs) -> String {
    format!("SELECT training_examples FROM guard_tasks WHERE id = '{}'", old.guard_running.id.0.hyphenated())
}

fn text(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

fn opt_text(s: Option<&str>) -> String {
    s.map_or("NULL".into(), text)
}

fn id(u: Uuid) -> String {
    text(&u.hyphenated().to_string())
}

macro_rules! json {
    ($value:expr) => {
        text(&serde_json::to_string(&$value).unwrap())
    };
}

fn opt_int(v: Option<i32>) -> String {
    v.map_or("NULL".into(), |v| v.to_string())
}

/// The rows of `old` as INSERTs into the tables before the job queue, in `dialect`.
pub fn old_rows(old: &OldJobs, dialect: Dialect) -> String {
    let at = |t| dialect.at(t);
    let opt_at = |t: Option<OffsetDateTime>| t.map_or("NULL".into(), |t| dialect.at(t));
    let blob = |b: &[u8]| dialect.blob(b);
    let mut sql = String::new();
    let t = id(old.tenant.0);
    let lease = |l: Option<Lease>| (l.map_or("NULL".into(), |l| id(l.token)), l.map_or("NULL".into(), |l| at(l.until)));
    for j in [&old.export_done, &old.export_queued] {
        let (token, until) = lease(j.lease);
        sql += &format!(
            "INSERT INTO export_jobs VALUES ({}, {t}, {}, {}, {}, {}, {}, {:?}, {}, {}, {}, {}, {}, {}, {}, {}, {}, \
             {token}, {until});\n",
            id(j.id.0),
            text(j.requested_by.kind.as_str()),
            text(&j.requested_by.id),
            text(j.format.as_str()),
            json!(j.filters),
            text(j.status.as_str()),
            j.progress,
            j.rows,
            j.bytes,
            opt_text(j.error.as_deref()),
            at(j.created_at),
            opt_at(j.started_at),
            opt_at(j.finished_at),
            opt_at(j.expires_at),
            j.chunks,
            j.attempts,
        );
    }
    for (index, data) in &old.chunks {
        sql += &format!("INSERT INTO export_chunks VALUES ({}, {index}, {});\n", id(old.export_done.id.0), blob(data));
    }
    for (j, examples) in [(&old.guard_done, &[][..]), (&old.guard_running, &old.examples[..])] {
        let (token, until) = lease(j.lease);
        sql += &format!(
            "INSERT INTO guard_tasks VALUES ({}, {t}, {}, {}, {}, {:?}, {}, {}, {}, {}, {}, {}, {}, {}, {token}, \
             {until});\n",
            id(j.id.0),
            text(j.requested_by.kind.as_str()),
            text(&j.requested_by.id),
            text(j.status.as_str()),
            j.progress,
            opt_text(j.error.as_deref()),
            opt_int(j.model_version),
            j.examples,
            json!(examples),
            at(j.created_at),
            opt_at(j.started_at),
            opt_at(j.finished_at),
            j.attempts,
        );
    }
    for m in &old.guard_models {
        let i = &m.info;
        sql += &format!(
            "INSERT INTO guard_models VALUES ({t}, {}, {}, {:?}, {}, {}, {}, {}, {}, {});\n",
            i.version,
            dialect.boolean(i.active),
            i.threshold,
            i.examples,
            i.tenant_examples,
            json!(i.metrics),
            i.task_id.map_or("NULL".into(), |t| id(t.0)),
            at(i.trained_at),
            blob(&m.weights),
        );
    }
    let a = &old.anomaly_failed;
    sql += &format!(
        "INSERT INTO anomaly_tasks VALUES ({}, {t}, {}, {}, {}, {:?}, {}, {}, {}, {}, {}, {}, {}, NULL, NULL);\n",
        id(a.id.0),
        text(a.requested_by.kind.as_str()),
        text(&a.requested_by.id),
        text(a.status.as_str()),
        a.progress,
        opt_text(a.error.as_deref()),
        opt_int(a.model_version),
        a.window_days,
        at(a.created_at),
        opt_at(a.started_at),
        opt_at(a.finished_at),
        a.attempts,
    );
    let m = &old.anomaly_model;
    sql += &format!(
        "INSERT INTO anomaly_models VALUES ({t}, {}, {}, {}, {});\n",
        m.info.version,
        dialect.boolean(m.info.active),
        json!(m.info),
        text(&m.model)
    );
    for j in [&old.cluster_done, &old.cluster_queued] {
        sql += &format!(
            "INSERT INTO discovery_jobs VALUES ({}, {t}, {}, {}, {}, {:?}, {}, {}, {}, {}, {}, {}, NULL, NULL);\n",
            id(j.id.0),
            text(j.requested_by.kind.as_str()),
            text(&j.requested_by.id),
            text(j.status.as_str()),
            j.progress,
            opt_text(j.error.as_deref()),
            j.summary.map_or("NULL".into(), |s| json!(s)),
            at(j.created_at),
            opt_at(j.started_at),
            opt_at(j.finished_at),
            j.attempts,
        );
    }
    sql
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
