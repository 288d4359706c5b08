//! The `Telemetry` port: each decision and each Prompt Guard screening as one guardrail run,
//! in the terms of OpenTelemetry's GenAI guardrail conventions (`gen_ai.run_guardrail`,
//! development status). The domain says what was decided and what the service did about it;
//! the adapter (crates/otel) turns a run into a span and exports it. No text a client sent
//! is in a run but `input`, which the adapter only hashes with a key of its own.

use time::OffsetDateTime;
use uuid::Uuid;

/// A W3C Trace Context `traceparent` (version 00): the caller's trace and span, so that a
/// decision joins the trace of the agent that asked for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TraceContext {
    pub trace_id: [u8; 16],
    /// The caller's span: the parent of the decision's.
    pub parent_span_id: [u8; 8],
    /// The trace flags (bit 0: sampled).
    pub flags: u8,
}

impl TraceContext {
    /// Parses a `traceparent` header. `None` for anything the W3C recommendation says to
    /// ignore (a malformed value, an all-zero id, version `ff`); a later version is read as
    /// far as version 00 goes, as the recommendation asks.
    pub fn parse(header: &str) -> Option<Self> {
        let header = header.trim();
        let mut parts = header.splitn(5, '-');
        let version = parts.next()?;
        let (trace, span, flags) = (parts.next()?, parts.next()?, parts.next()?);
        let rest = parts.next();
        let version = hex_array::<1>(version)?[0];
        if version == 0xff || (version == 0 && rest.is_some()) {
            return None;
        }
        let trace_id = hex_array::<16>(trace)?;
        let parent_span_id = hex_array::<8>(span)?;
        let flags = hex_array::<1>(flags)?[0];
        if trace_id == [0; 16] || parent_span_id == [0; 8] {
            return None;
        }
        Some(Self { trace_id, parent_span_id, flags })
    }

    /// The trace id as 32 lower-case hex digits (how the audit record keeps it).
    pub fn trace_id_hex(&self) -> String {
        hex::encode(self.trace_id)
    }
}

/// `N` bytes from exactly `2N` lower- or upper-case hex digits (W3C asks for lower case;
/// upper case is read, not rejected, as most propagators do). `hex` refuses any other length.
fn hex_array<const N: usize>(text: &str) -> Option<[u8; N]> {
    let mut out = [0u8; N];
    hex::decode_to_slice(text, &mut out).ok()?;
    Some(out)
}

/// What the guardrail looked at: content or an action entering (`input`) or leaving
/// (`output`) the guarded operation (`gen_ai.guardrail.target.type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    Input,
    Output,
}

impl Target {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Input => "input",
            Self::Output => "output",
        }
    }
}

/// What the guardrail concluded (`gen_ai.guardrail.verdict.type`), and what the service did
/// (`gen_ai.guardrail.action.type`): the same words, kept apart because they differ (a
/// dry run's verdict is reported, not acted on).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Allow,
    Deny,
    /// A person must approve (an approval request).
    Escalate,
    /// Recorded, not acted on.
    Audit,
}

impl Verdict {
    /// The verdict's word, as the conventions spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Allow => "allow",
            Self::Deny => "deny",
            Self::Escalate => "escalate",
            Self::Audit => "audit",
        }
    }

    /// The action word for this outcome when the service enforces it (`deny` is `block`).
    pub fn action_str(self) -> &'static str {
        match self {
            Self::Deny => "block",
            other => other.as_str(),
        }
    }
}

/// One guardrail evaluation: a policy decision or a Prompt Guard screening.
#[derive(Debug, Clone)]
pub struct GuardrailRun<'a> {
    /// `gen_ai.guardrail.component.name`: which of the service's guardrails ran.
    pub component: &'static str,
    pub target: Target,
    /// `gen_ai.guardrail.target.subtype`: `tool_call`, `action` or `llm`.
    pub subtype: &'static str,
    /// `gen_ai.guardrail.target.id`: the tool call's id, when the caller gave one.
    pub target_id: Option<&'a str>,
    pub verdict: Verdict,
    /// What the service did; `verdict`'s own action when it enforces it.
    pub action: Verdict,
    /// `gen_ai.guardrail.verdict.reason`: a low-cardinality phrase, never the client's text.
    pub reason: Option<&'static str>,
    /// `gen_ai.guardrail.security.policy.id`: the policy (or detector model) that decided.
    pub policy_id: Option<String>,
    /// `gen_ai.guardrail.security.policy.rule.id`: the rule or stage within it.
    pub rule_id: Option<String>,
    /// `gen_ai.guardrail.security.risk.category`: an OWASP LLM Top 10 (2025) category.
    pub risk_category: Option<&'static str>,
    /// `gen_ai.guardrail.security.risk.score`, 0 to 1.
    pub risk_score: Option<f64>,
    /// What was judged, as bytes the adapter hashes with its key
    /// (`gen_ai.guardrail.security.content.input.hash`); never exported.
    pub input: &'a [u8],
    /// `gen_ai.conversation.id`: the check's `session_id`.
    pub conversation_id: Option<&'a str>,
    pub tenant_id: Uuid,
    /// `gen_ai.agent.id`.
    pub agent_id: Option<Uuid>,
    /// The audit record that holds the decision (`agentgov.audit.record_id`).
    pub record_id: Option<Uuid>,
    /// The caller's trace, when it sent one: the run becomes a child of its span.
    pub parent: Option<TraceContext>,
    pub start: OffsetDateTime,
    pub end: OffsetDateTime,
}

/// Exports guardrail runs. Never blocks and never fails the decision: an adapter that cannot
/// keep up drops runs (and says so in its own log).
pub trait Telemetry: Send + Sync {
    /// Whether runs are wanted at all: when not, the services do not build them.
    fn enabled(&self) -> bool;
    fn guardrail(&self, run: &GuardrailRun<'_>);
    /// Sends what is queued, waiting up to the export timeout (at shutdown).
    fn flush(&self) {}
}

/// No export (the default).
pub struct NoTelemetry;

impl Telemetry for NoTelemetry {
    fn enabled(&self) -> bool {
        false
    }
    fn guardrail(&self, _: &GuardrailRun<'_>) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traceparent_is_read_as_the_w3c_recommendation_says() {
        let t = TraceContext::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01").unwrap();
        assert_eq!(t.trace_id_hex(), "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(t.parent_span_id, [0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7]);
        assert_eq!(t.flags, 1);
        // A later version may carry more fields; version 00 may not.
        assert!(TraceContext::parse("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra").is_some());
        for bad in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-1",
            "00-4bf92f3577b34da6a3ce929d0e0e47zz-00f067aa0ba902b7-01",
            "00_4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7_01",
        ] {
            assert_eq!(TraceContext::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn a_denial_is_enforced_as_a_block() {
        assert_eq!(Verdict::Deny.action_str(), "block");
        assert_eq!(Verdict::Escalate.action_str(), "escalate");
        assert_eq!(Verdict::Audit.action_str(), "audit");
    }
}
