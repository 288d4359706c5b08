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
use crate::ids::{AgentId, AuditId, HitlId, TenantId};

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
