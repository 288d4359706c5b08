//! Helpers shared by the integration tests.
#![allow(dead_code, reason = "each test binary that includes this module uses a part of it")]

use agentgov_domain::ids::PolicyId;
use agentgov_domain::ports::PolicyModule;

pub fn policy_id(i: usize) -> PolicyId {
    format!("00000000-0000-7000-8000-{i:012}").parse().unwrap()
}

pub fn module(i: usize, name: &str, rego: &str) -> PolicyModule {
    PolicyModule { id: policy_id(i), version: 1, name: name.to_owned(), rego: rego.to_owned(), shadow: false }
}

/// The input of an everyday check that every typical policy allows: the HTTP benchmark's
/// support agent looking an order up in production, with consent.
pub fn allowed_input() -> serde_json::Value {
    serde_json::json!({
        "agent": {
            "id": "0192f0c4-8d1e-7c3a-9b2e-3f4a5b6c7d8f", "tenant_id": "0192f0c4-0000-7c3a-9b2e-3f4a5b6c7d8e",
            "name": "support-refunds", "type": "support",
            "description": "Answers customers' questions about their orders and refunds damaged items through Stripe.",
            "capabilities": ["read", "refund charge", "lookup order"],
            "permissions": {"orders": "read", "stripe.refunds": "write"},
            "status": "active", "predicted_type": "support", "risk": "medium", "risk_score": 0.62,
            "metadata": {}, "last_seen_at": null, "created_at": "2026-01-01T00:00:00Z",
            "updated_at": "2026-11-01T00:00:00Z"
        },
        "action": "lookup order",
        "resource": "orders/42",
        "context": {"consent": true, "environment": "production", "ticket": "T-1042", "channel": "chat"},
        "tenant": {"id": "0192f0c4-0000-7c3a-9b2e-3f4a5b6c7d8e", "approval_threshold": 0.8},
        "time": {"now": "2026-11-23T14:05:00Z", "now_ns": 1_795_442_700_000_000_000_i64},
        "risk": {"score": 0.3445, "level": "medium", "factors": [
            {"code": "agent_risk", "weight": 0.31, "evidence": "0.62", "reason": "The agent itself can do sensitive things."},
            {"code": "production", "weight": 0.05, "evidence": "production", "reason": "Touches a production system."}
        ]}
    })
}

/// A policy check's input as the domain builds it.
pub fn realistic_input() -> serde_json::Value {
    serde_json::json!({
        "agent": {
            "id": "0192f0c4-8d1e-7c3a-9b2e-3f4a5b6c7d8e", "tenant_id": "0192f0c4-0000-7c3a-9b2e-3f4a5b6c7d8e",
            "name": "billing-bot", "type": "llm", "description": "Handles invoices and refunds",
            "capabilities": ["read invoices", "issue refunds", "delete records"],
            "permissions": {"payments": "write", "crm": ["read"]},
            "status": "active", "predicted_type": "finance", "risk": "medium", "risk_score": 0.42,
            "metadata": {"owner": "finance-team", "version": "1.4.2"},
            "last_seen_at": "2026-11-23T10:00:00Z", "created_at": "2026-01-01T00:00:00Z",
            "updated_at": "2026-11-01T00:00:00Z"
        },
        "action": "delete",
        "resource": "prod/customers/db",
        "context": {"environment": "production", "reason": "cleanup", "record_count": 12, "consent": false},
        "tenant": {"id": "0192f0c4-0000-7c3a-9b2e-3f4a5b6c7d8e", "approval_threshold": 0.8},
        "time": {"now": "2026-11-23T14:05:00Z", "now_ns": 1_795_442_700_000_000_000_i64},
        "risk": {"score": 0.72, "level": "high", "factors": [{"name": "destructive_action", "weight": 0.3}]}
    })
}
