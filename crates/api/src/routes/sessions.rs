//! Agent sessions: what a conversation or run has done and seen, read by its policy checks
//! (`input.session`), and the content shown to the agent (`observe`).

use actix_web::{get, post, web};
use agentgov_domain::model::SessionView;
use agentgov_domain::services::sessions::{Observation, ObserveRequest};

use crate::AppState;
use crate::extract::{ApiKeyOrJwt, Json};
use crate::problem::ApiResult;

/// Record content shown to an agent in a session (a tool result, a web page, an e-mail):
/// screened by the Prompt Guard, which raises `untrusted_content_seen` on the session when
/// it flags it, with any labels the caller declares, and keeps digests of the addresses,
/// IBANs and web hosts that a sentence of it ordered the agent to use (unless `trusted`: the
/// user's own request, whose values are the user's). The content is never stored: the
/// `agent.observed` audit record keeps its SHA-256, size, verdict, labels and those digests.
/// Later checks of the session read the labels as `input.session.labels`, and the values
/// their own arguments carry as `input.session.instructed_values` (`policies:check`).
#[utoipa::path(
    operation_id = "sessions_observe",
    tag = "sessions",
    security(("api_key" = []), ("bearer" = [])),
    params(("id" = String, Path, description = "The session (a check's `session_id`), 1 to 200 characters")),
    request_body = ObserveRequest,
    responses(
        (status = 200, description = "The verdict, the labels raised and the session after", body = Observation),
        (status = 404, description = "`agent_id` is not an agent of the caller's tenant", body = crate::problem::Problem),
        (status = 422, description = "Invalid request", body = crate::problem::Problem),
    )
)]
#[post("/{id}/observe")]
pub async fn observe(
    state: web::Data<AppState>,
    auth: ApiKeyOrJwt,
    id: web::Path<String>,
    body: Json<ObserveRequest>,
) -> ApiResult<web::Json<Observation>> {
    Ok(web::Json(state.services.sessions.observe(&auth.0, &id, body.0).await?))
}

/// A session's state as its next check would see it (`input.session`): checks by decision
/// and action, labels, sensitivity, observations, approvals, spend and rate, folded from
/// the session's audit records (`audit:read`). A session with no record answers its
/// empty state.
#[utoipa::path(
    operation_id = "sessions_get",
    tag = "sessions",
    security(("api_key" = []), ("bearer" = [])),
    params(("id" = String, Path, description = "The session (a check's `session_id`), 1 to 200 characters")),
    responses(
        (status = 200, description = "The session's state", body = SessionView),
        (status = 422, description = "Invalid session id", body = crate::problem::Problem),
    )
)]
#[get("/{id}")]
pub async fn get(
    state: web::Data<AppState>,
    auth: ApiKeyOrJwt,
    id: web::Path<String>,
) -> ApiResult<web::Json<SessionView>> {
    Ok(web::Json(state.services.sessions.get(&auth.0, &id).await?))
}
