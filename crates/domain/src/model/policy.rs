//! Tenant policies: Rego modules evaluated by every policy check.

use time::OffsetDateTime;

use crate::ids::{PolicyId, ReplayJobId, TenantId, UserId};

/// A Rego policy of one tenant. The Rego contract (the input document and the rules a
/// module may define) is in `docs/policies.md`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Policy {
    pub id: PolicyId,
    pub tenant_id: TenantId,
    /// Unique within the tenant.
    pub name: String,
    pub description: Option<String>,
    /// The module's source, as written (compiled on every create and update).
    pub rego: String,
    /// Only enabled policies take part in policy checks (`mode` `enforce` or `shadow`).
    pub enabled: bool,
    /// `enforce` (its outcomes decide), `shadow` (evaluated in every check, its outcomes
    /// recorded as `would_…` and never acted on) or `off` (not evaluated: `enabled` false).
    pub mode: PolicyMode,
    /// 1 at creation; one more on every update.
    pub version: i64,
    /// The user who created the policy; `null` once that user is deleted.
    pub created_by: Option<UserId>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub updated_at: OffsetDateTime,
}

string_enum! {
    /// How a policy takes part in checks.
    PolicyMode {
        Enforce => "enforce",
        Shadow => "shadow",
        Off => "off",
    }
}

impl PolicyMode {
    /// The mode of a policy stored as `enabled` and `shadow`.
    pub fn of(enabled: bool, shadow: bool) -> Self {
        match (enabled, shadow) {
            (false, _) => PolicyMode::Off,
            (true, true) => PolicyMode::Shadow,
            (true, false) => PolicyMode::Enforce,
        }
    }
}

/// The filters of `GET /policies`, validated.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PolicyFilter {
    pub enabled: Option<bool>,
}

impl PolicyFilter {
    /// Whether `policy` passes, as every adapter must decide it.
    pub fn matches(&self, policy: &Policy) -> bool {
        self.enabled.is_none_or(|e| policy.enabled == e)
    }
}

/// A replay (`POST /policies/{id}/replay`): a candidate version of a policy (an earlier
/// version, or Rego given) and its present version evaluated side by side on the stored
/// inputs of the tenant's past decisions, and the difference counted.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ReplayJob {
    pub id: ReplayJobId,
    #[serde(skip)]
    #[cfg_attr(feature = "openapi", schema(ignore))]
    pub tenant_id: TenantId,
    pub policy_id: PolicyId,
    pub requested_by: super::Actor,
    /// The policy's version the candidate is compared with (its present one when asked).
    pub baseline_version: i64,
    /// The candidate's version, when it is one of the policy's; `null` for Rego given.
    pub candidate_version: Option<i64>,
    /// The decisions replayed: recorded from `from` (inclusive) to `to` (exclusive).
    #[serde(with = "time::serde::rfc3339")]
    pub from: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub to: OffsetDateTime,
    pub status: super::JobStatus,
    /// From 0 to 1.
    pub progress: f64,
    pub error: Option<String>,
    /// Once completed.
    pub report: Option<ReplayReport>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339::option")]
    pub started_at: Option<OffsetDateTime>,
    #[serde(with = "time::serde::rfc3339::option")]
    pub finished_at: Option<OffsetDateTime>,
    /// The modules compared (kept in the job, not served).
    #[serde(skip)]
    #[cfg_attr(feature = "openapi", schema(ignore))]
    pub baseline_rego: String,
    #[serde(skip)]
    #[cfg_attr(feature = "openapi", schema(ignore))]
    pub candidate_rego: String,
    #[serde(skip)]
    #[cfg_attr(feature = "openapi", schema(ignore))]
    pub attempts: i32,
    #[serde(skip)]
    #[cfg_attr(feature = "openapi", schema(ignore))]
    pub lease: Option<super::Lease>,
}

/// What a replay found.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ReplayReport {
    /// The decision records in the window (at most the replay's limit, oldest first).
    pub decisions: u64,
    /// Those replayed: recorded with their input.
    pub replayed: u64,
    /// Those recorded before decisions kept their input: not replayed.
    pub skipped: u64,
    /// The baseline's outcomes on the replayed inputs.
    pub baseline: ReplayCounts,
    /// The candidate's.
    pub candidate: ReplayCounts,
    /// Inputs the candidate denies (or fails on) that the baseline did not.
    pub newly_denied: u64,
    /// Inputs the candidate allows that the baseline denied or gated.
    pub newly_allowed: u64,
    /// Inputs the candidate gates behind an approval that the baseline allowed.
    pub newly_approval_gated: u64,
    /// Up to five decisions of each kind of change, oldest first.
    pub examples: Vec<ReplayExample>,
    /// Whether the window held more decisions than a replay reads.
    pub truncated: bool,
}

/// How often each outcome came out: a policy's own outcome on an input (`allow` when none
/// of its rules applied).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ReplayCounts {
    pub allow: u64,
    pub deny: u64,
    pub require_approval: u64,
    pub error: u64,
}

/// How a replay's candidate changes a recorded input's outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum ReplayChange {
    /// The candidate denies (or fails on) what the baseline did not.
    NewlyDenied,
    /// The candidate allows what the baseline denied or gated.
    NewlyAllowed,
    /// The candidate gates behind an approval what the baseline allowed.
    NewlyApprovalGated,
}

/// One decision whose outcome the candidate changes.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ReplayExample {
    pub decision_id: crate::ids::AuditId,
    #[serde(with = "time::serde::rfc3339")]
    pub timestamp: OffsetDateTime,
    pub agent_id: Option<uuid::Uuid>,
    pub action: Option<String>,
    pub resource: Option<String>,
    pub change: ReplayChange,
    /// The baseline's outcome and the candidate's: `allow`, `deny`, `require_approval`,
    /// `error`.
    pub before: String,
    pub after: String,
    /// The candidate's messages (or its error).
    pub messages: Vec<String>,
}

impl super::JobView for ReplayJob {
    const KIND: super::JobKind = super::JobKind::Replay;

    fn from_job(job: super::Job) -> crate::Result<Self> {
        use super::JobView;
        use super::job::view_of;
        view_of!(
            job,
            ReplayJob,
            ReplayJobId {
                policy_id: job.param("policy_id")?,
                baseline_version: job.param("baseline_version")?,
                candidate_version: job.param("candidate_version")?,
                from: job.param::<Rfc3339>("from")?.0,
                to: job.param::<Rfc3339>("to")?.0,
                baseline_rego: job.param("baseline_rego")?,
                candidate_rego: job.param("candidate_rego")?,
                report: job.state("report")?,
            }
        )
    }

    fn to_job(&self) -> super::Job {
        use super::Job;
        use super::job::job_of;
        let text = |t: OffsetDateTime| Rfc3339(t);
        let params = serde_json::json!({
            "policy_id": self.policy_id,
            "baseline_version": self.baseline_version,
            "candidate_version": self.candidate_version,
            "from": text(self.from),
            "to": text(self.to),
            "baseline_rego": self.baseline_rego,
            "candidate_rego": self.candidate_rego,
        });
        let state = self.report.as_ref().map_or(serde_json::Value::Null, |r| serde_json::json!({ "report": r }));
        job_of!(self, Self::KIND, params, state, None)
    }
}

/// A timestamp kept in a job's params as RFC 3339 text.
#[derive(serde::Serialize, serde::Deserialize)]
struct Rfc3339(#[serde(with = "time::serde::rfc3339")] OffsetDateTime);
