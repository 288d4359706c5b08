//! The vocabulary of a policy check, shared by the policy service that answers it and the
//! approvals that a check (or an agent directly) opens: the request and response, their
//! limits and validation, and what the risk model reads from a check's context.

use agentgov_detect::risk::ActionContext;

use super::validate::{check_object, check_text};
use crate::error::{DomainError, Result, Violations};
use crate::ids::{AgentId, PolicyId};
use crate::model::{Agent, JsonObject, RiskLevel};

const MAX_ACTION_LEN: usize = 200;
const MAX_RESOURCE_LEN: usize = 1000;
/// A check's `session_id` and `tool_call_id`.
const MAX_RUN_ID_LEN: usize = 200;
/// Serialised size limit of a check's `context`.
pub(crate) const MAX_CONTEXT_BYTES: usize = 16 * 1024;
/// An approval token's length limit (they are about 450 characters).
const MAX_APPROVAL_TOKEN_LEN: usize = 4096;
/// The OpenAPI `pattern` of `approval_token`: a compact JWS, as `validate_check` accepts.
pub const APPROVAL_TOKEN_PATTERN: &str = r"^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$";

/// `POST /policies/check` (spec 2.4).
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct CheckRequest {
    /// The acting agent (a UUID of the caller's tenant).
    #[cfg_attr(feature = "openapi", schema(format = Uuid))]
    pub agent_id: String,
    /// What the agent wants to do, e.g. `delete`; 1 to 200 characters.
    #[cfg_attr(
        feature = "openapi",
        schema(
            min_length = 1,
            max_length = 200,
            pattern = r"^[^\u0000-\u001f\u007f-\u009f]*[^\s\u0000-\u001f\u007f-\u009f][^\u0000-\u001f\u007f-\u009f]*$"
        )
    )]
    pub action: String,
    /// What it wants to do it to, e.g. `prod/db/customers`; 1 to 1,000 characters.
    #[cfg_attr(
        feature = "openapi",
        schema(
            min_length = 1,
            max_length = 1000,
            pattern = r"^[^\u0000-\u001f\u007f-\u009f]*[^\s\u0000-\u001f\u007f-\u009f][^\u0000-\u001f\u007f-\u009f]*$"
        )
    )]
    pub resource: String,
    /// Free-form facts, e.g. `{"consent": true, "environment": "production",
    /// "record_count": 20}`; at most 16 KiB.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub context: JsonObject,
    /// Evaluate without recording the decision (for policy authors): no audit record, no
    /// event, `decision_id` null.
    #[serde(default)]
    pub dry_run: bool,
    /// The conversation or run the action belongs to (the SDK's adapters send it), kept in
    /// the decision's audit record so that one run can be followed; 1 to 200 characters.
    #[serde(default)]
    #[cfg_attr(
        feature = "openapi",
        schema(
            min_length = 1,
            max_length = 200,
            pattern = r"^[^\u0000-\u001f\u007f-\u009f]*[^\s\u0000-\u001f\u007f-\u009f][^\u0000-\u001f\u007f-\u009f]*$"
        )
    )]
    pub session_id: Option<String>,
    /// The agent framework's id of this tool call, kept in the decision's audit record; 1 to
    /// 200 characters.
    #[serde(default)]
    #[cfg_attr(
        feature = "openapi",
        schema(
            min_length = 1,
            max_length = 200,
            pattern = r"^[^\u0000-\u001f\u007f-\u009f]*[^\s\u0000-\u001f\u007f-\u009f][^\u0000-\u001f\u007f-\u009f]*$"
        )
    )]
    pub tool_call_id: Option<String>,
    /// The approval token of an approved request (`GET /hitl/status/{id}` serves it): the
    /// check is then allowed (unless a policy denies it) only if it is the exact action
    /// approved, and the token is spent. A token refused (another action, used already,
    /// expired, not valid) denies the check, saying why. A compact JWS (three base64url
    /// parts), at most 4,096 characters.
    #[serde(default)]
    #[cfg_attr(
        feature = "openapi",
        schema(max_length = 4096, pattern = r"^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$")
    )]
    pub approval_token: Option<String>,
}

/// A policy that took part in a decision.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MatchedPolicy {
    pub id: PolicyId,
    pub name: String,
    pub version: i64,
    /// `deny`, `require_approval`, `risk_adjustment` or `error`; for a policy in `shadow`
    /// mode, what it would have done and was not acted on: `would_deny`,
    /// `would_require_approval` or `would_error`.
    pub effect: &'static str,
    /// The messages of its rule (or the error).
    pub messages: Vec<String>,
    /// Its risk adjustment, when that is the effect.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub risk_adjustment: Option<f64>,
}

/// One reason for the check's risk score.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CheckRiskFactor {
    /// `payments`, `deletion`, `production`, `agent_risk`, `no_consent`, `bulk`,
    /// `anomaly`, `policy`, … (see docs/policies.md).
    pub code: String,
    pub weight: f64,
    pub evidence: String,
    pub reason: String,
}

/// `POST /policies/check` (spec 2.5 and more).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CheckResponse {
    /// Whether the action may go ahead now: no policy denied it and no approval is needed.
    pub allowed: bool,
    /// A person must approve the action first (a policy asked, or the risk is at or above
    /// the approval threshold); `false` when it is denied.
    pub required_approval: bool,
    /// From 0 to 1, after the policies' adjustments.
    pub risk_score: f64,
    pub risk: RiskLevel,
    /// Whether the action looks unusual for the agent.
    pub anomaly: bool,
    pub reason: String,
    /// The audit record of this decision; `null` on a dry run.
    pub decision_id: Option<crate::ids::AuditId>,
    pub matched_policies: Vec<MatchedPolicy>,
    pub risk_factors: Vec<CheckRiskFactor>,
    /// The approval request the check opened when it requires approval (follow it with
    /// `GET /hitl/status/{id}`); `null` otherwise and on a dry run.
    pub hitl_request_id: Option<crate::ids::HitlId>,
    /// The approval request whose token this check presented and spent (a dry run only
    /// looks at it); `null` otherwise.
    pub approved_by_request: Option<crate::ids::HitlId>,
    /// How many enabled policies were evaluated.
    pub policies_evaluated: usize,
    /// The labels the policies raised for this action (their `labels` rules), sorted; the
    /// check's session keeps them (docs/policies.md "Sessions").
    pub labels: Vec<String>,
}

pub(crate) fn validate_check(req: &CheckRequest) -> Result<AgentId> {
    let mut v = Violations::new();
    let agent_id = check_agent_action(&mut v, &req.agent_id, &req.action, &req.resource, &req.context);
    for (field, value) in [("session_id", &req.session_id), ("tool_call_id", &req.tool_call_id)] {
        if let Some(value) = value {
            check_text(&mut v, field, value, MAX_RUN_ID_LEN);
        }
    }
    if let Some(token) = &req.approval_token {
        let parts = token.split('.').collect::<Vec<_>>();
        let shaped = parts.len() == 3
            && parts
                .iter()
                .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'));
        v.check(token.len() <= MAX_APPROVAL_TOKEN_LEN, "approval_token", "must be at most 4096 characters");
        v.check(shaped, "approval_token", "must be a compact JWS: three base64url parts joined by dots");
    }
    v.into_result()?;
    agent_id.ok_or_else(|| DomainError::invalid("agent_id", "must be a UUID"))
}

/// The fields a check and an approval request share: an agent id (parsed when it is a
/// UUID), an action, a resource and a context, each within its limits.
pub(crate) fn check_agent_action(
    v: &mut Violations,
    agent_id: &str,
    action: &str,
    resource: &str,
    context: &JsonObject,
) -> Option<AgentId> {
    let parsed = agent_id.trim().parse::<AgentId>().ok();
    v.check(parsed.is_some(), "agent_id", "must be a UUID");
    check_text(v, "action", action, MAX_ACTION_LEN);
    check_text(v, "resource", resource, MAX_RESOURCE_LEN);
    check_object(v, "context", context, MAX_CONTEXT_BYTES);
    parsed
}

/// A risk score as answered and stored: within 0 and 1, to four decimals.
pub(crate) fn round_score(score: f64) -> f64 {
    (score.clamp(0.0, 1.0) * 1e4).round() / 1e4
}

/// What the risk model reads from the check's context (docs/policies.md names the keys).
pub(crate) fn action_context<'a>(agent: &Agent, context: &'a JsonObject) -> ActionContext<'a> {
    let flag = |keys: &[&str]| keys.iter().any(|k| context.get(*k).and_then(serde_json::Value::as_bool) == Some(true));
    let consent =
        ["consent", "consent_given"].iter().find_map(|k| context.get(*k).and_then(serde_json::Value::as_bool));
    let environment = ["environment", "env"].iter().find_map(|k| context.get(*k).and_then(serde_json::Value::as_str));
    let record_count = ["record_count", "count", "records", "batch_size"]
        .iter()
        .find_map(|k| context.get(*k).and_then(serde_json::Value::as_u64));
    ActionContext {
        agent_risk: agent.risk_score,
        personal_data: flag(&["personal_data", "contains_pii", "pii"]),
        consent,
        environment,
        record_count,
        anomaly_score: 0.0,
    }
}

/// The component name a decision's guardrail span carries.
pub(crate) const POLICY_COMPONENT: &str = "agentgov.policy";

/// Reports a decision to the telemetry port as one guardrail run (docs/integrations.md):
/// the verdict the policies reached, and what the service did about it (a dry run is only
/// reported: `audit`). Nothing is built when telemetry is off.
pub(crate) fn report_decision(
    ports: &super::Ports,
    caller: &super::Caller,
    agent: &Agent,
    req: &CheckRequest,
    response: &CheckResponse,
    start: time::OffsetDateTime,
) {
    use crate::ports::{GuardrailRun, Target, Verdict};
    if !ports.telemetry.enabled() {
        return;
    }
    let verdict = if response.allowed {
        Verdict::Allow
    } else if response.required_approval {
        Verdict::Escalate
    } else {
        Verdict::Deny
    };
    let decisive = response
        .matched_policies
        .iter()
        .find(|m| matches!(m.effect, "error" | "deny"))
        .or_else(|| response.matched_policies.iter().find(|m| m.effect == "require_approval"));
    let reason = match (verdict, decisive.map(|m| m.effect)) {
        (Verdict::Allow, _) => None,
        (_, Some("error")) => Some("a policy could not be evaluated"),
        (_, Some("deny")) => Some("denied by a policy"),
        (_, Some(_)) => Some("approval required by a policy"),
        (Verdict::Deny, None) => Some("the agent is suspended"),
        (_, None) if response.anomaly => Some("anomalous action at or above the approval threshold"),
        (_, None) => Some("risk score at or above the approval threshold"),
    };
    // What was judged, as JSON with its keys sorted (these fields in order; serde_json's maps
    // are ordered by key), so that the same action hashes the same in every check.
    #[derive(serde::Serialize)]
    struct Judged<'a> {
        action: &'a str,
        agent_id: crate::ids::AgentId,
        context: &'a JsonObject,
        resource: &'a str,
    }
    let judged = Judged { action: &req.action, agent_id: agent.id, context: &req.context, resource: &req.resource };
    let input = serde_json::to_vec(&judged).unwrap_or_default();
    ports.telemetry.guardrail(&GuardrailRun {
        component: POLICY_COMPONENT,
        target: Target::Input,
        subtype: if req.tool_call_id.is_some() { "tool_call" } else { "action" },
        target_id: req.tool_call_id.as_deref(),
        verdict,
        action: if req.dry_run { Verdict::Audit } else { verdict },
        reason,
        policy_id: decisive.map(|m| m.id.to_string()),
        rule_id: decisive.map(|m| format!("{}@v{}", m.name, m.version)),
        risk_category: (verdict != Verdict::Allow).then_some("excessive_agency"),
        risk_score: Some(response.risk_score),
        input: &input,
        conversation_id: req.session_id.as_deref(),
        tenant_id: agent.tenant_id.as_uuid(),
        agent_id: Some(agent.id.as_uuid()),
        record_id: response.decision_id.map(|id| id.0),
        parent: caller.trace,
        start,
        end: ports.clock.now(),
    });
}
