//! The attribute names of OpenTelemetry's GenAI guardrail conventions
//! (semantic-conventions-genai, `gen_ai.run_guardrail.internal`, development status), and
//! the few of agentgov's own, in one place.

pub const OPERATION_NAME: &str = "gen_ai.operation.name";
/// `gen_ai.operation.name`'s value, and the first word of the span's name.
pub const RUN_GUARDRAIL: &str = "run_guardrail";
pub const COMPONENT_NAME: &str = "gen_ai.guardrail.component.name";
pub const TARGET_TYPE: &str = "gen_ai.guardrail.target.type";
pub const TARGET_SUBTYPE: &str = "gen_ai.guardrail.target.subtype";
pub const TARGET_ID: &str = "gen_ai.guardrail.target.id";
pub const VERDICT_TYPE: &str = "gen_ai.guardrail.verdict.type";
pub const VERDICT_REASON: &str = "gen_ai.guardrail.verdict.reason";
pub const ACTION_TYPE: &str = "gen_ai.guardrail.action.type";
pub const POLICY_ID: &str = "gen_ai.guardrail.security.policy.id";
pub const POLICY_RULE_ID: &str = "gen_ai.guardrail.security.policy.rule.id";
pub const RISK_CATEGORY: &str = "gen_ai.guardrail.security.risk.category";
pub const RISK_SCORE: &str = "gen_ai.guardrail.security.risk.score";
pub const INPUT_HASH: &str = "gen_ai.guardrail.security.content.input.hash";
pub const CONVERSATION_ID: &str = "gen_ai.conversation.id";
pub const AGENT_ID: &str = "gen_ai.agent.id";
/// The tenant the run was for.
pub const TENANT_ID: &str = "agentgov.tenant.id";
/// The audit record that holds the decision (`GET /audit/logs/{id}`).
pub const AUDIT_RECORD_ID: &str = "agentgov.audit.record_id";
