//! Spec 4.8: anomaly reports and the tenant's trainable detector.

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, get, post, put, web};
use agentgov_domain::ids::{AnomalyId, AnomalyTaskId};
use agentgov_domain::model::{AnomalyModelInfo, AnomalyReport, AnomalyTask};
use agentgov_domain::page::Page;
use agentgov_domain::services::anomalies::{DetectorMetrics, DetectorStatus, DetectorTrainRequest};
use agentgov_domain::services::{AnomalyParams, AnomalyStats, AnomalyUpdate, NewAnomalyReport};

use crate::AppState;
use crate::extract::{ApiKeyOrJwt, Json, Jwt, optional_body};
use crate::problem::ApiResult;

/// File a report about an agent (`anomalies:write`). It is `open` until an analyst sets
/// its status, audited (`anomaly.reported`) and published as `anomaly.detected`.
#[utoipa::path(
    operation_id = "anomalies_report",
    tag = "anomalies",
    security(("api_key" = []), ("bearer" = [])),
    request_body = NewAnomalyReport,
    responses(
        (status = 201, description = "Filed", body = AnomalyReport),
        (status = 404, description = "No such agent in the tenant", body = crate::problem::Problem),
        (status = 422, description = "An invalid field", body = crate::problem::Problem),
    )
)]
#[post("/report")]
pub async fn report(
    state: web::Data<AppState>,
    auth: ApiKeyOrJwt,
    body: Json<NewAnomalyReport>,
) -> ApiResult<HttpResponse> {
    let filed = state.services.anomalies.report(&auth.0, body.0).await?;
    let location = format!("/api/v1/anomalies/{}", filed.id);
    Ok(HttpResponse::Created().insert_header((header::LOCATION, location)).json(filed))
}

/// The tenant's reports, newest first (`anomalies:read`), filtered by `agent_id`, `type`,
/// `severity`, `status` and `from`/`to` (creation time).
#[utoipa::path(
    operation_id = "anomalies_list",
    tag = "anomalies",
    security(("api_key" = []), ("bearer" = [])),
    params(AnomalyParams),
    responses(
        (status = 200, description = "A page of reports", body = Page<AnomalyReport>),
        (status = 422, description = "An invalid filter", body = crate::problem::Problem),
    )
)]
#[get("")]
pub async fn list(
    state: web::Data<AppState>,
    auth: ApiKeyOrJwt,
    q: web::Query<AnomalyParams>,
) -> ApiResult<web::Json<Page<AnomalyReport>>> {
    Ok(web::Json(state.services.anomalies.list(&auth.0, &q).await?))
}

/// Counts over a window (`anomalies:read`; default the last 24 hours, at most 90 days) by
/// severity, type and status, the ten agents with the most, and a series per `hour`
/// (default) or `day`; the list's filters apply.
#[utoipa::path(
    operation_id = "anomalies_stats",
    tag = "anomalies",
    security(("api_key" = []), ("bearer" = [])),
    params(AnomalyParams),
    responses(
        (status = 200, description = "The counts", body = AnomalyStats),
        (status = 422, description = "An invalid filter or window", body = crate::problem::Problem),
    )
)]
#[get("/stats")]
pub async fn stats(
    state: web::Data<AppState>,
    auth: ApiKeyOrJwt,
    q: web::Query<AnomalyParams>,
) -> ApiResult<web::Json<AnomalyStats>> {
    Ok(web::Json(state.services.anomalies.stats(&auth.0, &q).await?))
}

/// One report (`anomalies:read`; beyond the spec).
#[utoipa::path(
    operation_id = "anomalies_get",
    tag = "anomalies",
    security(("api_key" = []), ("bearer" = [])),
    params(("id" = String, Path, format = Uuid)),
    responses(
        (status = 200, description = "The report", body = AnomalyReport),
        (status = 404, description = "No such report in the tenant", body = crate::problem::Problem),
    )
)]
#[get("/{id}")]
pub async fn get(
    state: web::Data<AppState>,
    auth: ApiKeyOrJwt,
    id: web::Path<AnomalyId>,
) -> ApiResult<web::Json<AnomalyReport>> {
    Ok(web::Json(state.services.anomalies.get(&auth.0, *id).await?))
}

/// Set a report's status (analyst or higher; beyond the spec): `acknowledged`,
/// `resolved` (a real anomaly) or `false_positive` (not one) are the labels the detector
/// learns from; `open` reopens it. Audited as `anomaly.status_changed`.
#[utoipa::path(
    operation_id = "anomalies_update",
    tag = "anomalies",
    security(("bearer" = [])),
    params(("id" = String, Path, format = Uuid)),
    request_body = AnomalyUpdate,
    responses(
        (status = 200, description = "The report", body = AnomalyReport),
        (status = 403, description = "Below the analyst role", body = crate::problem::Problem),
        (status = 404, description = "No such report in the tenant", body = crate::problem::Problem),
    )
)]
#[put("/{id}")]
pub async fn update(
    state: web::Data<AppState>,
    auth: Jwt,
    id: web::Path<AnomalyId>,
    body: Json<AnomalyUpdate>,
) -> ApiResult<web::Json<AnomalyReport>> {
    Ok(web::Json(state.services.anomalies.update(&auth.0, *id, body.0).await?))
}

/// Train a new version of the tenant's detector (admin, with a session) from its audit
/// history: the policy decisions and guard blocks of the last `window_days` (default 30,
/// at most 90), and the reports analysts labelled. Runs as a task on any replica; the new
/// version becomes active when it completes. 409 while one is queued or running.
#[utoipa::path(
    operation_id = "anomalies_detector_train",
    tag = "anomalies",
    security(("bearer" = [])),
    request_body(content = Option<DetectorTrainRequest>, description = "Optional window"),
    responses(
        (status = 202, description = "Queued; follow `Location`", body = AnomalyTask),
        (status = 403, description = "Not an admin", body = crate::problem::Problem),
        (status = 409, description = "A training is already queued or running", body = crate::problem::Problem),
        (status = 422, description = "An invalid window", body = crate::problem::Problem),
    )
)]
#[post("/detector/train")]
pub async fn detector_train(
    state: web::Data<AppState>,
    auth: Jwt,
    req: HttpRequest,
    body: web::Bytes,
) -> ApiResult<HttpResponse> {
    let request: DetectorTrainRequest = optional_body(&req, &body)?;
    let task = state.services.anomalies.start_training(&auth.0, request).await?;
    let location = format!("/api/v1/anomalies/detector/tasks/{}", task.id);
    Ok(HttpResponse::Accepted().insert_header((header::LOCATION, location)).json(task))
}

/// A training task of the tenant (`anomalies:read`).
#[utoipa::path(
    operation_id = "anomalies_detector_task",
    tag = "anomalies",
    security(("api_key" = []), ("bearer" = [])),
    params(("id" = AnomalyTaskId, Path, description = "The task id")),
    responses(
        (status = 200, description = "The task", body = AnomalyTask),
        (status = 404, description = "No such task in the tenant", body = crate::problem::Problem),
    )
)]
#[get("/detector/tasks/{id}")]
pub async fn detector_task(
    state: web::Data<AppState>,
    auth: ApiKeyOrJwt,
    id: web::Path<AnomalyTaskId>,
) -> ApiResult<web::Json<AnomalyTask>> {
    Ok(web::Json(state.services.anomalies.training_task(&auth.0, *id).await?))
}

/// Make an earlier version the active one (admin, with a session); version 0 turns the
/// detector off. Every replica scores with it from then on.
#[utoipa::path(
    operation_id = "anomalies_detector_rollback",
    tag = "anomalies",
    security(("bearer" = [])),
    params(("version" = i32, Path, description = "The version; 0 turns the detector off")),
    responses(
        (status = 200, description = "The detector's status after the change", body = DetectorStatus),
        (status = 403, description = "Not an admin", body = crate::problem::Problem),
        (status = 404, description = "No such version", body = crate::problem::Problem),
    )
)]
#[post("/detector/rollback/{version}")]
pub async fn detector_rollback(
    state: web::Data<AppState>,
    auth: Jwt,
    version: web::Path<i32>,
) -> ApiResult<web::Json<DetectorStatus>> {
    Ok(web::Json(state.services.anomalies.rollback_detector(&auth.0, *version).await?))
}

/// The active version, when and on how much it was trained, its threshold, and any
/// training under way (`anomalies:read`).
#[utoipa::path(
    operation_id = "anomalies_detector_status",
    tag = "anomalies",
    security(("api_key" = []), ("bearer" = [])),
    responses((status = 200, description = "The detector's status", body = DetectorStatus))
)]
#[get("/detector/status")]
pub async fn detector_status(state: web::Data<AppState>, auth: ApiKeyOrJwt) -> ApiResult<web::Json<DetectorStatus>> {
    Ok(web::Json(state.services.anomalies.detector_status(&auth.0).await?))
}

/// Precision, recall, F1 and AUC of the active version on the analysts' labels and on a
/// synthetic history with injected anomalies (`anomalies:read`).
#[utoipa::path(
    operation_id = "anomalies_detector_metrics",
    tag = "anomalies",
    security(("api_key" = []), ("bearer" = [])),
    responses((status = 200, description = "The detector's figures", body = DetectorMetrics))
)]
#[get("/detector/metrics")]
pub async fn detector_metrics(state: web::Data<AppState>, auth: ApiKeyOrJwt) -> ApiResult<web::Json<DetectorMetrics>> {
    Ok(web::Json(state.services.anomalies.detector_metrics(&auth.0).await?))
}

/// The tenant's detector versions, newest first (`anomalies:read`).
#[utoipa::path(
    operation_id = "anomalies_detector_versions",
    tag = "anomalies",
    security(("api_key" = []), ("bearer" = [])),
    responses((status = 200, description = "The versions", body = Vec<AnomalyModelInfo>))
)]
#[get("/detector/versions")]
pub async fn detector_versions(
    state: web::Data<AppState>,
    auth: ApiKeyOrJwt,
) -> ApiResult<web::Json<Vec<AnomalyModelInfo>>> {
    Ok(web::Json(state.services.anomalies.detector_versions(&auth.0).await?))
}
