//! Spec 4.1: health, readiness, platform status and statistics.

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, get, web};
use agentgov_domain::services::{PlatformStatus, Readiness, Stats};

use crate::AppState;
use crate::extract::ApiKeyOrJwt;
use crate::problem::{ApiError, ApiResult, Problem};

/// Liveness: `{"status":"ok"}`.
#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct Health {
    pub status: &'static str,
    pub version: &'static str,
}

/// Liveness check: the process is up and serving.
#[utoipa::path(tag = "health", responses((status = 200, description = "The process is alive", body = Health)))]
#[get("/health")]
pub async fn health(state: web::Data<AppState>) -> web::Json<Health> {
    web::Json(Health { status: "ok", version: state.info.version })
}

/// Readiness: the database, the cache store and the policy engine all answer.
#[utoipa::path(
    tag = "health",
    responses(
        (status = 200, description = "Every component is up", body = Readiness),
        (status = 503, description = "A component is down; `components` says which", body = Problem, content_type = "application/problem+json"),
    )
)]
#[get("/health/ready")]
pub async fn ready(state: web::Data<AppState>) -> ApiResult<HttpResponse> {
    let readiness = state.services.status.readiness().await;
    if readiness.ready {
        return Ok(HttpResponse::Ok().json(readiness));
    }
    let down: Vec<&str> = readiness.components.iter().filter(|c| !c.up).map(|c| c.name).collect();
    let mut err = ApiError::new(StatusCode::SERVICE_UNAVAILABLE, format!("not ready: {} down", down.join(", ")));
    err.components = serde_json::to_value(&readiness.components).ok();
    Err(err)
}

/// Platform status: version, mode, uptime, the caller's tenant and component health.
#[utoipa::path(
    tag = "health",
    security(("api_key" = []), ("bearer" = [])),
    responses(
        (status = 200, description = "Platform status", body = PlatformStatus),
        (status = 403, description = "An API key without `stats:read`", body = Problem, content_type = "application/problem+json"),
    )
)]
#[get("/status")]
pub async fn status(state: web::Data<AppState>, auth: ApiKeyOrJwt) -> ApiResult<web::Json<PlatformStatus>> {
    Ok(web::Json(state.services.status.status(&auth.0).await?))
}

/// Dashboard statistics: counts of the caller's tenant's resources.
#[utoipa::path(
    tag = "health",
    security(("api_key" = []), ("bearer" = [])),
    responses(
        (status = 200, description = "Counts for the caller's tenant", body = Stats),
        (status = 403, description = "An API key without `stats:read`", body = Problem, content_type = "application/problem+json"),
    )
)]
#[get("/stats")]
pub async fn stats(state: web::Data<AppState>, auth: ApiKeyOrJwt) -> ApiResult<web::Json<Stats>> {
    Ok(web::Json(state.services.status.stats(&auth.0).await?))
}
