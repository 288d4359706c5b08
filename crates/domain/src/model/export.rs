//! Asynchronous exports of the audit log: a job, its state, and the file it produces.
//!
//! States: `queued` → `running` → `completed` | `failed`. A `running` job holds a lease;
//! a worker that dies leaves the lease to expire, and the next worker (on any replica, after
//! a restart) claims the job again and starts it over. The file is kept in the store in
//! chunks, so any replica can serve it, until `expires_at`, when it is deleted with the job.

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use uuid::Uuid;

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

/// States of an asynchronous job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum JobStatus {
    Queued,
    Running,
    Completed,
    Failed,
    Cancelled,
}

impl JobStatus {
    pub const ALL: [JobStatus; 5] =
        [JobStatus::Queued, JobStatus::Running, JobStatus::Completed, JobStatus::Failed, JobStatus::Cancelled];

    pub fn as_str(self) -> &'static str {
        match self {
            JobStatus::Queued => "queued",
            JobStatus::Running => "running",
            JobStatus::Completed => "completed",
            JobStatus::Failed => "failed",
            JobStatus::Cancelled => "cancelled",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|j| j.as_str() == s)
    }

    pub fn is_finished(self) -> bool {
        matches!(self, JobStatus::Completed | JobStatus::Failed | JobStatus::Cancelled)
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

/// A worker's hold on a running job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lease {
    pub token: Uuid,
    pub until: OffsetDateTime,
}

/// Progress reported with each chunk of the file.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ExportProgress {
    pub rows: i64,
    pub bytes: i64,
    pub progress: f64,
}
