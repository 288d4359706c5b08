//! OpenID AuthZEN Authorization API 1.0: the access evaluation endpoints and the PDP's
//! metadata, for gateways and agent toolkits that speak AuthZEN. Each evaluation is mapped
//! onto `POST /api/v1/policies/check` and decided by the same service call, so it is
//! evaluated, audited, published and (when it needs approval) queued exactly as a check is.
//! The mapping is in docs/integrations.md.

use actix_web::http::header::{self, HeaderName, HeaderValue};
use actix_web::{HttpRequest, HttpResponse, get, post, web};
use agentgov_domain::DomainError;
use agentgov_domain::model::JsonObject;
use agentgov_domain::services::check::{CheckRequest, CheckResponse};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::AppState;
use crate::extract::{BearerKeyOrJwt, parse_json, require_json};
use crate::problem::{ApiError, ApiResult};

/// Most evaluations one batch may carry.
pub const MAX_EVALUATIONS: usize = 100;
/// The longest `X-Request-ID` echoed back.
const MAX_REQUEST_ID_LEN: usize = 200;

/// A subject or a resource: `type` and `id` are required.
#[derive(Debug, Clone, serde::Deserialize, utoipa::ToSchema)]
#[schema(as = AuthzenEntity)]
pub struct Entity {
    /// For a subject, `agent` (or `ai_agent`) for the acting agent, or `user` with the agent
    /// in `properties.delegation`.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    pub id: Option<String>,
    #[schema(value_type = Option<Object>)]
    pub properties: Option<JsonObject>,
}

/// What the subject wants to do: `name` is required.
#[derive(Debug, Clone, serde::Deserialize, utoipa::ToSchema)]
#[schema(as = AuthzenAction)]
pub struct Action {
    pub name: Option<String>,
    #[schema(value_type = Option<Object>)]
    pub properties: Option<JsonObject>,
}

/// One access evaluation (AuthZEN 1.0 § 6.1). Unknown members are ignored, as the
/// specification requires.
#[derive(Debug, Clone, Default, serde::Deserialize, utoipa::ToSchema)]
#[schema(as = AuthzenEvaluation)]
pub struct EvaluationRequest {
    pub subject: Option<Entity>,
    pub action: Option<Action>,
    pub resource: Option<Entity>,
    #[schema(value_type = Option<Object>)]
    pub context: Option<JsonObject>,
}

/// How a batch is evaluated.
#[derive(Debug, Clone, Default, serde::Deserialize, utoipa::ToSchema)]
#[schema(as = AuthzenOptions)]
pub struct EvaluationsOptions {
    /// `execute_all` (default), `deny_on_first_deny` or `permit_on_first_permit`.
    pub evaluations_semantic: Option<String>,
}

/// A batch (AuthZEN 1.0 § 7.1): the top-level `subject`, `action`, `resource` and `context`
/// are the defaults of each item of `evaluations`, which may replace any of them.
#[derive(Debug, Clone, Default, serde::Deserialize, utoipa::ToSchema)]
#[schema(as = AuthzenEvaluations)]
pub struct EvaluationsRequest {
    pub subject: Option<Entity>,
    pub action: Option<Action>,
    pub resource: Option<Entity>,
    #[schema(value_type = Option<Object>)]
    pub context: Option<JsonObject>,
    /// At most 100. Absent or empty: the request is one evaluation and the answer one
    /// decision.
    pub evaluations: Option<Vec<EvaluationRequest>>,
    pub options: Option<EvaluationsOptions>,
}

/// A decision: `true` only when the action may go ahead now. `context` carries agentgov's
/// facts: `decision_id`, `risk_score`, `risk`, `reason` (also as `reason_admin.en`),
/// `required_approval` and `hitl_request_id`, or `error` for an item that could not be
/// evaluated.
#[derive(Debug, Clone, serde::Serialize, utoipa::ToSchema)]
#[schema(as = AuthzenDecision)]
pub struct Decision {
    pub decision: bool,
    #[schema(value_type = Object)]
    pub context: Value,
}

/// The decisions of a batch, in the order of the request; shorter than the request when
/// its semantic stopped early.
#[derive(Debug, Clone, serde::Serialize, utoipa::ToSchema)]
#[schema(as = AuthzenDecisions)]
pub struct Decisions {
    pub evaluations: Vec<Decision>,
}

/// The PDP's metadata (AuthZEN 1.0 § 9).
#[derive(Debug, Clone, serde::Serialize, utoipa::ToSchema)]
#[schema(as = AuthzenConfiguration)]
pub struct Configuration {
    pub policy_decision_point: String,
    pub access_evaluation_endpoint: String,
    pub access_evaluations_endpoint: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Semantic {
    ExecuteAll,
    DenyOnFirstDeny,
    PermitOnFirstPermit,
}

impl Semantic {
    fn parse(options: Option<&EvaluationsOptions>) -> Result<Self, ApiError> {
        match options.and_then(|o| o.evaluations_semantic.as_deref()) {
            None | Some("execute_all") => Ok(Self::ExecuteAll),
            Some("deny_on_first_deny") => Ok(Self::DenyOnFirstDeny),
            Some("permit_on_first_permit") => Ok(Self::PermitOnFirstPermit),
            Some(other) => Err(ApiError::bad_request(format!(
                "options.evaluations_semantic `{other}` is not one of execute_all, deny_on_first_deny, permit_on_first_permit"
            ))),
        }
    }

    /// Whether the batch ends after a decision of `allowed`.
    fn stops_after(self, allowed: bool) -> bool {
        match self {
            Self::ExecuteAll => false,
            Self::DenyOnFirstDeny => !allowed,
            Self::PermitOnFirstPermit => allowed,
        }
    }
}

/// Decide whether a subject may perform an action on a resource (AuthZEN 1.0). Credentials:
/// the tenant's API key as `Authorization: Bearer agk_…` or `X-API-Key`, or a session JWT.
/// A missing `subject`, `action` or `resource`, or one without its required members, is a
/// 400; an unknown agent a 404.
#[utoipa::path(
    operation_id = "authzen_evaluation",
    tag = "authzen",
    security(("api_key" = []), ("bearer" = [])),
    request_body = EvaluationRequest,
    params(("X-Request-ID" = Option<String>, Header, description = "Echoed in the response")),
    responses(
        (status = 200, description = "The decision (a deny is a 200 too)", body = Decision),
        (status = 400, description = "A missing or invalid member", body = crate::problem::Problem),
        (status = 404, description = "No such agent in the caller's tenant", body = crate::problem::Problem),
    )
)]
#[post("/evaluation")]
pub async fn evaluation(
    state: web::Data<AppState>,
    auth: BearerKeyOrJwt,
    req: HttpRequest,
    body: web::Bytes,
) -> ApiResult<HttpResponse> {
    let body: EvaluationRequest = read(&req, &body)?;
    let check = to_check(&body).map_err(bad_request)?;
    let decided = state.services.policies.check(&auth.0, check).await.map_err(bad_request)?;
    Ok(respond(&req, &decision(&decided)))
}

/// Several evaluations in one request (AuthZEN 1.0 § 7), each decided and audited as one
/// check, in order. An item that cannot be evaluated is `decision: false` with
/// `context.error` (`status`, `message`) and counts as a deny for `deny_on_first_deny`.
#[utoipa::path(
    operation_id = "authzen_evaluations",
    tag = "authzen",
    security(("api_key" = []), ("bearer" = [])),
    request_body = EvaluationsRequest,
    params(("X-Request-ID" = Option<String>, Header, description = "Echoed in the response")),
    responses(
        (status = 200, description = "The decisions; one decision when `evaluations` is absent or empty", body = Decisions),
        (status = 400, description = "A missing or invalid member, an unknown semantic, more than 100 items", body = crate::problem::Problem),
    )
)]
#[post("/evaluations")]
pub async fn evaluations(
    state: web::Data<AppState>,
    auth: BearerKeyOrJwt,
    req: HttpRequest,
    body: web::Bytes,
) -> ApiResult<HttpResponse> {
    let batch: EvaluationsRequest = read(&req, &body)?;
    let semantic = Semantic::parse(batch.options.as_ref())?;
    let defaults = EvaluationRequest {
        subject: batch.subject,
        action: batch.action,
        resource: batch.resource,
        context: batch.context,
    };
    let items = batch.evaluations.unwrap_or_default();
    if items.is_empty() {
        let check = to_check(&defaults).map_err(bad_request)?;
        let decided = state.services.policies.check(&auth.0, check).await.map_err(bad_request)?;
        return Ok(respond(&req, &decision(&decided)));
    }
    if items.len() > MAX_EVALUATIONS {
        return Err(ApiError::bad_request(format!(
            "evaluations holds {} items; at most {MAX_EVALUATIONS} per request",
            items.len()
        )));
    }
    // Every item must be complete before any is decided: a malformed batch decides nothing.
    let checks = items
        .into_iter()
        .enumerate()
        .map(|(i, item)| {
            to_check(&merged(&defaults, item)).map_err(|e| {
                let e = bad_request(e);
                ApiError::bad_request(format!("evaluations[{i}]: {}", e.detail))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut out = Vec::with_capacity(checks.len());
    for check in checks {
        let one = match state.services.policies.check(&auth.0, check).await {
            Ok(decided) => decision(&decided),
            // The caller's own credentials or permissions fail every item alike.
            Err(e @ (DomainError::Unauthorized(_) | DomainError::Forbidden(_))) => return Err(e.into()),
            Err(e) => item_error(&bad_request(e)),
        };
        let stop = semantic.stops_after(one.decision);
        out.push(one);
        if stop {
            break;
        }
    }
    Ok(respond(&req, &Decisions { evaluations: out }))
}

/// The PDP's metadata: its identifier (this server's origin, as the request reached it)
/// and its two endpoints. No credentials needed.
#[utoipa::path(
    operation_id = "authzen_configuration",
    tag = "authzen",
    responses((status = 200, description = "The metadata", body = Configuration))
)]
#[get("/.well-known/authzen-configuration")]
pub async fn configuration(req: HttpRequest) -> HttpResponse {
    let info = req.connection_info();
    let pdp = format!("{}://{}", info.scheme(), info.host());
    let config = Configuration {
        access_evaluation_endpoint: format!("{pdp}/access/v1/evaluation"),
        access_evaluations_endpoint: format!("{pdp}/access/v1/evaluations"),
        policy_decision_point: pdp,
    };
    HttpResponse::Ok().json(config)
}

/// An item of a batch over the batch's defaults: each member it names replaces the default.
fn merged(defaults: &EvaluationRequest, item: EvaluationRequest) -> EvaluationRequest {
    EvaluationRequest {
        subject: item.subject.or_else(|| defaults.subject.clone()),
        action: item.action.or_else(|| defaults.action.clone()),
        resource: item.resource.or_else(|| defaults.resource.clone()),
        context: item.context.or_else(|| defaults.context.clone()),
    }
}

/// The check an evaluation stands for:
/// - the agent is the subject (`type` `agent` or `ai_agent`; its `id` the agent's UUID, or
///   a name ending in `:<uuid>` such as `auth:agent:agentmesh:<uuid>`), or, for a subject
///   of another type (a user), the agent in `subject.properties.delegation` (an id, or an
///   object with `id`), the subject then recorded as `context.delegated_by`;
/// - `action.name` is the action; `resource.id` the resource, `resource.type` recorded as
///   `context.resource_type`;
/// - `context` is the check's context, with the subject's, the action's and the resource's
///   non-empty `properties` as `subject_properties`, `action_properties` and
///   `resource_properties` (members the caller's context already has are kept).
fn to_check(e: &EvaluationRequest) -> Result<CheckRequest, DomainError> {
    let missing = |what: &str| DomainError::BadRequest(format!("`{what}` is required (AuthZEN 1.0)"));
    let subject = e.subject.as_ref().ok_or_else(|| missing("subject"))?;
    let subject_type = subject.kind.as_deref().ok_or_else(|| missing("subject.type"))?;
    let subject_id = subject.id.as_deref().ok_or_else(|| missing("subject.id"))?;
    let action = e.action.as_ref().ok_or_else(|| missing("action"))?;
    let action_name = action.name.as_deref().ok_or_else(|| missing("action.name"))?;
    let resource = e.resource.as_ref().ok_or_else(|| missing("resource"))?;
    let resource_type = resource.kind.as_deref().ok_or_else(|| missing("resource.type"))?;
    let resource_id = resource.id.as_deref().ok_or_else(|| missing("resource.id"))?;

    let mut context = e.context.clone().unwrap_or_default();
    let agent = match subject_type {
        "agent" | "ai_agent" => agent_id(subject_id).ok_or_else(|| {
            DomainError::BadRequest(format!("subject.id `{subject_id}` does not name an agent by its UUID"))
        })?,
        _ => {
            let delegation = subject.properties.as_ref().and_then(|p| p.get("delegation"));
            let named = match delegation {
                Some(Value::String(id)) => Some(id.as_str()),
                Some(Value::Object(o)) => o.get("id").and_then(Value::as_str),
                _ => None,
            };
            let agent = named.and_then(agent_id).ok_or_else(|| {
                DomainError::BadRequest(format!(
                    "a subject of type `{subject_type}` must name the agent it delegates to in properties.delegation (its UUID, or an object with `id`)"
                ))
            })?;
            context.entry("delegated_by").or_insert_with(|| json!({"type": subject_type, "id": subject_id}));
            agent
        }
    };
    context.entry("resource_type").or_insert_with(|| Value::String(resource_type.to_owned()));
    for (key, properties) in [
        ("subject_properties", &subject.properties),
        ("action_properties", &action.properties),
        ("resource_properties", &resource.properties),
    ] {
        if let Some(p) = properties.as_ref().filter(|p| !p.is_empty()) {
            context.entry(key).or_insert_with(|| Value::Object(p.clone()));
        }
    }
    Ok(CheckRequest {
        agent_id: agent.to_string(),
        action: action_name.to_owned(),
        resource: resource_id.to_owned(),
        context,
        dry_run: false,
        session_id: None,
        tool_call_id: None,
        approval_token: None,
    })
}

/// The agent a subject id names: a UUID, or the UUID after its last `:`.
fn agent_id(id: &str) -> Option<Uuid> {
    Uuid::parse_str(id).ok().or_else(|| id.rsplit_once(':').and_then(|(_, tail)| Uuid::parse_str(tail).ok()))
}

/// The decision of a check: a strict boolean, `true` only when allowed now (a check that
/// requires approval is `false`, with the approval request in the context).
fn decision(r: &CheckResponse) -> Decision {
    let mut context = json!({
        "decision_id": r.decision_id,
        "risk_score": r.risk_score,
        "risk": r.risk,
        "reason": r.reason,
        "reason_admin": {"en": r.reason},
        "required_approval": r.required_approval,
    });
    if let (Some(id), Some(map)) = (r.hitl_request_id, context.as_object_mut()) {
        map.insert("hitl_request_id".into(), json!(id));
    }
    Decision { decision: r.allowed, context }
}

/// A batch item that could not be evaluated: closed, with the problem.
fn item_error(e: &ApiError) -> Decision {
    Decision { decision: false, context: json!({"error": {"status": e.status.as_u16(), "message": e.detail}}) }
}

/// The JSON body, a 400 when it is not an AuthZEN request.
fn read<T: serde::de::DeserializeOwned>(req: &HttpRequest, body: &[u8]) -> ApiResult<T> {
    require_json(req).and_then(|()| parse_json(body)).map_err(as_400)
}

/// `e` as a domain error is answered here.
fn bad_request(e: DomainError) -> ApiError {
    as_400(ApiError::from(e))
}

/// AuthZEN answers a malformed request with 400: a member of the wrong shape, or one the
/// check finds invalid (422 elsewhere in this API), is one here.
fn as_400(e: ApiError) -> ApiError {
    if e.status != actix_web::http::StatusCode::UNPROCESSABLE_ENTITY {
        return e;
    }
    let mut e400 = ApiError::bad_request(e.detail.clone());
    e400.errors = e.errors;
    e400
}

/// A 200 with `body`, echoing the caller's `X-Request-ID` (AuthZEN 1.0 § 10.1.3) when it is
/// a reasonable header value.
fn respond(req: &HttpRequest, body: &impl serde::Serialize) -> HttpResponse {
    let mut res = HttpResponse::Ok();
    if let Some(id) = req
        .headers()
        .get("x-request-id")
        .filter(|v| v.len() <= MAX_REQUEST_ID_LEN)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| HeaderValue::from_str(v).ok())
    {
        res.insert_header((HeaderName::from_static("x-request-id"), id));
    }
    res.insert_header((header::CACHE_CONTROL, "no-store"));
    res.json(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entity(kind: &str, id: &str) -> Option<Entity> {
        Some(Entity { kind: Some(kind.into()), id: Some(id.into()), properties: None })
    }

    fn request(subject: Option<Entity>) -> EvaluationRequest {
        EvaluationRequest {
            subject,
            action: Some(Action { name: Some("read".into()), properties: None }),
            resource: entity("table", "prod/db/customers"),
            context: None,
        }
    }

    const AGENT: &str = "0190f000-0000-7000-8000-000000000001";

    #[test]
    fn an_agent_subject_maps_to_the_check() {
        let check = to_check(&request(entity("agent", AGENT))).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((check.agent_id.as_str(), check.action.as_str()), (AGENT, "read"));
        assert_eq!(check.resource, "prod/db/customers");
        assert_eq!(check.context.get("resource_type"), Some(&json!("table")));
        assert!(check.context.get("delegated_by").is_none());
        let prefixed = format!("auth:agent:agentmesh:{AGENT}");
        let check = to_check(&request(entity("ai_agent", &prefixed))).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(check.agent_id, AGENT);
    }

    #[test]
    fn a_user_subject_delegates_to_the_agent_it_names() {
        let mut subject = entity("user", "alice@example.com");
        if let Some(s) = subject.as_mut() {
            s.properties = Some(serde_json::from_value(json!({"delegation": {"id": AGENT}})).unwrap_or_default());
        }
        let check = to_check(&request(subject)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(check.agent_id, AGENT);
        assert_eq!(check.context.get("delegated_by"), Some(&json!({"type": "user", "id": "alice@example.com"})));
        assert!(check.context.contains_key("subject_properties"));
        assert!(matches!(to_check(&request(entity("user", "alice"))), Err(DomainError::BadRequest(_))));
    }

    #[test]
    fn missing_members_are_bad_requests() {
        assert!(matches!(to_check(&request(None)), Err(DomainError::BadRequest(_))));
        assert!(matches!(to_check(&request(entity("agent", "not-a-uuid"))), Err(DomainError::BadRequest(_))));
        let mut r = request(entity("agent", AGENT));
        r.resource = Some(Entity { kind: None, id: Some("x".into()), properties: None });
        assert!(matches!(to_check(&r), Err(DomainError::BadRequest(_))));
        let mut r = request(entity("agent", AGENT));
        r.action = Some(Action { name: None, properties: None });
        assert!(matches!(to_check(&r), Err(DomainError::BadRequest(_))));
    }

    #[test]
    fn batch_items_replace_whole_defaults() {
        let defaults = request(entity("agent", AGENT));
        let item = EvaluationRequest { resource: entity("file", "a.txt"), ..Default::default() };
        let m = merged(&defaults, item);
        assert_eq!(m.resource.and_then(|r| r.id).as_deref(), Some("a.txt"));
        assert_eq!(m.action.and_then(|a| a.name).as_deref(), Some("read"));
    }

    #[test]
    fn semantics_stop_where_the_specification_says() {
        assert!(!Semantic::ExecuteAll.stops_after(false));
        assert!(Semantic::DenyOnFirstDeny.stops_after(false) && !Semantic::DenyOnFirstDeny.stops_after(true));
        assert!(Semantic::PermitOnFirstPermit.stops_after(true) && !Semantic::PermitOnFirstPermit.stops_after(false));
        let bad = EvaluationsOptions { evaluations_semantic: Some("all".into()) };
        assert!(Semantic::parse(Some(&bad)).is_err());
        assert_eq!(Semantic::parse(None).ok(), Some(Semantic::ExecuteAll));
    }
}
