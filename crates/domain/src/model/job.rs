//! The one job queue's records: a [`Job`] of any kind, and the model versions that training
//! jobs produce.
//!
//! Every asynchronous job (an audit export, a guard or anomaly detector training, a discovery
//! clustering) is one row of one queue, keyed by [`JobKind`], with one lease protocol (see
//! `ports::JobQueue`). What a kind is asked to do is its `params`, what it has produced its
//! `state`, both JSON the kind defines; each kind's typed record (`ExportJob`, `GuardTask`,
//! `AnomalyTask`, `ClusterJob`) is a [`JobView`] of a job, implemented beside the record in
//! the kind's module (which imports this one, never the other way). A new job kind is a
//! variant here, a `JobView` beside its typed record, and a handler in the server's worker.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::error::{DomainError, Result};
use crate::ids::TenantId;
use crate::model::audit::Actor;

/// States of an asynchronous job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum JobStatus {
    Queued,
    Running,
    Completed,
    Failed,
    Cancelled,
}

impl JobStatus {
    pub const ALL: [JobStatus; 5] =
        [JobStatus::Queued, JobStatus::Running, JobStatus::Completed, JobStatus::Failed, JobStatus::Cancelled];

    pub fn as_str(self) -> &'static str {
        match self {
            JobStatus::Queued => "queued",
            JobStatus::Running => "running",
            JobStatus::Completed => "completed",
            JobStatus::Failed => "failed",
            JobStatus::Cancelled => "cancelled",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|j| j.as_str() == s)
    }

    pub fn is_finished(self) -> bool {
        matches!(self, JobStatus::Completed | JobStatus::Failed | JobStatus::Cancelled)
    }
}

/// A worker's hold on a running job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lease {
    pub token: Uuid,
    pub until: OffsetDateTime,
}

string_enum!(
    /// What a job does.
    JobKind {
        Export => "export",
        GuardTraining => "guard_training",
        AnomalyTraining => "anomaly_training",
        Clustering => "clustering",
        Replay => "replay",
    }
);

/// One job of the queue.
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    pub id: Uuid,
    pub tenant_id: TenantId,
    pub kind: JobKind,
    pub requested_by: Actor,
    pub status: JobStatus,
    /// From 0 to 1.
    pub progress: f64,
    /// Why it failed.
    pub error: Option<String>,
    /// What it was asked to do, as its kind defines.
    pub params: Value,
    /// What it has produced, as its kind defines: counters while it runs, its outcome once
    /// completed; `null` before.
    pub state: Value,
    pub created_at: OffsetDateTime,
    pub started_at: Option<OffsetDateTime>,
    pub finished_at: Option<OffsetDateTime>,
    /// When the job, with its chunks, is deleted; `None`: kept.
    pub expires_at: Option<OffsetDateTime>,
    /// How many times a worker has claimed it.
    pub attempts: i32,
    /// The claim of the worker running it, and until when it holds.
    pub lease: Option<Lease>,
}

impl Job {
    /// A queued job of `kind`, created at `at`.
    pub fn queued(
        id: Uuid,
        tenant_id: TenantId,
        kind: JobKind,
        requested_by: Actor,
        params: Value,
        at: OffsetDateTime,
    ) -> Self {
        Self {
            id,
            tenant_id,
            kind,
            requested_by,
            status: JobStatus::Queued,
            progress: 0.0,
            error: None,
            params,
            state: Value::Null,
            created_at: at,
            started_at: None,
            finished_at: None,
            expires_at: None,
            attempts: 0,
            lease: None,
        }
    }

    /// `params[key]` read as `T`.
    pub(crate) fn param<T: DeserializeOwned>(&self, key: &str) -> Result<T> {
        read(self, "params", &self.params[key], key)
    }

    /// `state[key]` read as `T`; `null` (before the job has written it) reads as `T`'s null.
    pub(crate) fn state<T: DeserializeOwned>(&self, key: &str) -> Result<T> {
        read(self, "state", &self.state[key], key)
    }
}

pub(crate) fn read<T: DeserializeOwned>(job: &Job, part: &str, value: &Value, key: &str) -> Result<T> {
    T::deserialize(value).map_err(|e| {
        DomainError::Internal(format!("unreadable {part}.{key} of {} job {}: {e}", job.kind.as_str(), job.id))
    })
}

/// How a worker ends a job it holds (`JobQueue::finish_job`).
#[derive(Debug, Clone, PartialEq)]
pub struct JobEnd {
    /// `Completed` or `Failed`.
    pub status: JobStatus,
    pub error: Option<String>,
    /// Replaces the progress; `None` keeps it.
    pub progress: Option<f64>,
    /// Replaces the state; `None` keeps it.
    pub state: Option<Value>,
    pub at: OffsetDateTime,
    /// When the job is to be deleted; `None`: kept.
    pub expires_at: Option<OffsetDateTime>,
}

impl JobEnd {
    /// Completed at `at` with progress 1 and `state`.
    pub fn completed(at: OffsetDateTime, state: Value) -> Self {
        Self {
            status: JobStatus::Completed,
            error: None,
            progress: Some(1.0),
            state: Some(state),
            at,
            expires_at: None,
        }
    }

    /// Failed at `at` for `error`, its progress and state kept.
    pub fn failed(at: OffsetDateTime, error: impl Into<String>) -> Self {
        Self { status: JobStatus::Failed, error: Some(error.into()), progress: None, state: None, at, expires_at: None }
    }
}

/// A kind's typed record, read from and written as a [`Job`].
pub trait JobView: Sized {
    const KIND: JobKind;
    /// `Internal` when the job is of another kind or its JSON does not read.
    fn from_job(job: Job) -> Result<Self>;
    fn to_job(&self) -> Job;
}

/// Checks the kind: a job read through another kind's view is a bug, not bad input.
pub(crate) fn expect_kind(job: &Job, kind: JobKind) -> Result<()> {
    if job.kind == kind {
        Ok(())
    } else {
        Err(DomainError::Internal(format!("job {} is a {} job, not {}", job.id, job.kind.as_str(), kind.as_str())))
    }
}

/// The common columns of a typed job record as a [`Job`] of `kind`.
macro_rules! job_of {
    ($view:expr, $kind:expr, $params:expr, $state:expr, $expires:expr) => {
        Job {
            id: $view.id.0,
            tenant_id: $view.tenant_id,
            kind: $kind,
            requested_by: $view.requested_by.clone(),
            status: $view.status,
            progress: $view.progress,
            error: $view.error.clone(),
            params: $params,
            state: $state,
            created_at: $view.created_at,
            started_at: $view.started_at,
            finished_at: $view.finished_at,
            expires_at: $expires,
            attempts: $view.attempts,
            lease: $view.lease,
        }
    };
}
pub(crate) use job_of;

/// A typed job record of type `$ty` (after checking the kind) from `$job`'s common columns,
/// its id wrapped in `$id`, and the kind's own `fields` (read from the job's params and
/// state before its columns move).
macro_rules! view_of {
    ($job:ident, $ty:ident, $id:ident { $($field:ident: $value:expr),* $(,)? }) => {{
        $crate::model::job::expect_kind(&$job, <$ty as JobView>::KIND)?;
        Ok($ty {
            $($field: $value,)*
            id: $id($job.id),
            tenant_id: $job.tenant_id,
            requested_by: $job.requested_by,
            status: $job.status,
            progress: $job.progress,
            error: $job.error,
            created_at: $job.created_at,
            started_at: $job.started_at,
            finished_at: $job.finished_at,
            attempts: $job.attempts,
            lease: $job.lease,
        })
    }};
}
pub(crate) use view_of;

/// A training's state once it produced `version`.
pub(crate) fn model_state(version: Option<i32>) -> Value {
    version.map_or(Value::Null, |v| json!({ "model_version": v }))
}

string_enum!(
    /// What a stored model is the model of.
    ModelKind {
        Guard => "guard",
        Anomaly => "anomaly",
    }
);

/// One version of a tenant's model of one kind, without the model itself.
///
/// A tenant's versions of a kind are numbered 1, 2, 3… in the order stored; at most one is
/// active, and none (version 0) means the kind's default (the built-in guard model, no
/// anomaly detector).
#[derive(Debug, Clone, PartialEq)]
pub struct ModelVersion {
    pub tenant_id: TenantId,
    pub kind: ModelKind,
    pub version: i32,
    pub active: bool,
    /// What the kind records of the version (metrics, thresholds, the job that trained it).
    pub info: Value,
}

impl ModelVersion {
    /// A version whose info is `info`'s JSON form.
    pub fn of<T: Serialize>(
        tenant_id: TenantId,
        kind: ModelKind,
        version: i32,
        active: bool,
        info: &T,
    ) -> Result<Self> {
        let info = serde_json::to_value(info).map_err(DomainError::internal)?;
        Ok(Self { tenant_id, kind, version, active, info })
    }

    /// The info read as `T`.
    pub fn read<T: DeserializeOwned>(&self) -> Result<T> {
        T::deserialize(&self.info).map_err(|e| {
            DomainError::Internal(format!(
                "unreadable info of {} model version {}: {e}",
                self.kind.as_str(),
                self.version
            ))
        })
    }
}

/// A model version with the model (the kind's own encoding).
#[derive(Debug, Clone, PartialEq)]
pub struct StoredModel {
    pub version: ModelVersion,
    pub model: Vec<u8>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{AnomalyTaskId, ClusterJobId, ExportJobId, GuardTaskId};
    use crate::model::ActorType;
    use crate::model::{
        AnomalyTask, AuditFilter, ClusterJob, ClusterSummary, ExportFormat, ExportJob, GuardExample, GuardTask,
    };

    fn at() -> OffsetDateTime {
        OffsetDateTime::from_unix_timestamp(1_700_000_000).unwrap()
    }

    #[test]
    fn every_kind_reads_back_what_it_writes() {
        let tenant = TenantId(Uuid::now_v7());
        let actor = Actor::new(ActorType::User, "u");
        let export = ExportJob {
            id: ExportJobId(Uuid::now_v7()),
            tenant_id: tenant,
            requested_by: actor.clone(),
            format: ExportFormat::Csv,
            filters: AuditFilter { max_seq: Some(7), ..AuditFilter::default() },
            status: JobStatus::Completed,
            progress: 1.0,
            rows: 3,
            bytes: 99,
            error: None,
            created_at: at(),
            started_at: Some(at()),
            finished_at: Some(at()),
            expires_at: Some(at()),
            chunks: 2,
            attempts: 1,
            lease: None,
        };
        assert_eq!(ExportJob::from_job(export.to_job()).unwrap(), export);
        let guard = GuardTask {
            id: GuardTaskId(Uuid::now_v7()),
            tenant_id: tenant,
            requested_by: actor.clone(),
            status: JobStatus::Queued,
            progress: 0.0,
            error: None,
            model_version: None,
            examples: 2,
            created_at: at(),
            started_at: None,
            finished_at: None,
            attempts: 0,
            lease: None,
        };
        let examples = vec![GuardExample { text: "hi".into(), label: crate::model::GuardLabel::Benign }; 2];
        let job = guard.to_job_with(&examples);
        assert_eq!(GuardTask::examples_of(&job).unwrap(), examples);
        assert_eq!(GuardTask::from_job(job).unwrap(), guard);
        let done = GuardTask { model_version: Some(3), status: JobStatus::Completed, ..guard };
        assert_eq!(GuardTask::from_job(done.to_job()).unwrap(), done);
        let anomaly = AnomalyTask {
            id: AnomalyTaskId(Uuid::now_v7()),
            tenant_id: tenant,
            requested_by: actor.clone(),
            status: JobStatus::Failed,
            progress: 0.5,
            error: Some("x".into()),
            model_version: None,
            window_days: 14,
            created_at: at(),
            started_at: Some(at()),
            finished_at: Some(at()),
            attempts: 2,
            lease: None,
        };
        assert_eq!(AnomalyTask::from_job(anomaly.to_job()).unwrap(), anomaly);
        let cluster = ClusterJob {
            id: ClusterJobId(Uuid::now_v7()),
            tenant_id: tenant,
            requested_by: actor,
            status: JobStatus::Completed,
            progress: 1.0,
            error: None,
            summary: Some(ClusterSummary { events: 5, ..ClusterSummary::default() }),
            created_at: at(),
            started_at: Some(at()),
            finished_at: Some(at()),
            attempts: 1,
            lease: None,
        };
        assert_eq!(ClusterJob::from_job(cluster.to_job()).unwrap(), cluster);
    }

    #[test]
    fn a_job_read_through_another_kind_is_an_internal_error() {
        let job = Job::queued(
            Uuid::now_v7(),
            TenantId(Uuid::now_v7()),
            JobKind::Clustering,
            Actor::new(ActorType::User, "u"),
            json!({}),
            at(),
        );
        assert!(matches!(ExportJob::from_job(job), Err(DomainError::Internal(_))));
    }
}
