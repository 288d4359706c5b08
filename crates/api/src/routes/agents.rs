//! Spec 4.4: the agent registry, heartbeats and semantic search.

use actix_web::{HttpResponse, delete, get, post, put, web};
use agentgov_domain::ids::AgentId;
use agentgov_domain::model::Agent;
use agentgov_domain::page::Page;
use agentgov_domain::services::agents::{AgentDetails, AgentListParams, AgentRequest, HeartbeatRequest, SearchResults};

use crate::AppState;
use crate::extract::{ApiKeyOrJwt, Json};
use crate::problem::ApiResult;

/// `GET /agents`: the filters with `limit` and `cursor`. Unknown parameters are refused (422).
#[derive(Debug, Default, serde::Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct AgentListQuery {
    /// Page size, 1 to 500 (default 50).
    #[param(minimum = 1, maximum = 500)]
    pub limit: Option<i64>,
    /// `next_cursor` of the previous page.
    #[param(pattern = r"^([A-Za-z0-9_-]{21}[AQgw])?$")]
    pub cursor: Option<String>,
    /// Declared type, exact.
    #[serde(rename = "type")]
    #[param(rename = "type")]
    pub agent_type: Option<String>,
    /// `active`, `inactive` (including active agents without a recent heartbeat) or `suspended`.
    #[param(value_type = Option<agentgov_domain::model::agent::AgentStatus>)]
    pub status: Option<String>,
    /// `low`, `medium`, `high` or `critical`.
    #[param(value_type = Option<agentgov_domain::model::agent::RiskLevel>)]
    pub risk: Option<String>,
    /// Agents having this capability, exact.
    pub capability: Option<String>,
}

/// `GET /agents/search`.
#[derive(Debug, Default, serde::Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct SearchQuery {
    /// What to look for, in natural language (1 to 500 characters). Required: the service
    /// names it in a 422 when it is missing, as it does when it is blank.
    #[param(
        required = true,
        min_length = 1,
        max_length = 500,
        pattern = r"^[^\u0000-\u001f\u007f-\u009f]*[^\s\u0000-\u001f\u007f-\u009f][^\u0000-\u001f\u007f-\u009f]*$"
    )]
    pub q: Option<String>,
    /// How many results, 1 to 100 (default 10).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
}

/// Register an agent. Its predicted type, risk and embedding are computed on the way in.
#[utoipa::path(
    tag = "agents",
    security(("api_key" = []), ("bearer" = [])),
    request_body = AgentRequest,
    responses(
        (status = 201, description = "The registered agent", body = Agent),
        (status = 409, description = "The tenant already has an agent of that name", body = crate::problem::Problem),
    )
)]
#[post("/register")]
pub async fn register(
    state: web::Data<AppState>,
    auth: ApiKeyOrJwt,
    body: Json<AgentRequest>,
) -> ApiResult<HttpResponse> {
    let agent = state.services.agents.register(&auth.0, body.0).await?;
    Ok(HttpResponse::Created().insert_header(("Location", format!("/api/v1/agents/{}", agent.id))).json(agent))
}

/// List the tenant's agents, newest first, each with its predicted type and risk.
#[utoipa::path(
    tag = "agents",
    security(("api_key" = []), ("bearer" = [])),
    params(AgentListQuery),
    responses((status = 200, description = "A page of agents", body = Page<Agent>))
)]
#[get("")]
pub async fn list(
    state: web::Data<AppState>,
    auth: ApiKeyOrJwt,
    q: web::Query<AgentListQuery>,
) -> ApiResult<web::Json<Page<Agent>>> {
    let q = q.into_inner();
    let params = AgentListParams { agent_type: q.agent_type, status: q.status, risk: q.risk, capability: q.capability };
    Ok(web::Json(state.services.agents.list(&auth.0, &params, q.limit, q.cursor.as_deref()).await?))
}

/// Semantic search: the tenant's agents ranked by how well they match `q`, best first.
#[utoipa::path(
    tag = "agents",
    security(("api_key" = []), ("bearer" = [])),
    params(SearchQuery),
    responses((status = 200, description = "The best matches with their `score` (cosine similarity)", body = SearchResults))
)]
#[get("/search")]
pub async fn search(
    state: web::Data<AppState>,
    auth: ApiKeyOrJwt,
    q: web::Query<SearchQuery>,
) -> ApiResult<web::Json<SearchResults>> {
    Ok(web::Json(state.services.agents.search(&auth.0, q.q.as_deref(), q.limit).await?))
}

/// One agent.
#[utoipa::path(
    tag = "agents",
    security(("api_key" = []), ("bearer" = [])),
    params(("id" = String, Path, format = Uuid)),
    responses((status = 200, description = "The agent", body = Agent))
)]
#[get("/{id}")]
pub async fn get(state: web::Data<AppState>, auth: ApiKeyOrJwt, id: web::Path<AgentId>) -> ApiResult<web::Json<Agent>> {
    Ok(web::Json(state.services.agents.get(&auth.0, *id).await?))
}

/// One agent with its risk factors and an embedding summary (model, dimensions, the text
/// embedded, when it was refreshed, and the nearest other agents).
#[utoipa::path(
    tag = "agents",
    security(("api_key" = []), ("bearer" = [])),
    params(("id" = String, Path, format = Uuid)),
    responses((status = 200, description = "The agent and how it was assessed", body = AgentDetails))
)]
#[get("/{id}/details")]
pub async fn details(
    state: web::Data<AppState>,
    auth: ApiKeyOrJwt,
    id: web::Path<AgentId>,
) -> ApiResult<web::Json<AgentDetails>> {
    Ok(web::Json(state.services.agents.details(&auth.0, *id).await?))
}

/// Replace an agent's fields (a full update: what is left out is reset, except `status`,
/// which is kept). Type, risk and embedding are recomputed.
#[utoipa::path(
    tag = "agents",
    security(("api_key" = []), ("bearer" = [])),
    params(("id" = String, Path, format = Uuid)),
    request_body = AgentRequest,
    responses(
        (status = 200, description = "The updated agent", body = Agent),
        (status = 409, description = "The tenant already has an agent of that name", body = crate::problem::Problem),
    )
)]
#[put("/{id}")]
pub async fn update(
    state: web::Data<AppState>,
    auth: ApiKeyOrJwt,
    id: web::Path<AgentId>,
    body: Json<AgentRequest>,
) -> ApiResult<web::Json<Agent>> {
    Ok(web::Json(state.services.agents.update(&auth.0, *id, body.0).await?))
}

/// Delete an agent. Its audit records stay.
#[utoipa::path(
    tag = "agents",
    security(("api_key" = []), ("bearer" = [])),
    params(("id" = String, Path, format = Uuid)),
    responses((status = 204, description = "Deleted"))
)]
#[delete("/{id}")]
pub async fn remove(state: web::Data<AppState>, auth: ApiKeyOrJwt, id: web::Path<AgentId>) -> ApiResult<HttpResponse> {
    state.services.agents.delete(&auth.0, *id).await?;
    Ok(HttpResponse::NoContent().finish())
}

/// The agent is alive: sets `last_seen_at`, optionally its status and metadata, and
/// refreshes its embedding. A suspended agent cannot lift its own suspension (409).
#[utoipa::path(
    tag = "agents",
    security(("api_key" = []), ("bearer" = [])),
    params(("id" = String, Path, format = Uuid)),
    request_body(content = Option<HeartbeatRequest>, description = "Optional; an empty body is a plain heartbeat"),
    responses(
        (status = 200, description = "The agent after the heartbeat", body = Agent),
        (status = 409, description = "A suspended agent asked to be active", body = crate::problem::Problem),
    )
)]
#[post("/{id}/heartbeat")]
pub async fn heartbeat(
    state: web::Data<AppState>,
    auth: ApiKeyOrJwt,
    id: web::Path<AgentId>,
    body: web::Bytes,
) -> ApiResult<web::Json<Agent>> {
    let req = if crate::extract::body_absent(&body) {
        HeartbeatRequest::default()
    } else {
        crate::extract::parse_json(&body)?
    };
    Ok(web::Json(state.services.agents.heartbeat(&auth.0, *id, req).await?))
}
