//! LiteLLM's Generic Guardrail API: a LiteLLM proxy configured with agentgov as its
//! `generic_guardrail_api` guardrail posts each request and response here. A mapping onto
//! the domain and nothing more: the Prompt Guard screens the texts going in, the policy check
//! decides each tool call coming out (audited as a check), secrets in texts coming out are
//! redacted, and the verdict is appended to the audit log with LiteLLM's call id. The
//! contract and the configuration are in docs/integrations.md.

use std::collections::HashMap;

use actix_web::{post, web};
use agentgov_domain::DomainError;
use agentgov_domain::model::{GuardDirection, JsonObject};
use agentgov_domain::services::audit::NewAuditEntry;
use agentgov_domain::services::check::CheckRequest;
use agentgov_domain::services::guard::{ValidateRequest, redact_secrets};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::AppState;
use crate::extract::{ApiKeyOrJwt, Json};
use crate::problem::ApiResult;

/// The request header LiteLLM forwards (when its guardrail lists it in `extra_headers`)
/// that names the agent.
pub const AGENT_HEADER: &str = "x-agentgov-agent-id";
/// The audit event of each verdict.
pub const VERDICT_EVENT: &str = "litellm.guardrail";
/// The longest run or call id kept (as the check's `session_id` and `tool_call_id`).
const MAX_ID_LEN: usize = 200;

/// What LiteLLM sends (unknown members are ignored).
#[derive(Debug, Clone, Default, serde::Deserialize, utoipa::ToSchema)]
#[schema(as = LitellmGuardrailRequest)]
pub struct GuardrailRequest {
    /// `request` (on its way to the model) or `response` (on its way back).
    pub input_type: Option<String>,
    pub litellm_call_id: Option<String>,
    pub litellm_trace_id: Option<String>,
    /// The texts of the messages (request) or of the model's answer (response).
    pub texts: Option<Vec<String>>,
    /// The request's messages, with their roles.
    #[schema(value_type = Option<Vec<Object>>)]
    pub structured_messages: Option<Vec<Value>>,
    /// The tools offered to the model (request).
    #[schema(value_type = Option<Vec<Object>>)]
    pub tools: Option<Vec<Value>>,
    /// The tool calls the model made (response), OpenAI's shape.
    #[schema(value_type = Option<Vec<Object>>)]
    pub tool_calls: Option<Vec<Value>>,
    /// The LiteLLM key and team of the call.
    #[schema(value_type = Option<Object>)]
    pub request_data: Option<JsonObject>,
    /// The client's headers as LiteLLM forwards them (`[present]` for those it withholds).
    pub request_headers: Option<HashMap<String, String>>,
    /// The guardrail's static parameters from LiteLLM's configuration (`agent_id`).
    #[schema(value_type = Option<Object>)]
    pub additional_provider_specific_params: Option<JsonObject>,
    pub model: Option<String>,
}

/// What LiteLLM does next: `NONE` (go on), `BLOCKED` (refuse the call with
/// `blocked_reason`) or `GUARDRAIL_INTERVENED` (go on with `texts` in place of its own).
#[derive(Debug, Clone, PartialEq, serde::Serialize, utoipa::ToSchema)]
#[schema(as = LitellmGuardrailResponse)]
pub struct GuardrailResponse {
    pub action: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocked_reason: Option<String>,
    /// The texts to use instead, as many and in the same order as sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub texts: Option<Vec<String>>,
}

impl GuardrailResponse {
    const NONE: &'static str = "NONE";
    const BLOCKED: &'static str = "BLOCKED";
    const INTERVENED: &'static str = "GUARDRAIL_INTERVENED";

    fn none() -> Self {
        Self { action: Self::NONE, blocked_reason: None, texts: None }
    }

    fn blocked(reason: String) -> Self {
        Self { action: Self::BLOCKED, blocked_reason: Some(reason), texts: None }
    }
}

/// Screen a call of a LiteLLM proxy (LiteLLM's Generic Guardrail API; configure agentgov's
/// `…/api/v1/integrations/litellm` as the guardrail's `api_base` and a tenant API key as its
/// `api_key`, which LiteLLM sends as `x-api-key`). Going in, every text but the system
/// prompt is screened by the Prompt Guard (`guard:validate`); coming out, each tool call is
/// a policy check (`policies:check`) of the agent, and secrets in the texts are redacted.
/// Each verdict is appended to the audit log as `litellm.guardrail` (`audit:write`) with
/// LiteLLM's call id.
#[utoipa::path(
    operation_id = "litellm_guardrail",
    tag = "integrations",
    security(("api_key" = []), ("bearer" = [])),
    request_body = GuardrailRequest,
    responses(
        (status = 200, description = "The verdict (a block is a 200 too)", body = GuardrailResponse),
        (status = 400, description = "An unknown input_type, or a tool call without an agent", body = crate::problem::Problem),
    )
)]
#[post("/integrations/litellm/beta/litellm_basic_guardrail_api")]
pub async fn guardrail(
    state: web::Data<AppState>,
    auth: ApiKeyOrJwt,
    body: Json<GuardrailRequest>,
) -> ApiResult<web::Json<GuardrailResponse>> {
    let req = body.0;
    let agent = agent_of(&req);
    let mut decided = Vec::new();
    let verdict = match req.input_type.as_deref().unwrap_or("request") {
        "request" => screen_request(&state, &auth, &req, agent).await?,
        "response" => match check_tool_calls(&state, &auth, &req, agent, &mut decided).await? {
            Some(blocked) => blocked,
            None => redact(&req),
        },
        other => {
            return Err(
                DomainError::BadRequest(format!("input_type `{other}` is neither `request` nor `response`")).into()
            );
        }
    };
    record(&state, &auth, &req, agent, &verdict, &decided).await?;
    Ok(web::Json(verdict))
}

/// The agent the call is for: the `x-agentgov-agent-id` header LiteLLM forwarded, else the
/// LiteLLM team or key (`request_data`: team id, team alias, key alias) when it names an
/// agent by its UUID, else the guardrail's `agent_id` parameter.
fn agent_of(req: &GuardrailRequest) -> Option<Uuid> {
    let header = req.request_headers.as_ref().and_then(|h| {
        h.iter().find(|(name, _)| name.eq_ignore_ascii_case(AGENT_HEADER)).map(|(_, value)| value.as_str())
    });
    let data = req.request_data.as_ref();
    let from_data = ["user_api_key_team_id", "user_api_key_team_alias", "user_api_key_alias"]
        .into_iter()
        .filter_map(|key| data.and_then(|d| d.get(key)).and_then(Value::as_str));
    let param =
        req.additional_provider_specific_params.as_ref().and_then(|p| p.get("agent_id")).and_then(Value::as_str);
    header.into_iter().chain(from_data).chain(param).find_map(|v| Uuid::parse_str(v.trim()).ok())
}

/// Going in: the first text the Prompt Guard flags blocks the call. The system prompt (the
/// application's own) is not screened.
async fn screen_request(
    state: &AppState,
    auth: &ApiKeyOrJwt,
    req: &GuardrailRequest,
    agent: Option<Uuid>,
) -> ApiResult<GuardrailResponse> {
    let system: Vec<&str> = req
        .structured_messages
        .iter()
        .flatten()
        .filter(|m| m.get("role").and_then(Value::as_str) == Some("system"))
        .filter_map(|m| m.get("content").and_then(Value::as_str))
        .collect();
    let system_prompt = system.first().map(|s| (*s).to_owned());
    for text in req.texts.iter().flatten().filter(|t| !t.trim().is_empty() && !system.contains(&t.as_str())) {
        let screened = state
            .services
            .guard
            .validate(
                &auth.0,
                ValidateRequest {
                    prompt: text.clone(),
                    agent_id: agent.map(|a| a.to_string()),
                    system_prompt: system_prompt.clone(),
                    direction: GuardDirection::Input,
                },
            )
            .await?;
        if !screened.safe {
            return Ok(GuardrailResponse::blocked(format!(
                "agentgov Prompt Guard: {} ({}); validation {}",
                screened.verdict.as_str(),
                screened.reasons.join(", "),
                screened.validation_id
            )));
        }
    }
    Ok(GuardrailResponse::none())
}

/// Coming out: each tool call the model made is a policy check of the agent (audited as
/// one); the first that is not allowed now blocks the answer.
async fn check_tool_calls(
    state: &AppState,
    auth: &ApiKeyOrJwt,
    req: &GuardrailRequest,
    agent: Option<Uuid>,
    decided: &mut Vec<Value>,
) -> ApiResult<Option<GuardrailResponse>> {
    let calls = req.tool_calls.as_deref().unwrap_or_default();
    if calls.is_empty() {
        return Ok(None);
    }
    let Some(agent) = agent else {
        return Err(DomainError::BadRequest(format!(
            "the model made tool calls but no agent is named: forward the `{AGENT_HEADER}` header (the guardrail's extra_headers), name the agent's UUID as the LiteLLM team or key alias, or set the guardrail's agent_id parameter"
        ))
        .into());
    };
    for call in calls {
        let function = call.get("function");
        let name = function.and_then(|f| f.get("name")).and_then(Value::as_str).unwrap_or_default();
        let arguments = function.and_then(|f| f.get("arguments")).map_or(Value::Null, |a| match a {
            Value::String(text) => serde_json::from_str(text).unwrap_or_else(|_| a.clone()),
            other => other.clone(),
        });
        let mut context = JsonObject::new();
        context.insert("arguments".into(), arguments);
        context.insert("framework".into(), json!("litellm"));
        for (key, value) in [("litellm_call_id", &req.litellm_call_id), ("model", &req.model)] {
            if let Some(value) = value {
                context.insert(key.into(), json!(value));
            }
        }
        let check = CheckRequest {
            agent_id: agent.to_string(),
            action: name.to_owned(),
            resource: format!("tool/{name}"),
            context,
            dry_run: false,
            session_id: req.litellm_trace_id.as_deref().map(|t| cut(t, MAX_ID_LEN)),
            tool_call_id: call.get("id").and_then(Value::as_str).map(|t| cut(t, MAX_ID_LEN)),
            approval_token: None,
        };
        let answer = state.services.policies.check(&auth.0, check).await?;
        decided.push(json!({"tool": name, "decision_id": answer.decision_id, "allowed": answer.allowed}));
        if !answer.allowed {
            let reason = match answer.hitl_request_id {
                Some(id) => format!(
                    "agentgov: the tool call {name} needs a person's approval (request {id}): {}",
                    answer.reason
                ),
                None => format!("agentgov denied the tool call {name}: {}", answer.reason),
            };
            return Ok(Some(GuardrailResponse::blocked(reason)));
        }
    }
    Ok(None)
}

/// Coming out: the texts with their secrets redacted, when there are any.
fn redact(req: &GuardrailRequest) -> GuardrailResponse {
    let texts = req.texts.as_deref().unwrap_or_default();
    let redacted: Vec<Option<String>> = texts.iter().map(|t| redact_secrets(t)).collect();
    if redacted.iter().all(Option::is_none) {
        return GuardrailResponse::none();
    }
    let texts = texts.iter().zip(redacted).map(|(t, r)| r.unwrap_or_else(|| t.clone())).collect();
    GuardrailResponse { action: GuardrailResponse::INTERVENED, blocked_reason: None, texts: Some(texts) }
}

/// The verdict in the audit log: what was screened, what LiteLLM was told, its call and
/// trace ids, and the decisions of the tool calls.
async fn record(
    state: &AppState,
    auth: &ApiKeyOrJwt,
    req: &GuardrailRequest,
    agent: Option<Uuid>,
    verdict: &GuardrailResponse,
    decided: &[Value],
) -> ApiResult<()> {
    let input_type = req.input_type.as_deref().unwrap_or("request");
    let entry = NewAuditEntry {
        event_type: VERDICT_EVENT.to_owned(),
        agent_id: agent,
        action: Some(format!("guardrail.{input_type}")),
        resource: Some(format!("litellm/{}", req.model.as_deref().filter(|m| !m.is_empty()).unwrap_or("unknown"))),
        decision: Some(verdict.action.to_ascii_lowercase()),
        risk_score: None,
        details: Some(json!({
            "litellm_call_id": req.litellm_call_id,
            "litellm_trace_id": req.litellm_trace_id,
            "input_type": input_type,
            "action": verdict.action,
            "blocked_reason": verdict.blocked_reason,
            "texts": req.texts.as_ref().map_or(0, Vec::len),
            "redacted": verdict.texts.is_some(),
            "tool_calls": decided,
            "trace_id": auth.0.trace_id(),
        })),
    };
    state.services.audit.write(&auth.0, entry).await?;
    Ok(())
}

/// `text` cut to at most `max` bytes, at a character boundary.
fn cut(text: &str, max: usize) -> String {
    text[..text.floor_char_boundary(max)].to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    const AGENT: &str = "0190f000-0000-7000-8000-000000000001";

    #[test]
    fn the_agent_comes_from_the_header_the_team_or_the_parameter() {
        let mut req = GuardrailRequest::default();
        assert_eq!(agent_of(&req), None);
        req.additional_provider_specific_params = serde_json::from_value(json!({"agent_id": AGENT})).ok();
        assert_eq!(agent_of(&req).map(|a| a.to_string()).as_deref(), Some(AGENT));
        let other = Uuid::now_v7();
        req.request_data = serde_json::from_value(json!({"user_api_key_team_alias": other.to_string()})).ok();
        assert_eq!(agent_of(&req), Some(other), "the team before the parameter");
        let header = Uuid::now_v7();
        req.request_headers = Some(HashMap::from([("X-Agentgov-Agent-Id".to_owned(), header.to_string())]));
        assert_eq!(agent_of(&req), Some(header), "the header first");
        req.request_headers = Some(HashMap::from([(AGENT_HEADER.to_owned(), "[present]".to_owned())]));
        assert_eq!(agent_of(&req), Some(other), "a withheld header names nobody");
    }

    #[test]
    fn secrets_are_redacted_in_place_and_clean_texts_pass() {
        let key = "AKIAIOSFODNN7EXAMPLE";
        let req = GuardrailRequest {
            texts: Some(vec!["all clear".into(), format!("the key is {key}, keep it")]),
            ..Default::default()
        };
        let out = redact(&req);
        assert_eq!(out.action, "GUARDRAIL_INTERVENED");
        let texts = out.texts.unwrap_or_default();
        assert_eq!(texts.len(), 2);
        assert_eq!(texts[0], "all clear");
        assert!(!texts[1].contains(key) && texts[1].contains("[REDACTED:"), "{}", texts[1]);
        let clean = GuardrailRequest { texts: Some(vec!["nothing here".into()]), ..Default::default() };
        assert_eq!(redact(&clean), GuardrailResponse::none());
    }

    #[test]
    fn ids_are_cut_at_a_character_boundary() {
        assert_eq!(cut("abc", 2), "ab");
        assert_eq!(cut("éé", 3), "é");
    }
}
