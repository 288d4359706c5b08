//! The Prompt Guard's records: a tenant's trained model versions, the feedback they learn
//! from, training tasks, and the hourly counts behind `/guard/stats`.

use super::job::{
    Job, JobKind, JobStatus, JobView, Lease, ModelKind, ModelVersion, StoredModel, expect_kind, job_of, model_state,
    view_of,
};
use serde::{Deserialize, Serialize};
use serde_json::json;
use time::OffsetDateTime;

use super::audit::Actor;
use crate::ids::{GuardFeedbackId, GuardTaskId, TenantId};

/// What a text is: benign, or one of the three kinds of attack.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum GuardLabel {
    Benign,
    Injection,
    Jailbreak,
    Leakage,
}

impl GuardLabel {
    pub const ALL: [GuardLabel; 4] =
        [GuardLabel::Benign, GuardLabel::Injection, GuardLabel::Jailbreak, GuardLabel::Leakage];

    pub fn as_str(self) -> &'static str {
        match self {
            GuardLabel::Benign => "benign",
            GuardLabel::Injection => "injection",
            GuardLabel::Jailbreak => "jailbreak",
            GuardLabel::Leakage => "leakage",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|l| l.as_str() == s)
    }
}

/// Which way a screened text goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum GuardDirection {
    /// A prompt on its way into a model.
    #[default]
    Input,
    /// A model's output on its way to a user or a tool.
    Output,
}

/// A score per kind of attack (0..1).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct GuardScores {
    pub injection: f64,
    pub jailbreak: f64,
    pub leakage: f64,
}

/// Precision, recall and F1 of one class on a held-out split.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct GuardClassMetrics {
    pub label: GuardLabel,
    pub precision: f64,
    pub recall: f64,
    pub f1: f64,
    /// Held-out texts of this class.
    pub support: i64,
}

/// How a model did on the held-out split of its training data, at its threshold.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct GuardMetrics {
    /// Held-out texts.
    pub holdout_size: i64,
    pub threshold: f64,
    pub classes: Vec<GuardClassMetrics>,
    /// Share of held-out attacks flagged as some attack.
    pub attack_recall: f64,
    /// Share of held-out benign texts flagged.
    pub false_positive_rate: f64,
    /// Share of held-out benign texts flagged as each kind.
    pub false_positive_rates: GuardScores,
}

/// A trained model version of a tenant (without its weights).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct GuardModelInfo {
    /// 1, 2, 3… per tenant; 0 is the built-in default, which is never stored.
    pub version: i32,
    #[serde(skip, default = "super::nil_tenant")]
    #[cfg_attr(feature = "openapi", schema(ignore))]
    pub tenant_id: TenantId,
    /// Whether validation uses this version now.
    pub active: bool,
    pub threshold: f64,
    /// Examples the model was fitted on (not held out).
    pub examples: i64,
    /// Of those, how many came from the tenant's feedback and the request.
    pub tenant_examples: i64,
    pub metrics: GuardMetrics,
    /// The training task that produced it.
    pub task_id: Option<GuardTaskId>,
    #[serde(with = "time::serde::rfc3339")]
    pub trained_at: OffsetDateTime,
}

/// A model version with its weights, as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct GuardModelRecord {
    pub info: GuardModelInfo,
    /// `detect::guard::Model::to_bytes`.
    pub weights: Vec<u8>,
}

impl GuardModelInfo {
    /// As the model registry keeps it.
    pub fn to_version(&self) -> crate::Result<ModelVersion> {
        ModelVersion::of(self.tenant_id, ModelKind::Guard, self.version, self.active, self)
    }

    pub fn from_version(v: ModelVersion) -> crate::Result<Self> {
        let info: Self = v.read()?;
        Ok(Self { version: v.version, tenant_id: v.tenant_id, active: v.active, ..info })
    }
}

impl GuardModelRecord {
    pub fn to_stored(&self) -> crate::Result<StoredModel> {
        Ok(StoredModel { version: self.info.to_version()?, model: self.weights.clone() })
    }

    pub fn from_stored(m: StoredModel) -> crate::Result<Self> {
        Ok(Self { info: GuardModelInfo::from_version(m.version)?, weights: m.model })
    }
}

/// What feedback says of a text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum GuardFeedbackKind {
    /// The text was flagged but is benign.
    FalsePositive,
    /// The text is an attack (of the feedback's category).
    Attack,
}

impl GuardFeedbackKind {
    pub fn as_str(self) -> &'static str {
        match self {
            GuardFeedbackKind::FalsePositive => "false_positive",
            GuardFeedbackKind::Attack => "attack",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [GuardFeedbackKind::FalsePositive, GuardFeedbackKind::Attack].into_iter().find(|k| k.as_str() == s)
    }
}

/// A labelled text a tenant's next model learns from.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct GuardFeedback {
    pub id: GuardFeedbackId,
    #[serde(skip)]
    #[cfg_attr(feature = "openapi", schema(ignore))]
    pub tenant_id: TenantId,
    pub kind: GuardFeedbackKind,
    /// The label the text trains as: `benign` for a false positive, else the attack's kind.
    pub label: GuardLabel,
    /// The validation it is about, when given by id.
    pub validation_id: Option<uuid::Uuid>,
    #[serde(skip)]
    #[cfg_attr(feature = "openapi", schema(ignore))]
    pub text: String,
    pub created_by: Actor,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
}

/// A labelled text sent with a training request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct GuardExample {
    #[cfg_attr(feature = "openapi", schema(pattern = r"\S"))]
    pub text: String,
    pub label: GuardLabel,
}

/// An asynchronous training run of a tenant's detector.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct GuardTask {
    #[serde(rename = "task_id")]
    pub id: GuardTaskId,
    #[serde(skip)]
    #[cfg_attr(feature = "openapi", schema(ignore))]
    pub tenant_id: TenantId,
    /// Not shown: the status endpoint takes no credentials (who asked is in the audit log).
    #[serde(skip)]
    #[cfg_attr(feature = "openapi", schema(ignore))]
    pub requested_by: Actor,
    pub status: JobStatus,
    /// From 0 to 1.
    pub progress: f64,
    pub error: Option<String>,
    /// The version it produced, once completed.
    pub model_version: Option<i32>,
    /// Examples sent with the request.
    pub examples: i64,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339::option")]
    pub started_at: Option<OffsetDateTime>,
    #[serde(with = "time::serde::rfc3339::option")]
    pub finished_at: Option<OffsetDateTime>,
    #[serde(skip)]
    #[cfg_attr(feature = "openapi", schema(ignore))]
    pub attempts: i32,
    #[serde(skip)]
    #[cfg_attr(feature = "openapi", schema(ignore))]
    pub lease: Option<Lease>,
}

/// Screenings of one tenant in one hour with one verdict and one latency bucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GuardStatsKey {
    pub tenant_id: TenantId,
    /// Unix time / 3600.
    pub hour: i64,
    pub verdict: GuardLabel,
    /// Index into `GUARD_LATENCY_BUCKETS_US`.
    pub bucket: i16,
}

/// Upper bounds (µs, inclusive) of the latency buckets behind `/guard/stats`; the last is
/// everything slower.
pub const GUARD_LATENCY_BUCKETS_US: [i64; 16] =
    [25, 50, 100, 150, 200, 300, 500, 750, 1_000, 1_500, 2_000, 3_000, 5_000, 10_000, 50_000, i64::MAX];

/// The latency bucket of `micros`.
pub fn guard_latency_bucket(micros: i64) -> i16 {
    GUARD_LATENCY_BUCKETS_US.iter().position(|&b| micros <= b).unwrap_or(GUARD_LATENCY_BUCKETS_US.len() - 1) as i16
}

impl GuardTask {
    /// The examples sent with the request, as the job's params keep them.
    pub fn examples_of(job: &Job) -> crate::Result<Vec<GuardExample>> {
        expect_kind(job, JobKind::GuardTraining)?;
        job.param("training_examples")
    }

    /// The task as a job, with the examples sent with it.
    pub fn to_job_with(&self, examples: &[GuardExample]) -> Job {
        let mut job = self.to_job();
        job.params["training_examples"] = json!(examples);
        job
    }
}

impl JobView for GuardTask {
    const KIND: JobKind = JobKind::GuardTraining;

    fn from_job(job: Job) -> crate::Result<Self> {
        view_of!(
            job,
            GuardTask,
            GuardTaskId { examples: job.param("examples")?, model_version: job.state("model_version")? }
        )
    }

    /// Without the examples sent with it (see [`GuardTask::to_job_with`]).
    fn to_job(&self) -> Job {
        let state = model_state(self.model_version);
        job_of!(self, Self::KIND, json!({"examples": self.examples, "training_examples": []}), state, None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_buckets_cover_everything() {
        assert_eq!(guard_latency_bucket(0), 0);
        assert_eq!(guard_latency_bucket(25), 0);
        assert_eq!(guard_latency_bucket(26), 1);
        assert_eq!(guard_latency_bucket(i64::MAX), 15);
        assert!(GUARD_LATENCY_BUCKETS_US.windows(2).all(|w| w[0] < w[1]));
        assert!(GuardLabel::ALL.iter().all(|l| GuardLabel::parse(l.as_str()) == Some(*l)));
        assert_eq!(GuardFeedbackKind::parse("attack"), Some(GuardFeedbackKind::Attack));
    }
}
