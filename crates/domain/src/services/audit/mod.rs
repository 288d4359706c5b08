//! The audit log's operations: writing entries, listing, lookup, verification, exports
//! (streamed and asynchronous).

mod export;
mod log;

use std::time::Duration;

use futures::channel::mpsc;
use futures::stream::BoxStream;
use futures::{StreamExt, TryStreamExt};
use uuid::Uuid;

pub use export::{CSV_COLUMNS, Encoder, ExportPiece, export_stream};
pub use log::{AuditEvent, AuditLog, AuditLogSettings, AuditWriter, CommitObserver};

use super::jobs::{self, ClaimedJob, KindSettings};
use super::validate::{check_text, parse_time};
use super::{Caller, Credential, Ports};
use crate::error::{DomainError, Result, Violations};
use crate::ids::{AuditId, ExportJobId, TenantId};
use crate::model::{
    Actor, ActorType, AuditFilter, AuditHash, AuditRecord, AuditScan, ChainFault, ChainHead, ChainVerification,
    ChainVerifier, ExportFormat, ExportJob, ExportState, JobEnd, JobStatus, JobView, JsonText, Permission, SeqOrder,
    is_service_event_type,
};
use crate::page::{Page, decode_seq_cursor, encode_seq_cursor, parse_limit};
use crate::ports::AuditRepo;

/// Tunables of the audit service.
#[derive(Debug, Clone, Copy)]
pub struct AuditSettings {
    pub log: AuditLogSettings,
    /// Records read from the store per query while exporting or verifying.
    pub export_page: u32,
    /// Size of the chunks an asynchronous export's file is stored in.
    pub export_chunk_bytes: usize,
    /// How long a finished export's file is kept.
    pub export_retention: Duration,
    /// How long a worker holds a running export without reporting progress.
    pub export_lease: Duration,
    /// Claims of one export before it is failed (a job that keeps killing its worker).
    pub export_max_attempts: i32,
    /// Asynchronous exports a tenant may have queued or running at once; more answer 429
    /// until one finishes (each copies the whole log it selects and keeps it for a day).
    pub max_queued_exports_per_tenant: u64,
}

impl Default for AuditSettings {
    fn default() -> Self {
        Self {
            log: AuditLogSettings::default(),
            export_page: 1000,
            export_chunk_bytes: 1 << 20,
            export_retention: Duration::from_secs(24 * 3600),
            export_lease: Duration::from_secs(60),
            export_max_attempts: 3,
            max_queued_exports_per_tenant: 2,
        }
    }
}

const MAX_EVENT_TYPE_LEN: usize = 100;
const MAX_ACTION_LEN: usize = 200;
const MAX_RESOURCE_LEN: usize = 1000;
const MAX_DECISION_LEN: usize = 50;

/// `POST /audit/log`: an entry written by an agent or SDK. The actor is the credential used.
#[derive(Debug, Clone, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct NewAuditEntry {
    /// Dotted lower-case name in a namespace of the client's own, e.g. `app.tool_call`. The
    /// namespaces of the service's own events (`agent.`, `anomaly.`, `api_key.`, `audit.`,
    /// `auth.`, `discovery.`, `guard.`, `hitl.`, `policy.`, `tenant.`, `user.`, and
    /// `agentgov.`, `export.`, `service.`, `siem.`, `sso.`, `system.`, `webhook.`) are
    /// reserved (422): the record's `origin` is `client`.
    #[cfg_attr(feature = "openapi", schema(max_length = 100, pattern = r"^[a-z0-9_]+(\.[a-z0-9_]+)*$"))]
    pub event_type: String,
    pub agent_id: Option<Uuid>,
    #[cfg_attr(
        feature = "openapi",
        schema(
            min_length = 1,
            max_length = 200,
            pattern = r"^[^\u0000-\u001f\u007f-\u009f]*[^\s\u0000-\u001f\u007f-\u009f][^\u0000-\u001f\u007f-\u009f]*$"
        )
    )]
    pub action: Option<String>,
    #[cfg_attr(
        feature = "openapi",
        schema(
            min_length = 1,
            max_length = 1000,
            pattern = r"^[^\u0000-\u001f\u007f-\u009f]*[^\s\u0000-\u001f\u007f-\u009f][^\u0000-\u001f\u007f-\u009f]*$"
        )
    )]
    pub resource: Option<String>,
    /// E.g. `allow`, `deny`, `approval_required`.
    #[cfg_attr(
        feature = "openapi",
        schema(
            min_length = 1,
            max_length = 50,
            pattern = r"^[^\u0000-\u001f\u007f-\u009f]*[^\s\u0000-\u001f\u007f-\u009f][^\u0000-\u001f\u007f-\u009f]*$"
        )
    )]
    pub decision: Option<String>,
    /// From 0 to 1.
    #[cfg_attr(feature = "openapi", schema(minimum = 0, maximum = 1))]
    pub risk_score: Option<f64>,
    /// A JSON object: input, output, reasoning, context…
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub details: Option<serde_json::Value>,
}

/// The filters of `GET /audit` and the exports, as sent (validated by the service).
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema, utoipa::IntoParams))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", into_params(parameter_in = Query))]
pub struct AuditFilterParams {
    /// Only records about this agent (UUID).
    #[cfg_attr(feature = "openapi", schema(format = Uuid))]
    #[cfg_attr(feature = "openapi", param(format = Uuid))]
    pub agent_id: Option<String>,
    /// Exact, e.g. `policy.decision`: dotted lower-case words, at most 100 characters.
    #[cfg_attr(feature = "openapi", schema(max_length = 100, pattern = r"^[a-z0-9_]+(\.[a-z0-9_]+)*$"))]
    #[cfg_attr(feature = "openapi", param(max_length = 100, pattern = r"^[a-z0-9_]+(\.[a-z0-9_]+)*$"))]
    pub event_type: Option<String>,
    #[cfg_attr(
        feature = "openapi",
        schema(
            min_length = 1,
            max_length = 200,
            pattern = r"^[^\u0000-\u001f\u007f-\u009f]*[^\s\u0000-\u001f\u007f-\u009f][^\u0000-\u001f\u007f-\u009f]*$"
        )
    )]
    #[cfg_attr(
        feature = "openapi",
        param(
            min_length = 1,
            max_length = 200,
            pattern = r"^[^\u0000-\u001f\u007f-\u009f]*[^\s\u0000-\u001f\u007f-\u009f][^\u0000-\u001f\u007f-\u009f]*$"
        )
    )]
    pub action: Option<String>,
    #[cfg_attr(
        feature = "openapi",
        schema(
            min_length = 1,
            max_length = 50,
            pattern = r"^[^\u0000-\u001f\u007f-\u009f]*[^\s\u0000-\u001f\u007f-\u009f][^\u0000-\u001f\u007f-\u009f]*$"
        )
    )]
    #[cfg_attr(
        feature = "openapi",
        param(
            min_length = 1,
            max_length = 50,
            pattern = r"^[^\u0000-\u001f\u007f-\u009f]*[^\s\u0000-\u001f\u007f-\u009f][^\u0000-\u001f\u007f-\u009f]*$"
        )
    )]
    pub decision: Option<String>,
    /// `agent`, `user`, `api_key` or `system`.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<crate::model::audit::ActorType>))]
    #[cfg_attr(feature = "openapi", param(value_type = Option<crate::model::audit::ActorType>))]
    pub actor_type: Option<String>,
    #[cfg_attr(
        feature = "openapi",
        schema(
            min_length = 1,
            max_length = 1000,
            pattern = r"^[^\u0000-\u001f\u007f-\u009f]*[^\s\u0000-\u001f\u007f-\u009f][^\u0000-\u001f\u007f-\u009f]*$"
        )
    )]
    #[cfg_attr(
        feature = "openapi",
        param(
            min_length = 1,
            max_length = 1000,
            pattern = r"^[^\u0000-\u001f\u007f-\u009f]*[^\s\u0000-\u001f\u007f-\u009f][^\u0000-\u001f\u007f-\u009f]*$"
        )
    )]
    pub actor_id: Option<String>,
    /// Records at or after this instant (RFC 3339).
    #[cfg_attr(feature = "openapi", schema(format = DateTime))]
    #[cfg_attr(feature = "openapi", param(format = DateTime))]
    pub from: Option<String>,
    /// Records before this instant (RFC 3339); a range that ends before it begins holds
    /// nothing.
    #[cfg_attr(feature = "openapi", schema(format = DateTime))]
    #[cfg_attr(feature = "openapi", param(format = DateTime))]
    pub to: Option<String>,
    /// Only records of this agent session (a policy check's `session_id`), exact.
    #[cfg_attr(
        feature = "openapi",
        schema(
            min_length = 1,
            max_length = 200,
            pattern = r"^[^\u0000-\u001f\u007f-\u009f]*[^\s\u0000-\u001f\u007f-\u009f][^\u0000-\u001f\u007f-\u009f]*$"
        )
    )]
    #[cfg_attr(
        feature = "openapi",
        param(
            min_length = 1,
            max_length = 200,
            pattern = r"^[^\u0000-\u001f\u007f-\u009f]*[^\s\u0000-\u001f\u007f-\u009f][^\u0000-\u001f\u007f-\u009f]*$"
        )
    )]
    pub session_id: Option<String>,
}

/// An optional text field: absent is fine; present, it follows [`check_text`].
fn check_opt_text(v: &mut Violations, field: &str, text: Option<&str>, max: usize) {
    if let Some(text) = text {
        check_text(v, field, text, max);
    }
}

fn is_event_type(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= MAX_EVENT_TYPE_LEN
        && s.split('.').all(|part| {
            !part.is_empty() && part.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        })
}

impl AuditFilterParams {
    /// Parses what it can, adding a violation named `{prefix}{field}` for each bad field.
    fn parse_into(&self, v: &mut Violations, prefix: &str) -> AuditFilter {
        let field = |name: &str| format!("{prefix}{name}");
        let agent_id = self.agent_id.as_deref().and_then(|a| {
            let id = Uuid::parse_str(a).ok();
            v.check(id.is_some(), &field("agent_id"), "must be a UUID");
            id
        });
        let actor_type = self.actor_type.as_deref().and_then(|a| {
            let t = ActorType::parse(a);
            v.check(t.is_some(), &field("actor_type"), "must be one of agent, user, api_key, system");
            t
        });
        if self.event_type.as_deref().is_some_and(|t| !is_event_type(t)) {
            v.add(field("event_type"), "must be dotted lower-case words (a-z, 0-9, _), at most 100 characters");
        }
        check_opt_text(v, &field("action"), self.action.as_deref(), MAX_ACTION_LEN);
        check_opt_text(v, &field("decision"), self.decision.as_deref(), MAX_DECISION_LEN);
        check_opt_text(v, &field("actor_id"), self.actor_id.as_deref(), MAX_RESOURCE_LEN);
        check_opt_text(v, &field("session_id"), self.session_id.as_deref(), MAX_ACTION_LEN);
        let from = parse_time(v, &field("from"), self.from.as_deref());
        let to = parse_time(v, &field("to"), self.to.as_deref());
        AuditFilter {
            agent_id,
            event_type: self.event_type.clone(),
            action: self.action.clone(),
            decision: self.decision.clone(),
            actor_type,
            actor_id: self.actor_id.clone(),
            from,
            to,
            min_seq: None,
            max_seq: None,
            session_id: self.session_id.clone(),
        }
    }
}

/// `POST /audit/export/async`.
#[derive(Debug, Clone, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct NewExport {
    pub format: ExportFormat,
    /// The same filters as `GET /audit/export`.
    #[serde(default, deserialize_with = "crate::model::object::value")]
    pub filters: AuditFilterParams,
}

/// A streamed export: a file name and its bytes.
pub struct ExportFile {
    pub format: ExportFormat,
    pub filename: String,
    /// The size in bytes, when known before streaming (a stored file).
    pub length: Option<u64>,
    pub body: BoxStream<'static, Result<Vec<u8>>>,
}

super::ports::repos!(Repos { audit: AuditRepo, jobs: JobQueue });
/// The audit operations of the API, and the export worker's steps.
#[derive(Clone)]
pub struct AuditService {
    repos: Repos,
    ports: Ports,
    log: AuditLog,
    settings: AuditSettings,
    /// Wakes this process's export worker when a job is queued here.
    wake_exports: mpsc::Sender<()>,
}

impl AuditService {
    pub fn new(
        ports: Ports,
        repos: Repos,
        log: AuditLog,
        settings: AuditSettings,
        wake_exports: mpsc::Sender<()>,
    ) -> Self {
        Self { ports, repos, log, settings, wake_exports }
    }

    /// `POST /audit/log`.
    pub async fn write(&self, caller: &Caller, req: NewAuditEntry) -> Result<AuditRecord> {
        caller.require_permission(Permission::AuditWrite)?;
        let mut v = Violations::new();
        if !is_event_type(&req.event_type) {
            v.add("event_type", "must be dotted lower-case words (a-z, 0-9, _), at most 100 characters");
        } else if is_service_event_type(&req.event_type) {
            let namespace = req.event_type.split('.').next().unwrap_or_default();
            v.add(
                "event_type",
                format!(
                    "the namespace `{namespace}.` is reserved for events the service records itself; \
                     write under a namespace of your own, e.g. `app.{}`",
                    req.event_type.split_once('.').map_or("action", |(_, rest)| rest)
                ),
            );
        }
        check_opt_text(&mut v, "action", req.action.as_deref(), MAX_ACTION_LEN);
        check_opt_text(&mut v, "resource", req.resource.as_deref(), MAX_RESOURCE_LEN);
        check_opt_text(&mut v, "decision", req.decision.as_deref(), MAX_DECISION_LEN);
        if req.risk_score.is_some_and(|r| !(0.0..=1.0).contains(&r)) {
            v.add("risk_score", "must be between 0 and 1");
        }
        if req.details.as_ref().is_some_and(|d| !d.is_object()) {
            v.add("details", "must be a JSON object");
        }
        v.into_result()?;
        let event = AuditEvent {
            id: None,
            tenant_id: caller.tenant_id(),
            actor: caller_actor(caller),
            event_type: req.event_type,
            agent_id: req.agent_id,
            action: req.action,
            resource: req.resource,
            decision: req.decision,
            risk_score: req.risk_score,
            details: req.details.as_ref().map_or_else(JsonText::empty_object, JsonText::from_value),
            session_id: None,
        };
        self.log.record(event).await
    }

    /// `GET /audit`: newest first.
    pub async fn list(
        &self,
        caller: &Caller,
        filter: &AuditFilterParams,
        limit: Option<i64>,
        cursor: Option<&str>,
    ) -> Result<Page<AuditRecord>> {
        caller.require_permission(Permission::AuditRead)?;
        let mut v = Violations::new();
        let filter = filter.parse_into(&mut v, "");
        let limit = parse_limit(limit).or_else(|e| v.absorb(e).map(|()| 0))?;
        let after_seq = decode_seq_cursor(cursor).or_else(|e| v.absorb(e).map(|()| None))?;
        v.into_result()?;
        let scan = AuditScan { order: SeqOrder::Desc, after_seq, limit: limit + 1 };
        let rows = self.repos.audit.scan_audit(caller.tenant_id(), &filter, scan).await?;
        Ok(Page::from_rows_by(rows, limit, |r| encode_seq_cursor(r.seq)))
    }

    /// `GET /audit/{id}`.
    pub async fn get(&self, caller: &Caller, id: AuditId) -> Result<AuditRecord> {
        caller.require_permission(Permission::AuditRead)?;
        self.repos
            .audit
            .get_audit(caller.tenant_id(), id)
            .await?
            .ok_or_else(|| DomainError::not_found("audit record", id))
    }

    /// `GET /audit/verify`: recomputes the tenant's chain, or the part from `from_seq` to
    /// `to_seq` (inclusive; the whole chain by default).
    pub async fn verify(
        &self,
        caller: &Caller,
        from_seq: Option<i64>,
        to_seq: Option<i64>,
    ) -> Result<ChainVerification> {
        caller.require_permission(Permission::AuditRead)?;
        let mut v = Violations::new();
        v.check(from_seq.is_none_or(|f| f >= 1), "from_seq", "must be at least 1");
        v.check(to_seq.is_none_or(|t| t >= 1), "to_seq", "must be at least 1");
        v.into_result()?;
        verify_chain(self.repos.audit.as_ref(), caller.tenant_id(), from_seq, to_seq, self.settings.export_page).await
    }

    /// The filter of an export: the caller's, ending at the log's current head. Invalid
    /// fields are reported as `{prefix}{field}`.
    async fn export_filter(&self, caller: &Caller, params: &AuditFilterParams, prefix: &str) -> Result<AuditFilter> {
        caller.require_permission(Permission::AuditRead)?;
        let mut v = Violations::new();
        let mut filter = params.parse_into(&mut v, prefix);
        v.into_result()?;
        let head = self.repos.audit.audit_head(caller.tenant_id()).await?;
        filter.max_seq = Some(head.map_or(0, |h| h.seq));
        Ok(filter)
    }

    /// `GET /audit/export[/json|/csv]`: the file, streamed from the store, oldest first.
    pub async fn export(
        &self,
        caller: &Caller,
        params: &AuditFilterParams,
        format: ExportFormat,
    ) -> Result<ExportFile> {
        self.export_encoded(caller, params, Encoder::new(format)).await
    }

    /// `GET /audit/export/csv`; `spreadsheet_safe` prefixes cells a spreadsheet would run
    /// as a formula (see [`Encoder::spreadsheet_safe`]).
    pub async fn export_csv(
        &self,
        caller: &Caller,
        params: &AuditFilterParams,
        spreadsheet_safe: bool,
    ) -> Result<ExportFile> {
        self.export_encoded(caller, params, Encoder::new(ExportFormat::Csv).spreadsheet_safe(spreadsheet_safe)).await
    }

    async fn export_encoded(
        &self,
        caller: &Caller,
        params: &AuditFilterParams,
        encoder: Encoder,
    ) -> Result<ExportFile> {
        let format = encoder.format();
        let filter = self.export_filter(caller, params, "").await?;
        let body =
            export_stream(self.repos.audit.clone(), caller.tenant_id(), filter, encoder, self.settings.export_page)
                .map_ok(|piece| piece.data)
                .boxed();
        Ok(ExportFile { format, filename: self.filename(format), length: None, body })
    }

    fn filename(&self, format: ExportFormat) -> String {
        let now = self.ports.clock.now();
        let stamp = format!(
            "{:04}{:02}{:02}T{:02}{:02}{:02}Z",
            now.year(),
            u8::from(now.month()),
            now.day(),
            now.hour(),
            now.minute(),
            now.second()
        );
        format!("audit-{stamp}.{}", format.extension())
    }

    /// `POST /audit/export/async`: queues a job; any replica's worker runs it.
    pub async fn start_export(&self, caller: &Caller, req: NewExport) -> Result<ExportJob> {
        let filter = self.export_filter(caller, &req.filters, "filters.").await?;
        let job = ExportJob {
            id: ExportJobId(self.ports.ids.new_id()),
            tenant_id: caller.tenant_id(),
            requested_by: caller_actor(caller),
            format: req.format,
            filters: filter,
            status: JobStatus::Queued,
            progress: 0.0,
            rows: 0,
            bytes: 0,
            error: None,
            created_at: self.ports.clock.now(),
            started_at: None,
            finished_at: None,
            expires_at: None,
            chunks: 0,
            attempts: 0,
            lease: None,
        };
        let max = self.settings.max_queued_exports_per_tenant;
        self.repos.jobs.enqueue_job(&job.to_job(), max).await.map_err(|e| match e {
            DomainError::Conflict(m) if m == crate::ports::store::JOB_LIMIT_REACHED => DomainError::quota(
                format!(
                    "the tenant already has {max} asynchronous exports queued or running, its limit; \
                     wait for one to finish (the operator sets the limit: AGENTGOV_MAX_QUEUED_EXPORTS_PER_TENANT)"
                ),
                Duration::from_secs(10),
            ),
            other => other,
        })?;
        // Full means a wake-up is already pending.
        let _ = self.wake_exports.clone().try_send(());
        Ok(job)
    }

    /// `GET /audit/export/status/{id}`.
    pub async fn export_status(&self, caller: &Caller, id: ExportJobId) -> Result<ExportJob> {
        caller.require_permission(Permission::AuditRead)?;
        super::jobs::get(self.repos.jobs.as_ref(), Some(caller.tenant_id()), id.0)
            .await?
            .ok_or_else(|| DomainError::not_found("export job", id))
    }

    /// `GET /audit/export/download/{id}`: the finished file, chunk by chunk; 409 until then.
    pub async fn download(&self, caller: &Caller, id: ExportJobId) -> Result<ExportFile> {
        let job = self.export_status(caller, id).await?;
        match job.status {
            JobStatus::Completed => {}
            JobStatus::Failed | JobStatus::Cancelled => {
                return Err(DomainError::Conflict(format!(
                    "export job {id} is {}: there is no file",
                    job.status.as_str()
                )));
            }
            JobStatus::Queued | JobStatus::Running => {
                return Err(DomainError::Conflict(format!(
                    "export job {id} is {}; download it once it is completed",
                    job.status.as_str()
                )));
            }
        }
        let (exports, tenant, chunks) = (self.repos.jobs.clone(), caller.tenant_id(), job.chunks);
        let body = futures::stream::iter(0..chunks)
            .then(move |index| {
                let exports = exports.clone();
                async move {
                    exports
                        .job_chunk(tenant, id.0, index)
                        .await?
                        .ok_or_else(|| DomainError::Internal(format!("chunk {index} of export {id} is missing")))
                }
            })
            .boxed();
        Ok(ExportFile {
            format: job.format,
            filename: format!("audit-export-{id}.{}", job.format.extension()),
            length: u64::try_from(job.bytes).ok(),
            body,
        })
    }

    /// How the job queue treats exports: a finished one (completed or failed) is kept for the
    /// retention period, then deleted with its file.
    pub(crate) fn job_settings(&self) -> KindSettings {
        let s = &self.settings;
        KindSettings { lease: s.export_lease, max_attempts: s.export_max_attempts, keep_for: Some(s.export_retention) }
    }

    /// Runs a claimed export (of kind `export`) to its end: the file written in chunks, then
    /// the job completed, or failed with a reason. A lost lease (another worker took the job
    /// over) stops it quietly.
    pub async fn run_export(&self, claimed: ClaimedJob) -> Result<()> {
        let token = claimed.token;
        let job = ExportJob::from_job(claimed.job)?;
        let outcome = match self.produce(&job, token).await {
            Ok(written) => self.outcome(JobStatus::Completed, None, written, 1.0),
            // Another worker holds the job now (our lease ran out): leave it to them.
            Err(DomainError::Conflict(_)) => return Ok(()),
            Err(e) => {
                tracing::warn!(job = %job.id, error = %e, "export job failed");
                let reason = match e {
                    DomainError::Unavailable(what) => format!("{what} became unavailable; start a new export"),
                    _ => "the export failed; start a new export".to_owned(),
                };
                self.outcome(JobStatus::Failed, Some(reason), ExportState::default(), 0.0)
            }
        };
        jobs::unless_lost(self.repos.jobs.finish_job(job.id.0, token, &outcome).await).map(drop)
    }

    /// How the job ends: what it `written` kept for the retention period, whether it completed
    /// or failed.
    fn outcome(&self, status: JobStatus, error: Option<String>, written: ExportState, progress: f64) -> JobEnd {
        let now = self.ports.clock.now();
        JobEnd {
            status,
            error,
            progress: Some(progress),
            state: Some(written.to_value()),
            at: now,
            expires_at: Some(now + self.settings.export_retention),
        }
    }

    /// Writes the job's file into the store in chunks; returns what it wrote.
    async fn produce(&self, job: &ExportJob, token: Uuid) -> Result<ExportState> {
        let repos = &self.repos;
        let total = repos.audit.count_audit(job.tenant_id, &job.filters).await?.max(1);
        let mut pieces = export_stream(
            repos.audit.clone(),
            job.tenant_id,
            job.filters.clone(),
            Encoder::new(job.format),
            self.settings.export_page,
        );
        let limit = self.settings.export_chunk_bytes.max(1);
        let mut buf = Vec::with_capacity(limit);
        let mut written = ExportState::default();
        loop {
            let piece = pieces.try_next().await?;
            let end = piece.is_none();
            if let Some(piece) = piece {
                buf.extend_from_slice(&piece.data);
                written.rows += piece.rows as i64;
                written.bytes += piece.data.len() as i64;
            }
            while buf.len() >= limit || (end && (!buf.is_empty() || written.chunks == 0)) {
                let rest = buf.split_off(buf.len().min(limit));
                let chunk = std::mem::replace(&mut buf, rest);
                let lease_until = self.ports.clock.now() + self.settings.export_lease;
                repos.jobs.put_job_chunk(job.id.0, token, written.chunks, chunk).await?;
                written.chunks += 1;
                let progress = if end && buf.is_empty() { 1.0 } else { (written.rows as f64 / total as f64).min(1.0) };
                let state = written.to_value();
                repos.jobs.renew_job(job.id.0, token, progress, Some(&state), lease_until).await?;
                if buf.is_empty() {
                    break;
                }
            }
            if end {
                return Ok(written);
            }
        }
    }

    /// The single append path, for the other services.
    pub fn log(&self) -> &AuditLog {
        &self.log
    }
}

/// Recomputes a tenant's chain from `from_seq` (default 1) to `to_seq` (default: the head),
/// reading `page` records per query, and names the first sequence number that breaks it.
pub async fn verify_chain(
    store: &dyn AuditRepo,
    tenant: TenantId,
    from_seq: Option<i64>,
    to_seq: Option<i64>,
    page: u32,
) -> Result<ChainVerification> {
    let page = page.max(1);
    let head = store.audit_head(tenant).await?.unwrap_or(ChainHead::GENESIS);
    let first = from_seq.unwrap_or(1).max(1);
    let last = to_seq.map_or(head.seq, |t| t.min(head.seq));
    let mut verifier = if first == 1 {
        ChainVerifier::new(1, AuditHash::GENESIS)
    } else {
        let anchor = AuditFilter { min_seq: Some(first - 1), max_seq: Some(first - 1), ..AuditFilter::default() };
        let scan = AuditScan { order: SeqOrder::Asc, after_seq: None, limit: 1 };
        match store.scan_audit(tenant, &anchor, scan).await?.pop() {
            Some(r) => ChainVerifier::new(first, r.hash),
            None if first - 1 <= head.seq => ChainVerifier::failed_at(first - 1, ChainFault::Missing),
            None => ChainVerifier::new(first, head.hash),
        }
    };
    let range = AuditFilter { min_seq: Some(first), max_seq: Some(last), ..AuditFilter::default() };
    let mut after_seq = None;
    while !verifier.is_broken() && first <= last {
        let scan = AuditScan { order: SeqOrder::Asc, after_seq, limit: page };
        let records = store.scan_audit(tenant, &range, scan).await?;
        for record in &records {
            if !verifier.check(record) {
                break;
            }
        }
        if records.len() < page as usize {
            break;
        }
        after_seq = records.last().map(|r| r.seq);
    }
    Ok(verifier.finish(last, head))
}

/// Who a caller is, as an audit actor.
pub fn caller_actor(caller: &Caller) -> Actor {
    match &caller.credential {
        Credential::ApiKey { key_id, .. } => Actor::new(ActorType::ApiKey, key_id),
        Credential::Session { .. } => Actor::new(ActorType::User, caller.user.id),
    }
}

#[cfg(test)]
mod tests;
