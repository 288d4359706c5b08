//! The Prompt Guard (spec 4.2): screening prompts and outputs for injection, jailbreak and
//! leakage, and the lifecycle of each tenant's trained detector.
//!
//! Screening runs `agentgov_detect::guard` with the tenant's active model: the built-in
//! default (version 0) until the tenant trains one. A blocked text is audited
//! (`guard.blocked`, the record's id is the validation id, with a redacted excerpt that
//! feedback can later refer to) and published. Counts per verdict and latency bucket are
//! summed in process and added to the store every few seconds (`flush_stats`), so
//! `/guard/stats` covers every replica.
//!
//! Training is an asynchronous task stored like an export: any replica's worker claims it
//! under a lease (`claim_training`), fits a model on the built-in corpus, the tenant's
//! feedback and the examples sent with the request (`TrainingRun::train`, CPU-bound: the
//! caller runs it off the async threads), reports progress and notices cancellation
//! (`report_progress`), and stores the result as the tenant's next, active version
//! (`finish_training`). A model change drops the tenant's detector here and, through the
//! bus, on every replica.

#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::{Duration, Instant};

use agentgov_detect::guard::{self as detect, Detector, Example, Label, Screen, TrainOptions};
pub use agentgov_detect::guard::{TrainError, Trained};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::agents::AgentService;
use super::audit::{AuditEvent, AuditLog, caller_actor};
use super::counts::{PendingCounts, hour_of, hour_start};
use super::jobs::{self, ClaimedJob, KindSettings};
use super::snapshots::Snapshots;
use super::{Caller, Ports};
use crate::error::{DomainError, Result, Violations};
use crate::events::{GUARD_BLOCKED, GUARD_MODEL_CHANGED, TENANT_UPDATED};
use crate::ids::{AgentId, AuditId, GuardFeedbackId, GuardTaskId, TenantId};
use crate::model::{
    AuditOrigin, AuditRecord, GUARD_LATENCY_BUCKETS_US, GuardClassMetrics, GuardDirection, GuardExample, GuardFeedback,
    GuardFeedbackKind, GuardLabel, GuardMetrics, GuardModelInfo, GuardModelRecord, GuardScores, GuardStatsKey,
    GuardTask, JobEnd, JobKind, JobStatus, JobView, ModelKind, Permission, guard_latency_bucket,
};
use crate::ports::{Event, OffloadError};

/// Largest text accepted for screening.
pub const MAX_PROMPT_BYTES: usize = 512 * 1024;
/// Largest system prompt accepted.
pub const MAX_SYSTEM_PROMPT_BYTES: usize = 64 * 1024;
/// Largest text of one training example or one piece of feedback.
pub const MAX_EXAMPLE_BYTES: usize = 16 * 1024;
/// Most examples sent with one training request.
pub const MAX_TRAINING_EXAMPLES: usize = 10_000;
/// The component name a screening's guardrail span carries.
const GUARD_COMPONENT: &str = "agentgov.prompt_guard";
/// How much of a blocked text its audit record keeps (secrets redacted).
const EXCERPT_BYTES: usize = 16 * 1024;
/// Texts longer than this are screened on the shared CPU pool, like those the encoder reads.
const INLINE_MAX_BYTES: usize = 64 * 1024;
/// How long a screening on the pool may take, queueing included.
const SCREEN_BUDGET: Duration = Duration::from_secs(5);
/// Most feedback a training run learns from (the newest are kept).
const MAX_FEEDBACK: i64 = 50_000;

/// Tunables of the guard.
#[derive(Debug, Clone)]
pub struct GuardSettings {
    /// How long a tenant's detector is kept without a change being announced.
    pub cache_ttl: Duration,
    /// A training task's lease; renewed with each progress report.
    pub training_lease: Duration,
    /// Training gives up after this many attempts (a worker that died each time).
    pub training_max_attempts: i32,
}

impl Default for GuardSettings {
    fn default() -> Self {
        Self { cache_ttl: Duration::from_secs(60), training_lease: Duration::from_secs(60), training_max_attempts: 3 }
    }
}

/// `POST /guard/validate`.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ValidateRequest {
    /// The text to screen: a prompt, or a model's output (`direction: "output"`); 1 byte to
    /// 512 KiB. Long texts are read whole, in windows.
    #[cfg_attr(feature = "openapi", schema(min_length = 1))]
    pub prompt: String,
    /// The agent the text is for or from (a UUID of the caller's tenant); recorded with a
    /// blocked text.
    #[cfg_attr(feature = "openapi", schema(format = Uuid))]
    pub agent_id: Option<String>,
    /// The application's system prompt, at most 64 KiB: an output that repeats it is
    /// leakage.
    pub system_prompt: Option<String>,
    /// `input` (default) or `output`.
    #[serde(default)]
    pub direction: GuardDirection,
}

/// The answer of `POST /guard/validate`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Validation {
    /// `false` when the text is an attack.
    pub safe: bool,
    pub verdict: GuardLabel,
    /// How likely the text is an attack of any kind (0..1); blocked at or above `threshold`.
    pub score: f64,
    pub scores: GuardScores,
    /// What led to the verdict: `rule:<name>`, `secret:<kind>`, `obfuscation:<kind>`,
    /// `decoded:<encoding>`, `classifier:<kind>`, `system_prompt_echo`.
    pub reasons: Vec<String>,
    /// The tenant's active model version (0: the built-in default).
    pub model_version: i32,
    pub threshold: f64,
    /// Time spent screening, in milliseconds.
    pub latency_ms: f64,
    /// Refer to this validation in feedback; a blocked one is the id of its audit record.
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = Uuid))]
    pub validation_id: Uuid,
}

/// The `category` of feedback that says a text is an attack, as the document states it.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(rename_all = "snake_case"))]
#[expect(dead_code, reason = "never built: it only names the values in the OpenAPI document")]
enum AttackCategory {
    Injection,
    Jailbreak,
    Leakage,
}

/// `POST /guard/detector/feedback`: a validation (by id) or a text, and what it really is.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct FeedbackRequest {
    /// A blocked validation of the tenant (its text is taken from its audit record).
    #[cfg_attr(feature = "openapi", schema(format = Uuid))]
    pub validation_id: Option<String>,
    /// The text itself, at most 16 KiB (required for a validation that was not blocked).
    #[cfg_attr(feature = "openapi", schema(pattern = r"\S"))]
    pub prompt: Option<String>,
    /// `false_positive` (the text is benign) or `attack`.
    #[cfg_attr(feature = "openapi", schema(value_type = crate::model::guard::GuardFeedbackKind))]
    pub label: String,
    /// For an attack: `injection`, `jailbreak` or `leakage`. Default: the blocked
    /// validation's verdict, else the detector's likeliest kind.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<AttackCategory>))]
    pub category: Option<String>,
}

/// `POST /guard/detector/train` (JSON form): labelled examples to learn from besides the
/// built-in corpus and the tenant's feedback.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct TrainRequest {
    /// At most 10,000, each text at most 16 KiB.
    #[serde(default, deserialize_with = "crate::model::object::vec")]
    #[cfg_attr(feature = "openapi", schema(max_items = 10000))]
    pub examples: Vec<GuardExample>,
}

/// `GET /guard/detector/status`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = GuardDetectorStatus))]
pub struct DetectorStatus {
    /// The active version (0: the built-in default).
    pub version: i32,
    /// `builtin` or `trained`.
    pub source: &'static str,
    /// The built-in model's name (the corpus and training it came from).
    pub builtin_model: &'static str,
    /// The model's own threshold, calibrated at training.
    pub model_threshold: f64,
    /// The threshold in force: the tenant's `settings.guard_threshold`, else the model's.
    pub threshold: f64,
    #[serde(with = "time::serde::rfc3339::option")]
    pub trained_at: Option<time::OffsetDateTime>,
    /// Examples the active model was fitted on.
    pub samples: i64,
    /// `idle`, or `training` while a task is queued or running.
    pub state: &'static str,
    /// The queued or running training task, if any.
    pub task: Option<GuardTask>,
}

/// `GET /guard/detector/metrics`: the active model on the held-out split of its data.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = GuardDetectorMetrics))]
pub struct DetectorMetrics {
    pub version: i32,
    pub metrics: GuardMetrics,
    /// The stages this process runs with the active model.
    pub stages: Vec<GuardStage>,
    /// What the active model's thresholds were calibrated on.
    pub calibration: GuardCalibration,
}

/// One stage of the detector and whether it runs.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct GuardStage {
    /// `rules`, `ngram` or `encoder`.
    pub name: &'static str,
    pub active: bool,
    /// What it reads.
    pub reads: &'static str,
    /// The model it runs, for the encoder.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<&'static str>,
    /// Why it is off.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// The benign texts a model's thresholds were calibrated on.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct GuardCalibration {
    pub set: String,
    /// Texts in it (0 when not known).
    pub size: i64,
    /// The share of them the threshold may flag.
    pub target_false_positive_rate: f64,
}

/// `GET /guard/stats`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct GuardStats {
    /// The window counted: the last `window_hours` hours, this one included.
    pub window_hours: i64,
    pub total: i64,
    /// Screenings per verdict.
    pub by_verdict: HashMap<GuardLabel, i64>,
    pub blocked: i64,
    /// `blocked / total` (0 when there were none).
    pub block_rate: f64,
    /// Latency percentiles in milliseconds, as the upper bound of their bucket (`null`
    /// when there were no screenings).
    pub latency_ms_p50: Option<f64>,
    pub latency_ms_p99: Option<f64>,
    /// Every hour of the window, oldest first, empty ones included.
    pub series: Vec<GuardStatsHour>,
}

/// One hour of [`GuardStats`].
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct GuardStatsHour {
    /// The hour's first instant.
    #[serde(with = "time::serde::rfc3339")]
    pub hour: time::OffsetDateTime,
    pub total: i64,
    /// Screenings per verdict, every verdict named.
    pub by_verdict: HashMap<GuardLabel, i64>,
}

/// `GET /guard/health`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct GuardHealth {
    pub status: &'static str,
    pub builtin_model: &'static str,
    /// The built-in model's calibrated threshold (a tenant's model has its own).
    pub default_threshold: f64,
    pub detectors: Vec<&'static str>,
    pub rules: usize,
    pub max_prompt_bytes: usize,
    /// The stages this process runs with the built-in model.
    pub stages: Vec<GuardStage>,
    /// What the built-in model's thresholds were calibrated on.
    pub calibration: GuardCalibration,
}

/// A tenant's detector in force, kept in process.
#[derive(Clone)]
struct Active {
    version: i32,
    detector: Arc<Detector>,
    info: Option<GuardModelInfo>,
    /// The tenant's own threshold, over the model's.
    threshold: Option<f64>,
}

impl Active {
    fn threshold(&self) -> f64 {
        // A model's threshold has four decimals (`calibrate`); read back from `f32`, it is
        // rounded to them again rather than shown as 0.710711658…
        self.threshold.unwrap_or(rounded(self.detector.threshold))
    }
}

super::ports::repos!(Repos {
    guard: GuardRepo,
    tenants: TenantRepo,
    audit: AuditRepo,
    jobs: JobQueue,
    models: ModelRegistry
});
#[derive(Clone)]
pub struct GuardService {
    inner: Arc<Inner>,
}

struct Inner {
    repos: Repos,
    ports: Ports,
    log: AuditLog,
    /// Agents named by a screening are looked up through its snapshots, as checks do.
    agents: AgentService,
    settings: GuardSettings,
    active: Snapshots<TenantId, Active>,
    /// Counts not yet added to the store.
    stats: PendingCounts<GuardStatsKey>,
    wake: futures::channel::mpsc::Sender<()>,
    /// When this process started: when it trained the built-in model.
    started: time::OffsetDateTime,
}

/// A claimed training task, ready to run (`train`) off the async threads.
pub struct TrainingRun {
    pub task: GuardTask,
    token: Uuid,
    examples: Vec<Example>,
    tenant_examples: i64,
    cancel: Arc<AtomicBool>,
    progress: Arc<AtomicU32>,
}

impl TrainingRun {
    /// Fits the model (CPU-bound, seconds): run it on a blocking thread (`detect::train_tenant`).
    pub fn train(&self) -> std::result::Result<Trained, TrainError> {
        detect::train_tenant(&self.examples, self.tenant_examples as usize, &mut |share| {
            self.progress.store(share.to_bits(), Ordering::Relaxed);
            !self.cancel.load(Ordering::Relaxed)
        })
    }

    /// The share done so far (0..1).
    pub fn progress(&self) -> f64 {
        f64::from(f32::from_bits(self.progress.load(Ordering::Relaxed)))
    }
}

fn label_of(l: GuardLabel) -> Label {
    match l {
        GuardLabel::Benign => Label::Benign,
        GuardLabel::Injection => Label::Injection,
        GuardLabel::Jailbreak => Label::Jailbreak,
        GuardLabel::Leakage => Label::Leakage,
    }
}

fn guard_label(l: Label) -> GuardLabel {
    match l {
        Label::Benign => GuardLabel::Benign,
        Label::Injection => GuardLabel::Injection,
        Label::Jailbreak => GuardLabel::Jailbreak,
        Label::Leakage => GuardLabel::Leakage,
    }
}

fn rounded(v: f32) -> f64 {
    (f64::from(v) * 10_000.0).round() / 10_000.0
}

/// The detector's metrics as the API shows them.
fn metrics_view(m: &detect::Metrics) -> GuardMetrics {
    GuardMetrics {
        holdout_size: m.size as i64,
        threshold: rounded(m.threshold),
        classes: m
            .classes
            .iter()
            .map(|c| GuardClassMetrics {
                label: guard_label(c.label),
                precision: rounded(c.precision),
                recall: rounded(c.recall),
                f1: rounded(c.f1),
                support: c.support as i64,
            })
            .collect(),
        attack_recall: rounded(m.attack_recall),
        false_positive_rate: rounded(m.false_positive_rate),
        false_positive_rates: scores_view(m.false_positive_rates),
    }
}

/// Per-attack values (in `Label::ATTACKS` order) as the API shows them.
fn scores_view(s: [f32; 3]) -> GuardScores {
    GuardScores { injection: rounded(s[0]), jailbreak: rounded(s[1]), leakage: rounded(s[2]) }
}

/// `value` parsed as a UUID; a malformed one is noted against `field`.
fn uuid_field(v: &mut Violations, field: &str, value: Option<&str>) -> Option<Uuid> {
    let parsed = value.map(str::parse::<Uuid>)?;
    if parsed.is_err() {
        v.add(field, "must be a UUID");
    }
    parsed.ok()
}

/// `text` with every secret the leak detectors find (keys, tokens, private keys, …) replaced
/// by `[REDACTED:<kind>]`; `None` when there is none.
pub fn redact_secrets(text: &str) -> Option<String> {
    let findings = detect::leak::secrets(text);
    if findings.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for finding in findings {
        if finding.span.start < at {
            continue;
        }
        out.push_str(text.get(at..finding.span.start).unwrap_or(""));
        out.push_str(&format!("[REDACTED:{}]", finding.rule));
        at = finding.span.end;
    }
    out.push_str(text.get(at..).unwrap_or(""));
    Some(out)
}

/// `text` as [`redact_secrets`] leaves it, cut to at most `EXCERPT_BYTES` (at a character
/// boundary).
fn redacted_excerpt(text: &str) -> String {
    match redact_secrets(text) {
        Some(mut out) => {
            out.truncate(out.floor_char_boundary(EXCERPT_BYTES));
            out
        }
        None => text[..text.floor_char_boundary(EXCERPT_BYTES)].to_owned(),
    }
}

/// What a blocked validation's audit record holds.
#[derive(Serialize, Deserialize)]
struct BlockedDetails {
    validation_id: Uuid,
    verdict: GuardLabel,
    score: f64,
    scores: GuardScores,
    reasons: Vec<String>,
    model_version: i32,
    threshold: f64,
    direction: GuardDirection,
    /// The text, secrets redacted, at most 16 KiB.
    excerpt: String,
    /// The caller's trace (`traceparent`), as 32 hex digits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    trace_id: Option<String>,
}

/// What a `guard.blocked` record holds, only if the service wrote it: of the service's
/// origin (clients may not write `guard.` types), and named by the validation's own id (a
/// screening's record is), which no client can choose; this also tells apart a record a
/// client wrote under that type before the namespace was reserved.
fn blocked_details(r: &AuditRecord) -> Option<BlockedDetails> {
    if r.event_type != GUARD_BLOCKED || r.origin != AuditOrigin::Service {
        return None;
    }
    serde_json::from_str::<BlockedDetails>(r.details.as_str()).ok().filter(|d| d.validation_id == r.id.0)
}

/// Whether `r` is a blocked screening the service recorded (see [`blocked_details`]).
pub(crate) fn is_recorded_block(r: &AuditRecord) -> bool {
    blocked_details(r).is_some()
}

/// Loads the built-in model and the encoder now (about a second), so the first screening
/// does not wait for them, and says whether the encoder stage is on: run it on a blocking
/// thread at start-up.
pub fn warm_up() {
    let _ = detect::default_detector();
    match detect::encoder::shared_error() {
        None => tracing::info!(encoder = detect::encoder::NAME, "guard: encoder stage on"),
        Some(reason) => tracing::warn!(
            encoder = detect::encoder::NAME,
            reason,
            "guard: encoder stage off (texts in other languages than English are read by the rules and the n-gram stage only); install it with `cargo xtask guard-models`"
        ),
    }
}

/// The stages a detector runs in this process.
fn stages_of(detector: &Detector) -> Vec<GuardStage> {
    let encoder_reason = match (detect::encoder::shared_error(), &detector.cascade) {
        (Some(reason), _) => Some(reason.to_string()),
        (None, None) => Some("the model has no encoder head (trained while the encoder was off)".into()),
        (None, Some(_)) => None,
    };
    vec![
        GuardStage { name: "rules", active: true, reads: "every text, whole", model: None, reason: None },
        GuardStage {
            name: "ngram",
            active: true,
            reads: "every text in English (and any text when the encoder is off), in windows",
            model: None,
            reason: None,
        },
        GuardStage {
            name: "encoder",
            active: encoder_reason.is_none(),
            reads: "texts in other languages: the start and the most suspicious window",
            model: Some(detect::encoder::NAME),
            reason: encoder_reason,
        },
    ]
}

/// The built-in model's calibration set.
fn builtin_calibration() -> GuardCalibration {
    let d = detect::builtin_description();
    GuardCalibration {
        set: d["calibration"]["set"].as_str().unwrap_or("unknown").to_string(),
        size: d["calibration"]["size"].as_i64().unwrap_or(0),
        target_false_positive_rate: d["calibration"]["target_false_positive_rate"].as_f64().unwrap_or(0.0),
    }
}

impl GuardService {
    pub fn new(
        ports: Ports,
        repos: Repos,
        log: AuditLog,
        agents: AgentService,
        settings: GuardSettings,
        wake: futures::channel::mpsc::Sender<()>,
    ) -> Self {
        let active = Snapshots::new(settings.cache_ttl, 10_000);
        let started = ports.clock.now();
        let stats = PendingCounts::default();
        Self { inner: Arc::new(Inner { ports, repos, log, agents, settings, active, stats, wake, started }) }
    }

    fn ports(&self) -> &Ports {
        &self.inner.ports
    }

    fn repos(&self) -> &Repos {
        &self.inner.repos
    }

    /// How the job queue treats trainings.
    pub(crate) fn job_settings(&self) -> KindSettings {
        let s = &self.inner.settings;
        KindSettings { lease: s.training_lease, max_attempts: s.training_max_attempts, keep_for: None }
    }

    /// Drops the tenant's detector (its model or threshold changed).
    pub(crate) fn forget_tenant(&self, tenant: TenantId) {
        self.inner.active.invalidate(&tenant);
    }

    /// Drops every tenant's detector (after missed announcements).
    pub fn forget_detectors(&self) {
        self.inner.active.invalidate_all();
    }

    /// A bus event from any replica: a model change drops the tenant's detector.
    pub fn on_event(&self, event: &Event) {
        if event.event_type == GUARD_MODEL_CHANGED || event.event_type == TENANT_UPDATED {
            self.forget_tenant(event.tenant_id);
        }
    }

    /// The tenant's detector in force: from the cache, else loaded.
    async fn active(&self, tenant: TenantId) -> Result<Active> {
        if let Some(active) = self.inner.active.get(&tenant) {
            return Ok(active);
        }
        let generation = self.inner.active.generation();
        let active = self.load_active(tenant).await?;
        self.inner.active.insert(tenant, active.clone(), generation);
        Ok(active)
    }

    /// The tenant's detector in force, read from the store.
    async fn load_active(&self, tenant: TenantId) -> Result<Active> {
        let repos = self.repos();
        let threshold = match repos.tenants.get_tenant(tenant).await? {
            Some(t) => t.settings.guard_threshold,
            None => return Err(DomainError::not_found("tenant", tenant)),
        };
        let version = repos.models.active_model(tenant, ModelKind::Guard).await?;
        let mut active =
            Active { version: 0, detector: Arc::new(detect::default_detector().clone()), info: None, threshold };
        if version > 0 {
            let stored = repos.models.get_model(tenant, ModelKind::Guard, version).await?;
            match stored.map(GuardModelRecord::from_stored).transpose()? {
                Some(record) => match Detector::from_bytes(&record.weights, record.info.threshold as f32) {
                    Ok(detector) => {
                        active.detector = Arc::new(detector);
                        active.version = version;
                        active.info = Some(record.info);
                    }
                    Err(e) => {
                        tracing::error!(%tenant, version, error = %e, "stored guard model unreadable; using the built-in")
                    }
                },
                None => tracing::warn!(%tenant, version, "active guard model vanished; using the built-in"),
            }
        }
        Ok(active)
    }

    /// Screens a text with the tenant's detector.
    pub async fn validate(&self, caller: &Caller, req: ValidateRequest) -> Result<Validation> {
        caller.require_permission(Permission::GuardValidate)?;
        let tenant = caller.tenant_id();
        let mut v = Violations::new();
        v.check(!req.prompt.is_empty(), "prompt", "must not be empty");
        v.check(req.prompt.len() <= MAX_PROMPT_BYTES, "prompt", "must be at most 524,288 bytes");
        if let Some(system) = &req.system_prompt {
            v.check(system.len() <= MAX_SYSTEM_PROMPT_BYTES, "system_prompt", "must be at most 65,536 bytes");
        }
        let agent = uuid_field(&mut v, "agent_id", req.agent_id.as_deref()).map(AgentId);
        v.into_result()?;
        if let Some(agent) = agent {
            self.inner.agents.reported_agent(tenant, agent).await?;
        }
        let start = self.ports().clock.now();
        let validation = self.screen(tenant, &req).await?;
        if !validation.safe {
            self.blocked(caller, agent, &req, &validation).await?;
        }
        self.report(caller, agent, &req, &validation, start);
        Ok(validation)
    }

    /// Screens `req.prompt` (already validated) with the tenant's detector and counts the
    /// verdict; records nothing. `validate` and session observations build on it.
    pub(crate) async fn screen(&self, tenant: TenantId, req: &ValidateRequest) -> Result<Validation> {
        let active = self.active(tenant).await?;
        let threshold = active.threshold();
        let started = Instant::now();
        let screen = Screen {
            text: &req.prompt,
            system_prompt: req.system_prompt.as_deref(),
            direction: match req.direction {
                GuardDirection::Input => detect::Direction::Input,
                GuardDirection::Output => detect::Direction::Output,
            },
        };
        let verdict = if req.prompt.len() > INLINE_MAX_BYTES || active.detector.uses_encoder(&req.prompt) {
            self.screen_offloaded(tenant, &active, req, threshold as f32).await?
        } else {
            active.detector.screen_at(&screen, threshold as f32)
        };
        let elapsed = started.elapsed();
        let validation = Validation {
            safe: verdict.safe(),
            verdict: guard_label(verdict.label),
            score: rounded(verdict.score),
            scores: scores_view(verdict.scores),
            reasons: verdict.reasons,
            model_version: active.version,
            threshold,
            latency_ms: elapsed.as_secs_f64() * 1000.0,
            validation_id: self.ports().ids.new_id(),
        };
        self.count(tenant, validation.verdict, elapsed);
        Ok(validation)
    }

    /// Reports a screening to the telemetry port as one guardrail run (docs/integrations.md):
    /// the text only as the adapter's keyed hash, the reason only as the verdict's kind.
    fn report(
        &self,
        caller: &Caller,
        agent: Option<AgentId>,
        req: &ValidateRequest,
        v: &Validation,
        start: time::OffsetDateTime,
    ) {
        use crate::ports::{GuardrailRun, Target, Verdict};
        let ports = self.ports();
        if !ports.telemetry.enabled() {
            return;
        }
        let output = req.direction == GuardDirection::Output;
        let (reason, category) = match v.verdict {
            GuardLabel::Benign => (None, None),
            GuardLabel::Injection => (Some("prompt injection detected"), Some("prompt_injection")),
            GuardLabel::Jailbreak => (Some("jailbreak attempt detected"), Some("prompt_injection")),
            GuardLabel::Leakage if output => {
                (Some("sensitive information in the output"), Some("sensitive_info_disclosure"))
            }
            GuardLabel::Leakage => (Some("system prompt extraction attempt detected"), Some("system_prompt_leakage")),
        };
        let verdict = if v.safe { Verdict::Allow } else { Verdict::Deny };
        ports.telemetry.guardrail(&GuardrailRun {
            component: GUARD_COMPONENT,
            target: if output { Target::Output } else { Target::Input },
            subtype: "llm",
            target_id: None,
            verdict,
            action: verdict,
            reason,
            policy_id: Some(format!("prompt-guard/v{}", v.model_version)),
            rule_id: (!v.safe).then(|| v.verdict.as_str().to_owned()),
            risk_category: category,
            risk_score: Some(v.score),
            input: req.prompt.as_bytes(),
            conversation_id: None,
            tenant_id: caller.tenant_id().as_uuid(),
            agent_id: agent.map(|a| a.0),
            record_id: (!v.safe).then_some(v.validation_id),
            parent: caller.trace,
            start,
            end: ports.clock.now(),
        });
    }

    /// Screens on the shared CPU pool, fairly per tenant, what would hold a request thread
    /// for milliseconds: the encoder stage, and very long texts. A tenant whose queue there
    /// is full gets 429; a screening that overruns its budget, 503 (never a verdict that
    /// skipped a stage).
    async fn screen_offloaded(
        &self,
        tenant: TenantId,
        active: &Active,
        req: &ValidateRequest,
        threshold: f32,
    ) -> Result<detect::Verdict> {
        let detector = Arc::clone(&active.detector);
        let (text, system_prompt) = (req.prompt.clone(), req.system_prompt.clone());
        let direction = match req.direction {
            GuardDirection::Input => detect::Direction::Input,
            GuardDirection::Output => detect::Direction::Output,
        };
        let screened = self
            .ports()
            .offload
            .call(tenant, SCREEN_BUDGET, move || {
                detector
                    .screen_at(&Screen { text: &text, system_prompt: system_prompt.as_deref(), direction }, threshold)
            })
            .await;
        match screened {
            Ok(verdict) => Ok(verdict),
            Err(OffloadError::Busy) => Err(DomainError::RateLimited { retry_after: Duration::from_secs(1) }),
            Err(e) => Err(DomainError::Unavailable(format!("the Prompt Guard could not screen the text: {e}"))),
        }
    }

    /// Audits (durably, before answering) and announces a blocked text.
    async fn blocked(
        &self,
        caller: &Caller,
        agent: Option<AgentId>,
        req: &ValidateRequest,
        v: &Validation,
    ) -> Result<()> {
        let details = BlockedDetails {
            validation_id: v.validation_id,
            verdict: v.verdict,
            score: v.score,
            scores: v.scores,
            reasons: v.reasons.clone(),
            model_version: v.model_version,
            threshold: v.threshold,
            direction: req.direction,
            excerpt: redacted_excerpt(&req.prompt),
            trace_id: caller.trace_id(),
        };
        let mut event = AuditEvent::new(caller.tenant_id(), caller_actor(caller), GUARD_BLOCKED)
            .action("validate")
            .resource(format!("guard/{}", v.verdict.as_str()))
            .details_of(&details);
        event.id = Some(AuditId(v.validation_id));
        event.agent_id = agent.map(|a| a.0);
        event.decision = Some("blocked".into());
        event.risk_score = Some(v.score);
        self.inner.log.record(event).await?;
        let data = serde_json::json!({
            "validation_id": v.validation_id, "agent_id": agent, "verdict": v.verdict, "score": v.score,
            "reasons": v.reasons, "direction": req.direction, "model_version": v.model_version,
        });
        self.ports().announce(caller.tenant_id(), GUARD_BLOCKED, data).await;
        Ok(())
    }

    fn count(&self, tenant: TenantId, verdict: GuardLabel, elapsed: Duration) {
        let hour = hour_of(self.ports().clock.now());
        let micros = i64::try_from(elapsed.as_micros()).unwrap_or(i64::MAX);
        self.inner.stats.add(GuardStatsKey { tenant_id: tenant, hour, verdict, bucket: guard_latency_bucket(micros) });
    }

    /// Adds the counts gathered since the last flush to the store (run every few seconds);
    /// on failure they are kept for the next.
    pub async fn flush_stats(&self) -> Result<()> {
        let repos = self.repos();
        self.inner.stats.flush(async |counts| repos.guard.add_guard_stats(counts).await).await
    }

    /// The tenant's screenings over the last `window_hours` hours (1 to 720, default 24).
    pub async fn stats(&self, caller: &Caller, window_hours: Option<i64>) -> Result<GuardStats> {
        caller.require_permission(Permission::GuardRead)?;
        let window = window_hours.unwrap_or(24);
        if !(1..=720).contains(&window) {
            return Err(DomainError::invalid("window_hours", "must be between 1 and 720"));
        }
        let tenant = caller.tenant_id();
        let from_hour = hour_of(self.ports().clock.now()) - (window - 1);
        let mut rows = self.repos().guard.guard_stats(tenant, from_hour).await?;
        rows.extend(self.inner.stats.matching(|k| k.tenant_id == tenant && k.hour >= from_hour));
        let zeros = || -> HashMap<GuardLabel, i64> { GuardLabel::ALL.iter().map(|l| (*l, 0)).collect() };
        let mut by_verdict = zeros();
        let mut buckets = [0i64; GUARD_LATENCY_BUCKETS_US.len()];
        let mut series: Vec<GuardStatsHour> = (from_hour..from_hour + window)
            .map(|h| GuardStatsHour { hour: hour_start(h), total: 0, by_verdict: zeros() })
            .collect();
        for (key, n) in rows {
            *by_verdict.entry(key.verdict).or_insert(0) += n;
            if let Some(b) = usize::try_from(key.bucket).ok().and_then(|b| buckets.get_mut(b)) {
                *b += n;
            }
            if let Some(hour) = usize::try_from(key.hour - from_hour).ok().and_then(|i| series.get_mut(i)) {
                hour.total += n;
                *hour.by_verdict.entry(key.verdict).or_insert(0) += n;
            }
        }
        let total: i64 = by_verdict.values().sum();
        let blocked = total - by_verdict.get(&GuardLabel::Benign).copied().unwrap_or(0);
        let percentile = |q: f64| -> Option<f64> {
            let n: i64 = buckets.iter().sum();
            if n == 0 {
                return None;
            }
            let rank = ((n as f64) * q).ceil().max(1.0) as i64;
            let mut seen = 0;
            for (i, count) in buckets.iter().enumerate() {
                seen += count;
                if seen >= rank {
                    // The slowest bucket has no upper bound: report its lower one.
                    let bound = GUARD_LATENCY_BUCKETS_US[i.min(GUARD_LATENCY_BUCKETS_US.len() - 2)];
                    return Some(bound as f64 / 1000.0);
                }
            }
            None
        };
        Ok(GuardStats {
            window_hours: window,
            total,
            blocked,
            block_rate: if total > 0 { blocked as f64 / total as f64 } else { 0.0 },
            latency_ms_p50: percentile(0.5),
            latency_ms_p99: percentile(0.99),
            by_verdict,
            series,
        })
    }

    /// `GET /guard/health` (no credentials): what the guard runs.
    pub fn health(&self) -> GuardHealth {
        let stages = stages_of(detect::default_detector());
        let mut detectors =
            vec!["normalization", "payload_decoding", "rules", "secrets", "system_prompt_echo", "ngram"];
        if stages.iter().any(|s| s.name == "encoder" && s.active) {
            detectors.push("encoder");
        }
        GuardHealth {
            status: "ok",
            builtin_model: detect::BUILTIN_MODEL,
            default_threshold: rounded(detect::default_detector().threshold),
            detectors,
            rules: detect::rules::RULES.len(),
            max_prompt_bytes: MAX_PROMPT_BYTES,
            stages,
            calibration: builtin_calibration(),
        }
    }

    /// Stores feedback the tenant's next model learns from.
    pub async fn feedback(&self, caller: &Caller, req: FeedbackRequest) -> Result<GuardFeedback> {
        caller.require_permission(Permission::GuardManage)?;
        let tenant = caller.tenant_id();
        let mut v = Violations::new();
        let kind = GuardFeedbackKind::parse(&req.label);
        v.check(kind.is_some(), "label", "must be false_positive or attack");
        let category = match req.category.as_deref().map(GuardLabel::parse) {
            None => None,
            Some(Some(c)) if c != GuardLabel::Benign => Some(c),
            Some(_) => {
                v.add("category", "must be injection, jailbreak or leakage");
                None
            }
        };
        if kind == Some(GuardFeedbackKind::FalsePositive) && req.category.is_some() {
            v.add("category", "is only for an attack");
        }
        let validation_id = uuid_field(&mut v, "validation_id", req.validation_id.as_deref());
        match (&req.validation_id, &req.prompt) {
            (None, None) => v.add("validation_id", "give validation_id or prompt"),
            (Some(_), Some(_)) => v.add("prompt", "give validation_id or prompt, not both"),
            (_, Some(p)) if p.trim().is_empty() => v.add("prompt", "must not be empty"),
            (_, Some(p)) if p.len() > MAX_EXAMPLE_BYTES => v.add("prompt", "must be at most 16,384 bytes"),
            _ => {}
        }
        v.into_result()?;
        let kind = kind.ok_or_else(|| DomainError::internal("feedback label checked above"))?;
        let (text, blocked_as) = match (validation_id, &req.prompt) {
            (Some(id), _) => {
                let record = self.repos().audit.get_audit(tenant, AuditId(id)).await?;
                let details = record
                    .as_ref()
                    .and_then(blocked_details)
                    .ok_or_else(|| DomainError::not_found("blocked validation", id))?;
                (details.excerpt, Some(details.verdict))
            }
            (None, Some(prompt)) => (prompt.clone(), None),
            (None, None) => return Err(DomainError::internal("feedback text checked above")),
        };
        let label = match kind {
            GuardFeedbackKind::FalsePositive => GuardLabel::Benign,
            GuardFeedbackKind::Attack => match category.or(blocked_as.filter(|l| *l != GuardLabel::Benign)) {
                Some(c) => c,
                None => self.likeliest_attack(tenant, &text).await?,
            },
        };
        // NUL says nothing to the model (normalisation drops it) and not every store keeps it.
        let text = if text.contains('\0') { text.replace('\0', "") } else { text };
        let feedback = GuardFeedback {
            id: GuardFeedbackId(self.ports().ids.new_id()),
            tenant_id: tenant,
            kind,
            label,
            validation_id,
            text,
            created_by: caller_actor(caller),
            created_at: self.ports().clock.now(),
        };
        self.repos().guard.insert_guard_feedback(&feedback).await?;
        let event = AuditEvent::new(tenant, caller_actor(caller), "guard.feedback")
            .action("feedback")
            .resource(format!("guard/feedback/{}", feedback.id))
            .details(serde_json::json!({"kind": kind, "label": label, "validation_id": validation_id}));
        self.inner.log.record_after(event).await;
        Ok(feedback)
    }

    /// The kind of attack the tenant's detector finds likeliest in `text`: at threshold 0
    /// every text is "an attack", and its verdict names the likeliest kind.
    async fn likeliest_attack(&self, tenant: TenantId, text: &str) -> Result<GuardLabel> {
        let active = self.active(tenant).await?;
        Ok(guard_label(active.detector.screen_at(&Screen { text, ..Screen::default() }, 0.0).label))
    }

    /// Queues a training run of the tenant's detector (202); 409 while one is queued or
    /// running.
    pub async fn start_training(&self, caller: &Caller, req: TrainRequest) -> Result<GuardTask> {
        caller.require_permission(Permission::GuardManage)?;
        let mut v = Violations::new();
        if req.examples.len() > MAX_TRAINING_EXAMPLES {
            v.add("examples", "at most 10,000 examples");
        }
        for (i, e) in req.examples.iter().enumerate().take(MAX_TRAINING_EXAMPLES) {
            if e.text.trim().is_empty() {
                v.add(format!("examples[{i}].text"), "must not be empty");
            } else if e.text.len() > MAX_EXAMPLE_BYTES {
                v.add(format!("examples[{i}].text"), "must be at most 16,384 bytes");
            }
        }
        v.into_result()?;
        let task = GuardTask {
            id: GuardTaskId(self.ports().ids.new_id()),
            tenant_id: caller.tenant_id(),
            requested_by: caller_actor(caller),
            status: JobStatus::Queued,
            progress: 0.0,
            error: None,
            model_version: None,
            examples: req.examples.len() as i64,
            created_at: self.ports().clock.now(),
            started_at: None,
            finished_at: None,
            attempts: 0,
            lease: None,
        };
        self.repos().jobs.enqueue_job(&task.to_job_with(&req.examples), 1).await.map_err(|e| match e {
            DomainError::Conflict(m) if m == crate::ports::store::JOB_LIMIT_REACHED => {
                DomainError::Conflict("a training task is already queued or running; cancel it or wait".into())
            }
            other => other,
        })?;
        let event = AuditEvent::new(task.tenant_id, caller_actor(caller), "guard.training.requested")
            .action("train")
            .resource(format!("guard/training/{}", task.id))
            .details(serde_json::json!({"task_id": task.id, "examples": task.examples}));
        self.inner.log.record_after(event).await;
        let _ = self.inner.wake.clone().try_send(());
        Ok(task)
    }

    /// A training task by id (the status endpoint takes no credentials: the id is the
    /// capability).
    pub async fn training_status(&self, id: &str) -> Result<GuardTask> {
        let id: GuardTaskId =
            id.parse().map_err(|_| DomainError::invalid("task_id", "must be the UUID of a training task"))?;
        jobs::get(self.repos().jobs.as_ref(), None, id.0)
            .await?
            .ok_or_else(|| DomainError::not_found("training task", id))
    }

    /// Cancels the tenant's queued or running training; 404 when there is none.
    pub async fn cancel_training(&self, caller: &Caller) -> Result<GuardTask> {
        caller.require_permission(Permission::GuardManage)?;
        let tenant = caller.tenant_id();
        let task = self
            .repos()
            .jobs
            .cancel_job(tenant, JobKind::GuardTraining, self.ports().clock.now())
            .await?
            .map(GuardTask::from_job)
            .transpose()?
            .ok_or_else(|| DomainError::not_found("training task", "in progress"))?;
        let event = AuditEvent::new(tenant, caller_actor(caller), "guard.training.cancelled")
            .action("cancel")
            .resource(format!("guard/training/{}", task.id))
            .details(serde_json::json!({"task_id": task.id}));
        self.inner.log.record_after(event).await;
        Ok(task)
    }

    /// The tenant's model versions, newest first, then the built-in (version 0).
    pub async fn versions(&self, caller: &Caller) -> Result<Vec<GuardModelInfo>> {
        caller.require_permission(Permission::GuardRead)?;
        self.versions_of(caller.tenant_id()).await
    }

    async fn versions_of(&self, tenant: TenantId) -> Result<Vec<GuardModelInfo>> {
        let stored = self.repos().models.list_models(tenant, ModelKind::Guard).await?;
        let mut versions = stored.into_iter().map(GuardModelInfo::from_version).collect::<Result<Vec<_>>>()?;
        let any_active = versions.iter().any(|v| v.active);
        let builtin = detect::default_trained();
        versions.push(GuardModelInfo {
            version: 0,
            tenant_id: tenant,
            active: !any_active,
            threshold: rounded(builtin.detector.threshold),
            examples: builtin.fitted as i64,
            tenant_examples: 0,
            metrics: metrics_view(&builtin.metrics),
            task_id: None,
            // Trained by each process as it starts (deterministically: the same everywhere).
            trained_at: self.inner.started,
        });
        Ok(versions)
    }

    /// Makes `version` the tenant's active model (0: the built-in); 404 when absent.
    pub async fn rollback(&self, caller: &Caller, version: i32) -> Result<GuardModelInfo> {
        caller.require_permission(Permission::GuardManage)?;
        let tenant = caller.tenant_id();
        if version < 0 || !self.repos().models.activate_model(tenant, ModelKind::Guard, version).await? {
            return Err(DomainError::not_found("guard model version", version));
        }
        self.model_changed(tenant, version).await;
        let event = AuditEvent::new(tenant, caller_actor(caller), "guard.model.activated")
            .action("rollback")
            .resource(format!("guard/models/{version}"))
            .details(serde_json::json!({"version": version}));
        self.inner.log.record_after(event).await;
        // The caller may manage without reading: answer from the store, not `versions`.
        let versions = self.versions_of(tenant).await?;
        versions
            .into_iter()
            .find(|v| v.version == version)
            .ok_or_else(|| DomainError::not_found("guard model version", version))
    }

    async fn model_changed(&self, tenant: TenantId, version: i32) {
        self.forget_tenant(tenant);
        self.ports().announce(tenant, GUARD_MODEL_CHANGED, serde_json::json!({"version": version})).await;
    }

    /// `GET /guard/detector/status`.
    pub async fn status(&self, caller: &Caller) -> Result<DetectorStatus> {
        caller.require_permission(Permission::GuardRead)?;
        let tenant = caller.tenant_id();
        // Read the store, not the cache: status is what every replica will use.
        let active = self.load_active(tenant).await?;
        let task = jobs::active::<GuardTask>(self.repos().jobs.as_ref(), tenant).await?;
        let builtin = detect::default_trained();
        Ok(DetectorStatus {
            version: active.version,
            source: if active.version == 0 { "builtin" } else { "trained" },
            builtin_model: detect::BUILTIN_MODEL,
            model_threshold: rounded(active.detector.threshold),
            threshold: active.threshold(),
            trained_at: active.info.as_ref().map(|i| i.trained_at),
            samples: active.info.as_ref().map_or(builtin.fitted as i64, |i| i.examples),
            state: if task.is_some() { "training" } else { "idle" },
            task,
        })
    }

    /// `GET /guard/detector/metrics`.
    pub async fn metrics(&self, caller: &Caller) -> Result<DetectorMetrics> {
        caller.require_permission(Permission::GuardRead)?;
        let active = self.active(caller.tenant_id()).await?;
        let (metrics, calibration) = match &active.info {
            Some(info) => (
                info.metrics.clone(),
                GuardCalibration {
                    set: "the held-out benign share of its training set; never below the built-in model's thresholds"
                        .into(),
                    size: 0,
                    target_false_positive_rate: f64::from(TrainOptions::default().target_fpr),
                },
            ),
            None => (metrics_view(&detect::default_trained().metrics), builtin_calibration()),
        };
        Ok(DetectorMetrics { version: active.version, metrics, stages: stages_of(&active.detector), calibration })
    }

    /// Prepares a claimed training (of kind `guard_training`): the tenant's feedback and the
    /// examples sent with the request, over the built-in corpus.
    pub async fn begin_training(&self, claimed: ClaimedJob) -> Result<TrainingRun> {
        let ClaimedJob { job, token } = claimed;
        let sent = GuardTask::examples_of(&job)?;
        let task = GuardTask::from_job(job)?;
        let mut extra: Vec<Example> = self
            .repos()
            .guard
            .list_guard_feedback(task.tenant_id, MAX_FEEDBACK)
            .await?
            .into_iter()
            .map(|f| Example::new(f.text, label_of(f.label)))
            .collect();
        extra.extend(sent.into_iter().map(|e| Example::new(e.text, label_of(e.label))));
        let (examples, added) = detect::training_set(extra);
        Ok(TrainingRun {
            task,
            token,
            examples,
            tenant_examples: added as i64,
            cancel: Arc::default(),
            progress: Arc::default(),
        })
    }

    /// Stores the run's progress and renews its lease; answers `false` (and tells the run to
    /// stop) when the task was cancelled or its lease lost.
    pub async fn report_progress(&self, run: &TrainingRun) -> Result<bool> {
        let until = self.ports().clock.now() + self.inner.settings.training_lease;
        let progress = run.progress().min(0.99);
        match self.repos().jobs.renew_job(run.task.id.0, run.token, progress, None, until).await {
            Ok(()) => Ok(true),
            Err(DomainError::Conflict(_)) => {
                run.cancel.store(true, Ordering::Relaxed);
                Ok(false)
            }
            Err(e) => Err(e),
        }
    }

    /// Stores what a run produced: the tenant's next, active version, or the task's failure.
    pub async fn finish_training(
        &self,
        run: &TrainingRun,
        result: std::result::Result<Trained, TrainError>,
    ) -> Result<()> {
        let now = self.ports().clock.now();
        let repos = self.repos();
        let tenant = run.task.tenant_id;
        let trained = match result {
            Ok(trained) => trained,
            // Cancelled: the task already says so.
            Err(TrainError::Cancelled) => return Ok(()),
            Err(TrainError::Invalid(message)) => {
                let end = JobEnd::failed(now, message);
                return jobs::unless_lost(repos.jobs.finish_job(run.task.id.0, run.token, &end).await).map(drop);
            }
        };
        let record = GuardModelRecord {
            info: GuardModelInfo {
                version: 0,
                tenant_id: tenant,
                active: true,
                threshold: rounded(trained.detector.threshold),
                examples: trained.fitted as i64,
                tenant_examples: run.tenant_examples,
                metrics: metrics_view(&trained.metrics),
                task_id: Some(run.task.id),
                trained_at: now,
            },
            weights: trained.detector.to_bytes(),
        };
        let stored = record.to_stored()?;
        let completed = repos.models.complete_training(run.task.id.0, run.token, now, &stored).await;
        // Cancelled meanwhile, or another worker holds it: keep nothing.
        let Some(version) = jobs::unless_lost(completed)? else { return Ok(()) };
        self.model_changed(tenant, version).await;
        let event = AuditEvent::new(tenant, run.task.requested_by.clone(), "guard.model.trained")
            .action("train")
            .resource(format!("guard/models/{version}"))
            .details(serde_json::json!({
                "version": version, "task_id": run.task.id, "examples": trained.fitted,
                "tenant_examples": run.tenant_examples, "threshold": record.info.threshold,
                "attack_recall": record.info.metrics.attack_recall,
                "false_positive_rate": record.info.metrics.false_positive_rate,
            }));
        self.inner.log.record_after(event).await;
        Ok(())
    }
}
