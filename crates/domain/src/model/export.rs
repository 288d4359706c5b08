//! Asynchronous exports of the audit log: a job, its state, and the file it produces.
//!
//! States: `queued` → `running` → `completed` | `failed`. A `running` job holds a lease;
//! a worker that dies leaves the lease to expire, and the next worker (on any replica, after
//! a restart) claims the job again and starts it over. The file is kept in the store in
//! chunks, so any replica can serve it, until `expires_at`, when it is deleted with the job.

use super::job::{Job, JobKind, JobStatus, JobView, Lease, job_of, read, view_of};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use time::OffsetDateTime;

use crate::ids::{ExportJobId, TenantId};
use crate::model::audit::{Actor, AuditFilter};

/// File formats of an export.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum ExportFormat {
    /// One JSON record per line (`application/x-ndjson`).
    Jsonl,
    /// One JSON array.
    Json,
    /// RFC 4180 CSV with a header row; `actor` and `details` as JSON text.
    Csv,
}

impl ExportFormat {
    pub const ALL: [ExportFormat; 3] = [ExportFormat::Jsonl, ExportFormat::Json, ExportFormat::Csv];

    pub fn as_str(self) -> &'static str {
        match self {
            ExportFormat::Jsonl => "jsonl",
            ExportFormat::Json => "json",
            ExportFormat::Csv => "csv",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|f| f.as_str() == s)
    }

    pub fn content_type(self) -> &'static str {
        match self {
            ExportFormat::Jsonl => "application/x-ndjson",
            ExportFormat::Json => "application/json",
            ExportFormat::Csv => "text/csv; charset=utf-8",
        }
    }

    /// The file name's extension.
    pub fn extension(self) -> &'static str {
        self.as_str()
    }
}

/// An asynchronous export of the audit log.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ExportJob {
    pub id: ExportJobId,
    #[serde(skip)]
    #[cfg_attr(feature = "openapi", schema(ignore))]
    pub tenant_id: TenantId,
    pub requested_by: Actor,
    pub format: ExportFormat,
    /// The filters, with `max_seq` fixed to the log's head when the job was accepted: the
    /// file holds the log as it was then, however long the job waits.
    pub filters: AuditFilter,
    pub status: JobStatus,
    /// From 0 to 1.
    pub progress: f64,
    /// Records written so far.
    pub rows: i64,
    /// Bytes written so far.
    pub bytes: i64,
    /// Why the job failed.
    pub error: Option<String>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339::option")]
    pub started_at: Option<OffsetDateTime>,
    #[serde(with = "time::serde::rfc3339::option")]
    pub finished_at: Option<OffsetDateTime>,
    /// When the file (and this job) will be deleted.
    #[serde(with = "time::serde::rfc3339::option")]
    pub expires_at: Option<OffsetDateTime>,
    /// Chunks of the finished file in the store.
    #[serde(skip)]
    #[cfg_attr(feature = "openapi", schema(ignore))]
    pub chunks: i32,
    /// How many times a worker has claimed the job.
    #[serde(skip)]
    #[cfg_attr(feature = "openapi", schema(ignore))]
    pub attempts: i32,
    /// The claim of the worker running the job, and until when it holds.
    #[serde(skip)]
    #[cfg_attr(feature = "openapi", schema(ignore))]
    pub lease: Option<Lease>,
}

/// What an export has written: counters while it runs, the file's size and chunk count once
/// completed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExportState {
    pub rows: i64,
    pub bytes: i64,
    pub chunks: i32,
}

impl ExportState {
    pub fn to_value(self) -> Value {
        json!({"rows": self.rows, "bytes": self.bytes, "chunks": self.chunks})
    }
}

impl JobView for ExportJob {
    const KIND: JobKind = JobKind::Export;

    fn from_job(job: Job) -> crate::Result<Self> {
        let state: ExportState =
            if job.state.is_null() { ExportState::default() } else { read(&job, "state", &job.state, "")? };
        view_of!(
            job,
            ExportJob,
            ExportJobId {
                format: job.param::<ExportFormat>("format")?,
                filters: job.param::<AuditFilter>("filters")?,
                rows: state.rows,
                bytes: state.bytes,
                chunks: state.chunks,
                expires_at: job.expires_at,
            }
        )
    }

    fn to_job(&self) -> Job {
        let state = ExportState { rows: self.rows, bytes: self.bytes, chunks: self.chunks };
        job_of!(
            self,
            Self::KIND,
            json!({"format": self.format, "filters": self.filters}),
            state.to_value(),
            self.expires_at
        )
    }
}
