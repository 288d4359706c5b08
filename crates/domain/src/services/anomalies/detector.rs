//! The anomaly detector's lifecycle and its part in policy checks (spec 4.8).
//!
//! **Training** is an asynchronous task, stored like the Prompt Guard's. Any replica's
//! worker claims it under a lease (`claim_training`) and reads the tenant's audit history
//! over the task's window: its policy decisions and guard blocks. It also reads the labels
//! analysts gave to reports that name a decision (`evidence.decision_id`). The worker then
//! fits the detector off the async threads (`DetectorRun::train`) and stores it as the
//! tenant's next, active version (`finish_training`). A version change is announced on the
//! bus, so every replica loads the active one.
//!
//! **Scoring.** Each policy check is scored with the active version (none: the detector is
//! off) against the agent's live state, which this process keeps
//! (`agentgov_detect::anomaly::Recent`). Guard blocks from any replica reach that state
//! through the bus. A check above the threshold is `anomaly: true` and its risk rises.
//! The check also files a `detector` report, at most one per agent and type every 10
//! minutes, which is audited and published as `anomaly.detected`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use agentgov_detect::anomaly::synth::{SynthConfig, generate};
use agentgov_detect::anomaly::{self as detect, Detector, Kind, Metrics, Observed, OwnedEvent, Recent, TrainOptions};
use time::OffsetDateTime;
use uuid::Uuid;

use super::AnomalyService;
use crate::error::{DomainError, Result};
use crate::events::{ANOMALY_MODEL_CHANGED, GUARD_BLOCKED};
use crate::ids::{AgentId, AnomalyId, AnomalyTaskId, AuditId, TenantId};
use crate::model::{
    Actor, Agent, AnomalyEval, AnomalyFilter, AnomalyModelInfo, AnomalyModelRecord, AnomalyReport, AnomalySource,
    AnomalyStatus, AnomalyTask, AnomalyType, AuditFilter, AuditOrigin, AuditScan, JobEnd, JobStatus, JobView,
    ModelKind, Permission, Role, SeqOrder, Severity,
};
use crate::page::PageRequest;
use crate::ports::Event;
use crate::services::Caller;
use crate::services::audit::{AuditEvent, caller_actor};
use crate::services::check::round_score;
use crate::services::guard::is_recorded_block;
use crate::services::jobs::{self, ClaimedJob, KindSettings};
use crate::services::snapshots::Snapshots;

/// Days of audit history a training reads by default, and at most.
pub const DEFAULT_WINDOW_DAYS: i32 = 30;
pub const MAX_WINDOW_DAYS: i32 = 90;
/// Most decisions and guard blocks a training reads (the newest window is cut short).
const MAX_HISTORY: usize = 500_000;
/// Audit records read per page while loading a history.
const HISTORY_PAGE: u32 = 5_000;
/// Labelled reports a training reads, per label.
const MAX_LABELS: usize = 10_000;
/// A training task's lease; renewed as its history loads.
const TRAINING_LEASE: Duration = Duration::from_secs(120);
/// Claims of one task before it is failed.
const TRAINING_MAX_ATTEMPTS: i32 = 3;
/// Agents whose live state a process keeps (beyond it, the least recently used are
/// forgotten).
const MAX_LIVE_AGENTS: u64 = 100_000;
/// A detector report is filed at most once per agent and type in this long.
const REPORT_COOLDOWN_SECS: i64 = detect::eval::REPORT_COOLDOWN_SECS;
/// How long a replica keeps a tenant's parsed detector without word from the bus.
const ACTIVE_TTL: Duration = Duration::from_secs(600);
/// The system actor of detector reports.
const DETECTOR_ACTOR: &str = "anomaly-detector";

/// `POST /anomalies/detector/train`.
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct DetectorTrainRequest {
    /// Days of audit history to learn from, 1 to 90 (default 30).
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 90))]
    pub window_days: Option<i32>,
}

/// `GET /anomalies/detector/status`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = AnomalyDetectorStatus))]
pub struct DetectorStatus {
    /// The active version; 0 when the detector is off (never trained, or rolled back to 0).
    pub version: i32,
    /// `off`, `active`, or `training` (a task is queued or running).
    pub state: &'static str,
    #[serde(with = "time::serde::rfc3339::option")]
    pub trained_at: Option<OffsetDateTime>,
    /// Policy checks the active version learnt from.
    pub samples: i64,
    /// Agents with a baseline of their own.
    pub agents: i64,
    /// Scores at or above it are anomalies; `null` when off.
    pub threshold: Option<f64>,
    /// `labelled` or `contamination`; `null` when off.
    pub threshold_source: Option<String>,
    /// The queued or running training task, if any.
    pub task: Option<AnomalyTask>,
}

/// `GET /anomalies/detector/metrics`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = AnomalyDetectorMetrics))]
pub struct DetectorMetrics {
    /// The active version; 0 when off (the synthetic figures are then those a training
    /// reaches with the default options).
    pub version: i32,
    /// On analysts' labels (reports `resolved` or `false_positive` naming a decision in the
    /// training window); `null` when off.
    pub labelled: Option<AnomalyEval>,
    /// On a seeded synthetic history with injected anomalies of every type.
    pub synthetic: AnomalyEval,
}

/// A tenant's detector in force, kept in process.
#[derive(Clone)]
pub(crate) struct ActiveDetector {
    version: i32,
    detector: Option<Arc<Detector>>,
}

/// What the detector made of one check.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CheckScore {
    pub version: i32,
    pub score: f64,
    pub anomalous: bool,
    /// Its rarest feature, which names its type.
    pub top: detect::Feature,
    pub threshold: f64,
    pub features: [f64; detect::FEATURES],
}

impl CheckScore {
    pub fn kind(&self) -> Kind {
        self.top.kind()
    }
}

/// The detector's state in this process.
pub(crate) struct DetectorState {
    active: Snapshots<TenantId, ActiveDetector>,
    /// Per agent; bounded (least recently used forgotten: live state rebuilds in minutes).
    live: moka::sync::Cache<(TenantId, AgentId), Arc<Mutex<Recent>>>,
    /// When each agent's last report of each type was filed (Unix seconds, by the clock
    /// port); bounded, and nothing is kept past the cooldown.
    reported: moka::sync::Cache<(TenantId, AgentId, Kind), i64>,
    wake: futures::channel::mpsc::Sender<()>,
}

impl DetectorState {
    pub(crate) fn new(wake: futures::channel::mpsc::Sender<()>) -> Self {
        Self {
            // A model can be megabytes of JSON: parsed again only when the bus says it changed
            // (or after a resubscription), and at the latest after this long.
            active: Snapshots::new(ACTIVE_TTL, 10_000),
            live: moka::sync::Cache::new(MAX_LIVE_AGENTS),
            reported: moka::sync::Cache::builder()
                .max_capacity(MAX_LIVE_AGENTS)
                .time_to_live(Duration::from_secs(REPORT_COOLDOWN_SECS as u64))
                .build(),
            wake,
        }
    }
}

/// A claimed training task with its history, ready to run (`train`) off the async threads.
pub struct DetectorRun {
    pub task: AnomalyTask,
    token: Uuid,
    history: Vec<OwnedEvent>,
    /// Indices into `history` known to be anomalies (`true`) or not.
    labels: Vec<(usize, bool)>,
}

#[cfg(test)]
impl DetectorRun {
    /// How many decisions and blocks the run learns from.
    pub(crate) fn history_len(&self) -> usize {
        self.history.len()
    }
}

/// What a run produced.
pub struct DetectorTrained {
    trained: detect::Trained,
    synthetic: AnomalyEval,
}

impl DetectorRun {
    /// Fits the detector (CPU-bound: call it off the async threads).
    pub fn train(&self) -> DetectorTrained {
        let events: Vec<detect::Event<'_>> = self.history.iter().map(OwnedEvent::event).collect();
        DetectorTrained {
            trained: detect::train(&events, &self.labels, TrainOptions::default()),
            synthetic: synthetic_eval(),
        }
    }
}

/// Computes what is the same for every tenant (the synthetic figures) once; CPU-bound, for
/// a blocking thread as the process starts.
pub fn warm_up() {
    synthetic_eval();
}

fn eval_view(m: &Metrics) -> AnomalyEval {
    AnomalyEval {
        positives: m.positives as i64,
        negatives: m.negatives as i64,
        precision: m.precision.map(round_score),
        recall: m.recall.map(round_score),
        f1: m.f1.map(round_score),
        auc: m.auc.map(round_score),
    }
}

/// The default training's figures on the small synthetic history (the same for every
/// tenant and version: computed once per process).
fn synthetic_eval() -> AnomalyEval {
    static EVAL: OnceLock<AnomalyEval> = OnceLock::new();
    EVAL.get_or_init(|| eval_view(&detect::evaluate(&generate(&SynthConfig::small()), TrainOptions::default()).overall))
        .clone()
}

fn anomaly_type(kind: Kind) -> AnomalyType {
    match kind {
        Kind::UnusualAction => AnomalyType::UnusualAction,
        Kind::UnusualResource => AnomalyType::UnusualResource,
        Kind::RateSpike => AnomalyType::RateSpike,
        Kind::OffHours => AnomalyType::OffHours,
        Kind::DeniedBurst => AnomalyType::DeniedBurst,
        Kind::GuardAttack => AnomalyType::GuardAttack,
    }
}

fn severity(score: f64) -> Severity {
    match score {
        s if s >= 0.9 => Severity::Critical,
        s if s >= 0.8 => Severity::High,
        s if s >= 0.7 => Severity::Medium,
        _ => Severity::Low,
    }
}

impl AnomalyService {
    /// A bus event from any replica: a version change drops the tenant's detector; a guard
    /// block is noted in the agent's live state.
    pub fn on_event(&self, event: &Event) {
        if event.event_type == ANOMALY_MODEL_CHANGED {
            self.detector.active.invalidate(&event.tenant_id);
        } else if event.event_type == GUARD_BLOCKED
            && let Some(agent) = event.data.get("agent_id").and_then(|a| a.as_str()).and_then(|a| a.parse().ok())
        {
            let at = event.ts.unix_timestamp();
            let recent = self.recent(event.tenant_id, AgentId(agent));
            recent.lock().unwrap_or_else(|e| e.into_inner()).guard_block(at);
        }
    }

    /// The agent's live state, created empty.
    fn recent(&self, tenant: TenantId, agent: AgentId) -> Arc<Mutex<Recent>> {
        self.detector.live.get_with((tenant, agent), Arc::default)
    }

    /// Drops every tenant's detector (after missed announcements).
    pub fn forget_detectors(&self) {
        self.detector.active.invalidate_all();
    }

    async fn active_detector(&self, tenant: TenantId) -> Result<ActiveDetector> {
        let state = &self.detector;
        if let Some(active) = state.active.get(&tenant) {
            return Ok(active);
        }
        let generation = state.active.generation();
        let active = match self.active_record(tenant).await? {
            None => ActiveDetector { version: 0, detector: None },
            Some(record) => match serde_json::from_str::<Detector>(&record.model) {
                Ok(detector) => ActiveDetector { version: record.info.version, detector: Some(Arc::new(detector)) },
                Err(e) => {
                    tracing::error!(%tenant, version = record.info.version, error = %e, "stored anomaly detector unreadable; scoring is off");
                    ActiveDetector { version: 0, detector: None }
                }
            },
        };
        state.active.insert(tenant, active.clone(), generation);
        Ok(active)
    }

    /// Scores a check with the tenant's active detector and notes it in the agent's live
    /// state; `None` when the detector is off.
    pub(crate) async fn score_check(
        &self,
        agent: &Agent,
        action: &str,
        resource: &str,
        denied: bool,
        risk: f64,
    ) -> Result<Option<CheckScore>> {
        let active = self.active_detector(agent.tenant_id).await?;
        let Some(detector) = active.detector else { return Ok(None) };
        let at = self.ports.clock.now().unix_timestamp();
        let check = Observed::Check { action, resource, denied, risk };
        let scored = {
            let recent = self.recent(agent.tenant_id, agent.id);
            let mut recent = recent.lock().unwrap_or_else(|e| e.into_inner());
            detector.score(&mut recent, agent.id.as_uuid().as_u128(), at, check)
        };
        Ok(scored.map(|s| CheckScore {
            version: active.version,
            score: round_score(s.score),
            anomalous: s.anomalous,
            top: s.top,
            threshold: round_score(detector.threshold),
            features: s.features,
        }))
    }

    /// Files the detector's report of an anomalous check (recorded as `decision_id`),
    /// unless one of its type was filed for the agent in the last 10 minutes.
    pub(crate) async fn check_was_anomalous(
        &self,
        agent: &Agent,
        action: &str,
        resource: &str,
        score: &CheckScore,
        decision_id: AuditId,
    ) -> Result<Option<AnomalyReport>> {
        let now = self.ports.clock.now();
        let key = (agent.tenant_id, agent.id, score.kind());
        if self.detector.reported.get(&key).is_some_and(|at| now.unix_timestamp() - at < REPORT_COOLDOWN_SECS) {
            return Ok(None);
        }
        self.detector.reported.insert(key, now.unix_timestamp());
        let features: serde_json::Map<String, serde_json::Value> = detect::Feature::ALL
            .iter()
            // Features are not bounded by 1: rounded, not clamped.
            .map(|f| (f.name().to_owned(), serde_json::json!((score.features[*f as usize] * 1e4).round() / 1e4)))
            .collect();
        let kind = anomaly_type(score.kind());
        let mut evidence = crate::model::JsonObject::new();
        evidence.insert("decision_id".into(), serde_json::json!(decision_id));
        evidence.insert("action".into(), serde_json::json!(action));
        evidence.insert("resource".into(), serde_json::json!(resource));
        evidence.insert("features".into(), serde_json::Value::Object(features));
        evidence.insert("threshold".into(), serde_json::json!(score.threshold));
        let report = AnomalyReport {
            id: AnomalyId(self.ports.ids.new_id()),
            tenant_id: agent.tenant_id,
            agent_id: agent.id,
            anomaly_type: kind,
            severity: severity(score.score),
            score: score.score,
            description: format!(
                "{}: {action} on {resource} scored {} (threshold {}), by its {}",
                kind.as_str(),
                score.score,
                score.threshold,
                score.top.name()
            ),
            evidence,
            source: AnomalySource::Detector,
            status: AnomalyStatus::Open,
            model_version: Some(score.version),
            reported_by: Actor::system(DETECTOR_ACTOR),
            status_changed_by: None,
            status_changed_at: None,
            created_at: now,
            updated_at: now,
        };
        self.file(report, Actor::system(DETECTOR_ACTOR)).await.map(Some)
    }

    /// `POST /anomalies/detector/train` (admin): queues a training task (202); 409 while
    /// one is queued or running.
    pub async fn start_training(&self, caller: &Caller, req: DetectorTrainRequest) -> Result<AnomalyTask> {
        caller.require_role(Role::Admin)?;
        caller.require_permission(Permission::AnomaliesWrite)?;
        let window_days = req.window_days.unwrap_or(DEFAULT_WINDOW_DAYS);
        if !(1..=MAX_WINDOW_DAYS).contains(&window_days) {
            return Err(DomainError::invalid("window_days", "must be between 1 and 90"));
        }
        let task = AnomalyTask {
            id: AnomalyTaskId(self.ports.ids.new_id()),
            tenant_id: caller.tenant_id(),
            requested_by: caller_actor(caller),
            status: JobStatus::Queued,
            progress: 0.0,
            error: None,
            model_version: None,
            window_days,
            created_at: self.ports.clock.now(),
            started_at: None,
            finished_at: None,
            attempts: 0,
            lease: None,
        };
        self.repos.jobs.enqueue_job(&task.to_job(), 1).await.map_err(|e| match e {
            DomainError::Conflict(m) if m == crate::ports::store::JOB_LIMIT_REACHED => {
                DomainError::Conflict("a detector training is already queued or running; wait for it".into())
            }
            other => other,
        })?;
        let event = AuditEvent::new(task.tenant_id, caller_actor(caller), "anomaly.training.requested")
            .action("train")
            .resource(format!("anomalies/detector/tasks/{}", task.id))
            .details(serde_json::json!({"task_id": task.id, "window_days": window_days}));
        self.audit.record(event).await?;
        let _ = self.detector.wake.clone().try_send(());
        Ok(task)
    }

    /// `GET /anomalies/detector/tasks/{id}` (`anomalies:read`).
    pub async fn training_task(&self, caller: &Caller, id: AnomalyTaskId) -> Result<AnomalyTask> {
        caller.require_permission(Permission::AnomaliesRead)?;
        jobs::get(self.repos.jobs.as_ref(), Some(caller.tenant_id()), id.0)
            .await?
            .ok_or_else(|| DomainError::not_found("training task", id))
    }

    /// `GET /anomalies/detector/versions` (`anomalies:read`): newest first.
    pub async fn detector_versions(&self, caller: &Caller) -> Result<Vec<AnomalyModelInfo>> {
        caller.require_permission(Permission::AnomaliesRead)?;
        let versions = self.repos.models.list_models(caller.tenant_id(), ModelKind::Anomaly).await?;
        versions.into_iter().map(AnomalyModelInfo::from_version).collect()
    }

    /// `POST /anomalies/detector/rollback/{version}` (admin): makes `version` the active
    /// one (0 turns the detector off); 404 when the tenant has no such version.
    pub async fn rollback_detector(&self, caller: &Caller, version: i32) -> Result<DetectorStatus> {
        caller.require_role(Role::Admin)?;
        caller.require_permission(Permission::AnomaliesWrite)?;
        let tenant = caller.tenant_id();
        if version < 0 || !self.repos.models.activate_model(tenant, ModelKind::Anomaly, version).await? {
            return Err(DomainError::not_found("detector version", version));
        }
        self.model_changed(tenant, version).await;
        let event = AuditEvent::new(tenant, caller_actor(caller), "anomaly.model.activated")
            .action("rollback")
            .resource(format!("anomalies/detector/versions/{version}"))
            .details(serde_json::json!({"version": version}));
        self.audit.record(event).await?;
        self.status_of(tenant).await
    }

    async fn model_changed(&self, tenant: TenantId, version: i32) {
        self.detector.active.invalidate(&tenant);
        self.ports.announce(tenant, ANOMALY_MODEL_CHANGED, serde_json::json!({"version": version})).await;
    }

    /// `GET /anomalies/detector/status` (`anomalies:read`).
    pub async fn detector_status(&self, caller: &Caller) -> Result<DetectorStatus> {
        caller.require_permission(Permission::AnomaliesRead)?;
        self.status_of(caller.tenant_id()).await
    }

    async fn status_of(&self, tenant: TenantId) -> Result<DetectorStatus> {
        // The store, not the cache: status is what every replica will use.
        let info = self.active_info(tenant).await?;
        let task = jobs::active::<AnomalyTask>(self.repos.jobs.as_ref(), tenant).await?;
        let state = match (&task, &info) {
            (Some(_), _) => "training",
            (None, Some(_)) => "active",
            (None, None) => "off",
        };
        Ok(DetectorStatus {
            version: info.as_ref().map_or(0, |i| i.version),
            state,
            trained_at: info.as_ref().map(|i| i.trained_at),
            samples: info.as_ref().map_or(0, |i| i.samples),
            agents: info.as_ref().map_or(0, |i| i.agents),
            threshold: info.as_ref().map(|i| i.threshold),
            threshold_source: info.as_ref().map(|i| i.threshold_source.clone()),
            task,
        })
    }

    /// The active version's figures, read from the store (what every replica will use);
    /// `None` when the detector is off.
    async fn active_info(&self, tenant: TenantId) -> Result<Option<AnomalyModelInfo>> {
        // The versions without their models: status and metrics need only the figures.
        let versions = self.repos.models.list_models(tenant, ModelKind::Anomaly).await?;
        versions.into_iter().find(|v| v.active).map(AnomalyModelInfo::from_version).transpose()
    }

    /// The active version with its model; `None` when the detector is off.
    async fn active_record(&self, tenant: TenantId) -> Result<Option<AnomalyModelRecord>> {
        let models = &self.repos.models;
        let version = models.active_model(tenant, ModelKind::Anomaly).await?;
        if version == 0 {
            return Ok(None);
        }
        let stored = models.get_model(tenant, ModelKind::Anomaly, version).await?;
        stored.map(AnomalyModelRecord::from_stored).transpose()
    }

    /// `GET /anomalies/detector/metrics` (`anomalies:read`).
    pub async fn detector_metrics(&self, caller: &Caller) -> Result<DetectorMetrics> {
        caller.require_permission(Permission::AnomaliesRead)?;
        let info = self.active_info(caller.tenant_id()).await?;
        Ok(match info {
            Some(info) => {
                DetectorMetrics { version: info.version, labelled: Some(info.labelled), synthetic: info.synthetic }
            }
            None => DetectorMetrics { version: 0, labelled: None, synthetic: synthetic_eval() },
        })
    }

    /// How the job queue treats detector trainings.
    pub(crate) fn job_settings(&self) -> KindSettings {
        KindSettings { lease: TRAINING_LEASE, max_attempts: TRAINING_MAX_ATTEMPTS, keep_for: None }
    }

    /// Loads the history of a claimed training (of kind `anomaly_training`); `None` when
    /// the lease was lost meanwhile (another worker has it now).
    pub async fn begin_training(&self, claimed: ClaimedJob) -> Result<Option<DetectorRun>> {
        let task = AnomalyTask::from_job(claimed.job)?;
        let mut run = DetectorRun { task, token: claimed.token, history: Vec::new(), labels: Vec::new() };
        match self.load_history(&mut run).await {
            Ok(()) => Ok(Some(run)),
            Err(DomainError::Conflict(_)) => Ok(None),
            Err(e) => {
                self.fail_training(&run, "could not read the audit history; start it again").await?;
                Err(e)
            }
        }
    }

    /// Reads the task's window of decisions and guard blocks (oldest first, at most
    /// `MAX_HISTORY`), and the labels of reports that name a decision in it.
    async fn load_history(&self, run: &mut DetectorRun) -> Result<()> {
        let tenant = run.task.tenant_id;
        let from = self.ports.clock.now() - time::Duration::days(i64::from(run.task.window_days));
        let mut decision_index: HashMap<Uuid, usize> = HashMap::new();
        for (event_type, guard) in [("policy.decision", false), (GUARD_BLOCKED, true)] {
            let filter =
                AuditFilter { event_type: Some(event_type.to_owned()), from: Some(from), ..AuditFilter::default() };
            let mut after_seq = None;
            while run.history.len() < MAX_HISTORY {
                let scan = AuditScan { order: SeqOrder::Asc, after_seq, limit: HISTORY_PAGE };
                let page = self.repos.audit.scan_audit(tenant, &filter, scan).await?;
                let Some(last) = page.last() else { break };
                after_seq = Some(last.seq);
                let full = page.len() == HISTORY_PAGE as usize;
                for r in page {
                    // Only what the service recorded: a check's decision, a screening's block.
                    let recorded = if guard { is_recorded_block(&r) } else { r.origin == AuditOrigin::Service };
                    let (true, Some(agent)) = (recorded, r.agent_id) else { continue };
                    if !guard {
                        decision_index.insert(r.id.0, run.history.len());
                    }
                    run.history.push(OwnedEvent {
                        agent: agent.as_u128(),
                        at: r.timestamp.unix_timestamp(),
                        action: r.action.unwrap_or_default(),
                        resource: r.resource.unwrap_or_default(),
                        denied: r.decision.as_deref() == Some("deny"),
                        risk: r.risk_score.unwrap_or(0.0),
                        guard,
                    });
                }
                self.renew(run, 0.5 * run.history.len() as f64 / MAX_HISTORY as f64).await?;
                if !full {
                    break;
                }
            }
        }
        for (status, anomaly) in [(AnomalyStatus::Resolved, true), (AnomalyStatus::FalsePositive, false)] {
            let filter = AnomalyFilter { status: Some(status), from: Some(from), ..AnomalyFilter::default() };
            let mut page = PageRequest::first(500);
            let mut read = 0;
            loop {
                let reports = self.repos.anomalies.list_anomalies(tenant, &filter, &page).await?;
                read += reports.items.len();
                for report in &reports.items {
                    let decision =
                        report.evidence.get("decision_id").and_then(|d| d.as_str()).and_then(|d| d.parse().ok());
                    if let Some(&i) = decision.and_then(|d: Uuid| decision_index.get(&d)) {
                        run.labels.push((i, anomaly));
                    }
                }
                let next = reports.items.last().map(|r| r.id.0);
                match (reports.next_cursor, next) {
                    (Some(_), Some(after)) if read < MAX_LABELS => {
                        page = PageRequest { limit: 500, after: Some(after) }
                    }
                    _ => break,
                }
            }
        }
        Ok(())
    }

    /// Stores the run's progress and renews its lease; `Conflict` when the lease was lost.
    async fn renew(&self, run: &DetectorRun, progress: f64) -> Result<()> {
        let until = self.ports.clock.now() + TRAINING_LEASE;
        self.repos.jobs.renew_job(run.task.id.0, run.token, progress.min(0.99), None, until).await
    }

    /// Marks the run's task failed (nothing if it was taken over meanwhile).
    pub async fn fail_training(&self, run: &DetectorRun, error: &str) -> Result<()> {
        let end = JobEnd::failed(self.ports.clock.now(), error);
        jobs::unless_lost(self.repos.jobs.finish_job(run.task.id.0, run.token, &end).await).map(drop)
    }

    /// Stores what a run produced as the tenant's next, active version.
    pub async fn finish_training(&self, run: &DetectorRun, result: DetectorTrained) -> Result<()> {
        let DetectorTrained { trained, synthetic } = result;
        let now = self.ports.clock.now();
        let tenant = run.task.tenant_id;
        let threshold = trained.detector.threshold;
        let labelled: Vec<(f64, bool)> = run
            .labels
            .iter()
            .filter_map(|&(i, anomaly)| trained.scores.get(i).copied().flatten().map(|s| (s, anomaly)))
            .collect();
        let model = serde_json::to_string(&trained.detector).map_err(DomainError::internal)?;
        let record = AnomalyModelRecord {
            info: AnomalyModelInfo {
                version: 0,
                tenant_id: tenant,
                active: true,
                samples: trained.samples as i64,
                agents: trained.agents as i64,
                threshold: round_score(threshold),
                threshold_source: trained.threshold_source.to_owned(),
                labelled: eval_view(&Metrics::of(&labelled, threshold)),
                synthetic,
                task_id: Some(run.task.id),
                trained_at: now,
            },
            model,
        };
        let stored = record.to_stored()?;
        let completed = self.repos.models.complete_training(run.task.id.0, run.token, now, &stored).await;
        // Taken over by another worker meanwhile: keep nothing.
        let Some(version) = jobs::unless_lost(completed)? else { return Ok(()) };
        self.model_changed(tenant, version).await;
        let event = AuditEvent::new(tenant, run.task.requested_by.clone(), "anomaly.model.trained")
            .action("train")
            .resource(format!("anomalies/detector/versions/{version}"))
            .details(serde_json::json!({
                "version": version, "task_id": run.task.id, "samples": trained.samples, "agents": trained.agents,
                "threshold": record.info.threshold, "threshold_source": trained.threshold_source,
                "labels": labelled.len(),
            }));
        self.audit.record_after(event).await;
        Ok(())
    }
}
