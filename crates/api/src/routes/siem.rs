//! Spec 4.13: SIEM forwarding, for the platform operator (`X-Admin-Key`) or a Super Admin
//! (session JWT). Sinks are configured on the server (`siem_sinks`); see docs/siem.md.

use actix_web::{get, post, web};
use agentgov_domain::services::siem::{SiemStatus, SiemTestReport};

use crate::AppState;
use crate::extract::SiemOperator;
use crate::problem::{ApiResult, Problem};

/// Every configured sink: where it sends (credentials masked), its format and filter, the
/// records waiting, delivered and failed, the last success and the last error.
#[utoipa::path(
    tag = "siem",
    security(("admin_key" = []), ("bearer" = [])),
    responses((status = 200, description = "The forwarding's state", body = SiemStatus))
)]
#[get("/siem/status")]
pub async fn status(state: web::Data<AppState>, who: SiemOperator) -> ApiResult<web::Json<SiemStatus>> {
    Ok(web::Json(state.services.siem.status(&who.0).await?))
}

/// Sends one `siem.test` event through every sink now (filters do not apply) and answers
/// each sink's outcome and latency. The event is not written to any audit log.
#[utoipa::path(
    tag = "siem",
    security(("admin_key" = []), ("bearer" = [])),
    responses(
        (status = 200, description = "Each sink's outcome (a sink that failed has `ok: false` and `error`)", body = SiemTestReport),
        (status = 409, description = "No sink is configured", body = Problem, content_type = "application/problem+json"),
    )
)]
#[post("/siem/test")]
pub async fn test(state: web::Data<AppState>, who: SiemOperator) -> ApiResult<web::Json<SiemTestReport>> {
    Ok(web::Json(state.services.siem.test(&who.0).await?))
}
