//! Every event name the service publishes on the bus and the real-time feed, and the
//! audit event types the services name in code, in one place. The full list of the
//! service's audit event types (the reserved ones) is `model::audit::SERVICE_EVENT_TYPES`.

// Tenants.
/// The bus and feed event of a change to a tenant's name or settings.
pub const TENANT_UPDATED: &str = "tenant.updated";
/// The audit event of a new signing secret (its value is never recorded).
pub const TENANT_SECRET_ROTATED: &str = "tenant.secret_rotated";
/// The audit event of a signing secret removed.
pub const TENANT_SECRET_REMOVED: &str = "tenant.secret_removed";

// Authentication.
/// Published on the bus after a change that affects authentication in a tenant has
/// committed (a session ended, a user blocked, demoted or deleted, a key revoked): the
/// real-time feed checks its sockets' sessions again. Internal: never sent to clients.
pub const CREDENTIALS_CHANGED: &str = "auth.credentials_changed";

// Agents (the signed webhook's event types).
/// An agent's own action, audited once its signature is checked.
pub const AGENT_ACTION: &str = "agent.action";
/// An agent's heartbeat delivered by the webhook.
pub const AGENT_HEARTBEAT: &str = "agent.heartbeat";
/// Audit only: content shown to an agent in a session (`POST /sessions/{id}/observe`),
/// with the labels it raised and its digest, never the content.
pub const SESSION_OBSERVED: &str = "agent.observed";

// Policies.
/// The bus event that tells every replica a tenant's policies changed.
pub const POLICY_CHANGED: &str = "policy.changed";
/// The audit record of every answered check, and the bus and feed event of a check that
/// denied or needs approval.
pub const POLICY_DECISION: &str = "policy.decision";

// Prompt Guard.
/// The audit record and the bus and feed event of a blocked text.
pub const GUARD_BLOCKED: &str = "guard.blocked";
/// The bus event that tells every replica a tenant's active model changed.
pub const GUARD_MODEL_CHANGED: &str = "guard.model_changed";

// Anomalies.
/// The bus and feed event of every new report.
pub const ANOMALY_DETECTED: &str = "anomaly.detected";
/// The bus event that tells every replica a tenant's active detector changed.
pub const ANOMALY_MODEL_CHANGED: &str = "anomaly.model_changed";

// Approvals: each transition is audited and published under its name.
pub const HITL_REQUESTED: &str = "hitl.requested";
pub const HITL_APPROVED: &str = "hitl.approved";
pub const HITL_REJECTED: &str = "hitl.rejected";
pub const HITL_EXPIRED: &str = "hitl.expired";
pub const HITL_CANCELLED: &str = "hitl.cancelled";
/// Audited and published when a pending request takes a step of its escalation chain (the
/// details name the level and the role to notify).
pub const HITL_ESCALATED: &str = "hitl.escalated";
/// Audited when a callback is given up after its last attempt.
pub const HITL_CALLBACK_FAILED: &str = "hitl.callback_failed";

// Discovery.
/// The feed event of a new candidate.
pub const DISCOVERY_CANDIDATE: &str = "discovery.candidate";
/// The bus and feed event that tells every replica a tenant's decided candidates changed.
pub const DISCOVERY_DECIDED: &str = "discovery.candidate_decided";
