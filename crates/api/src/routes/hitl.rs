//! Spec 4.9: human-in-the-loop approval requests.

use std::time::Duration;

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, get, post, web};
use agentgov_domain::DomainError;
use agentgov_domain::ids::HitlId;
use agentgov_domain::model::HitlRequest;
use agentgov_domain::page::Page;
use agentgov_domain::services::hitl::MAX_WAIT_SECS;
use agentgov_domain::services::{HitlApproval, HitlDecision, NewHitlRequest};

use crate::AppState;
use crate::extract::{ApiKeyOrJwt, Json, Jwt, ListQuery, optional_body};
use crate::problem::ApiResult;

/// Ask a person to approve an action (`hitl:request`). The request is `pending` until an
/// analyst approves or rejects it, it is cancelled, or `timeout_seconds` pass (then
/// `expired`). With `callback_url`, the outcome is POSTed there, signed like the inbound
/// webhook (`X-Webhook-Signature: sha256=<hex HMAC-SHA256 of the body with
/// WEBHOOK_SECRET>`, `X-Webhook-Id` the request id), and retried with backoff. Follow it
/// with `GET /hitl/status/{id}?wait=30`.
#[utoipa::path(
    operation_id = "hitl_request",
    tag = "hitl",
    security(("api_key" = []), ("bearer" = [])),
    request_body = NewHitlRequest,
    responses(
        (status = 201, description = "Opened, pending", body = HitlRequest),
        (status = 404, description = "No such agent in the tenant", body = crate::problem::Problem),
        (status = 422, description = "An invalid field", body = crate::problem::Problem),
        (status = 429, description = "With `callback_url`: the tenant has as many callbacks still to send as it may", body = crate::problem::Problem),
    )
)]
#[post("/request")]
pub async fn request(
    state: web::Data<AppState>,
    auth: ApiKeyOrJwt,
    body: Json<NewHitlRequest>,
) -> ApiResult<HttpResponse> {
    let opened = state.services.hitl.request(&auth.0, body.0).await?;
    let location = format!("/api/v1/hitl/status/{}", opened.id);
    Ok(HttpResponse::Created().insert_header((header::LOCATION, location)).json(opened))
}

/// Approve a pending request (analyst or higher), with an optional `comment`. Approving
/// grants a single-use approval token bound to the exact action (its digest), which the
/// agent presents to `POST /policies/check` as `approval_token` (`GET /hitl/status/{id}`
/// serves it). With `context`, the approver edits the arguments: the edited action is
/// checked again under the tenant's policies, a denial wins (409, the request stays
/// pending), and the token is bound to the edited action. 409 when the request is no longer
/// pending or has expired.
#[utoipa::path(
    operation_id = "hitl_approve",
    tag = "hitl",
    security(("bearer" = [])),
    params(("id" = String, Path, format = Uuid)),
    request_body(content = Option<HitlApproval>, description = "Optional comment, and edited arguments"),
    responses(
        (status = 200, description = "Approved", body = HitlRequest),
        (status = 404, description = "No such request in the tenant", body = crate::problem::Problem),
        (status = 409, description = "Decided, cancelled or expired already; or the edited action is denied by policy", body = crate::problem::Problem),
        (status = 422, description = "An invalid field (`comment`, `context`)", body = crate::problem::Problem),
    )
)]
#[post("/approve/{id}")]
pub async fn approve(
    state: web::Data<AppState>,
    auth: Jwt,
    id: web::Path<HitlId>,
    req: HttpRequest,
    body: web::Bytes,
) -> ApiResult<web::Json<HitlRequest>> {
    let approval: HitlApproval = optional_body(&req, &body)?;
    Ok(web::Json(state.services.policies.approve(&auth.0, *id, approval).await?))
}

/// Reject a pending request (analyst or higher), with an optional `comment`. 409 when it is
/// no longer pending or has expired.
#[utoipa::path(
    operation_id = "hitl_reject",
    tag = "hitl",
    security(("bearer" = [])),
    params(("id" = String, Path, format = Uuid)),
    request_body(content = Option<HitlDecision>, description = "Optional comment"),
    responses(
        (status = 200, description = "Rejected", body = HitlRequest),
        (status = 404, description = "No such request in the tenant", body = crate::problem::Problem),
        (status = 409, description = "Decided, cancelled or expired already", body = crate::problem::Problem),
    )
)]
#[post("/reject/{id}")]
pub async fn reject(
    state: web::Data<AppState>,
    auth: Jwt,
    id: web::Path<HitlId>,
    req: HttpRequest,
    body: web::Bytes,
) -> ApiResult<web::Json<HitlRequest>> {
    let decision: HitlDecision = optional_body(&req, &body)?;
    Ok(web::Json(state.services.hitl.reject(&auth.0, *id, decision).await?))
}

/// Withdraw a pending request (`hitl:request`; beyond the spec), with an optional
/// `comment`: the agent no longer needs it. 409 when it is no longer pending.
#[utoipa::path(
    operation_id = "hitl_cancel",
    tag = "hitl",
    security(("api_key" = []), ("bearer" = [])),
    params(("id" = String, Path, format = Uuid)),
    request_body(content = Option<HitlDecision>, description = "Optional comment"),
    responses(
        (status = 200, description = "Cancelled", body = HitlRequest),
        (status = 404, description = "No such request in the tenant", body = crate::problem::Problem),
        (status = 409, description = "Decided, cancelled or expired already", body = crate::problem::Problem),
    )
)]
#[post("/cancel/{id}")]
pub async fn cancel(
    state: web::Data<AppState>,
    auth: ApiKeyOrJwt,
    id: web::Path<HitlId>,
    req: HttpRequest,
    body: web::Bytes,
) -> ApiResult<web::Json<HitlRequest>> {
    let decision: HitlDecision = optional_body(&req, &body)?;
    Ok(web::Json(state.services.hitl.cancel(&auth.0, *id, decision).await?))
}

/// `GET /hitl/status/{id}`.
#[derive(Debug, Default, serde::Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct StatusQuery {
    /// Long-poll: while the request is pending, wait up to this many seconds (0 to 60) for
    /// a decision before answering. The answer is the request as it then is.
    #[param(minimum = 0, maximum = 60)]
    pub wait: Option<i64>,
}

/// A request's state (`hitl:read`). With `wait`, a pending request is answered when it
/// is decided, cancelled or expires (on any replica), or when `wait` seconds pass. An
/// approved request carries its `approval_token` while it is unused and unexpired, for
/// callers that may check (`policies:check`).
#[utoipa::path(
    operation_id = "hitl_status",
    tag = "hitl",
    security(("api_key" = []), ("bearer" = [])),
    params(("id" = String, Path, format = Uuid), StatusQuery),
    responses(
        (status = 200, description = "The request", body = HitlRequest),
        (status = 404, description = "No such request in the tenant", body = crate::problem::Problem),
        (status = 422, description = "`wait` out of range", body = crate::problem::Problem),
        (status = 429, description = "Too many long-polls waiting: the tenant's (over every server) or this server's", body = crate::problem::Problem),
    )
)]
#[get("/status/{id}")]
pub async fn status(
    state: web::Data<AppState>,
    auth: ApiKeyOrJwt,
    id: web::Path<HitlId>,
    q: web::Query<StatusQuery>,
) -> ApiResult<web::Json<HitlRequest>> {
    let hitl = &state.services.hitl;
    let wait = match q.wait {
        None | Some(0) => return Ok(web::Json(hitl.get(&auth.0, *id).await?)),
        Some(w) if (1..=i64::from(MAX_WAIT_SECS)).contains(&w) => Duration::from_secs(w.unsigned_abs()),
        Some(_) => return Err(DomainError::invalid("wait", format!("must be between 0 and {MAX_WAIT_SECS}")).into()),
    };
    let (current, watch) = hitl.watch(&auth.0, *id, wait).await?;
    let Some(mut watch) = watch else { return Ok(web::Json(current)) };
    // Wake a little after the expiry too: the expiry job marks it within a second or so.
    let until_expiry = (current.expires_at - time::OffsetDateTime::now_utc()).max(time::Duration::ZERO);
    let until_expiry = Duration::try_from(until_expiry).unwrap_or(wait) + Duration::from_secs(2);
    // Woken or timed out, the answer is what is stored now.
    let _woken = actix_web::rt::time::timeout(wait.min(until_expiry), watch.changed()).await;
    // The tenant's long-poll place (if the client went away, it expires shortly after `wait`).
    hitl.end_watch(watch).await;
    Ok(web::Json(hitl.get(&auth.0, *id).await?))
}

/// The pending queue, oldest first (analyst or higher).
#[utoipa::path(
    operation_id = "hitl_pending",
    tag = "hitl",
    security(("bearer" = [])),
    params(ListQuery),
    responses(
        (status = 200, description = "A page of pending requests, oldest first", body = Page<HitlRequest>),
        (status = 403, description = "Below the analyst role", body = crate::problem::Problem),
    )
)]
#[get("/pending")]
pub async fn pending(
    state: web::Data<AppState>,
    auth: Jwt,
    q: web::Query<ListQuery>,
) -> ApiResult<web::Json<Page<HitlRequest>>> {
    Ok(web::Json(state.services.hitl.pending(&auth.0, q.limit, q.cursor.as_deref()).await?))
}
