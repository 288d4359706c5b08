//! Anomaly reports (spec 4.8): what the detector, the Prompt Guard or a person found odd
//! about an agent, and what analysts decided about it.
//!
//! A report's `status` is the labelled feedback the detector learns from: `resolved` (a
//! real anomaly, dealt with) and `false_positive` (not one).

use super::job::{
    Job, JobKind, JobStatus, JobView, Lease, ModelKind, ModelVersion, StoredModel, job_of, model_state, view_of,
};
use serde::{Deserialize, Serialize};
use serde_json::json;
use time::OffsetDateTime;

use super::agent::JsonObject;
use super::audit::Actor;
use crate::ids::{AgentId, AnomalyId, AnomalyTaskId, TenantId};

string_enum!(
    /// What kind of oddity.
    AnomalyType {
        UnusualAction => "unusual_action",
        UnusualResource => "unusual_resource",
        RateSpike => "rate_spike",
        OffHours => "off_hours",
        DeniedBurst => "denied_burst",
        GuardAttack => "guard_attack",
        Manual => "manual",
    }
);

string_enum!(
    /// How bad, ordered.
    Severity { Low => "low", Medium => "medium", High => "high", Critical => "critical" }
);

string_enum!(
    /// Who found it.
    AnomalySource { Detector => "detector", Manual => "manual", Guard => "guard" }
);

string_enum!(
    /// What analysts made of it.
    AnomalyStatus { Open => "open", Acknowledged => "acknowledged", Resolved => "resolved", FalsePositive => "false_positive" }
);

/// A report, as stored and served.
///
/// Adapters keep `id`, `tenant_id`, `agent_id`, `anomaly_type`, `severity`, `status` and
/// `created_at` in columns (lists filter on them, statistics group by them) and the whole
/// record as the JSON text of its `Serialize` form (which leaves out `tenant_id`); reading
/// it back, they set `tenant_id` from its column.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AnomalyReport {
    pub id: AnomalyId,
    #[serde(skip, default = "super::nil_tenant")]
    #[cfg_attr(feature = "openapi", schema(ignore))]
    pub tenant_id: TenantId,
    pub agent_id: AgentId,
    #[serde(rename = "type")]
    pub anomaly_type: AnomalyType,
    pub severity: Severity,
    /// From 0 (ordinary) to 1 (as odd as it gets).
    pub score: f64,
    pub description: String,
    /// What triggered it: the events and features behind a detector's report.
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub evidence: JsonObject,
    pub source: AnomalySource,
    pub status: AnomalyStatus,
    /// The detector version that scored it (detector reports only).
    pub model_version: Option<i32>,
    /// The API key, user or component that filed it.
    pub reported_by: Actor,
    /// Who last changed `status`, and when.
    pub status_changed_by: Option<Actor>,
    #[serde(with = "time::serde::rfc3339::option")]
    pub status_changed_at: Option<OffsetDateTime>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub updated_at: OffsetDateTime,
}

/// Filters of the report list and the statistics; each given one must match.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AnomalyFilter {
    pub agent_id: Option<AgentId>,
    pub anomaly_type: Option<AnomalyType>,
    pub severity: Option<Severity>,
    pub status: Option<AnomalyStatus>,
    /// `created_at` at or after.
    pub from: Option<OffsetDateTime>,
    /// `created_at` before.
    pub to: Option<OffsetDateTime>,
}

impl AnomalyFilter {
    pub fn matches(&self, r: &AnomalyReport) -> bool {
        self.agent_id.is_none_or(|a| a == r.agent_id)
            && self.anomaly_type.is_none_or(|t| t == r.anomaly_type)
            && self.severity.is_none_or(|s| s == r.severity)
            && self.status.is_none_or(|s| s == r.status)
            && self.from.is_none_or(|f| r.created_at >= f)
            && self.to.is_none_or(|t| r.created_at < t)
    }
}

/// How many of a tenant's reports share an agent, type, severity, status and the hour they
/// were created in (`hour`: whole hours since the Unix epoch, UTC).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AnomalyCount {
    pub agent_id: AgentId,
    pub anomaly_type: AnomalyType,
    pub severity: Severity,
    pub status: AnomalyStatus,
    pub hour: i64,
    pub count: i64,
}

/// How well a detector version separates anomalies from ordinary behaviour on one set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AnomalyEval {
    /// Anomalies in the set (labelled `resolved`, or injected).
    pub positives: i64,
    /// Ordinary items in the set (labelled `false_positive`, or not injected).
    pub negatives: i64,
    /// At the version's threshold; `null` when nothing was flagged.
    pub precision: Option<f64>,
    /// At the version's threshold; `null` without positives.
    pub recall: Option<f64>,
    pub f1: Option<f64>,
    /// Area under the ROC curve; `null` without both positives and negatives.
    pub auc: Option<f64>,
}

/// A trained version of a tenant's anomaly detector, as listed.
///
/// Adapters keep `tenant_id`, `version` and `active` in columns and the rest as the JSON
/// text of its `Serialize` form (which leaves out `tenant_id`; `active` is read from its
/// column).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AnomalyModelInfo {
    pub version: i32,
    #[serde(skip, default = "super::nil_tenant")]
    #[cfg_attr(feature = "openapi", schema(ignore))]
    pub tenant_id: TenantId,
    #[serde(skip_deserializing)]
    pub active: bool,
    /// Policy checks it was trained on.
    pub samples: i64,
    /// Agents with a baseline of their own.
    pub agents: i64,
    /// Scores at or above it are anomalies.
    pub threshold: f64,
    /// How the threshold was chosen: `labelled` (from analysts' labels) or `contamination`.
    pub threshold_source: String,
    /// On reports that analysts labelled `resolved` or `false_positive` and that name a
    /// decision (`evidence.decision_id`) in the training window.
    pub labelled: AnomalyEval,
    /// On a seeded synthetic history with injected anomalies of every type.
    pub synthetic: AnomalyEval,
    /// The training task that produced it.
    pub task_id: Option<AnomalyTaskId>,
    #[serde(with = "time::serde::rfc3339")]
    pub trained_at: OffsetDateTime,
}

/// A detector version with its model, as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct AnomalyModelRecord {
    pub info: AnomalyModelInfo,
    /// The JSON text of `agentgov_detect::anomaly::Detector`.
    pub model: String,
}

impl AnomalyModelInfo {
    /// As the model registry keeps it.
    pub fn to_version(&self) -> crate::Result<ModelVersion> {
        ModelVersion::of(self.tenant_id, ModelKind::Anomaly, self.version, self.active, self)
    }

    pub fn from_version(v: ModelVersion) -> crate::Result<Self> {
        let info: Self = v.read()?;
        Ok(Self { version: v.version, tenant_id: v.tenant_id, active: v.active, ..info })
    }
}

impl AnomalyModelRecord {
    pub fn to_stored(&self) -> crate::Result<StoredModel> {
        Ok(StoredModel { version: self.info.to_version()?, model: self.model.clone().into_bytes() })
    }

    pub fn from_stored(m: StoredModel) -> crate::Result<Self> {
        let model = String::from_utf8(m.model).map_err(crate::DomainError::internal)?;
        Ok(Self { info: AnomalyModelInfo::from_version(m.version)?, model })
    }
}

/// An asynchronous training run of a tenant's anomaly detector.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AnomalyTask {
    #[serde(rename = "task_id")]
    pub id: AnomalyTaskId,
    #[serde(skip, default = "super::nil_tenant")]
    #[cfg_attr(feature = "openapi", schema(ignore))]
    pub tenant_id: TenantId,
    pub requested_by: Actor,
    pub status: JobStatus,
    /// From 0 to 1.
    pub progress: f64,
    pub error: Option<String>,
    /// The version it produced, once completed.
    pub model_version: Option<i32>,
    /// Days of audit history it trains on.
    pub window_days: i32,
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

impl JobView for AnomalyTask {
    const KIND: JobKind = JobKind::AnomalyTraining;

    fn from_job(job: Job) -> crate::Result<Self> {
        view_of!(
            job,
            AnomalyTask,
            AnomalyTaskId { window_days: job.param("window_days")?, model_version: job.state("model_version")? }
        )
    }

    fn to_job(&self) -> Job {
        let state = model_state(self.model_version);
        job_of!(self, Self::KIND, json!({ "window_days": self.window_days }), state, None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enumerations_round_trip_and_severities_are_ordered() {
        assert!(AnomalyType::ALL.iter().all(|v| AnomalyType::parse(v.as_str()) == Some(*v)));
        assert!(Severity::ALL.iter().all(|v| Severity::parse(v.as_str()) == Some(*v)));
        assert!(AnomalySource::ALL.iter().all(|v| AnomalySource::parse(v.as_str()) == Some(*v)));
        assert!(AnomalyStatus::ALL.iter().all(|v| AnomalyStatus::parse(v.as_str()) == Some(*v)));
        assert!(Severity::Low < Severity::Medium && Severity::High < Severity::Critical);
        assert_eq!(AnomalyStatus::parse("False_Positive"), None);
        assert_eq!(serde_json::to_string(&AnomalyStatus::FalsePositive).unwrap_or_default(), "\"false_positive\"");
    }
}
