//! Spec 4.5: shadow-agent discovery — ingesting observed activity, clustering it into
//! candidates, and confirming (registering) or dismissing them.

use actix_web::http::{StatusCode, header};
use actix_web::{HttpRequest, HttpResponse, get, post, web};
use agentgov_domain::ids::{CandidateId, ClusterJobId};
use agentgov_domain::model::{Agent, ClusterJob, DiscoveryCandidate, DiscoveryEvent};
use agentgov_domain::page::Page;
use agentgov_domain::services::discovery::{
    CandidateListParams, ConfirmRequest, DismissRequest, IngestBatch, IngestEvent, IngestReport,
};
use futures::StreamExt;

use crate::extract::{ApiKeyOrJwt, Json, optional_body, parse_json, require_json};
use crate::problem::{ApiError, ApiResult};
use crate::{AppState, HttpSettings};

/// The batch endpoint takes bodies up to this size (or the configured body limit, if
/// larger): 10,000 events of a few hundred bytes each.
pub const BATCH_BODY_LIMIT: usize = 16 * 1024 * 1024;

/// Ingest one observed event (`discovery:write`). It is attributed to a registered agent
/// when it names one (`agent_id`) or matches a confirmed candidate, suppressed when it
/// matches a dismissed candidate, and otherwise kept as shadow activity for clustering.
#[utoipa::path(
    operation_id = "discovery_ingest",
    tag = "discovery",
    security(("api_key" = []), ("bearer" = [])),
    request_body = IngestEvent,
    responses(
        (status = 202, description = "Stored, with its disposition", body = DiscoveryEvent),
        (status = 422, description = "An invalid field", body = crate::problem::Problem),
    )
)]
#[post("/ingest")]
pub async fn ingest(state: web::Data<AppState>, auth: ApiKeyOrJwt, body: Json<IngestEvent>) -> ApiResult<HttpResponse> {
    let event = state.services.discovery.ingest(&auth.0, body.0).await?;
    ::metrics::counter!("agentgov_discovery_events_total", "disposition" => event.disposition.as_str()).increment(1);
    Ok(HttpResponse::Accepted().json(event))
}

/// Ingest up to 10,000 events at once (`discovery:write`; bodies up to 16 MiB). Valid
/// events are stored; invalid ones are reported in `errors` by their index. 422 when none
/// is valid.
#[utoipa::path(
    operation_id = "discovery_ingest_batch",
    tag = "discovery",
    security(("api_key" = []), ("bearer" = [])),
    request_body = IngestBatch,
    responses(
        (status = 202, description = "What was stored and what was refused", body = IngestReport),
        (status = 413, description = "The body is larger than the batch limit", body = crate::problem::Problem),
        (status = 422, description = "No event is valid, or more than 10,000", body = crate::problem::Problem),
    )
)]
#[post("/ingest/batch")]
pub async fn ingest_batch(
    state: web::Data<AppState>,
    auth: ApiKeyOrJwt,
    req: HttpRequest,
    mut payload: web::Payload,
) -> ApiResult<HttpResponse> {
    let limit = req.app_data::<HttpSettings>().map_or(BATCH_BODY_LIMIT, |h| h.body_limit.max(BATCH_BODY_LIMIT));
    require_json(&req)?;
    let mut body = web::BytesMut::new();
    while let Some(chunk) = payload.next().await {
        let chunk = chunk.map_err(|_| ApiError::new(StatusCode::BAD_REQUEST, "could not read the request body"))?;
        if body.len() + chunk.len() > limit {
            return Err(ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "request body too large"));
        }
        body.extend_from_slice(&chunk);
    }
    let batch: IngestBatch = parse_json(&body)?;
    let report = state.services.discovery.ingest_batch(&auth.0, batch).await?;
    for (disposition, n) in
        [("attributed", report.attributed), ("suppressed", report.suppressed), ("shadow", report.shadow)]
    {
        ::metrics::counter!("agentgov_discovery_events_total", "disposition" => disposition).increment(n as u64);
    }
    Ok(HttpResponse::Accepted().json(report))
}

/// Start clustering the tenant's shadow events into candidates (`discovery:write`). The job
/// runs on any replica; follow it at `Location`. While one is queued or running, that one
/// is answered.
#[utoipa::path(
    operation_id = "discovery_cluster",
    tag = "discovery",
    security(("api_key" = []), ("bearer" = [])),
    responses((status = 202, description = "The job", body = ClusterJob))
)]
#[post("/cluster")]
pub async fn cluster(state: web::Data<AppState>, auth: ApiKeyOrJwt) -> ApiResult<HttpResponse> {
    let job = state.services.discovery.start_clustering(&auth.0).await?;
    let location = format!("/api/v1/discovery/cluster/{}", job.id);
    Ok(HttpResponse::Accepted().insert_header((header::LOCATION, location)).json(job))
}

/// A clustering job's status, progress and, once completed, its summary
/// (`discovery:read`).
#[utoipa::path(
    operation_id = "discovery_cluster_status",
    tag = "discovery",
    security(("api_key" = []), ("bearer" = [])),
    params(("id" = String, Path, format = Uuid)),
    responses(
        (status = 200, description = "The job", body = ClusterJob),
        (status = 404, description = "No such job in the tenant", body = crate::problem::Problem),
    )
)]
#[get("/cluster/{id}")]
pub async fn cluster_status(
    state: web::Data<AppState>,
    auth: ApiKeyOrJwt,
    id: web::Path<ClusterJobId>,
) -> ApiResult<web::Json<ClusterJob>> {
    Ok(web::Json(state.services.discovery.cluster_status(&auth.0, *id).await?))
}

/// `GET /discovery/candidates`.
#[derive(Debug, Default, serde::Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct CandidateQuery {
    /// Page size, 1 to 500 (default 50).
    #[param(minimum = 1, maximum = 500)]
    pub limit: Option<i64>,
    /// `next_cursor` of the previous page.
    #[param(pattern = r"^([A-Za-z0-9_-]{21}[AQgw])?$")]
    pub cursor: Option<String>,
    /// `pending`, `confirmed` or `dismissed`.
    #[param(value_type = Option<agentgov_domain::model::discovery::CandidateStatus>)]
    pub status: Option<String>,
}

/// The tenant's candidates, newest first (`discovery:read`).
#[utoipa::path(
    operation_id = "discovery_candidates",
    tag = "discovery",
    security(("api_key" = []), ("bearer" = [])),
    params(CandidateQuery),
    responses((status = 200, description = "A page of candidates", body = Page<DiscoveryCandidate>))
)]
#[get("/candidates")]
pub async fn candidates(
    state: web::Data<AppState>,
    auth: ApiKeyOrJwt,
    q: web::Query<CandidateQuery>,
) -> ApiResult<web::Json<Page<DiscoveryCandidate>>> {
    let q = q.into_inner();
    let params = CandidateListParams { status: q.status };
    Ok(web::Json(state.services.discovery.list(&auth.0, &params, q.limit, q.cursor.as_deref()).await?))
}

/// One candidate (`discovery:read`).
#[utoipa::path(
    operation_id = "discovery_candidate",
    tag = "discovery",
    security(("api_key" = []), ("bearer" = [])),
    params(("id" = String, Path, format = Uuid)),
    responses(
        (status = 200, description = "The candidate", body = DiscoveryCandidate),
        (status = 404, description = "No such candidate in the tenant", body = crate::problem::Problem),
    )
)]
#[get("/candidates/{id}")]
pub async fn candidate(
    state: web::Data<AppState>,
    auth: ApiKeyOrJwt,
    id: web::Path<CandidateId>,
) -> ApiResult<web::Json<DiscoveryCandidate>> {
    Ok(web::Json(state.services.discovery.get(&auth.0, *id).await?))
}

/// Confirm a candidate and register it as an agent (`discovery:write` and `agents:write`),
/// with optional overrides of the suggested `name`, `type`, `capabilities` and
/// `description`. Future events matching it are attributed to the agent. 201 with the
/// agent; a repeat answers 200 with the same agent; 409 for a dismissed candidate (or a
/// name already taken: send another `name`).
#[utoipa::path(
    operation_id = "discovery_confirm",
    tag = "discovery",
    security(("api_key" = []), ("bearer" = [])),
    params(("id" = String, Path, format = Uuid)),
    request_body(content = Option<ConfirmRequest>, description = "Optional overrides"),
    responses(
        (status = 201, description = "Registered", body = Agent),
        (status = 200, description = "Confirmed before: the agent it became", body = Agent),
        (status = 404, description = "No such candidate in the tenant", body = crate::problem::Problem),
        (status = 409, description = "Dismissed, or the agent name is taken", body = crate::problem::Problem),
    )
)]
#[post("/candidates/{id}/confirm")]
pub async fn confirm(
    state: web::Data<AppState>,
    auth: ApiKeyOrJwt,
    id: web::Path<CandidateId>,
    req: HttpRequest,
    body: web::Bytes,
) -> ApiResult<HttpResponse> {
    let overrides: ConfirmRequest = optional_body(&req, &body)?;
    let confirmed = state.services.discovery.confirm(&auth.0, *id, overrides).await?;
    let location = format!("/api/v1/agents/{}", confirmed.agent.id);
    let mut response = if confirmed.created { HttpResponse::Created() } else { HttpResponse::Ok() };
    Ok(response.insert_header((header::LOCATION, location)).json(confirmed.agent))
}

/// Dismiss a candidate, with an optional `reason` (`discovery:write`): future events
/// matching it are kept but suppressed. A repeat answers the candidate; 409 for a
/// confirmed one.
#[utoipa::path(
    operation_id = "discovery_dismiss",
    tag = "discovery",
    security(("api_key" = []), ("bearer" = [])),
    params(("id" = String, Path, format = Uuid)),
    request_body(content = Option<DismissRequest>, description = "Optional reason"),
    responses(
        (status = 200, description = "Dismissed", body = DiscoveryCandidate),
        (status = 404, description = "No such candidate in the tenant", body = crate::problem::Problem),
        (status = 409, description = "The candidate was confirmed", body = crate::problem::Problem),
    )
)]
#[post("/candidates/{id}/dismiss")]
pub async fn dismiss(
    state: web::Data<AppState>,
    auth: ApiKeyOrJwt,
    id: web::Path<CandidateId>,
    req: HttpRequest,
    body: web::Bytes,
) -> ApiResult<web::Json<DiscoveryCandidate>> {
    let request: DismissRequest = optional_body(&req, &body)?;
    Ok(web::Json(state.services.discovery.dismiss(&auth.0, *id, request).await?))
}
