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
//! The policies themselves (their sources, compilation on the pool) are `PolicyService`'s.

use std::time::Duration;

use serde::Deserialize;
use time::OffsetDateTime;

use futures::channel::mpsc;

use super::policies::{KeptInput, PolicyService, busy, reads_session, session_input};
use super::sessions::{Refolded, SessionService};
use super::{Caller, Ports};
use crate::error::{DomainError, Result, Violations};
use crate::events::POLICY_DECISION;
use crate::ids::{PolicyId, ReplayJobId, TenantId};
use crate::model::{
    AuditFilter, AuditRecord, AuditScan, JobEnd, JobStatus, JobView, Permission, ReplayChange, ReplayCounts,
    ReplayExample, ReplayJob, ReplayReport, SeqOrder,
};
use crate::ports::{OffloadError, PolicyModule, PolicyOutcome};
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
/// Replays one tenant may have queued or running.
pub const REPLAYS_PER_TENANT: u64 = 2;
/// How long a finished replay is kept.
pub const REPLAY_RETENTION: Duration = Duration::from_secs(7 * 24 * 3600);

super::ports::repos!(Repos { audit: AuditRepo, jobs: JobQueue });

/// Replays of policy versions over past decisions.
#[derive(Clone)]
pub struct ReplayService {
    repos: Repos,
    ports: Ports,
    policies: PolicyService,
    sessions: SessionService,
    /// Tells the worker that a job was queued here.
    wake_worker: mpsc::Sender<()>,
}

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
fn change(before: Effect, after: Effect) -> Option<ReplayChange> {
    if after.blocks() && !before.blocks() {
        Some(ReplayChange::NewlyDenied)
    } else if after == Effect::Allow && before != Effect::Allow {
        Some(ReplayChange::NewlyAllowed)
    } else if after == Effect::RequireApproval && before == Effect::Allow {
        Some(ReplayChange::NewlyApprovalGated)
    } else {
        None
    }
}

fn replay_not_found(id: ReplayJobId) -> DomainError {
    DomainError::not_found("replay", id)
}

impl ReplayService {
    pub(crate) fn new(
        ports: Ports,
        repos: Repos,
        policies: PolicyService,
        sessions: SessionService,
        wake_worker: mpsc::Sender<()>,
    ) -> Self {
        Self { repos, ports, policies, sessions, wake_worker }
    }

    /// `POST /policies/{id}/replay` (admin): queues a replay of a candidate version of the
    /// policy against its present version over the window's decisions.
    pub async fn start_replay(&self, caller: &Caller, id: PolicyId, req: NewReplay) -> Result<ReplayJob> {
        PolicyService::require_author(caller)?;
        let tenant = caller.tenant_id();
        let policy = self.policies.stored(tenant, id).await?;
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
            (None, rego) => self.policies.checked_rego(tenant, rego.unwrap_or_default()).await?,
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
        let max = REPLAYS_PER_TENANT;
        self.repos.jobs.enqueue_job(&job.to_job(), max).await.map_err(|e| match e {
            DomainError::Conflict(m) if m == crate::ports::store::JOB_LIMIT_REACHED => DomainError::quota(
                format!("the tenant already has {max} replays queued or running, its limit; wait for one to finish"),
                Duration::from_secs(10),
            ),
            other => other,
        })?;
        // Full means a wake-up is already pending.
        let _ = self.wake_worker.clone().try_send(());
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
    pub(crate) fn job_settings(&self) -> KindSettings {
        KindSettings { lease: REPLAY_LEASE, max_attempts: 3, keep_for: Some(REPLAY_RETENTION) }
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
                end.expires_at = Some(now() + REPLAY_RETENTION);
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
                JobEnd { expires_at: Some(now() + REPLAY_RETENTION), ..JobEnd::failed(now(), reason) }
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
        let compiled = self.policies.compile(tenant, modules).await?;
        let filter = AuditFilter {
            event_type: Some(POLICY_DECISION.into()),
            from: Some(job.from),
            to: Some(job.to),
            ..AuditFilter::default()
        };
        let total = self.repos.audit.count_audit(tenant, &filter).await?.clamp(1, REPLAY_MAX_DECISIONS);
        let reads = reads_session(&job.baseline_rego) || reads_session(&job.candidate_rego);
        let mut refolded = Refolded::default();
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
            let (mut records, mut inputs) = (Vec::with_capacity(page.len()), Vec::with_capacity(page.len()));
            for record in page {
                let Some(mut input) = KeptInput::input_of(&record) else { continue };
                if let (true, Some(session)) = (reads, &record.session_id)
                    && !input.rest.contains_key("session")
                {
                    // The check's policies read no session; these do: the session as the
                    // check would have read it, folded from its records before the decision.
                    let state = self
                        .sessions
                        .state_before(tenant, session, record.seq, record.timestamp, &mut refolded)
                        .await?;
                    let context = input.rest.get("context").and_then(|c| c.as_object()).cloned().unwrap_or_default();
                    let resource = record.resource.as_deref().unwrap_or_default();
                    input.rest.insert("session".into(), session_input(&state, tenant, resource, &context));
                }
                records.push(record);
                inputs.push(input);
            }
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
        ReplayChange::NewlyDenied => report.newly_denied += 1,
        ReplayChange::NewlyAllowed => report.newly_allowed += 1,
        ReplayChange::NewlyApprovalGated => report.newly_approval_gated += 1,
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
        change: kind,
        before: b.as_str().to_owned(),
        after: a.as_str().to_owned(),
        messages,
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use crate::ports::{AuditRepo, Clock};
    use crate::services::audit::AuditEvent;
    use crate::services::policies::tests::{admin, agent, check, fields, policy};
    use crate::services::tests::harness;

    #[test]
    fn changes_are_counted_from_the_baselines_outcome_to_the_candidates() {
        use Effect::*;
        use ReplayChange::*;
        assert_eq!(change(Allow, Deny), Some(NewlyDenied));
        assert_eq!(change(RequireApproval, Error), Some(NewlyDenied));
        assert_eq!(change(Deny, Error), None, "blocked before and after");
        assert_eq!(change(Deny, Allow), Some(NewlyAllowed));
        assert_eq!(change(RequireApproval, Allow), Some(NewlyAllowed));
        assert_eq!(change(Allow, RequireApproval), Some(NewlyApprovalGated));
        assert_eq!(change(Deny, RequireApproval), None);
        assert_eq!(change(Allow, Allow), None);
    }

    /// Decisions whose checks read no session (their policies did not) are replayed, for a
    /// candidate that reads it, with the session as it stood before each: its records folded.
    #[tokio::test]
    async fn a_replay_folds_the_session_for_a_candidate_that_reads_it() {
        let h = harness();
        let a = admin(&h, "acme").await;
        let bot = agent(&h, &a, "bot", &[]).await;
        let p = h.svc.policies.create(&a, policy("guard", "when kind secret\nlabel secret_read")).await.unwrap();
        for (kind, session) in [("secret", "s1"), ("send", "s1"), ("send", "s2"), ("send", "s1")] {
            let mut req = check(&bot, kind, "x", json!({"kind": kind}));
            req.session_id = Some(session.into());
            let decided = h.svc.policies.check(&a, req).await.unwrap();
            let record = h.store.get_audit(a.tenant_id(), decided.decision_id.unwrap()).await.unwrap().unwrap();
            assert!(record.details.to_value()["input"].get("session").is_none());
        }
        h.clock.advance(std::time::Duration::from_secs(1));
        let candidate = "session secret_read\ndeny no send after a secret";
        let job = NewReplay { rego: Some(candidate.into()), ..NewReplay::default() };
        let job = h.svc.replays.start_replay(&a, p.id, job).await.unwrap();
        let claimed = h.claim(crate::model::JobKind::Replay).await.unwrap();
        h.svc.replays.run_replay(claimed).await.unwrap();
        let report = h.svc.replays.replay_status(&a, p.id, job.id).await.unwrap().report.unwrap();
        assert_eq!((report.decisions, report.replayed), (4, 4));
        // The two sends of s1 came after its secret read (the first check saw no label);
        // s2 read nothing secret.
        assert_eq!((report.newly_denied, report.newly_allowed), (2, 0), "{report:?}");
        let denied = report.examples.iter().find(|e| e.change == ReplayChange::NewlyDenied).unwrap();
        assert_eq!(
            (denied.action.as_deref(), denied.messages.as_slice()),
            (Some("send"), ["no send after a secret".to_owned()].as_slice())
        );
    }

    #[tokio::test]
    async fn a_replay_counts_what_an_earlier_version_would_change_on_recorded_inputs() {
        use crate::model::{JobKind, JobStatus, ReplayCounts};
        let h = harness();
        let a = admin(&h, "acme").await;
        let bot = agent(&h, &a, "bot", &[]).await;
        // Version 1 denies exports; version 2 (in force) asks for approval of them instead, and
        // denies deletions.
        let p = h.svc.policies.create(&a, policy("data", "when kind export\ndeny no exports")).await.unwrap();
        let v2 = policy("data", "when kind export\napprove exports need a person\nwhen kind delete\ndeny no deletions");
        let p = h.svc.policies.update(&a, p.id, v2).await.unwrap();
        assert_eq!(p.version, 2);
        for kind in ["export", "export", "delete", "read"] {
            h.svc.policies.check(&a, check(&bot, kind, "data/x", json!({"kind": kind}))).await.unwrap();
        }
        // A decision recorded before decisions kept their input is counted, not replayed.
        let mut old = AuditEvent::new(a.tenant_id(), caller_actor(&a), POLICY_DECISION).action("read");
        old.agent_id = Some(bot.id.as_uuid());
        h.svc.audit.log().record(old.details(json!({"context": {}}))).await.unwrap();

        // Bad requests name their field.
        let none = NewReplay::default();
        assert_eq!(fields(h.svc.replays.start_replay(&a, p.id, none).await.unwrap_err())[0].field, "version");
        let both = NewReplay { version: Some(1), rego: Some("deny x".into()), ..NewReplay::default() };
        assert_eq!(fields(h.svc.replays.start_replay(&a, p.id, both).await.unwrap_err())[0].field, "rego");
        let future = NewReplay { version: Some(3), ..NewReplay::default() };
        assert_eq!(fields(h.svc.replays.start_replay(&a, p.id, future).await.unwrap_err())[0].field, "version");
        let broken = NewReplay { rego: Some("oops".into()), ..NewReplay::default() };
        assert_eq!(fields(h.svc.replays.start_replay(&a, p.id, broken).await.unwrap_err())[0].field, "rego");
        let now = h.clock.now();
        let backwards = NewReplay { version: Some(1), from: Some(now), to: Some(now), ..NewReplay::default() };
        assert_eq!(fields(h.svc.replays.start_replay(&a, p.id, backwards).await.unwrap_err())[0].field, "from");

        h.clock.advance(std::time::Duration::from_secs(1));
        let job =
            h.svc.replays.start_replay(&a, p.id, NewReplay { version: Some(1), ..NewReplay::default() }).await.unwrap();
        assert_eq!((job.status, job.baseline_version, job.candidate_version), (JobStatus::Queued, 2, Some(1)));
        let claimed = h.claim(JobKind::Replay).await.unwrap();
        h.svc.replays.run_replay(claimed).await.unwrap();
        let done = h.svc.replays.replay_status(&a, p.id, job.id).await.unwrap();
        assert_eq!(done.status, JobStatus::Completed, "{done:?}");
        let report = done.report.unwrap();
        assert_eq!((report.decisions, report.replayed, report.skipped), (5, 4, 1));
        assert_eq!(report.baseline, ReplayCounts { allow: 1, deny: 1, require_approval: 2, error: 0 });
        assert_eq!(report.candidate, ReplayCounts { allow: 2, deny: 2, require_approval: 0, error: 0 });
        // Exports: gated now, denied by version 1; the deletion: denied now, allowed by version 1.
        assert_eq!((report.newly_denied, report.newly_allowed, report.newly_approval_gated), (2, 1, 0));
        let allowed = report.examples.iter().find(|e| e.change == ReplayChange::NewlyAllowed).unwrap();
        assert_eq!((allowed.action.as_deref(), allowed.before.as_str()), (Some("delete"), "deny"));
        let denied = report.examples.iter().find(|e| e.change == ReplayChange::NewlyDenied).unwrap();
        assert_eq!(denied.messages, ["no exports"]);
        assert!(!report.truncated);

        // Rego given, and the same replay seen from another tenant or policy: 404.
        let tried = NewReplay { rego: Some("deny nothing goes".into()), ..NewReplay::default() };
        let tried = h.svc.replays.start_replay(&a, p.id, tried).await.unwrap();
        assert_eq!(tried.candidate_version, None);
        let b = admin(&h, "other").await;
        assert!(matches!(h.svc.replays.replay_status(&b, p.id, job.id).await, Err(DomainError::NotFound { .. })));
        let q = h.svc.policies.create(&a, policy("q", "deny q")).await.unwrap();
        assert!(matches!(h.svc.replays.replay_status(&a, q.id, job.id).await, Err(DomainError::NotFound { .. })));
    }
}
