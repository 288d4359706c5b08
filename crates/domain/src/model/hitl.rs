//! Human-in-the-loop approval requests (spec 4.9).
//!
//! A request is `pending` until an analyst approves or rejects it, the agent (or whoever
//! asked) cancels it, or it passes `expires_at` and the expiry job marks it `expired`.
//! Every state but `pending` is final. When the request names a `callback_url`, its final
//! state is POSTed there, signed, and retried with backoff until delivered or given up.

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use super::agent::{JsonObject, RiskLevel};
use super::audit::Actor;
use super::role::Role;
use crate::ids::{AgentId, AuditId, HitlId, PolicyId, TenantId};

string_enum!(
    /// A request's state. `pending` is the only one that changes.
    HitlStatus {
        Pending => "pending",
        Approved => "approved",
        Rejected => "rejected",
        Expired => "expired",
        Cancelled => "cancelled",
    }
);

impl HitlStatus {
    /// Whether the request is decided for good.
    pub fn is_final(self) -> bool {
        self != HitlStatus::Pending
    }
}

string_enum!(
    /// Where a request's callback stands: `waiting` while the request is pending,
    /// `scheduled` to be sent (again) at `next_attempt_at`, `delivered` when the receiver
    /// answered 2xx, `failed` when every attempt failed.
    CallbackStatus {
        Waiting => "waiting",
        Scheduled => "scheduled",
        Delivered => "delivered",
        Failed => "failed",
    }
);

/// The delivery of a request's outcome to its `callback_url`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct HitlCallback {
    pub url: String,
    pub status: CallbackStatus,
    /// Attempts made so far.
    pub attempts: u32,
    /// When the next attempt is due (`scheduled` only).
    #[serde(with = "time::serde::rfc3339::option", default)]
    pub next_attempt_at: Option<OffsetDateTime>,
    #[serde(with = "time::serde::rfc3339::option", default)]
    pub delivered_at: Option<OffsetDateTime>,
    /// Why the last attempt failed, coarsely (never a status code or a connection error):
    /// `receiver refused by policy`, `timed out`, `delivery failed` or `receiver answered
    /// an error status`.
    #[serde(default)]
    pub last_error: Option<String>,
}

impl HitlCallback {
    pub fn new(url: String) -> Self {
        Self {
            url,
            status: CallbackStatus::Waiting,
            attempts: 0,
            next_attempt_at: None,
            delivered_at: None,
            last_error: None,
        }
    }

    /// Whether the callback may still be sent (`waiting` or `scheduled`): what a tenant's
    /// quota of open callbacks counts, and what adapters keep in a column to count them.
    pub fn is_open(&self) -> bool {
        matches!(self.status, CallbackStatus::Waiting | CallbackStatus::Scheduled)
    }

    /// When the callback is due, if it is: what adapters keep in a column to find due ones.
    pub fn due_at(&self) -> Option<OffsetDateTime> {
        match self.status {
            CallbackStatus::Scheduled => self.next_attempt_at,
            _ => None,
        }
    }
}

/// An approval request, as stored and served.
///
/// Adapters keep `id`, `tenant_id`, `status`, `expires_at` and the callback's due time
/// ([`HitlRequest::callback_due_at`]) in columns and the whole record as the JSON text of
/// its `Serialize` form (which leaves out `tenant_id`); reading it back, they set
/// `tenant_id` from its column.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct HitlRequest {
    pub id: HitlId,
    #[serde(skip, default = "super::nil_tenant")]
    #[cfg_attr(feature = "openapi", schema(ignore))]
    pub tenant_id: TenantId,
    pub agent_id: AgentId,
    /// The agent's name when the request was made.
    pub agent_name: String,
    pub action: String,
    pub resource: String,
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub context: JsonObject,
    /// Why approval is asked for.
    pub reason: String,
    pub status: HitlStatus,
    /// From 0 to 1: the policy check's score, or the risk model's for a direct request.
    pub risk_score: f64,
    pub risk: RiskLevel,
    /// The audit record of the policy check that asked for approval, if one did.
    pub decision_id: Option<AuditId>,
    /// The API key or user that asked.
    pub requested_by: Actor,
    /// Who approved, rejected or cancelled it (the system for an expiry).
    pub decided_by: Option<Actor>,
    #[serde(with = "time::serde::rfc3339::option")]
    pub decided_at: Option<OffsetDateTime>,
    /// The decider's note.
    pub comment: Option<String>,
    /// Where the outcome is POSTed, and how that went.
    pub callback: Option<HitlCallback>,
    #[serde(with = "time::serde::rfc3339")]
    pub expires_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub updated_at: OffsetDateTime,
    /// SHA-256 (hex) of the RFC 8785 canonical JSON of the exact action asked about: tenant,
    /// agent, action, resource, arguments (the context) and the versions of the tenant's
    /// enforced policies ([`action_digest`]). An approval token is bound to it. `null` on
    /// requests made before actions were bound.
    #[serde(default)]
    pub action_digest: Option<String>,
    /// When the approver edited the arguments: the context the agent must act with instead
    /// (checked again under policy when approved; the approval is bound to it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub approved_context: Option<JsonObject>,
    /// What approving granted: the single-use token's binding, expiry and use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant: Option<ApprovalGrant>,
    /// The approval token (`approved` requests with an unused, unexpired grant, served to
    /// callers that may check, and in the callback): present it as `approval_token` in
    /// `POST /policies/check` to run exactly the approved action, once. Never stored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval_token: Option<String>,
    /// The tenant's escalation chain as it was when the request was made, and how far the
    /// request has gone along it; `null` when the tenant has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub escalation: Option<HitlEscalation>,
    /// The agent session of the check that asked, if it named one: the request's audit
    /// records carry it (an approval counts in the session's `approvals`), and an edited
    /// approval is checked in it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
}

/// One step of a tenant's escalation chain: once a request has waited `after_secs` without
/// a decision, the `role` is notified (the `hitl.escalated` audit record and feed event
/// name it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct EscalationStep {
    /// Seconds after the request was made, 1 to 604,800, rising along the chain.
    pub after_secs: u32,
    /// `analyst`, `admin` or `super_admin` (a viewer cannot decide).
    pub role: Role,
}

/// Where a pending request stands on its escalation chain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct HitlEscalation {
    /// The chain, as the tenant had it when the request was made.
    pub steps: Vec<EscalationStep>,
    /// How many steps were taken (0: none yet).
    pub level: u32,
    /// The role the last step notified.
    pub role: Option<Role>,
    /// When the last step was taken.
    #[serde(with = "time::serde::rfc3339::option", default)]
    pub escalated_at: Option<OffsetDateTime>,
    /// When the next step is due; `null` once the chain is done.
    #[serde(with = "time::serde::rfc3339::option", default)]
    pub next_at: Option<OffsetDateTime>,
}

impl HitlEscalation {
    /// The chain `steps` of a request made at `created`, no step taken; `None` when empty.
    pub fn start(steps: &[EscalationStep], created: OffsetDateTime) -> Option<Self> {
        let first = steps.first()?;
        Some(Self {
            steps: steps.to_vec(),
            level: 0,
            role: None,
            escalated_at: None,
            next_at: Some(created + time::Duration::seconds(i64::from(first.after_secs))),
        })
    }

    /// This chain with its next step taken at `now` (the step's role notified), the one
    /// after it due at its time after `created`; `None` when no step is left.
    pub fn advanced(&self, created: OffsetDateTime, now: OffsetDateTime) -> Option<Self> {
        let index = usize::try_from(self.level).ok()?;
        let step = self.steps.get(index)?;
        let next = self.steps.get(index + 1).map(|s| created + time::Duration::seconds(i64::from(s.after_secs)));
        Some(Self {
            level: self.level + 1,
            role: Some(step.role),
            escalated_at: Some(now),
            next_at: next,
            ..self.clone()
        })
    }
}

/// At most this many steps in a tenant's escalation chain.
pub const MAX_ESCALATION_STEPS: usize = 5;

/// What approving a request granted: a single-use approval token bound to `digest`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ApprovalGrant {
    /// The action digest the token is bound to: the request's, or the edited action's.
    pub digest: String,
    /// The token's id (`jti`).
    pub token_id: uuid::Uuid,
    /// After this the token is refused, and the action needs a new approval.
    #[serde(with = "time::serde::rfc3339")]
    pub expires_at: OffsetDateTime,
    /// When a check presented it (it is spent then).
    #[serde(with = "time::serde::rfc3339::option", default)]
    pub used_at: Option<OffsetDateTime>,
}

/// A policy version an action digest binds: the digest of an action changes when one of the
/// tenant's enforced policies does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct PolicyVersion {
    pub id: PolicyId,
    pub version: i64,
}

/// The action digest: SHA-256, as 64 lowercase hex digits, of the RFC 8785 (JCS) canonical
/// JSON of `{"action", "agent_id", "arguments", "policy_versions", "resource", "tenant_id"}`,
/// `arguments` being the check's context and `policy_versions` the enforced policies as
/// `{"id", "version"}` sorted by id. Action and resource are taken trimmed, as checks store
/// them.
pub fn action_digest(
    tenant: TenantId,
    agent: AgentId,
    action: &str,
    resource: &str,
    arguments: &JsonObject,
    policies: &[PolicyVersion],
) -> String {
    #[derive(Serialize)]
    struct Bound<'a> {
        tenant_id: TenantId,
        agent_id: AgentId,
        action: &'a str,
        resource: &'a str,
        arguments: &'a JsonObject,
        policy_versions: Vec<PolicyVersion>,
    }
    let mut policy_versions = policies.to_vec();
    policy_versions.sort();
    let bound = Bound {
        tenant_id: tenant,
        agent_id: agent,
        action: action.trim(),
        resource: resource.trim(),
        arguments,
        policy_versions,
    };
    // Canonicalisation fails only for what JSON cannot hold (never in a parsed object); the
    // empty text then still digests, to a value no real action has.
    let canonical = serde_json_canonicalizer::to_vec(&bound).unwrap_or_default();
    hex::encode(ring::digest::digest(&ring::digest::SHA256, &canonical).as_ref())
}

impl HitlRequest {
    /// When its callback is due, if it is (see [`HitlCallback::due_at`]).
    pub fn callback_due_at(&self) -> Option<OffsetDateTime> {
        self.callback.as_ref().and_then(HitlCallback::due_at)
    }

    /// Whether the request has a callback that may still be sent ([`HitlCallback::is_open`]).
    pub fn callback_open(&self) -> bool {
        self.callback.as_ref().is_some_and(HitlCallback::is_open)
    }

    /// Whether the request is approved with a grant not yet used (expired or not): what
    /// adapters keep in a column, so that spending it is one conditional write.
    pub fn grant_open(&self) -> bool {
        self.status == HitlStatus::Approved && self.grant.as_ref().is_some_and(|g| g.used_at.is_none())
    }

    /// When the next escalation step is due, while the request is pending: what adapters
    /// keep in a column to find due ones.
    pub fn escalate_at(&self) -> Option<OffsetDateTime> {
        match self.status {
            HitlStatus::Pending => self.escalation.as_ref().and_then(|e| e.next_at),
            _ => None,
        }
    }
}

/// Filters of the request list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HitlFilter {
    pub status: Option<HitlStatus>,
    pub agent_id: Option<AgentId>,
}

impl HitlFilter {
    pub fn matches(&self, r: &HitlRequest) -> bool {
        self.status.is_none_or(|s| s == r.status) && self.agent_id.is_none_or(|a| a == r.agent_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_round_trip_and_only_pending_is_open() {
        assert!(HitlStatus::ALL.iter().all(|s| HitlStatus::parse(s.as_str()) == Some(*s)));
        assert_eq!(HitlStatus::parse("Pending"), None);
        assert!(HitlStatus::ALL.iter().all(|s| s.is_final() == (*s != HitlStatus::Pending)));
    }

    #[test]
    fn the_action_digest_is_sha256_of_the_canonical_json() {
        let tenant = TenantId(uuid::Uuid::from_u128(1));
        let agent = AgentId(uuid::Uuid::from_u128(2));
        let policy = PolicyId(uuid::Uuid::from_u128(3));
        let args: JsonObject =
            serde_json::from_str(r#"{"to":"a@b.example","amount":1e2,"z":[{"b":1,"a":"\u00e9"}]}"#).unwrap();
        let versions = [PolicyVersion { id: policy, version: 4 }];
        let digest = action_digest(tenant, agent, " send ", "mail/out", &args, &versions);
        // The canonical text, written out by hand per RFC 8785: keys sorted by UTF-16 code
        // units, no whitespace, numbers in their shortest ECMAScript form, strings as-is.
        let text = concat!(
            r#"{"action":"send","agent_id":"00000000-0000-0000-0000-000000000002","#,
            r#""arguments":{"amount":100,"to":"a@b.example","z":[{"a":"é","b":1}]},"#,
            r#""policy_versions":[{"id":"00000000-0000-0000-0000-000000000003","version":4}],"#,
            r#""resource":"mail/out","tenant_id":"00000000-0000-0000-0000-000000000001"}"#
        );
        assert_eq!(digest, hex::encode(ring::digest::digest(&ring::digest::SHA256, text.as_bytes()).as_ref()));
        // Any change of what is bound changes it.
        let other: JsonObject = serde_json::from_str(r#"{"to":"evil@x.example"}"#).unwrap();
        assert_ne!(digest, action_digest(tenant, agent, "send", "mail/out", &other, &versions));
        let newer = [PolicyVersion { id: policy, version: 5 }];
        assert_ne!(digest, action_digest(tenant, agent, "send", "mail/out", &args, &newer));
        assert_ne!(digest, action_digest(tenant, agent, "send", "mail/in", &args, &versions));
    }

    #[test]
    fn an_escalation_chain_advances_step_by_step_and_ends() {
        let created = OffsetDateTime::UNIX_EPOCH;
        let steps = [
            EscalationStep { after_secs: 60, role: Role::Analyst },
            EscalationStep { after_secs: 600, role: Role::Admin },
        ];
        assert_eq!(HitlEscalation::start(&[], created), None);
        let start = HitlEscalation::start(&steps, created).unwrap();
        assert_eq!((start.level, start.role, start.next_at), (0, None, Some(created + time::Duration::minutes(1))));
        let now = created + time::Duration::seconds(61);
        let first = start.advanced(created, now).unwrap();
        assert_eq!((first.level, first.role, first.escalated_at), (1, Some(Role::Analyst), Some(now)));
        assert_eq!(first.next_at, Some(created + time::Duration::minutes(10)));
        let second = first.advanced(created, now).unwrap();
        assert_eq!((second.level, second.role, second.next_at), (2, Some(Role::Admin), None));
        assert_eq!(second.advanced(created, now), None);
    }

    #[test]
    fn only_a_scheduled_callback_is_due() {
        let at = OffsetDateTime::UNIX_EPOCH;
        let mut cb = HitlCallback::new("https://example.test/cb".into());
        cb.next_attempt_at = Some(at);
        assert_eq!(cb.due_at(), None);
        cb.status = CallbackStatus::Scheduled;
        assert_eq!(cb.due_at(), Some(at));
        cb.status = CallbackStatus::Delivered;
        assert_eq!(cb.due_at(), None);
    }
}
