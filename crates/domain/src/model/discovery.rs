//! Shadow-agent discovery (spec 4.5): events seen by gateways, proxies and log sources, the
//! candidates clustering groups them into, and the clustering jobs.
//!
//! An event is stored with its *disposition*: `attributed` when it belongs to a registered
//! agent (named by the source, or matching a confirmed candidate), `suppressed` when it
//! matches a dismissed candidate, else `shadow`: what clustering reads.

use super::job::{Job, JobKind, JobStatus, JobView, Lease, job_of, view_of};
use serde_json::{Value, json};
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use super::agent::JsonObject;
use super::audit::Actor;
use crate::ids::{AgentId, CandidateId, ClusterJobId, DiscoveryEventId, TenantId};

/// What became of an ingested event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum EventDisposition {
    /// Unattributed activity: clustering groups it into candidates.
    Shadow,
    /// Activity of a registered agent (`attributed_agent_id`).
    Attributed,
    /// Activity matching a dismissed candidate: kept, never clustered again.
    Suppressed,
}

impl EventDisposition {
    pub const ALL: [EventDisposition; 3] =
        [EventDisposition::Shadow, EventDisposition::Attributed, EventDisposition::Suppressed];

    pub fn as_str(self) -> &'static str {
        match self {
            EventDisposition::Shadow => "shadow",
            EventDisposition::Attributed => "attributed",
            EventDisposition::Suppressed => "suppressed",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|d| d.as_str() == s)
    }
}

/// An observation of activity that looks like an AI agent, as stored.
///
/// Adapters keep `id`, `tenant_id` and `disposition` in columns and the whole record as the
/// JSON text of its `Serialize` form (which leaves out `tenant_id`); reading it back, they
/// set `tenant_id` from its column.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DiscoveryEvent {
    pub id: DiscoveryEventId,
    #[serde(skip, default = "super::nil_tenant")]
    #[cfg_attr(feature = "openapi", schema(ignore))]
    pub tenant_id: TenantId,
    /// Who saw it: a gateway, proxy or log source.
    pub source: String,
    /// When it was seen.
    #[serde(rename = "timestamp", with = "time::serde::rfc3339")]
    pub observed_at: OffsetDateTime,
    /// When it was ingested.
    #[serde(with = "time::serde::rfc3339")]
    pub received_at: OffsetDateTime,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub host: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub ip: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub user_agent: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub process: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub endpoint: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub model: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub tool_calls: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub api_key_fingerprint: Option<String>,
    /// The agent the source named, as it named it (registered or not).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub agent_id: Option<AgentId>,
    #[serde(skip_serializing_if = "JsonObject::is_empty", default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub attributes: JsonObject,
    pub disposition: EventDisposition,
    /// The registered agent it belongs to (`attributed`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub attributed_agent_id: Option<AgentId>,
    /// The decided candidate it matched when ingested (`attributed` through a confirmed
    /// candidate, or `suppressed`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub candidate_id: Option<CandidateId>,
}

/// A candidate's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum CandidateStatus {
    Pending,
    Confirmed,
    Dismissed,
}

impl CandidateStatus {
    pub const ALL: [CandidateStatus; 3] =
        [CandidateStatus::Pending, CandidateStatus::Confirmed, CandidateStatus::Dismissed];

    pub fn as_str(self) -> &'static str {
        match self {
            CandidateStatus::Pending => "pending",
            CandidateStatus::Confirmed => "confirmed",
            CandidateStatus::Dismissed => "dismissed",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|d| d.as_str() == s)
    }
}

/// One value of a fingerprint's field and the share of the candidate's events (among those
/// that carry the field) that have it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FingerprintValue {
    pub value: String,
    pub share: f64,
}

/// The attributes that define a candidate: per normalised field (`host`, `process`,
/// `user_agent`, `ip_prefix`, `api_key_fingerprint`, `agent_id`, `endpoint`, `model`,
/// `tool_calls`, `source`), its commonest values. Future events are matched against it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(transparent)]
pub struct Fingerprint(pub BTreeMap<String, Vec<FingerprintValue>>);

/// A group of shadow events that looks like one unregistered agent.
///
/// Adapters keep `id`, `tenant_id` and `status` in columns and the whole record as the JSON
/// text of its `Serialize` form, as for [`DiscoveryEvent`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DiscoveryCandidate {
    pub id: CandidateId,
    #[serde(skip, default = "super::nil_tenant")]
    #[cfg_attr(feature = "openapi", schema(ignore))]
    pub tenant_id: TenantId,
    pub status: CandidateStatus,
    pub suggested_name: String,
    pub suggested_type: String,
    /// Inferred from the tool calls and endpoints seen.
    pub capabilities: Vec<String>,
    /// How sure clustering is that these events are one agent (0..1).
    pub confidence: f64,
    pub event_count: i64,
    #[serde(with = "time::serde::rfc3339")]
    pub first_seen: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub last_seen: OffsetDateTime,
    pub fingerprint: Fingerprint,
    /// A few of its events, most typical first.
    pub sample_events: Vec<DiscoveryEvent>,
    /// The agent registered on confirmation.
    pub agent_id: Option<AgentId>,
    /// Why it was dismissed.
    pub reason: Option<String>,
    pub decided_by: Option<Actor>,
    #[serde(with = "time::serde::rfc3339::option")]
    pub decided_at: Option<OffsetDateTime>,
    /// The clustering job that last updated it.
    pub job_id: Option<ClusterJobId>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub updated_at: OffsetDateTime,
}

/// Filters of the candidate list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CandidateFilter {
    pub status: Option<CandidateStatus>,
}

impl CandidateFilter {
    pub fn matches(&self, c: &DiscoveryCandidate) -> bool {
        self.status.is_none_or(|s| s == c.status)
    }
}

/// What a clustering job found, written in one transaction with its completion.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClusterOutcome {
    /// New candidates (`pending`) and new versions of pending ones; an existing one is only
    /// replaced while it is still `pending` (a candidate decided meanwhile is left as is).
    pub upserts: Vec<DiscoveryCandidate>,
    /// Pending candidates whose events now belong to others or to none; deleted only while
    /// still `pending`.
    pub removed: Vec<CandidateId>,
    pub summary: ClusterSummary,
}

/// Counts of a finished clustering job.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ClusterSummary {
    /// Shadow events read.
    pub events: i64,
    /// Of those, events in no candidate (too sparse to be an agent).
    pub noise_events: i64,
    /// Shadow events left out because they match a decided candidate.
    pub matched_decided: i64,
    pub candidates_created: i64,
    pub candidates_updated: i64,
    pub candidates_removed: i64,
    /// Time spent clustering (reading the events and grouping them), in milliseconds.
    pub duration_ms: i64,
}

/// An asynchronous clustering run over a tenant's shadow events.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ClusterJob {
    pub id: ClusterJobId,
    #[serde(skip)]
    #[cfg_attr(feature = "openapi", schema(ignore))]
    pub tenant_id: TenantId,
    pub requested_by: Actor,
    pub status: JobStatus,
    /// From 0 to 1.
    pub progress: f64,
    pub error: Option<String>,
    /// Once completed.
    pub summary: Option<ClusterSummary>,
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

impl JobView for ClusterJob {
    const KIND: JobKind = JobKind::Clustering;

    fn from_job(job: Job) -> crate::Result<Self> {
        view_of!(job, ClusterJob, ClusterJobId { summary: job.state("summary")? })
    }

    fn to_job(&self) -> Job {
        let state = self.summary.map_or(Value::Null, |s| json!({ "summary": s }));
        job_of!(self, Self::KIND, json!({}), state, None)
    }
}

impl ClusterSummary {
    /// A completed clustering job's state.
    pub fn to_state(self) -> Value {
        json!({ "summary": self })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enumerations_round_trip() {
        assert!(EventDisposition::ALL.iter().all(|d| EventDisposition::parse(d.as_str()) == Some(*d)));
        assert!(CandidateStatus::ALL.iter().all(|s| CandidateStatus::parse(s.as_str()) == Some(*s)));
        assert_eq!(CandidateStatus::parse("Pending"), None);
    }
}
