//! Spec 4.7: the audit log — writing, listing, lookup, verification and exports.

use actix_web::http::header::{self, ContentDisposition, DispositionParam, DispositionType};
use actix_web::{HttpResponse, get, post, web};
use agentgov_domain::DomainError;
use agentgov_domain::ids::{AuditId, ExportJobId};
use agentgov_domain::model::{AuditRecord, ChainVerification, ExportFormat, ExportJob};
use agentgov_domain::page::Page;
use agentgov_domain::services::audit::{AuditFilterParams, ExportFile, NewAuditEntry, NewExport};
use futures::TryStreamExt;

use crate::AppState;
use crate::extract::{ApiKeyOrJwt, Json};
use crate::problem::{ApiResult, Problem};

/// A query struct of the audit endpoints: its own fields, then the audit filters (the same
/// parameters, checks and documentation wherever they are taken), and `filters()` to hand
/// them to the service.
macro_rules! filter_query {
    ($(#[$meta:meta])* pub struct $name:ident { $($(#[$fmeta:meta])* pub $field:ident: $ty:ty,)* }) => {
        $(#[$meta])*
        #[derive(Debug, Default, serde::Deserialize, utoipa::IntoParams)]
        #[serde(deny_unknown_fields)]
        #[into_params(parameter_in = Query)]
        pub struct $name {
            $($(#[$fmeta])* pub $field: $ty,)*
            /// Only records about this agent (UUID).
            #[param(format = Uuid)]
            pub agent_id: Option<String>,
            #[param(max_length = 100, pattern = r"^[a-z0-9_]+(\.[a-z0-9_]+)*$")]
            pub event_type: Option<String>,
            #[param(
                min_length = 1,
                max_length = 200,
                pattern = r"^[^\u0000-\u001f\u007f-\u009f]*[^\s\u0000-\u001f\u007f-\u009f][^\u0000-\u001f\u007f-\u009f]*$"
            )]
            pub action: Option<String>,
            #[param(
                min_length = 1,
                max_length = 50,
                pattern = r"^[^\u0000-\u001f\u007f-\u009f]*[^\s\u0000-\u001f\u007f-\u009f][^\u0000-\u001f\u007f-\u009f]*$"
            )]
            pub decision: Option<String>,
            /// `agent`, `user`, `api_key` or `system`.
            #[param(value_type = Option<agentgov_domain::model::audit::ActorType>)]
            pub actor_type: Option<String>,
            #[param(
                min_length = 1,
                max_length = 1000,
                pattern = r"^[^\u0000-\u001f\u007f-\u009f]*[^\s\u0000-\u001f\u007f-\u009f][^\u0000-\u001f\u007f-\u009f]*$"
            )]
            pub actor_id: Option<String>,
            /// Records at or after this instant (RFC 3339).
            #[param(format = DateTime)]
            pub from: Option<String>,
            /// Records before this instant (RFC 3339).
            #[param(format = DateTime)]
            pub to: Option<String>,
            /// Only records of this agent session (a check's `session_id`), exact.
            #[param(
                min_length = 1,
                max_length = 200,
                pattern = r"^[^\u0000-\u001f\u007f-\u009f]*[^\s\u0000-\u001f\u007f-\u009f][^\u0000-\u001f\u007f-\u009f]*$"
            )]
            pub session_id: Option<String>,
        }

        impl $name {
            fn filters(&self) -> AuditFilterParams {
                AuditFilterParams {
                    agent_id: self.agent_id.clone(),
                    event_type: self.event_type.clone(),
                    action: self.action.clone(),
                    decision: self.decision.clone(),
                    actor_type: self.actor_type.clone(),
                    actor_id: self.actor_id.clone(),
                    from: self.from.clone(),
                    to: self.to.clone(),
                    session_id: self.session_id.clone(),
                }
            }
        }
    };
}

filter_query! {
    /// `GET /audit`: the filters with `limit` and `cursor`. Unknown parameters are refused
    /// (422), so a misspelt filter never silently widens a search.
    pub struct AuditListQuery {
        /// Page size, 1 to 500 (default 50).
        #[param(minimum = 1, maximum = 500)]
        pub limit: Option<i64>,
        /// `next_cursor` of the previous page.
        #[param(pattern = r"^([A-Za-z0-9_-]{10}[AEIMQUYcgkosw048])?$")]
        pub cursor: Option<String>,
    }
}

filter_query! {
    /// `GET /audit/export/csv`: the filters and the spreadsheet-safe option.
    pub struct CsvExportQuery {
        /// `true`: a cell starting with `=`, `+`, `-`, `@`, a tab or a carriage return gets a `'`
        /// in front, so a spreadsheet shows it as text instead of running it as a formula. The
        /// file is then no longer the records' exact text: JSONL stays the evidence format.
        /// Default `false`.
        pub spreadsheet_safe: Option<bool>,
    }
}

/// `GET /audit/verify`.
#[derive(Debug, Default, serde::Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct VerifyQuery {
    /// First sequence number to check (default 1).
    #[param(minimum = 1)]
    pub from_seq: Option<i64>,
    /// Last sequence number to check (default: the last record).
    #[param(minimum = 1)]
    pub to_seq: Option<i64>,
}

/// Write an audit entry (agents and SDKs). Answered once the entry is durable. The actor is
/// the credential: the API key, or the user of a JWT. The namespaces of the service's own
/// event types are refused (422 naming `event_type`); the record's `origin` is `client`.
#[utoipa::path(
    tag = "audit",
    security(("api_key" = []), ("bearer" = [])),
    request_body = NewAuditEntry,
    responses((status = 201, description = "The stored record, with its place in the chain", body = AuditRecord))
)]
#[post("/log")]
pub async fn write(
    state: web::Data<AppState>,
    auth: ApiKeyOrJwt,
    body: Json<NewAuditEntry>,
) -> ApiResult<HttpResponse> {
    let record = state.services.audit.write(&auth.0, body.0).await?;
    Ok(HttpResponse::Created().json(record))
}

/// List the tenant's audit records, newest first.
#[utoipa::path(
    tag = "audit",
    security(("api_key" = []), ("bearer" = [])),
    params(AuditListQuery),
    responses((status = 200, description = "A page of records", body = Page<AuditRecord>))
)]
#[get("")]
pub async fn list(
    state: web::Data<AppState>,
    auth: ApiKeyOrJwt,
    q: web::Query<AuditListQuery>,
) -> ApiResult<web::Json<Page<AuditRecord>>> {
    let page = state.services.audit.list(&auth.0, &q.filters(), q.limit, q.cursor.as_deref()).await?;
    Ok(web::Json(page))
}

/// Recompute the tenant's hash chain (or a range of it) and report the first break.
#[utoipa::path(
    tag = "audit",
    security(("api_key" = []), ("bearer" = [])),
    params(VerifyQuery),
    responses((status = 200, description = "The verdict; `valid: false` names the first broken sequence number", body = ChainVerification))
)]
#[get("/verify")]
pub async fn verify(
    state: web::Data<AppState>,
    auth: ApiKeyOrJwt,
    q: web::Query<VerifyQuery>,
) -> ApiResult<web::Json<ChainVerification>> {
    Ok(web::Json(state.services.audit.verify(&auth.0, q.from_seq, q.to_seq).await?))
}

/// Export the filtered records as JSON Lines (one record per line), oldest first.
#[utoipa::path(
    tag = "audit",
    security(("api_key" = []), ("bearer" = [])),
    params(AuditFilterParams),
    responses((status = 200, description = "An attachment, streamed", content_type = "application/x-ndjson", body = String))
)]
#[get("/export")]
pub async fn export_jsonl(
    state: web::Data<AppState>,
    auth: ApiKeyOrJwt,
    q: web::Query<AuditFilterParams>,
) -> ApiResult<HttpResponse> {
    export(&state, &auth, &q, ExportFormat::Jsonl).await
}

/// Export the filtered records as one JSON array, oldest first.
#[utoipa::path(
    tag = "audit",
    security(("api_key" = []), ("bearer" = [])),
    params(AuditFilterParams),
    responses((status = 200, description = "An attachment, streamed", body = Vec<AuditRecord>))
)]
#[get("/export/json")]
pub async fn export_json(
    state: web::Data<AppState>,
    auth: ApiKeyOrJwt,
    q: web::Query<AuditFilterParams>,
) -> ApiResult<HttpResponse> {
    export(&state, &auth, &q, ExportFormat::Json).await
}

/// Export the filtered records as RFC 4180 CSV with a header row, oldest first. `actor`
/// is split into `actor_type` and `actor_id`; `details` is a JSON text column. With
/// `spreadsheet_safe=true`, cells a spreadsheet would run as a formula are prefixed with `'`.
#[utoipa::path(
    tag = "audit",
    security(("api_key" = []), ("bearer" = [])),
    params(CsvExportQuery),
    responses((status = 200, description = "An attachment, streamed", content_type = "text/csv", body = String))
)]
#[get("/export/csv")]
pub async fn export_csv(
    state: web::Data<AppState>,
    auth: ApiKeyOrJwt,
    q: web::Query<CsvExportQuery>,
) -> ApiResult<HttpResponse> {
    let file = state.services.audit.export_csv(&auth.0, &q.filters(), q.spreadsheet_safe.unwrap_or(false)).await?;
    Ok(attachment(file))
}

async fn export(
    state: &AppState,
    auth: &ApiKeyOrJwt,
    filters: &AuditFilterParams,
    format: ExportFormat,
) -> ApiResult<HttpResponse> {
    let file = state.services.audit.export(&auth.0, filters, format).await?;
    Ok(attachment(file))
}

/// A streamed file download. A failure midway aborts the response (no final chunk), so a
/// client never mistakes a cut-off export for a complete one.
fn attachment(file: ExportFile) -> HttpResponse {
    let disposition = ContentDisposition {
        disposition: DispositionType::Attachment,
        parameters: vec![DispositionParam::Filename(file.filename)],
    };
    let body = file.body.map_ok(web::Bytes::from).map_err(|e: DomainError| {
        tracing::error!(error = %e, "export stream failed midway");
        std::io::Error::other("the export failed midway")
    });
    let mut response = HttpResponse::Ok();
    response
        .content_type(file.format.content_type())
        .insert_header(disposition)
        .insert_header((header::CACHE_CONTROL, "no-store"));
    if let Some(len) = file.length {
        // Known in advance for a stored file: clients can show progress and detect truncation.
        response.no_chunking(len);
    }
    response.streaming(body)
}

/// Start an asynchronous export; follow it with `/audit/export/status/{id}`.
#[utoipa::path(
    tag = "audit",
    security(("api_key" = []), ("bearer" = [])),
    request_body = NewExport,
    responses(
        (status = 202, description = "Accepted: the job, `status: queued`", body = ExportJob),
        (status = 429, description = "The tenant has as many exports queued or running as it may", body = crate::problem::Problem),
    )
)]
#[post("/export/async")]
pub async fn start_export(
    state: web::Data<AppState>,
    auth: ApiKeyOrJwt,
    body: Json<NewExport>,
) -> ApiResult<HttpResponse> {
    let job = state.services.audit.start_export(&auth.0, body.0).await?;
    Ok(HttpResponse::Accepted()
        .insert_header((header::LOCATION, format!("/api/v1/audit/export/status/{}", job.id)))
        .json(job))
}

/// The state of an asynchronous export.
#[utoipa::path(
    tag = "audit",
    security(("api_key" = []), ("bearer" = [])),
    params(("id" = String, Path, format = Uuid)),
    responses(
        (status = 200, description = "The job", body = ExportJob),
        (status = 404, description = "No such job in this tenant (or it expired)", body = Problem, content_type = "application/problem+json"),
    )
)]
#[get("/export/status/{id}")]
pub async fn export_status(
    state: web::Data<AppState>,
    auth: ApiKeyOrJwt,
    id: web::Path<ExportJobId>,
) -> ApiResult<web::Json<ExportJob>> {
    Ok(web::Json(state.services.audit.export_status(&auth.0, *id).await?))
}

/// Download a completed asynchronous export, from any replica.
#[utoipa::path(
    tag = "audit",
    security(("api_key" = []), ("bearer" = [])),
    params(("id" = String, Path, format = Uuid)),
    responses(
        (status = 200, description = "The file, as an attachment", body = String),
        (status = 404, description = "No such job in this tenant (or it expired)", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "The job is queued, running or failed", body = Problem, content_type = "application/problem+json"),
    )
)]
#[get("/export/download/{id}")]
pub async fn download(
    state: web::Data<AppState>,
    auth: ApiKeyOrJwt,
    id: web::Path<ExportJobId>,
) -> ApiResult<HttpResponse> {
    let file = state.services.audit.download(&auth.0, *id).await?;
    Ok(attachment(file))
}

/// One audit record.
#[utoipa::path(
    tag = "audit",
    security(("api_key" = []), ("bearer" = [])),
    params(("id" = String, Path, format = Uuid)),
    responses(
        (status = 200, description = "The record", body = AuditRecord),
        (status = 404, description = "No such record in this tenant", body = Problem, content_type = "application/problem+json"),
    )
)]
#[get("/{id}")]
pub async fn get(
    state: web::Data<AppState>,
    auth: ApiKeyOrJwt,
    id: web::Path<AuditId>,
) -> ApiResult<web::Json<AuditRecord>> {
    Ok(web::Json(state.services.audit.get(&auth.0, *id).await?))
}
