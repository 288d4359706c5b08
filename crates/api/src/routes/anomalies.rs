//! Spec 4.8: anomaly reports (the trainable detector is to come).

use actix_web::http::header;
use actix_web::{HttpResponse, get, post, put, web};
use agentgov_domain::ids::AnomalyId;
use agentgov_domain::model::AnomalyReport;
use agentgov_domain::page::Page;
use agentgov_domain::services::{AnomalyParams, AnomalyStats, AnomalyUpdate, NewAnomalyReport};

use crate::AppState;
use crate::extract::{ApiKeyOrJwt, Json, Jwt};
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
