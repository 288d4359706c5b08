//! Replays (`POST /policies/{id}/replay`, issue 38): a candidate version of a policy — one
//! of its earlier versions, whose Rego the audit log keeps (`policy.created` and
//! `policy.updated` record every version's source), or Rego given — is evaluated beside the
//! policy's present version on the inputs of the tenant's past decisions, which their
//! `policy.decision` records keep (`details.input`, with the record's action, resource and
//! context: the very input the check's policies saw), and the changes are counted.
//!
//! Asynchronous like an export: a job of the one queue (kind `replay`) that any replica's
//! worker runs, reading the window oldest first in pages and evaluating each page on the
//! tenant's share of the pool. Nothing is recorded but the job; the report is its state.

use std::time::Duration;

use serde::Deserialize;
use time::OffsetDateTime;

use super::{KeptInput, PolicyService, busy};
use crate::error::{DomainError, Result, Violations};
use crate::events::POLICY_DECISION;
use crate::ids::{PolicyId, ReplayJobId, TenantId};
use crate::model::{
    AuditFilter, AuditRecord, AuditScan, JobEnd, JobStatus, JobView, Permission, ReplayCounts, ReplayExample,
    ReplayJob, ReplayReport, SeqOrder,
};
use crate::ports::{OffloadError, PolicyModule, PolicyOutcome};
use crate::services::Caller;
use crate::services::audit::caller_actor;
use crate::services::jobs::{self, ClaimedJob, KindSettings};

/// Decision records a replay reads at most (oldest first).
pub const REPLAY_MAX_DECISIONS: u64 = 100_000;
/// The longest window of a replay, in days.
pub const REPLAY_MAX_DAYS: i64 = 90;
/// Records read, and evaluated on the pool, at a time.
const REPLAY_PAGE: u32 = 500;
/// Budget of evaluating one page on the pool.
const PAGE_BUDGET: Duration = Duration::from_secs(30);
/// Examples kept of each kind of change.
const EXAMPLES_PER_CHANGE: usize = 5;
/// How long a worker's claim of a replay holds before it is renewed (every page).
const REPLAY_LEASE: Duration = Duration::from_secs(120);

/// The body of `POST /policies/{id}/replay`: exactly one of `version` and `rego`.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct NewReplay {
    /// One of the policy's earlier versions (1 to its present version).
    pub version: Option<i64>,
    /// A module to try instead (at most 64 KiB; it must compile).
    pub rego: Option<String>,
    /// The window's start (RFC 3339); by default 7 days before `to`.
    #[serde(default, with = "time::serde::rfc3339::option")]
    pub from: Option<OffsetDateTime>,
    /// The window's end, exclusive; by default now.
    #[serde(default, with = "time::serde::rfc3339::option")]
    pub to: Option<OffsetDateTime>,
}

/// A policy's own outcome on one input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Effect {
    Allow,
    Deny,
    RequireApproval,
    Error,
}

impl Effect {
    fn of(outcome: &PolicyOutcome) -> Self {
        if outcome.error.is_some() {
            Self::Error
        } else if !outcome.deny.is_empty() {
            Self::Deny
        } else if !outcome.require_approval.is_empty() {
            Self::RequireApproval
        } else {
            Self::Allow
        }
    }

    fn as_str(self) -> &'static str {
        match self {
            Self::Allow => "allow",
            Self::Deny => "deny",
            Self::RequireApproval => "require_approval",
            Self::Error => "error",
        }
    }

    /// Denied, or failed (which a check denies).
    fn blocks(self) -> bool {
        matches!(self, Self::Deny | Self::Error)
    }

    fn count(self, counts: &mut ReplayCounts) {
        match self {
            Self::Allow => counts.allow += 1,
            Self::Deny => counts.deny += 1,
            Self::RequireApproval => counts.require_approval += 1,
            Self::Error => counts.error += 1,
        }
    }
}

/// How the candidate changes one input's outcome, if it does in a way the report counts.
fn change(before: Effect, after: Effect) -> Option<&'static str> {
    if after.blocks() && !before.blocks() {
        Some("newly_denied")
    } else if after == Effect::Allow && before != Effect::Allow {
        Some("newly_allowed")
    } else if after == Effect::RequireApproval && before == Effect::Allow {
        Some("newly_approval_gated")
    } else {
        None
    }
}

fn replay_not_found(id: ReplayJobId) -> DomainError {
    DomainError::not_found("replay", id)
}

impl PolicyService {
    /// `POST /policies/{id}/replay` (admin): queues a replay of a candidate version of the
    /// policy against its present version over the window's decisions.
    pub async fn start_replay(&self, caller: &Caller, id: PolicyId, req: NewReplay) -> Result<ReplayJob> {
        Self::require_author(caller)?;
        let tenant = caller.tenant_id();
        let policy = self.stored(tenant, id).await?;
        let now = self.ports.clock.now();
        let to = req.to.unwrap_or(now);
        let from = req.from.unwrap_or(to - time::Duration::days(7));
        let mut v = Violations::new();
        if from >= to {
            v.add("from", "must be before to");
        } else if to - from > time::Duration::days(REPLAY_MAX_DAYS) {
            v.add("from", format!("the window may span at most {REPLAY_MAX_DAYS} days"));
        }
        match (&req.version, &req.rego) {
            (Some(_), Some(_)) => v.add("rego", "give either version or rego, not both"),
            (None, None) => v.add("version", "is required (or rego to try)"),
            (Some(n), None) if !(1..=policy.version).contains(n) => {
                v.add("version", format!("must be between 1 and the policy's present version, {}", policy.version));
            }
            _ => {}
        }
        v.into_result()?;
        let candidate_rego = match (req.version, req.rego) {
            (Some(n), _) if n == policy.version => policy.rego.clone(),
            (Some(n), _) => self.version_rego(tenant, id, n).await?,
            (None, rego) => self.checked_rego(tenant, rego.unwrap_or_default()).await?,
        };
        let job = ReplayJob {
            id: ReplayJobId(self.ports.ids.new_id()),
            tenant_id: tenant,
            policy_id: id,
            requested_by: caller_actor(caller),
            baseline_version: policy.version,
            candidate_version: req.version,
            from,
            to,
            status: JobStatus::Queued,
            progress: 0.0,
            error: None,
            report: None,
            created_at: now,
            started_at: None,
            finished_at: None,
            baseline_rego: policy.rego,
            candidate_rego,
            attempts: 0,
            lease: None,
        };
        let max = self.settings.max_replays_per_tenant;
        self.repos.jobs.enqueue_job(&job.to_job(), max).await.map_err(|e| match e {
            DomainError::Conflict(m) if m == crate::ports::store::JOB_LIMIT_REACHED => DomainError::quota(
                format!("the tenant already has {max} replays queued or running, its limit; wait for one to finish"),
                Duration::from_secs(10),
            ),
            other => other,
        })?;
        Ok(job)
    }

    /// `GET /policies/{id}/replay/{replay_id}`.
    pub async fn replay_status(&self, caller: &Caller, id: PolicyId, replay: ReplayJobId) -> Result<ReplayJob> {
        caller.require_permission(Permission::PoliciesRead)?;
        jobs::get::<ReplayJob>(self.repos.jobs.as_ref(), Some(caller.tenant_id()), replay.0)
            .await?
            .filter(|job| job.policy_id == id)
            .ok_or_else(|| replay_not_found(replay))
    }

    /// The Rego of the policy's `version`, from the audit record of the change that made it.
    async fn version_rego(&self, tenant: TenantId, id: PolicyId, version: i64) -> Result<String> {
        #[derive(Deserialize)]
        struct Change {
            after: Option<Made>,
        }
        #[derive(Deserialize)]
        struct Made {
            version: i64,
            rego: String,
        }
        let resource = format!("policies/{id}");
        let event_type = if version == 1 { "policy.created" } else { "policy.updated" };
        let filter = AuditFilter { event_type: Some(event_type.into()), ..AuditFilter::default() };
        let mut after = None;
        loop {
            let scan = AuditScan { order: SeqOrder::Desc, after_seq: after, limit: REPLAY_PAGE };
            let page = self.repos.audit.scan_audit(tenant, &filter, scan).await?;
            for record in page.iter().filter(|r| r.resource.as_deref() == Some(resource.as_str())) {
                if let Ok(Change { after: Some(made) }) = serde_json::from_str::<Change>(record.details.as_str())
                    && made.version == version
                {
                    return Ok(made.rego);
                }
            }
            match page.last() {
                Some(last) if page.len() == REPLAY_PAGE as usize => after = Some(last.seq),
                _ => {
                    return Err(DomainError::invalid(
                        "version",
                        format!("the audit log keeps no source of version {version} of this policy"),
                    ));
                }
            }
        }
    }

    /// How the job queue treats replays: kept for the retention period once finished.
    pub(crate) fn replay_job_settings(&self) -> KindSettings {
        KindSettings { lease: REPLAY_LEASE, max_attempts: 3, keep_for: Some(self.settings.replay_retention) }
    }

    /// Runs a claimed replay to its end: completed with its report, or failed with a
    /// reason. A lost lease (another worker took the job over) stops it quietly.
    pub async fn run_replay(&self, claimed: ClaimedJob) -> Result<()> {
        let token = claimed.token;
        let job = ReplayJob::from_job(claimed.job)?;
        let now = || self.ports.clock.now();
        let end = match self.replayed(&job, token).await {
            Ok(report) => {
                let mut end = JobEnd::completed(now(), serde_json::json!({ "report": report }));
                end.expires_at = Some(now() + self.settings.replay_retention);
                end
            }
            Err(DomainError::Conflict(_)) => return Ok(()),
            Err(e) => {
                tracing::warn!(job = %job.id, error = %e, "replay failed");
                let reason = match e {
                    DomainError::Unavailable(what) => format!("{what} became unavailable; start the replay again"),
                    DomainError::RateLimited { .. } => {
                        "the tenant's policy evaluations were too busy; start the replay again".to_owned()
                    }
                    _ => "the replay failed; start it again".to_owned(),
                };
                JobEnd { expires_at: Some(now() + self.settings.replay_retention), ..JobEnd::failed(now(), reason) }
            }
        };
        jobs::unless_lost(self.repos.jobs.finish_job(job.id.0, token, &end).await).map(drop)
    }

    /// Reads the window oldest first, a page at a time, evaluating both modules on each
    /// page's stored inputs on the tenant's share of the pool.
    async fn replayed(&self, job: &ReplayJob, token: uuid::Uuid) -> Result<ReplayReport> {
        let tenant = job.tenant_id;
        let module = |version: i64, rego: &str| PolicyModule {
            id: job.policy_id,
            version,
            name: "replay".into(),
            rego: rego.to_owned(),
            shadow: false,
        };
        let modules = vec![
            module(job.baseline_version, &job.baseline_rego),
            module(job.candidate_version.unwrap_or(0), &job.candidate_rego),
        ];
        let compiled = self.compile(tenant, modules).await?;
        let filter = AuditFilter {
            event_type: Some(POLICY_DECISION.into()),
            from: Some(job.from),
            to: Some(job.to),
            ..AuditFilter::default()
        };
        let total = self.repos.audit.count_audit(tenant, &filter).await?.clamp(1, REPLAY_MAX_DECISIONS);
        let mut report = ReplayReport::default();
        let mut after = None;
        loop {
            let room = REPLAY_MAX_DECISIONS - report.decisions;
            let scan = AuditScan { order: SeqOrder::Asc, after_seq: after, limit: REPLAY_PAGE };
            let mut page = self.repos.audit.scan_audit(tenant, &filter, scan).await?;
            let full = page.len() == REPLAY_PAGE as usize;
            after = page.last().map(|r| r.seq);
            if page.len() as u64 > room {
                page.truncate(usize::try_from(room).unwrap_or(0));
                report.truncated = true;
            }
            report.decisions += page.len() as u64;
            let (records, inputs): (Vec<AuditRecord>, Vec<crate::ports::PolicyInput>) =
                page.into_iter().filter_map(|r| KeptInput::input_of(&r).map(|input| (r, input))).unzip();
            let evaluating = compiled.clone();
            let evaluated = self
                .ports
                .offload
                .call(tenant, PAGE_BUDGET, move || inputs.iter().map(|i| evaluating.evaluate(i)).collect::<Vec<_>>())
                .await;
            let outcomes = match evaluated {
                Ok(outcomes) => outcomes,
                Err(OffloadError::Busy) => return Err(busy()),
                Err(_) => return Err(DomainError::Unavailable("the policy engine".into())),
            };
            report.replayed += records.len() as u64;
            report.skipped = report.decisions - report.replayed;
            for (record, outcome) in records.iter().zip(outcomes) {
                tally(&mut report, record, outcome);
            }
            let progress = (report.decisions as f64 / total as f64).min(1.0);
            let until = self.ports.clock.now() + REPLAY_LEASE;
            self.repos.jobs.renew_job(job.id.0, token, progress, None, until).await?;
            if report.truncated || !full {
                return Ok(report);
            }
            if report.decisions == REPLAY_MAX_DECISIONS {
                // At the limit: truncated if the window holds one more.
                let peek = AuditScan { order: SeqOrder::Asc, after_seq: after, limit: 1 };
                report.truncated = !self.repos.audit.scan_audit(tenant, &filter, peek).await?.is_empty();
                return Ok(report);
            }
        }
    }
}

/// Counts one replayed decision: both outcomes, and the change with an example while the
/// kind of change has fewer than five.
fn tally(report: &mut ReplayReport, record: &AuditRecord, outcome: Result<Vec<PolicyOutcome>>) {
    let failed = || PolicyOutcome { error: Some("not evaluated".into()), ..PolicyOutcome::default() };
    let (before, after) = match outcome.as_deref() {
        Ok([base, candidate]) => (base.clone(), candidate.clone()),
        Ok(_) => (failed(), failed()),
        Err(e) => {
            let error = PolicyOutcome { error: Some(e.to_string()), ..PolicyOutcome::default() };
            (error.clone(), error)
        }
    };
    let (b, a) = (Effect::of(&before), Effect::of(&after));
    b.count(&mut report.baseline);
    a.count(&mut report.candidate);
    let Some(kind) = change(b, a) else { return };
    match kind {
        "newly_denied" => report.newly_denied += 1,
        "newly_allowed" => report.newly_allowed += 1,
        _ => report.newly_approval_gated += 1,
    }
    if report.examples.iter().filter(|e| e.change == kind).count() >= EXAMPLES_PER_CHANGE {
        return;
    }
    let messages = match (&after.error, a) {
        (Some(error), _) => vec![error.clone()],
        (None, Effect::Deny) => after.deny,
        (None, Effect::RequireApproval) => after.require_approval,
        _ => Vec::new(),
    };
    report.examples.push(ReplayExample {
        decision_id: record.id,
        timestamp: record.timestamp,
        agent_id: record.agent_id,
        action: record.action.clone(),
        resource: record.resource.clone(),
        change: kind.to_owned(),
        before: b.as_str().to_owned(),
        after: a.as_str().to_owned(),
        messages,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_are_counted_from_the_baselines_outcome_to_the_candidates() {
        use Effect::*;
        assert_eq!(change(Allow, Deny), Some("newly_denied"));
        assert_eq!(change(RequireApproval, Error), Some("newly_denied"));
        assert_eq!(change(Deny, Error), None, "blocked before and after");
        assert_eq!(change(Deny, Allow), Some("newly_allowed"));
        assert_eq!(change(RequireApproval, Allow), Some("newly_allowed"));
        assert_eq!(change(Allow, RequireApproval), Some("newly_approval_gated"));
        assert_eq!(change(Deny, RequireApproval), None);
        assert_eq!(change(Allow, Allow), None);
    }
}
