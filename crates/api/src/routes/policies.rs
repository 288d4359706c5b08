//! Spec 4.6: tenant policies in Rego, their templates, and the policy check.

use actix_web::http::header;
use actix_web::{HttpResponse, delete, get, post, put, web};
use agentgov_domain::ids::{PolicyId, ReplayJobId};
use agentgov_domain::model::{Policy, ReplayJob};
use agentgov_domain::page::Page;
use agentgov_domain::services::NewReplay;
use agentgov_domain::services::check::{CheckRequest, CheckResponse};
use agentgov_domain::services::policies::{PolicyRequest, ShadowReport, TemplateView};

use crate::AppState;
use crate::extract::{ApiKeyOrJwt, Json, Jwt};
use crate::problem::ApiResult;

/// `GET /policies`: `limit`, `cursor` and the `enabled` filter. Unknown parameters are
/// refused (422).
#[derive(Debug, Default, serde::Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct PolicyListQuery {
    /// Page size, 1 to 500 (default 50).
    #[param(minimum = 1, maximum = 500)]
    pub limit: Option<i64>,
    /// `next_cursor` of the previous page.
    #[param(pattern = r"^([A-Za-z0-9_-]{21}[AQgw])?$")]
    pub cursor: Option<String>,
    /// Only enabled (`true`) or disabled (`false`) policies.
    pub enabled: Option<bool>,
}

/// Create a policy (admin). The Rego module is compiled first: a syntax or type error is a
/// 422 whose `errors[0]` carries `line`, `column` and `message`. Give `template` (an id and
/// parameters) instead of `rego` to instantiate a template.
#[utoipa::path(
    tag = "policies",
    security(("bearer" = [])),
    request_body = PolicyRequest,
    responses(
        (status = 201, description = "The policy, at version 1", body = Policy),
        (status = 409, description = "The tenant already has a policy of that name", body = crate::problem::Problem),
    )
)]
#[post("")]
pub async fn create(state: web::Data<AppState>, auth: Jwt, body: Json<PolicyRequest>) -> ApiResult<HttpResponse> {
    let policy = state.services.policies.create(&auth.0, body.0).await?;
    Ok(HttpResponse::Created().insert_header(("Location", format!("/api/v1/policies/{}", policy.id))).json(policy))
}

/// List the tenant's policies, newest first.
#[utoipa::path(
    tag = "policies",
    security(("api_key" = []), ("bearer" = [])),
    params(PolicyListQuery),
    responses((status = 200, description = "A page of policies", body = Page<Policy>))
)]
#[get("")]
pub async fn list(
    state: web::Data<AppState>,
    auth: ApiKeyOrJwt,
    q: web::Query<PolicyListQuery>,
) -> ApiResult<web::Json<Page<Policy>>> {
    Ok(web::Json(state.services.policies.list(&auth.0, q.enabled, q.limit, q.cursor.as_deref()).await?))
}

/// The built-in Rego templates, each with its parameters and its source at their defaults.
#[utoipa::path(
    tag = "policies",
    security(("api_key" = []), ("bearer" = [])),
    responses((status = 200, description = "Every template", body = Vec<TemplateView>))
)]
#[get("/templates")]
pub async fn templates(state: web::Data<AppState>, auth: ApiKeyOrJwt) -> ApiResult<web::Json<Vec<TemplateView>>> {
    Ok(web::Json(state.services.policies.templates(&auth.0)?))
}

/// Decide whether an agent may take an action on a resource (spec 2.4 and 2.5): every
/// enabled policy of the tenant is evaluated; any deny denies; otherwise an approval rule,
/// or a risk at or above the approval threshold, requires approval. The decision is in the
/// audit log (`decision_id`) before the answer, unless `dry_run` is set.
#[utoipa::path(
    tag = "policies",
    security(("api_key" = []), ("bearer" = [])),
    request_body = CheckRequest,
    responses(
        (status = 200, description = "The decision", body = CheckResponse),
        (status = 404, description = "No such agent in the caller's tenant", body = crate::problem::Problem),
    )
)]
#[post("/check")]
pub async fn check(
    state: web::Data<AppState>,
    auth: ApiKeyOrJwt,
    body: Json<CheckRequest>,
) -> ApiResult<web::Json<CheckResponse>> {
    Ok(web::Json(state.services.policies.check(&auth.0, body.0).await?))
}

/// One policy.
#[utoipa::path(
    tag = "policies",
    security(("api_key" = []), ("bearer" = [])),
    params(("id" = String, Path, format = Uuid)),
    responses((status = 200, description = "The policy", body = Policy))
)]
#[get("/{id}")]
pub async fn get(
    state: web::Data<AppState>,
    auth: ApiKeyOrJwt,
    id: web::Path<PolicyId>,
) -> ApiResult<web::Json<Policy>> {
    Ok(web::Json(state.services.policies.get(&auth.0, *id).await?))
}

/// Replace a policy (admin): a full update, compiled first; the version goes up by one.
/// Send `version` to refuse the change (409) if someone else changed the policy since.
#[utoipa::path(
    tag = "policies",
    security(("bearer" = [])),
    params(("id" = String, Path, format = Uuid)),
    request_body = PolicyRequest,
    responses(
        (status = 200, description = "The policy at its new version", body = Policy),
        (status = 409, description = "A duplicate name, or the policy is no longer at `version`", body = crate::problem::Problem),
    )
)]
#[put("/{id}")]
pub async fn update(
    state: web::Data<AppState>,
    auth: Jwt,
    id: web::Path<PolicyId>,
    body: Json<PolicyRequest>,
) -> ApiResult<web::Json<Policy>> {
    Ok(web::Json(state.services.policies.update(&auth.0, *id, body.0).await?))
}

/// Delete a policy (admin). Its audit records stay.
#[utoipa::path(
    tag = "policies",
    security(("bearer" = [])),
    params(("id" = String, Path, format = Uuid)),
    responses((status = 204, description = "Deleted"))
)]
#[delete("/{id}")]
pub async fn remove(state: web::Data<AppState>, auth: Jwt, id: web::Path<PolicyId>) -> ApiResult<HttpResponse> {
    state.services.policies.delete(&auth.0, *id).await?;
    Ok(HttpResponse::NoContent().finish())
}

/// Evaluate one policy, enabled or not, against a check request, as a check would but
/// without recording anything (admin; for policy authors).
#[utoipa::path(
    tag = "policies",
    security(("bearer" = [])),
    params(("id" = String, Path, format = Uuid)),
    request_body = CheckRequest,
    responses((status = 200, description = "What the policy alone decides", body = CheckResponse))
)]
#[post("/{id}/test")]
pub async fn test(
    state: web::Data<AppState>,
    auth: Jwt,
    id: web::Path<PolicyId>,
    body: Json<CheckRequest>,
) -> ApiResult<web::Json<CheckResponse>> {
    Ok(web::Json(state.services.policies.test(&auth.0, *id, body.0).await?))
}

/// `GET /policies/{id}/shadow-report`.
#[derive(Debug, Default, serde::Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ShadowReportQuery {
    /// The window, in hours back from now (1 to 720, default 168).
    #[param(minimum = 1, maximum = 720)]
    pub window_hours: Option<i64>,
}

/// What a policy would have done: its `would_deny`, `would_require_approval` and
/// `would_error` outcomes in the recorded checks since its last change (within the window),
/// their rates, its most frequent messages and the newest decisions it would have changed.
/// For a policy in `shadow` mode, before enforcing it (`policies:read`).
#[utoipa::path(
    tag = "policies",
    security(("api_key" = []), ("bearer" = [])),
    params(("id" = String, Path, format = Uuid), ShadowReportQuery),
    responses(
        (status = 200, description = "The report", body = ShadowReport),
        (status = 404, description = "No such policy in the caller's tenant", body = crate::problem::Problem),
        (status = 422, description = "Invalid window", body = crate::problem::Problem),
    )
)]
#[get("/{id}/shadow-report")]
pub async fn shadow_report(
    state: web::Data<AppState>,
    auth: ApiKeyOrJwt,
    id: web::Path<PolicyId>,
    query: web::Query<ShadowReportQuery>,
) -> ApiResult<web::Json<ShadowReport>> {
    Ok(web::Json(state.services.policies.shadow_report(&auth.0, *id, query.window_hours).await?))
}

/// Replay a candidate version of a policy (admin): one of its earlier `version`s (whose
/// source the audit log keeps) or `rego` to try, evaluated beside its present version on the
/// inputs the tenant's past decisions recorded (from `from` to `to`, at most 90 days, by
/// default the last 7), asynchronously. The job's `report` counts each version's outcomes and
/// the decisions the candidate newly denies, newly allows or newly gates behind an approval,
/// with examples. Nothing is recorded but the job.
#[utoipa::path(
    tag = "policies",
    security(("bearer" = [])),
    params(("id" = String, Path, format = Uuid)),
    request_body = NewReplay,
    responses(
        (status = 202, description = "Accepted: the job, `status: queued`", body = ReplayJob),
        (status = 404, description = "No such policy in the caller's tenant", body = crate::problem::Problem),
        (status = 422, description = "Neither or both of `version` and `rego`, an unknown version, Rego that does not compile, or a bad window", body = crate::problem::Problem),
        (status = 429, description = "The tenant has as many replays queued or running as it may", body = crate::problem::Problem),
    )
)]
#[post("/{id}/replay")]
pub async fn start_replay(
    state: web::Data<AppState>,
    auth: Jwt,
    id: web::Path<PolicyId>,
    body: Json<NewReplay>,
) -> ApiResult<HttpResponse> {
    let job = state.services.replays.start_replay(&auth.0, *id, body.0).await?;
    Ok(HttpResponse::Accepted()
        .insert_header((header::LOCATION, format!("/api/v1/policies/{}/replay/{}", job.policy_id, job.id)))
        .json(job))
}

/// The state of a replay, with its report once completed (`policies:read`).
#[utoipa::path(
    tag = "policies",
    security(("api_key" = []), ("bearer" = [])),
    params(("id" = String, Path, format = Uuid), ("replay_id" = String, Path, format = Uuid)),
    responses(
        (status = 200, description = "The job", body = ReplayJob),
        (status = 404, description = "No such replay of this policy in the caller's tenant (or it expired)", body = crate::problem::Problem),
    )
)]
#[get("/{id}/replay/{replay_id}")]
pub async fn replay_status(
    state: web::Data<AppState>,
    auth: ApiKeyOrJwt,
    path: web::Path<(PolicyId, ReplayJobId)>,
) -> ApiResult<web::Json<ReplayJob>> {
    let (id, replay) = path.into_inner();
    Ok(web::Json(state.services.replays.replay_status(&auth.0, id, replay).await?))
}
